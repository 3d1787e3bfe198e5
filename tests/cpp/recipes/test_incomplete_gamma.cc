// The incomplete gamma recipes: output dtype and broadcast shape for both
// float dtypes, and their structure (one Loop per series or fraction: P
// needs the series and the fraction, Q also the small-a series). Values are
// checked against SciPy and mpmath in tests/python/test_special_functions.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "builder.h"
#include "errors.h"
#include "node_count.h"

namespace pytensor_onnx {
namespace {

using testing::count_iteration_loops;

// The binary special-function recipes of the incomplete gamma family, their
// inverses and Owen's T (incomplete_gamma_inverse.cc, owens_t.cc).
TEST(IncompleteGammaRecipes, BinaryRecipesBroadcastKeepingTheDtype) {
  for (const char* name : {"gammainc", "gammaincc", "gammaincinv", "gammainccinv", "owens_t"}) {
    for (DType dtype : {DType::Float64, DType::Float32}) {
      GraphBuilder g(18);
      Value* a = g.input("a", dtype, shape_of_sizes({3, 1}));
      Value* x = g.input("x", dtype, shape_of_sizes({4}));
      std::vector<Value*> out = g.recipe(name, {a, x});
      ASSERT_EQ(out.size(), 1u) << name;
      EXPECT_EQ(out[0]->dtype, dtype) << name;
      ASSERT_TRUE(out[0]->shape.has_value()) << name;
      ASSERT_EQ(out[0]->shape->size(), 2u) << name;
      EXPECT_EQ((*out[0]->shape)[0].size, 3) << name;
      EXPECT_EQ((*out[0]->shape)[1].size, 4) << name;
    }
  }
}

TEST(IncompleteGammaRecipes, OneLoopPerSeriesOrFraction) {
  GraphBuilder lower(18, "main", /*use_functions=*/false);
  lower.recipe("gammainc", {lower.input("a", DType::Float64, shape_of_sizes({-1})),
                            lower.input("x", DType::Float64, shape_of_sizes({-1}))});
  EXPECT_EQ(count_iteration_loops(lower), 2u);
  GraphBuilder upper(18, "main", /*use_functions=*/false);
  upper.recipe("gammaincc", {upper.input("a", DType::Float64, shape_of_sizes({-1})),
                             upper.input("x", DType::Float64, shape_of_sizes({-1}))});
  EXPECT_EQ(count_iteration_loops(upper), 3u);
}

TEST(IncompleteGammaRecipes, RejectIntegerInputsAndWrongArity) {
  GraphBuilder g(18);
  Value* n = g.input("n", DType::Int64, shape_of_sizes({2}));
  EXPECT_THROW(g.recipe("gammainc", {n, n}), BuildError);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({2}));
  EXPECT_THROW(g.recipe("gammaincc", {x}), BuildError);
}

}  // namespace
}  // namespace pytensor_onnx
