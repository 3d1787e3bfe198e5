// Bad calls leave the graph as it was and fail with BuildError/UnsupportedError
// (found by tests/python/test_core_fuzz.py; `make sanitize` runs these under
// ASan and UBSan).
#include <gtest/gtest.h>

#include "builder.h"
#include "errors.h"

namespace pytensor_onnx {
namespace {

Shape dims(std::initializer_list<int64_t> sizes) { return shape_of_sizes(sizes); }

TEST(BuilderRobustness, RefusedOpLeavesNoNode) {
  GraphBuilder g(13);
  Value* x = g.input("x", DType::Float64, dims({2}));
  // 'to' as a string used to be refused only after the node was added, so
  // the model kept a Cast with a string attribute.
  EXPECT_THROW(g.op1("Cast", {x}, {{"to", std::string("float32")}}), BuildError);
  EXPECT_THROW(g.op1("ReduceSum", {x}, {{"axes", std::vector<int64_t>{5}}}), BuildError);
  EXPECT_EQ(g.graph().num_nodes(), 0u);
  EXPECT_TRUE(x->users.empty());
  // The graph still builds, and names stay free.
  Value* y = g.op1("Neg", {x});
  EXPECT_EQ(y->name, "neg");
  EXPECT_EQ(g.graph().num_nodes(), 1u);
}

TEST(BuilderRobustness, AttributeTypesAreChecked) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, dims({2, 3}));
  EXPECT_THROW(g.op1("Transpose", {x}, {{"perm", std::string("10")}}), BuildError);
  EXPECT_THROW(g.op1("Cast", {x}, {{"to", int64_t{255}}}), BuildError);  // no such ONNX dtype
  EXPECT_THROW(g.op1("Cast", {x}, {{"to", 1.0}}), BuildError);
  EXPECT_THROW(g.op1("Softmax", {x}, {{"axis", 1.5}}), BuildError);
  EXPECT_THROW(g.op1("Constant", {}, {}), BuildError);  // no value
  EXPECT_THROW(g.op1("Constant", {}, {{"value", 1.5}}), BuildError);
  EXPECT_THROW(g.op1("Constant", {x}, {{"value", Tensor::int64s({1})}}), BuildError);  // takes no inputs
  EXPECT_EQ(g.graph().num_nodes(), 0u);
  // Exact conversions: one int for a list of ints, an int for a float.
  Value* t = g.op1("Transpose", {g.op1("Unsqueeze", {x}, {{"axes", int64_t{0}}})}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
  EXPECT_EQ(t->rank(), 3u);
  Value* e = g.op1("Elu", {x}, {{"alpha", int64_t{2}}});
  EXPECT_TRUE(std::holds_alternative<double>(*e->producer->attrs.find("alpha")));
}

TEST(BuilderRobustness, ValuesOfAnotherBuilderAreRefused) {
  GraphBuilder a(18), b(18);
  Value* x = a.input("x", DType::Float32, dims({2}));
  Value* y = b.input("y", DType::Float32, dims({2}));
  EXPECT_THROW(a.op1("Add", {x, y}), BuildError);
  EXPECT_EQ(a.graph().num_nodes(), 0u);
  // A subgraph may read its parent's values, not the other way round.
  GraphBuilder body(a, "body");
  Value* inner = body.op1("Neg", {x});
  EXPECT_THROW(a.op1("Abs", {inner}), BuildError);
}

TEST(BuilderRobustness, LoopTakesATripCountWithoutCondition) {
  // Loop's M and cond are optional but positional: a counted loop leaves cond empty.
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, dims({}));
  GraphBuilder body(g, "loop_body");
  body.input("i", DType::Int64, dims({}));
  Value* cond = body.input("cond", DType::Bool, dims({}));
  Value* acc = body.input("acc", DType::Float64, dims({}));
  body.output(cond, "cond_out");
  body.output(body.op1("Add", {acc, acc}), "acc_out");
  Value* trips = g.constant(Tensor::int64_scalar(3));
  Value* y = g.op("Loop", {trips, nullptr, x}, {{"body", body.shared_graph()}})[0];
  EXPECT_EQ(y->dtype, DType::Float64);
  EXPECT_EQ(g.graph().num_nodes(), 1u);
  // Without any loop-carried value the node is still refused: Loop needs its two positions.
  EXPECT_THROW(g.op("Loop", {trips}, {{"body", body.shared_graph()}}), BuildError);
}

}  // namespace
}  // namespace pytensor_onnx
