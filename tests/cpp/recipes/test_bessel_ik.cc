// The ive/iv/kve recipes of real order (bessel_ik.cc): their interface
// (broadcast shape and dtype, rejection of bad inputs) and their structure:
// every series, continued fraction and recurrence is a Loop, and gammaln
// (the series prefactor of I) is a function call, not inlined. Values are
// checked against SciPy and mpmath in tests/python/test_special_bessel_ik.py.
#include <gtest/gtest.h>

#include "builder.h"
#include "errors.h"
#include "node_count.h"

namespace pytensor_onnx {
namespace {

using testing::count_iteration_loops;

TEST(BesselIKRecipes, BroadcastOrderAgainstArgumentKeepingTheDtype) {
  GraphBuilder g(18);
  Value* v = g.input("v", DType::Float32, shape_of_sizes({4, 1}));
  Value* x = g.input("x", DType::Float32, shape_of_sizes({3}));
  for (const char* name : {"ive", "iv", "kve"}) {
    Value* y = g.recipe(name, {v, x})[0];
    EXPECT_EQ(y->dtype, DType::Float32) << name;
    ASSERT_EQ(y->rank(), 2u) << name;
    EXPECT_EQ((*y->shape)[0].size, 4) << name;
    EXPECT_EQ((*y->shape)[1].size, 3) << name;
  }
}

TEST(BesselIKRecipes, IterationsAreLoops) {
  // kve: Temme's series, Steed's fraction, the upward recurrence. ive: the
  // power series, Hankel's expansion, CF1, the downward recurrence and
  // Steed's fraction, plus kve's three for negative orders.
  const Shape flat = shape_of_sizes({-1});
  GraphBuilder k(18, "main", /*use_functions=*/false);
  k.recipe("kve", {k.input("v", DType::Float64, flat), k.input("x", DType::Float64, flat)});
  EXPECT_EQ(count_iteration_loops(k), 3u);
  GraphBuilder i(18, "main", /*use_functions=*/false);
  i.recipe("ive", {i.input("v", DType::Float64, flat), i.input("x", DType::Float64, flat)});
  EXPECT_EQ(count_iteration_loops(i), 8u);
}

TEST(BesselIKRecipes, IveCallsGammalnAsAFunction) {
  GraphBuilder g(18);
  const Shape flat = shape_of_sizes({-1});
  g.recipe("ive", {g.input("v", DType::Float64, flat), g.input("x", DType::Float64, flat)});
  const Function* ive = g.functions()->by_name("ive_float64");
  ASSERT_NE(ive, nullptr);
  size_t gammaln_calls = 0;
  for (const Node* n : ive->body->nodes()) gammaln_calls += n->op_type == "gammaln_float64";
  EXPECT_EQ(gammaln_calls, 1u);
}

TEST(BesselIKRecipes, RejectIntegerInputsAndWrongArity) {
  GraphBuilder g(18);
  Value* n = g.input("n", DType::Int64, shape_of_sizes({2}));
  Value* x = g.input("x", DType::Float64, shape_of_sizes({2}));
  for (const char* name : {"ive", "iv", "kve"}) {
    EXPECT_THROW(g.recipe(name, {n, n}), BuildError) << name;
    EXPECT_THROW(g.recipe(name, {x}), BuildError) << name;
  }
}

}  // namespace
}  // namespace pytensor_onnx
