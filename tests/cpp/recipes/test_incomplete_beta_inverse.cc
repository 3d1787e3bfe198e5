// The betaincinv recipe (incomplete_beta_inverse.cc) and the betainc_xy
// form of the forward function it iterates on: interface, structure (the
// Halley steps are one Loop whose body calls betainc_xy, so the forward
// function is built twice, not once per step) and rejection of bad inputs.
// Values are checked against SciPy and mpmath in
// tests/python/test_special_betaincinv.py.
#include <gtest/gtest.h>

#include <string>

#include "builder.h"
#include "errors.h"
#include "node_count.h"

namespace pytensor_onnx {
namespace {

using testing::count_iteration_loops;

// Calls of `function` in a graph and in the subgraphs of its nodes.
size_t calls(const Graph& graph, const std::string& function) {
  size_t n = 0;
  for (const Node* node : graph.nodes()) {
    n += node->op_type == function;
    for (const auto& item : node->attrs.items()) {
      if (const auto* body = std::get_if<std::shared_ptr<Graph>>(&item.value)) n += calls(**body, function);
    }
  }
  return n;
}

TEST(IncompleteBetaInverseRecipe, BroadcastsKeepingTheDtype) {
  GraphBuilder g(18);
  Value* a = g.input("a", DType::Float32, shape_of_sizes({3, 1}));
  Value* b = g.input("b", DType::Float32, shape_of_sizes({}));
  Value* y = g.input("y", DType::Float32, shape_of_sizes({4}));
  Value* x = g.recipe("betaincinv", {a, b, y})[0];
  EXPECT_EQ(x->dtype, DType::Float32);
  ASSERT_EQ(x->rank(), 2u);
  EXPECT_EQ((*x->shape)[0].size, 3);
  EXPECT_EQ((*x->shape)[1].size, 4);
}

TEST(IncompleteBetaInverseRecipe, HalleyStepsAreOneLoopOverTheForwardFunction) {
  GraphBuilder g(18);
  const Shape flat = shape_of_sizes({-1});
  g.recipe("betaincinv", {g.input("a", DType::Float64, flat), g.input("b", DType::Float64, flat),
                          g.input("y", DType::Float64, flat)});
  const Function* inverse = g.functions()->by_name("betaincinv_float64");
  ASSERT_NE(inverse, nullptr);
  // Once for the candidates (on their concatenation), once in each body of
  // the Loop of steps (over all elements, then compacted: recipes/loops.h).
  EXPECT_EQ(calls(*inverse->body, "betainc_xy_float64"), 3u);
  EXPECT_EQ(count_iteration_loops(*inverse->body), 1u);
}

TEST(IncompleteBetaInverseRecipe, ForwardWithTheComplementGivenBuilds) {
  GraphBuilder g(18, "main", /*use_functions=*/false);
  Value* v = g.input("v", DType::Float64, shape_of_sizes({5}));
  Value* y = g.recipe("betainc_xy", {v, v, v, v})[0];
  EXPECT_EQ(y->dtype, DType::Float64);
  EXPECT_GE(count_iteration_loops(g), 1u);
}

TEST(IncompleteBetaInverseRecipe, RejectsIntegerInputsAndWrongArity) {
  GraphBuilder g(18);
  Value* n = g.input("n", DType::Int64, shape_of_sizes({2}));
  Value* x = g.input("x", DType::Float64, shape_of_sizes({2}));
  EXPECT_THROW(g.recipe("betaincinv", {n, n, n}), BuildError);
  EXPECT_THROW(g.recipe("betaincinv", {x, x}), BuildError);
  EXPECT_THROW(g.recipe("betainc_xy", {x, x, x}), BuildError);
}

}  // namespace
}  // namespace pytensor_onnx
