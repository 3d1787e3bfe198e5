// The incomplete beta recipe and the log-Gamma pieces it shares with the
// incomplete gamma recipes: output dtype and broadcast shape for both float
// dtypes, and the structure (one Loop for the power series, one for the
// continued fraction; the float32 form calls the float64 function between
// casts). Values are checked against SciPy and mpmath in
// tests/python/test_special_beta.py.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "builder.h"
#include "errors.h"
#include "node_count.h"
#include "recipes/elementwise.h"
#include "recipes/log_gamma_parts.h"

namespace pytensor_onnx {
namespace {

using testing::count_iteration_loops;
using testing::count_nodes;

TEST(IncompleteBetaRecipe, BroadcastsThreeInputsKeepingTheDtype) {
  for (DType dtype : {DType::Float64, DType::Float32}) {
    GraphBuilder g(18);
    Value* a = g.input("a", dtype, shape_of_sizes({3, 1}));
    Value* b = g.input("b", dtype, shape_of_sizes({1}));
    Value* x = g.input("x", dtype, shape_of_sizes({4}));
    std::vector<Value*> out = g.recipe("betainc", {a, b, x});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0]->dtype, dtype);
    ASSERT_TRUE(out[0]->shape.has_value());
    ASSERT_EQ(out[0]->shape->size(), 2u);
    EXPECT_EQ((*out[0]->shape)[0].size, 3);
    EXPECT_EQ((*out[0]->shape)[1].size, 4);
  }
}

TEST(IncompleteBetaRecipe, OneLoopForTheSeriesAndOneForTheFraction) {
  // Besides its own two, the recipe holds the Loops of the polygamma recipe
  // (its Taylor series for a tiny parameter), built inline here.
  GraphBuilder polygamma(18, "main", /*use_functions=*/false);
  Value* n = polygamma.input("n", DType::Float64, shape_of_sizes({-1}));
  polygamma.recipe("polygamma", {n, n});
  GraphBuilder g(18, "main", /*use_functions=*/false);
  Value* v = g.input("v", DType::Float64, shape_of_sizes({-1}));
  g.recipe("betainc", {v, v, v});
  EXPECT_EQ(count_iteration_loops(g), 2u + count_iteration_loops(polygamma));
}

TEST(IncompleteBetaRecipe, RejectsIntegerInputsAndWrongArity) {
  GraphBuilder g(18);
  Value* n = g.input("n", DType::Int64, shape_of_sizes({2}));
  EXPECT_THROW(g.recipe("betainc", {n, n, n}), BuildError);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({2}));
  EXPECT_THROW(g.recipe("betainc", {x, x}), BuildError);
}

TEST(LogGammaParts, ElementwiseFloat64Pieces) {
  GraphBuilder g(18, "main", /*use_functions=*/false);
  const recipes::Ew f(g, DType::Float64);
  Value* a = g.input("a", DType::Float64, shape_of_sizes({5}));
  Value* t = g.input("t", DType::Float64, shape_of_sizes({1}));
  std::vector<Value*> outs = {recipes::lgamma1p_small(f, a), recipes::stirling_correction(f, a)};
  const size_t wheres_before = count_nodes(g, "Where");
  outs.push_back(recipes::log1pmx(f, t, a, a));
  for (Value* out : outs) {
    EXPECT_EQ(out->dtype, DType::Float64);
    ASSERT_TRUE(out->shape.has_value());
    ASSERT_EQ(out->shape->size(), 1u);
    EXPECT_EQ((*out->shape)[0].size, 5);
  }
  // log1pmx picks between its series and log(x / a) - t element-wise (one
  // Where); none of the pieces iterates.
  EXPECT_EQ(count_iteration_loops(g), 0u);
  EXPECT_EQ(count_nodes(g, "Where"), wheres_before + 1);
}

}  // namespace
}  // namespace pytensor_onnx
