#include <limits>
#include <gtest/gtest.h>

#include <algorithm>

#include "builder.h"
#include "errors.h"

namespace pytensor_onnx {
namespace {

std::vector<std::string> op_types(const GraphBuilder& g) {
  std::vector<std::string> types;
  for (const Node* n : g.graph().nodes()) types.push_back(n->op_type);
  return types;
}

bool has_op(const GraphBuilder& g, const std::string& op) {
  auto types = op_types(g);
  return std::find(types.begin(), types.end(), op) != types.end();
}

Shape dims(std::initializer_list<int64_t> sizes) { return shape_of_sizes(sizes); }

TEST(Builder, RejectsOpsetsOutsideTheKnownRange) {
  EXPECT_THROW(GraphBuilder(12), UnsupportedError);
  EXPECT_THROW(GraphBuilder(99), UnsupportedError);
}

TEST(Builder, ReduceMaxAxesAttributeBefore18InputFrom18) {
  GraphBuilder old_opset(13);
  Value* x = old_opset.input("x", DType::Float32, dims({2, 3}));
  Value* y = old_opset.op1("ReduceMax", {x}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}});
  const Node* n13 = y->producer;
  EXPECT_EQ(n13->inputs.size(), 1u);
  EXPECT_TRUE(n13->attrs.has("axes"));
  EXPECT_EQ(y->shape->size(), 1u);

  GraphBuilder new_opset(18);
  Value* x18 = new_opset.input("x", DType::Float32, dims({2, 3}));
  Value* y18 = new_opset.op1("ReduceMax", {x18}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}});
  const Node* n18 = y18->producer;
  ASSERT_EQ(n18->inputs.size(), 2u);
  EXPECT_FALSE(n18->attrs.has("axes"));
  EXPECT_EQ(n18->inputs[1]->constant->to_int64s(), std::vector<int64_t>{1});
}

TEST(Builder, ReduceSumTakesAxesInputFrom13) {
  GraphBuilder g(13);
  Value* x = g.input("x", DType::Float64, dims({2, 3}));
  Value* y = g.op1("ReduceSum", {x}, {{"axes", std::vector<int64_t>{-1}}});
  EXPECT_EQ(y->producer->inputs.size(), 2u);
  EXPECT_EQ((*y->shape)[1].size, 1);  // keepdims defaults to 1
}

TEST(Builder, RuntimeAxesBeforeTheirOpsetAreRejected) {
  GraphBuilder g(13);
  Value* x = g.input("x", DType::Float32, dims({2, 3}));
  Value* axes = g.input("axes", DType::Int64, dims({1}));
  EXPECT_THROW(g.op("ReduceMax", {x, axes}), UnsupportedError);
}

TEST(Builder, SplitNumOutputsOnlyFrom18) {
  GraphBuilder g13(13);
  Value* a = g13.input("x", DType::Float32, dims({4}));
  auto parts13 = g13.op("Split", {a}, {}, 2);
  EXPECT_FALSE(parts13[0]->producer->attrs.has("num_outputs"));
  EXPECT_EQ((*parts13[1]->shape)[0].size, 2);

  GraphBuilder g18(18);
  Value* b = g18.input("x", DType::Float32, dims({4}));
  auto parts18 = g18.op("Split", {b}, {}, 2);
  EXPECT_EQ(parts18[0]->producer->attrs.get_int("num_outputs", -1), 2);
}

