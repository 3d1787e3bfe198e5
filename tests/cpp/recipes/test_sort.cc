// The sort-family recipes: output types, the If that keeps ONNX Runtime
// 1.21's TopK away from empty inputs, CumProd only from opset 26, and axis
// checks. (Values are checked against NumPy in tests/python/test_sort.py and
// test_extra_ops.py.)
#include <gtest/gtest.h>

#include <algorithm>

#include "builder.h"
#include "errors.h"
#include "node_count.h"

namespace pytensor_onnx {
namespace {

using testing::count_nodes;

TEST(SortRecipes, ArgsortOfAKnownNonEmptyShapeHasNoEmptyGuard) {
  GraphBuilder g(18, "main", /*use_functions=*/false);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({3, 4}));
  std::vector<Value*> out = g.recipe("argsort_stable", {x}, {{"axis", int64_t{1}}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]->dtype, DType::Int64);
  EXPECT_EQ(count_nodes(g, "If"), 0u);
  EXPECT_GE(count_nodes(g, "TopK"), 2u);  // by value, then NaNs last
}

TEST(SortRecipes, ArgsortGuardsAnAxisThatMayBeEmpty) {
  GraphBuilder g(18, "main", /*use_functions=*/false);
  // The sorted axis alone may be empty without harm; another one may not.
  Value* sorted_axis_unknown = g.input("a", DType::Float32, shape_of_sizes({3, -1}));
  g.recipe("argsort_stable", {sorted_axis_unknown}, {{"axis", int64_t{1}}});
  EXPECT_EQ(count_nodes(g, "If"), 0u);
  Value* other_axis_unknown = g.input("b", DType::Float32, shape_of_sizes({-1, 4}));
  g.recipe("argsort_stable", {other_axis_unknown}, {{"axis", int64_t{1}}});
  EXPECT_EQ(count_nodes(g, "If"), 1u);
}

TEST(SortRecipes, SortKeepsTheDtypeAndRejectsBadAxes) {
  GraphBuilder g(13, "main", /*use_functions=*/false);
  Value* x = g.input("x", DType::Int8, shape_of_sizes({5}));
  std::vector<Value*> out = g.recipe("sort_stable", {x}, {{"axis", int64_t{-1}}});
  EXPECT_EQ(out[0]->dtype, DType::Int8);
  EXPECT_THROW(g.recipe("sort_stable", {x}, {{"axis", int64_t{1}}}), BuildError);
  EXPECT_THROW(g.recipe("cumprod", {x}, {{"axis", int64_t{-2}}}), BuildError);
}

TEST(SortRecipes, CumprodUsesTheOnnxOpFromOpset26Only) {
  GraphBuilder old_opset(18, "main", /*use_functions=*/false);
  Value* x = old_opset.input("x", DType::Int16, shape_of_sizes({2, 6}));
  EXPECT_EQ(old_opset.recipe("cumprod", {x}, {{"axis", int64_t{1}}})[0]->dtype, DType::Int16);
  EXPECT_EQ(count_nodes(old_opset, "CumProd"), 0u);

  GraphBuilder new_opset(26, "main", /*use_functions=*/false);
  Value* y = new_opset.input("y", DType::Int16, shape_of_sizes({2, 6}));
  EXPECT_EQ(new_opset.recipe("cumprod", {y}, {{"axis", int64_t{1}}})[0]->dtype, DType::Int16);
  EXPECT_EQ(count_nodes(new_opset, "CumProd"), 1u);
}

TEST(SortRecipes, UniqueReturnsValuesFirstIndexInverseAndCounts) {
  GraphBuilder g(18, "main", /*use_functions=*/false);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({-1}));
  std::vector<Value*> out = g.recipe("unique", {x});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0]->dtype, DType::Float64);
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(out[i]->dtype, DType::Int64) << i;
}

TEST(SortRecipes, UniqueRowsSortsKnownColumnsUnrolledAndOthersInALoop) {
  GraphBuilder g(18, "main", /*use_functions=*/false);
  Value* known = g.input("known", DType::Int32, shape_of_sizes({-1, 3}));
  std::vector<Value*> out = g.recipe("unique", {known});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0]->dtype, DType::Int32);
  ASSERT_TRUE(out[0]->rank().has_value());
  EXPECT_EQ(*out[0]->rank(), 2u);
  EXPECT_EQ(count_nodes(g, "Loop"), 0u);
  Value* unknown = g.input("unknown", DType::Float64, shape_of_sizes({-1, -1}));
  g.recipe("unique", {unknown});
  EXPECT_EQ(count_nodes(g, "Loop"), 1u);
}

TEST(SortRecipes, UniqueRefusesRank3) {
  GraphBuilder g(18, "main", /*use_functions=*/false);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({2, 2, 2}));
  EXPECT_THROW(g.recipe("unique", {x}), BuildError);
}

TEST(SortRecipes, SearchsortedGivesInt64Positions) {
  GraphBuilder g(18, "main", /*use_functions=*/false);
  Value* sorted = g.input("sorted", DType::Float64, shape_of_sizes({7}));
  Value* v = g.input("v", DType::Float64, shape_of_sizes({2, 3}));
  Value* pos = g.recipe("searchsorted", {sorted, v}, {{"right", int64_t{1}}})[0];
  EXPECT_EQ(pos->dtype, DType::Int64);
  EXPECT_EQ(count_nodes(g, "Loop"), 1u);
}

}  // namespace
}  // namespace pytensor_onnx
