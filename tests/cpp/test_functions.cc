// Model-local functions: recipes built once per kind and called by nodes of
// the pytensor_onnx domain; their serialization, and the passes around them.
#include <gtest/gtest.h>

#include <algorithm>

#include "builder.h"
#include "errors.h"
#include "onnx_isolated.pb.h"
#include "passes/pass_manager.h"
#include "recipes/as_function.h"
#include "recipes/registry.h"
#include "serialize.h"

namespace pytensor_onnx {
namespace {

namespace pb = ::pytensor_onnx_pb;
using recipes::build_as_function_call;
using recipes::FunctionUse;
using recipes::RecipeInfo;

pb::ModelProto serialize(const GraphBuilder& g) {
  pb::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(serialize_model(g, {})));
  return model;
}

size_t count(const Graph& graph, const std::string& op) {
  const auto nodes = graph.nodes();
  return static_cast<size_t>(std::count_if(nodes.begin(), nodes.end(), [&](const Node* n) { return n->op_type == op; }));
}

// x * 2 + 1 - x / 3, element-wise: four nodes.
std::vector<Value*> affine(GraphBuilder& g, const std::vector<Value*>& in, const Attributes&) {
  Value* x = in[0];
  Value* a = g.op1("Add", {g.op1("Mul", {x, g.scalar(x->dtype, 2)}), g.scalar(x->dtype, 1)});
  return {g.op1("Sub", {a, g.op1("Div", {x, g.scalar(x->dtype, 3)})})};
}
const RecipeInfo kAffine{"affine", affine, 1, 1, "x * 2 + 1 - x / 3", FunctionUse::kElementwise};

// One node: not worth a function.
std::vector<Value*> negate(GraphBuilder& g, const std::vector<Value*>& in, const Attributes&) {
  return {g.op1("Neg", {in[0]})};
}
const RecipeInfo kNegate{"negate", negate, 1, 1, "-x", FunctionUse::kElementwise};

// Reads its second input's constant value (like a static parameter): x scaled
// by it, several times.
std::vector<Value*> scaled(GraphBuilder& g, const std::vector<Value*>& in, const Attributes&) {
  if (!in[1]->constant) throw BuildError("scaled: the factor must be a constant");
  Value* y = in[0];
  for (int i = 0; i < 4; ++i) y = g.op1("Mul", {y, in[1]});
  return {y};
}
const RecipeInfo kScaled{"scaled", scaled, 2, 2, "x * k^4, k constant"};

TEST(Functions, ARecipeIsBuiltOnceAndCalledByNodesOfTheProjectDomain) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({2, 3}));
  Value* y = g.input("y", DType::Float64, shape_of_sizes({3}));
  auto first = build_as_function_call(g, kAffine, {x}, {});
  auto second = build_as_function_call(g, kAffine, {y}, {});
  ASSERT_TRUE(first && second);
  ASSERT_EQ(g.functions()->all().size(), 1u);
  const Function& f = *g.functions()->all()[0];
  EXPECT_EQ(f.name, "affine_float64");
  EXPECT_EQ(f.body->num_nodes(), 4u);
  EXPECT_TRUE(f.pure);
  EXPECT_EQ(g.graph().num_nodes(), 2u);
  const Node* call = (*first)[0]->producer;
  EXPECT_EQ(call->op_type, "affine_float64");
  EXPECT_EQ(call->domain, kFunctionDomain);
  // Element-wise: the call's output has the input's shape and dtype.
  EXPECT_EQ((*first)[0]->dtype, DType::Float64);
  EXPECT_EQ((*(*first)[0]->shape)[1].size, 3);
  EXPECT_EQ((*second)[0]->shape->size(), 1u);
  // Another dtype is another function.
  Value* z = g.input("z", DType::Float32, shape_of_sizes({3}));
  ASSERT_TRUE(build_as_function_call(g, kAffine, {z}, {}));
  EXPECT_EQ(g.functions()->all().size(), 2u);
  EXPECT_EQ(g.functions()->all()[1]->name, "affine_float32");
}