TEST(Builder, SplitSizesThatCannotSplitTheAxisAreRefused) {
  // (Core fuzzer, FUZZ_SEED=1094003290: an int `split` attribute became a
  // 0-d sizes input, which ONNX Runtime refuses when it runs the node; sizes
  // of 2**63 - 1 and -2**63 gave an output a static dim of 2**63 - 1.)
  for (int opset : {13, 18}) {
    GraphBuilder g(opset);
    Value* x = g.input("x", DType::Float32, dims({4, 2}));
    EXPECT_THROW(g.op("Split", {x}, {{"split", int64_t{0}}}, 1), BuildError);
    const int64_t big = std::numeric_limits<int64_t>::max();
    EXPECT_THROW(g.op("Split", {x}, {{"split", std::vector<int64_t>{big, -big - 1}}}, 2), BuildError);
    EXPECT_THROW(g.op("Split", {x}, {{"split", std::vector<int64_t>{1, 2}}}, 2), BuildError);  // sum 3, not 4
    EXPECT_THROW(g.op("Split", {x}, {{"split", std::vector<int64_t>{4}}}, 2), BuildError);     // 1 size, 2 outputs
    auto parts = g.op("Split", {x}, {{"split", std::vector<int64_t>{1, 3}}}, 2);
    EXPECT_EQ((*parts[1]->shape)[0].size, 3);
  }
}

TEST(Builder, SplitNumOutputsDisagreeingWithTheOutputsIsRefused) {
  // num_outputs=0 on a one-output Split was built; ONNX Runtime refused to
  // run it (core fuzzer, FUZZ_SEED=1094003224).
  for (int opset : {13, 18}) {
    GraphBuilder g(opset);
    Value* x = g.input("x", DType::Float64, shape_of_sizes({-1}));
    EXPECT_THROW(g.op("Split", {x}, {{"axis", int64_t{0}}, {"num_outputs", int64_t{0}}}, 1), BuildError);
    EXPECT_THROW(g.op("Split", {x}, {{"num_outputs", int64_t{3}}}, 2), BuildError);
    EXPECT_THROW(g.op("Split", {x}, {{"num_outputs", int64_t{1}}, {"split", std::vector<int64_t>{0, 0}}}, 2),
                 BuildError);
    EXPECT_EQ(g.op("Split", {x}, {{"num_outputs", int64_t{2}}}, 2).size(), 2u);
  }
}

TEST(Builder, TriluRecipeAtOpset13) {
  GraphBuilder g(13);
  Value* x = g.input("x", DType::Float64, dims({3, 4}));
  Value* y = g.op1("Trilu", {x}, {{"upper", int64_t{0}}});
  EXPECT_FALSE(has_op(g, "Trilu"));
  EXPECT_TRUE(has_op(g, "Where"));
  EXPECT_EQ(y->dtype, DType::Float64);

  GraphBuilder g14(14);
  Value* x14 = g14.input("x", DType::Float64, dims({3, 4}));
  g14.op1("Trilu", {x14});
  EXPECT_TRUE(has_op(g14, "Trilu"));
}

TEST(Builder, ShapeStartEndRecipeBefore15) {
  GraphBuilder g(13);
  Value* x = g.input("x", DType::Float32, Shape{std::vector<Dim>{Dim::named("n"), Dim::known(3)}});
  Value* s = g.op1("Shape", {x}, {{"start", int64_t{1}}});
  EXPECT_TRUE(has_op(g, "Slice"));
  EXPECT_EQ(s->dtype, DType::Int64);
}

TEST(Builder, UnknownAndTooNewOpsAreUnsupported) {
  GraphBuilder g(13);
  Value* x = g.input("x", DType::Int32, dims({2}));
  EXPECT_THROW(g.op("NoSuchOp", {x}), UnsupportedError);
  Value* f = g.input("f", DType::Float32, dims({2}));
  try {
    g.op("Mish", {f});
    FAIL() << "Mish exists only from opset 18";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("opset_version >= 18"), std::string::npos);
  }
  // BitwiseAnd (opset 18) is built by its recipe before 18 (recipes/bitwise.cc).
  EXPECT_EQ(g.op("BitwiseAnd", {x, x})[0]->dtype, DType::Int32);
  // A custom domain (imported) passes through untouched.
  g.require_domain("my.domain", 1);
  Value* y = g.op("MyOp", {x}, {}, 1, "my.domain")[0];
  EXPECT_EQ(y->producer->domain, "my.domain");
}

