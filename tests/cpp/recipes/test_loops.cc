// Element-wise iterations (loops.cc): a Loop over all elements, then a Loop
// of epochs over the compacted active elements, whose step reads the
// gathered values of the per-element values it reads from outside. Values
// are checked in tests/python/test_elementwise_loop.py.
#include <gtest/gtest.h>

#include <algorithm>

#include "builder.h"
#include "errors.h"
#include "node_count.h"
#include "recipes/loops.h"

namespace pytensor_onnx {
namespace {

using recipes::elementwise_loop;
using recipes::LoopStep;
using testing::count_iteration_loops;
using testing::count_nodes;

const Graph& body_of(const Node* loop) { return *std::get<std::shared_ptr<Graph>>(*loop->attrs.find("body")); }

std::vector<const Node*> loops_of(const Graph& graph) {
  std::vector<const Node*> loops;
  for (const Node* n : graph.nodes()) {
    if (n->op_type == "Loop") loops.push_back(n);
  }
  return loops;
}

bool reads(const Graph& graph, const Value* value) {
  for (const Node* n : graph.nodes()) {
    if (std::find(n->inputs.begin(), n->inputs.end(), value) != n->inputs.end()) return true;
  }
  return false;
}

// x <- x * y + s until x > 1, with y read per element and s a scalar, both
// from the enclosing graph.
recipes::LoopResult grow(GraphBuilder& g, Value* x, Value* y, Value* s) {
  return elementwise_loop(
      g, {x}, 100,
      [y, s](GraphBuilder& body, Value*, const std::vector<Value*>& state) {
        Value* next = body.op1("Add", {body.op1("Mul", {state[0], y}), s});
        return LoopStep{{next}, body.op1("Greater", {next, body.scalar(DType::Float64, 1.0)})};
      },
      "grow");
}

TEST(ElementwiseLoop, TwoLoopsTheSecondOverGatheredPerElementValues) {
  GraphBuilder g(18, "main", /*use_functions=*/false);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({-1}));
  Value* y = g.input("y", DType::Float64, shape_of_sizes({-1}));
  Value* s = g.input("s", DType::Float64, shape_of_sizes({}));
  grow(g, x, y, s);
  EXPECT_EQ(count_nodes(g, "Loop"), 2u);
  EXPECT_EQ(count_iteration_loops(g), 1u);
  const auto loops = loops_of(g.graph());
  ASSERT_EQ(loops.size(), 2u);
  // Over all elements: the body reads y and s themselves.
  EXPECT_TRUE(reads(body_of(loops[0]), y));
  EXPECT_TRUE(reads(body_of(loops[0]), s));
  // The epochs gather y (once) at the active indices; the compacted body
  // reads the gathered y and s itself.
  const Graph& epochs = body_of(loops[1]);
  size_t gathers_of_y = 0;
  const Value* gathered_y = nullptr;
  for (const Node* n : epochs.nodes()) {
    if (n->op_type == "Gather" && n->inputs[0] == y) {
      ++gathers_of_y;
      gathered_y = n->outputs[0];
    }
  }
  ASSERT_EQ(gathers_of_y, 1u);
  const auto inner = loops_of(epochs);
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_FALSE(reads(body_of(inner[0]), y));
  EXPECT_TRUE(reads(body_of(inner[0]), gathered_y));
  EXPECT_TRUE(reads(body_of(inner[0]), s));
}

TEST(ElementwiseLoop, ConstantsAndBroadcastVectorsAreNotGathered) {
  GraphBuilder g(18, "main", /*use_functions=*/false);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({-1}));
  Value* table = g.constant(Tensor::from_values(DType::Float64, std::vector<double>{0.5, 0.25, 2.0}, {3}), "table");
  Value* one = g.input("one", DType::Float64, shape_of_sizes({1}));
  grow(g, x, one, g.op1("ReduceSum", {table}, {{"keepdims", int64_t{0}}}));
  const Graph& epochs = body_of(loops_of(g.graph())[1]);
  EXPECT_EQ(count_nodes(epochs, "Gather"), 2u);  // the state and the active flags
}

TEST(ElementwiseLoop, NestedInAnotherBodyIsOneLoop) {
  // An iteration inside another iteration's step: its copies in the two
  // bodies of the outer one are one Loop each (no copies of copies).
  GraphBuilder g(18, "main", /*use_functions=*/false);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({-1}));
  Value* y = g.input("y", DType::Float64, shape_of_sizes({-1}));
  elementwise_loop(
      g, {x}, 10,
      [y](GraphBuilder& body, Value*, const std::vector<Value*>& state) {
        Value* inner = grow(body, state[0], y, body.scalar(DType::Float64, 0.5)).state[0];
        return LoopStep{{inner}, body.op1("Greater", {inner, body.scalar(DType::Float64, 2.0)})};
      },
      "outer");
  const auto loops = loops_of(g.graph());
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops_of(body_of(loops[0])).size(), 1u);
  const auto compacted = loops_of(body_of(loops[1]));
  ASSERT_EQ(compacted.size(), 1u);
  EXPECT_EQ(loops_of(body_of(compacted[0])).size(), 1u);
}

TEST(ElementwiseLoop, RejectsAStepReadingAnOuterMatrix) {
  GraphBuilder g(18, "main", /*use_functions=*/false);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({-1}));
  Value* m = g.input("m", DType::Float64, shape_of_sizes({2, 3}));
  Value* s = g.input("s", DType::Float64, shape_of_sizes({}));
  EXPECT_THROW(grow(g, x, m, s), BuildError);
}

}  // namespace
}  // namespace pytensor_onnx
