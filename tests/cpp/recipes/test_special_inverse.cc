// The gammaincinv/gammainccinv (incomplete_gamma_inverse.cc) and owens_t
// (owens_t.cc) recipes: output dtype and broadcast shape for both float
// dtypes, their structure (the inverses call the forward recipes as
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

TEST(SpecialInverseRecipes, BroadcastKeepingTheDtype) {
  for (const char* name : {"gammaincinv", "gammainccinv", "owens_t"}) {
    for (DType dtype : {DType::Float64, DType::Float32}) {
      GraphBuilder g(18);
      Value* a = g.input("a", dtype, shape_of_sizes({3, 1}));
      Value* y = g.input("y", dtype, shape_of_sizes({4}));
      std::vector<Value*> out = g.recipe(name, {a, y});
      ASSERT_EQ(out.size(), 1u) << name;
      EXPECT_EQ(out[0]->dtype, dtype) << name;
      ASSERT_TRUE(out[0]->shape.has_value()) << name;
      ASSERT_EQ(out[0]->shape->size(), 2u) << name;
      EXPECT_EQ((*out[0]->shape)[0].size, 3) << name;
      EXPECT_EQ((*out[0]->shape)[1].size, 4) << name;
    }
  }
}

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