TEST(Functions, SmallBodiesAndInlineBuildersStayInline) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({3}));
  EXPECT_FALSE(build_as_function_call(g, kNegate, {x}, {}).has_value());
  EXPECT_TRUE(g.functions()->all().empty());

  GraphBuilder plain(18, "main", /*use_functions=*/false);
  Value* u = plain.input("u", DType::Float64, shape_of_sizes({3}));
  EXPECT_EQ(plain.functions(), nullptr);
  EXPECT_FALSE(build_as_function_call(plain, kAffine, {u}, {}).has_value());
  // Through the registry the recipe is then built in place.
  plain.recipe("sin_float64", {u});
  EXPECT_GT(count(plain.graph(), "Sin"), 0u);
}

TEST(Functions, RegistryRecipesBecomeFunctions) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({4}));
  Value* s1 = g.recipe("sin_float64", {x})[0];
  Value* s2 = g.op1("Sin", {g.op1("Mul", {x, x})});  // the builder's replacement goes through the registry too
  EXPECT_EQ(s1->producer->op_type, "sin_float64");
  EXPECT_EQ(s2->producer->op_type, "sin_float64");
  EXPECT_EQ(g.functions()->all().size(), 1u);
  EXPECT_EQ(count(g.graph(), "Sin"), 0u);
  EXPECT_EQ((*s2->shape)[0].size, 4);
}

TEST(Functions, PerShapeRecipesSeeSmallConstantsAndStaticDims) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({3}));
  Value* two = g.scalar(DType::Float64, 2);
  Value* three = g.scalar(DType::Float64, 3);
  auto a = build_as_function_call(g, kScaled, {x, two}, {});
  auto b = build_as_function_call(g, kScaled, {x, g.scalar(DType::Float64, 2)}, {});
  auto c = build_as_function_call(g, kScaled, {x, three}, {});
  ASSERT_TRUE(a && b && c);
  // The constant is baked into the body: same value, same function.
  EXPECT_EQ(g.functions()->all().size(), 2u);
  EXPECT_EQ((*a)[0]->producer->inputs.size(), 1u);
  EXPECT_EQ((*a)[0]->producer->op_type, (*b)[0]->producer->op_type);
  EXPECT_NE((*a)[0]->producer->op_type, (*c)[0]->producer->op_type);
  EXPECT_EQ((*(*a)[0]->shape)[0].size, 3);
  // A factor that is no constant cannot be built apart from the caller: inline
  // (and the inline build reports the recipe's own error).
  Value* k = g.input("k", DType::Float64, shape_of_sizes({}));
  EXPECT_FALSE(build_as_function_call(g, kScaled, {x, k}, {}).has_value());
}

TEST(Functions, CseMergesPureCallsAndDeadCallsGo) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({3}));
  Value* a = (*build_as_function_call(g, kAffine, {x}, {}))[0];
  Value* b = (*build_as_function_call(g, kAffine, {x}, {}))[0];
  Value* unused = g.input("unused", DType::Float32, shape_of_sizes({3}));
  build_as_function_call(g, kAffine, {unused}, {});
  g.output(g.op1("Add", {a, b}), "out");
  optimize_model(g.graph(), g.functions());
  EXPECT_EQ(count(g.graph(), "affine_float64"), 1u);
  EXPECT_EQ(count(g.graph(), "affine_float32"), 0u);
  // Only the function the graph still calls is written.
  pb::ModelProto model = serialize(g);
  ASSERT_EQ(model.functions_size(), 1);
  EXPECT_EQ(model.functions(0).name(), "affine_float64");
}

