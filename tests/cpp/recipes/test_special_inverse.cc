// The gammaincinv/gammainccinv (incomplete_gamma_inverse.cc) and owens_t
// (owens_t.cc) recipes: their structure (the inverses call the forward recipes as
// functions; Owen's T has no Loop) and rejection of bad inputs. Values are
// checked against SciPy and mpmath in tests/python/test_special_inverse.py
// and tests/python/test_owens_t.py.
#include <gtest/gtest.h>

#include "builder.h"
#include "errors.h"
#include "node_count.h"

namespace pytensor_onnx {
namespace {

using testing::count_nodes;

// Output dtype and broadcast shape: with the forward recipes in
// test_incomplete_gamma.cc (BinaryRecipesBroadcastKeepingTheDtype).

TEST(SpecialInverseRecipes, OwensTIsLoopFree) {
  GraphBuilder g(18, "main", /*use_functions=*/false);
  g.recipe("owens_t", {g.input("h", DType::Float64, shape_of_sizes({-1})),
                       g.input("a", DType::Float64, shape_of_sizes({-1}))});
  EXPECT_EQ(count_nodes(g, "Loop"), 0u);
}

TEST(SpecialInverseRecipes, InversesIterateOnTheForwardFunctions) {
  // Inlined: every forward evaluation brings its Loops (2 for P, 3 for Q).
  GraphBuilder g(18, "main", /*use_functions=*/false);
  g.recipe("gammaincinv", {g.input("a", DType::Float64, shape_of_sizes({-1})),
                           g.input("y", DType::Float64, shape_of_sizes({-1}))});
  EXPECT_GE(count_nodes(g, "Loop"), 5u);
}

TEST(SpecialInverseRecipes, RejectIntegerInputsAndWrongArity) {
  GraphBuilder g(18);
  Value* n = g.input("n", DType::Int64, shape_of_sizes({2}));
  Value* x = g.input("x", DType::Float64, shape_of_sizes({2}));
  for (const char* name : {"gammaincinv", "gammainccinv", "owens_t"}) {
    EXPECT_THROW(g.recipe(name, {n, n}), BuildError) << name;
    EXPECT_THROW(g.recipe(name, {x}), BuildError) << name;
  }
}

}  // namespace
}  // namespace pytensor_onnx