TEST(Builder, CastsAroundMissingKernelsAndRestoresTheDtype) {
  GraphBuilder g(18);
  Value* c = g.input("c", DType::Bool, dims({3}));
  Value* a = g.input("a", DType::Bool, dims({3}));
  Value* w = g.op1("Where", {c, a, a});
  EXPECT_EQ(w->dtype, DType::Bool);
  EXPECT_EQ(w->producer->op_type, "Cast");  // computed on uint8, cast back
  const Node* where = w->producer->inputs[0]->producer;
  ASSERT_EQ(where->op_type, "Where");
  EXPECT_EQ(where->inputs[1]->dtype, DType::UInt8);
}

TEST(Builder, OrderedOpsOnUInt64UseAnOrderPreservingMap) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::UInt64, dims({4}));
  // TopK has two outputs (values, indices); ONNX refuses a node with one.
  Value* m = g.op("TopK", {x, g.int64s({2})}, {{"axis", int64_t{0}}}, 2)[0];
  EXPECT_EQ(m->dtype, DType::UInt64);
  // Cast -> Add(INT64_MIN) -> TopK -> Add(INT64_MIN) -> Cast
  EXPECT_EQ(op_types(g), (std::vector<std::string>{"Cast", "Add", "TopK", "Add", "Cast"}));
}

TEST(Builder, Int64MaxMinAvoidTheWrongOrtKernels) {
  GraphBuilder g(18);
  Value* a = g.input("a", DType::Int64, dims({4}));
  Value* b = g.input("b", DType::Int64, dims({4}));
  Value* m = g.op1("Max", {a, b});
  EXPECT_EQ(m->producer->op_type, "Where");
  EXPECT_EQ(m->producer->inputs[0]->producer->op_type, "Greater");
  Value* r = g.op1("ReduceMin", {a}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", int64_t{0}}});
  EXPECT_EQ(r->producer->op_type, "Squeeze");
  EXPECT_FALSE(has_op(g, "ReduceMin"));
  EXPECT_TRUE(has_op(g, "ArgMin"));
  EXPECT_EQ(r->shape->size(), 0u);
  // int32 keeps the plain kernel.
  Value* c = g.input("c", DType::Int32, dims({4}));
  EXPECT_EQ(g.op1("Max", {c, c})->producer->op_type, "Max");
}

TEST(Builder, ArgMaxIndicesAreNotCastBack) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::UInt32, dims({4}));
  Value* i = g.op1("ArgMax", {x}, {{"axis", int64_t{0}}});
  EXPECT_EQ(i->dtype, DType::Int64);
  EXPECT_EQ(i->producer->op_type, "ArgMax");
}

// The dtype the Scatter node producing `v` (through its Cast back) ran on.
DType scatter_dtype(Value* v) {
  const Node* node = v->producer;
  if (node->op_type == "Cast") node = node->inputs[0]->producer;
  return node->inputs[0]->dtype;
}

