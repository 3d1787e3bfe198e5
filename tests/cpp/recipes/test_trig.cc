// The float64 sin/cos recipes replace the ONNX ops: Cos never reaches ONNX
// Runtime on float64 (no kernel before 1.25), and every Sin the recipe emits
// reads a reduced argument or the large-argument path. float32 keeps the op.
#include <gtest/gtest.h>

#include <algorithm>

#include "builder.h"
#include "recipes/recipes.h"

namespace pytensor_onnx {
namespace {

// Nodes of type `op` in the main graph and the function bodies it calls.
size_t count(const GraphBuilder& g, const std::string& op) {
  std::vector<const Graph*> graphs{&g.graph()};
  if (g.functions()) {
    for (const Function* f : functions_called(g.graph(), *g.functions())) graphs.push_back(f->body.get());
  }
  size_t n = 0;
  for (const Graph* graph : graphs) {
    const auto nodes = graph->nodes();
    n += static_cast<size_t>(std::count_if(nodes.begin(), nodes.end(), [&](const Node* n) { return n->op_type == op; }));
  }
  return n;
}

TEST(TrigRecipe, Float64CosIsBuiltFromSin) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({5}));
  Value* y = g.op1("Cos", {x});
  EXPECT_EQ(y->dtype, DType::Float64);
  EXPECT_EQ((*y->shape)[0].size, 5);
  EXPECT_EQ(count(g, "Cos"), 0u);
  // sin(r), sin(r/2), sin(x), sin(x/2), sin(2x)
  EXPECT_EQ(count(g, "Sin"), 5u);
  EXPECT_GE(count(g, "Round"), 1u);
}

TEST(TrigRecipe, Float64SinReducesItsArgument) {
  GraphBuilder g(13);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({2, 3}));
  Value* y = g.op1("Sin", {x});
  EXPECT_EQ(y->dtype, DType::Float64);
  EXPECT_EQ(y->shape->size(), 2u);
  EXPECT_EQ(count(g, "Round"), 1u);
  // The recipe is a function: its body reads x as its input.
  ASSERT_EQ(y->producer->op_type, "sin_float64");
  const Graph& body = *g.functions()->by_name("sin_float64")->body;
  size_t reading_x = 0;
  for (const Node* n : body.nodes()) reading_x += n->op_type == "Sin" && n->inputs[0] == body.inputs()[0];
  EXPECT_EQ(reading_x, 1u) << "only the large-argument path may apply the kernel to x itself";
}

TEST(TrigRecipe, Float32KeepsTheOnnxOps) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({4}));
  g.op1("Cos", {x});
  g.op1("Sin", {x});
  EXPECT_EQ(g.graph().num_nodes(), 2u);
  EXPECT_FALSE(recipes::replacing(g, "Cos", {x}, {}).has_value());
}

}  // namespace
}  // namespace pytensor_onnx
