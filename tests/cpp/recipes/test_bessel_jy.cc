// The jv recipe (bessel_jy.cc): its interface (broadcast shape and dtype,
// rejection of bad inputs) and its structure: every series, continued
// fraction and recurrence is a Loop, and gammaln (the series prefactor) is a
// function call. Values are checked against mpmath and SciPy in
// tests/python/test_special_bessel_j.py.
#include <gtest/gtest.h>

#include "builder.h"
#include "errors.h"
#include "node_count.h"

namespace pytensor_onnx {
namespace {

using testing::count_iteration_loops;

TEST(BesselJRecipe, BroadcastOrderAgainstArgumentKeepingTheDtype) {
  GraphBuilder g(18);
  Value* v = g.input("v", DType::Float32, shape_of_sizes({4, 1}));
  Value* x = g.input("x", DType::Float32, shape_of_sizes({3}));
  Value* y = g.recipe("jv", {v, x})[0];
  EXPECT_EQ(y->dtype, DType::Float32);
  ASSERT_EQ(y->rank(), 2u);
  EXPECT_EQ((*y->shape)[0].size, 4);
  EXPECT_EQ((*y->shape)[1].size, 3);
}

TEST(BesselJRecipe, IterationsAreLoops) {
  // The power series; Hankel's expansion at the order, and at the orders mu
  // and mu + 1 before the upward recurrence (J and Y together); Steed's
  // CF1, downward recurrence, CF2 and the upward recurrence of Y.
  GraphBuilder g(18, "main", /*use_functions=*/false);
  const Shape flat = shape_of_sizes({-1});
  g.recipe("jv", {g.input("v", DType::Float64, flat), g.input("x", DType::Float64, flat)});
  EXPECT_EQ(count_iteration_loops(g), 9u);
}

TEST(BesselJRecipe, CallsGammalnAsAFunction) {
  GraphBuilder g(18);
  const Shape flat = shape_of_sizes({-1});
  g.recipe("jv", {g.input("v", DType::Float64, flat), g.input("x", DType::Float64, flat)});
  const Function* jv = g.functions()->by_name("jv_float64");
  ASSERT_NE(jv, nullptr);
  size_t gammaln_calls = 0;
  for (const Node* n : jv->body->nodes()) gammaln_calls += n->op_type == "gammaln_float64";
  EXPECT_EQ(gammaln_calls, 1u);
}

TEST(BesselJRecipe, RejectsIntegerInputsAndWrongArity) {
  GraphBuilder g(18);
  Value* n = g.input("n", DType::Int64, shape_of_sizes({2}));
  Value* x = g.input("x", DType::Float64, shape_of_sizes({2}));
  EXPECT_THROW(g.recipe("jv", {n, n}), BuildError);
  EXPECT_THROW(g.recipe("jv", {x}), BuildError);
  EXPECT_THROW(g.recipe("jv", {x, x, x}), BuildError);
}

}  // namespace
}  // namespace pytensor_onnx