TEST(Builder, ScatterReductionsCastAroundMissingKernels) {
  // ONNX Runtime has no float16 ScatterND/ScatterElements kernel for add/mul
  // (nor ScatterND's max/min) and no bool one for max/min: the model failed
  // to run (core fuzzer, FUZZ_SEED=1094003243 and 1094003280).
  GraphBuilder g(18);
  Value* index = g.constant(Tensor::from_values(DType::Int64, std::vector<int64_t>{0}, {1, 1}), "index");
  Value* elements = g.constant(Tensor::from_values(DType::Int64, std::vector<int64_t>{0}, {1}), "elements");
  auto scatter = [&](const char* op, DType dtype, const char* reduction) {
    Value* x = g.input(std::string("x") + std::to_string(g.graph().inputs().size()), dtype, dims({2}));
    const bool nd = std::string(op) == "ScatterND";
    Value* u = g.input(std::string("u") + std::to_string(g.graph().inputs().size()), dtype, dims({1}));
    Value* y = g.op1(op, {x, nd ? index : elements, u}, {{"reduction", std::string(reduction)}});
    EXPECT_EQ(y->dtype, dtype) << op << " " << reduction;
    return scatter_dtype(y);
  };
  EXPECT_EQ(scatter("ScatterND", DType::Float16, "add"), DType::Float32);
  EXPECT_EQ(scatter("ScatterND", DType::Float16, "max"), DType::Float32);
  EXPECT_EQ(scatter("ScatterElements", DType::Float16, "mul"), DType::Float32);
  EXPECT_EQ(scatter("ScatterND", DType::Bool, "max"), DType::UInt8);
  EXPECT_EQ(scatter("ScatterElements", DType::Bool, "min"), DType::UInt8);
  // Kernels that exist are used as they are.
  EXPECT_EQ(scatter("ScatterElements", DType::Float16, "max"), DType::Float16);
  EXPECT_EQ(scatter("ScatterND", DType::Float16, "none"), DType::Float16);
  EXPECT_EQ(scatter("ScatterND", DType::Bool, "add"), DType::Bool);
  EXPECT_EQ(scatter("ScatterND", DType::Float32, "min"), DType::Float32);
  // Updates of another dtype stay a type error, not hidden by the casts.
  Value* x = g.input("xh", DType::Float16, dims({2}));
  Value* u = g.input("uf", DType::Float32, dims({1}));
  EXPECT_THROW(g.op("ScatterND", {x, index, u}, {{"reduction", std::string("add")}}), BuildError);
}

TEST(Builder, NeverTradesFloat64PrecisionForAKernel) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, dims({4}));
  EXPECT_THROW(g.op("Erf", {x}), UnsupportedError);
  Value* f = g.input("f", DType::Float32, dims({4}));
  EXPECT_EQ(g.op1("Erf", {f})->dtype, DType::Float32);
}

TEST(Builder, OutputOfAnInputGetsAnIdentity) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, dims({2}));
  g.output(x, "y");
  g.output(x, "z");
  ASSERT_EQ(g.graph().outputs().size(), 2u);
  EXPECT_EQ(g.graph().outputs()[0]->name, "y");
  EXPECT_EQ(g.graph().outputs()[1]->name, "z");
  EXPECT_EQ(op_types(g), (std::vector<std::string>{"Identity", "Identity"}));
  EXPECT_THROW(g.output(x, "x"), BuildError);  // the name of an input
}

TEST(Builder, OutputNameTakenByAnIntermediateRenamesTheIntermediate) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, dims({2}));
  Value* a = g.op1("Exp", {x});  // named "exp"
  Value* b = g.op1("Log", {a});
  g.output(b, "exp");
  EXPECT_EQ(b->name, "exp");
  EXPECT_NE(a->name, "exp");
}

TEST(Builder, DuplicateInputNamesAreRejected) {
  GraphBuilder g(18);
  g.input("x", DType::Float32, dims({2}));
  EXPECT_THROW(g.input("x", DType::Float32, dims({2})), BuildError);
}

TEST(Builder, NodeNamesAreUnique) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, dims({2}));
  Value* a = g.op1("Exp", {x});
  Value* b = g.op1("Exp", {a});
  EXPECT_NE(a->producer->name, b->producer->name);
}

}  // namespace
}  // namespace pytensor_onnx

namespace pytensor_onnx {
namespace {

TEST(Builder, WrongInputCountsFailAtBuildTime) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({2}));
  try {
    g.op("Add", {x});
    FAIL() << "Add needs two inputs";
  } catch (const BuildError& e) {
    EXPECT_NE(std::string(e.what()).find("Add takes 2 inputs"), std::string::npos);
  }
  EXPECT_THROW(g.op("Where", {x, x}), BuildError);
  EXPECT_NO_THROW(g.op("Concat", {x, x, x}, {{"axis", int64_t{0}}}));
}

}  // namespace
}  // namespace pytensor_onnx