TEST(Functions, SerializedAsFunctionProtosWithConstantNodes) {
  GraphBuilder g(13);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({3}));
  g.output((*build_as_function_call(g, kAffine, {x}, {}))[0], "y");
  pb::ModelProto model = serialize(g);
  EXPECT_EQ(model.ir_version(), 8) << "local functions need IR 8, above opset 13's usual 7";
  bool imports_domain = false;
  for (const auto& opset : model.opset_import()) imports_domain |= opset.domain() == kFunctionDomain;
  EXPECT_TRUE(imports_domain);
  ASSERT_EQ(model.functions_size(), 1);
  const auto& f = model.functions(0);
  EXPECT_EQ(f.domain(), kFunctionDomain);
  EXPECT_EQ(f.doc_string(), "x * 2 + 1 - x / 3");
  ASSERT_EQ(f.input_size(), 1);
  ASSERT_EQ(f.output_size(), 1);
  size_t constants = 0;
  for (const auto& node : f.node()) constants += node.op_type() == "Constant";
  EXPECT_EQ(constants, 3u);
  EXPECT_EQ(f.node_size(), 7);
  bool default_opset = false;
  for (const auto& opset : f.opset_import()) default_opset |= opset.domain().empty() && opset.version() == 13;
  EXPECT_TRUE(default_opset);
  ASSERT_EQ(model.graph().node_size(), 1);
  EXPECT_EQ(model.graph().node(0).domain(), kFunctionDomain);

  // Without calls the model keeps opset 13's IR version.
  GraphBuilder plain(13);
  plain.output(plain.op1("Neg", {plain.input("x", DType::Float64, shape_of_sizes({3}))}), "y");
  EXPECT_EQ(serialize(plain).ir_version(), 7);
}

// A body with a Loop whose own body reads a constant.
std::vector<Value*> looped(GraphBuilder& g, const std::vector<Value*>& in, const Attributes&) {
  GraphBuilder body(g, "loop_body");
  body.input("i", DType::Int64, shape_of_sizes({}));
  Value* cond = body.input("cond", DType::Bool, shape_of_sizes({}));
  Value* acc = body.input("acc", in[0]->dtype, std::nullopt);
  body.output(cond, "cond_out");
  body.output(body.op1("Mul", {acc, body.scalar(in[0]->dtype, 0.5)}), "acc_out");
  Value* trips = g.constant(Tensor::int64_scalar(3));
  Value* cond0 = g.constant(Tensor::from_values(DType::Bool, std::vector<uint8_t>{1}, {}));
  Value* out = g.op("Loop", {trips, cond0, in[0]}, {{"body", body.shared_graph()}})[0];
  return {g.op1("Add", {g.op1("Add", {out, in[0]}), g.op1("Mul", {out, out})})};
}
const RecipeInfo kLooped{"looped", looped, 1, 1, "a Loop inside", FunctionUse::kElementwise};

TEST(Functions, BodiesMayHoldLoopsAndCallOtherFunctions) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({3}));
  g.output((*build_as_function_call(g, kLooped, {x}, {}))[0], "y");
  pb::ModelProto model = serialize(g);
  ASSERT_EQ(model.functions_size(), 1);
  const pb::GraphProto* loop_body = nullptr;
  for (const auto& node : model.functions(0).node()) {
    if (node.op_type() == "Loop") loop_body = &node.attribute(0).g();
  }
  ASSERT_NE(loop_body, nullptr);
  EXPECT_EQ(loop_body->initializer_size(), 0);
  EXPECT_EQ(loop_body->node(0).op_type(), "Constant");

  // A function body that calls a registry recipe calls its function.
  GraphBuilder h(18);
  Value* u = h.input("u", DType::Float64, shape_of_sizes({3}));
  const RecipeInfo calls_sin{"sin_twice",
                             [](GraphBuilder& b, const std::vector<Value*>& in, const Attributes&) {
                               Value* s = b.recipe("sin_float64", {in[0]})[0];
                               Value* t = b.recipe("sin_float64", {b.op1("Add", {s, in[0]})})[0];
                               return std::vector<Value*>{b.op1("Mul", {s, t})};
                             },
                             1, 1, "sin(sin x + x) sin x", FunctionUse::kElementwise};
  h.output((*build_as_function_call(h, calls_sin, {u}, {}))[0], "y");
  pb::ModelProto nested = serialize(h);
  ASSERT_EQ(nested.functions_size(), 2);
  EXPECT_EQ(nested.functions(0).name(), "sin_float64") << "callees come first";
  EXPECT_EQ(nested.functions(1).name(), "sin_twice_float64");
}

}  // namespace
}  // namespace pytensor_onnx
