// Named recipes: lookup, input-count checks, and building through the builder.
#include <gtest/gtest.h>

#include "builder.h"
#include "errors.h"
#include "recipes/registry.h"

namespace pytensor_onnx {
namespace {

TEST(RecipeRegistry, ListsRecipesSortedAndFindsThemByName) {
  const auto& table = recipes::all_recipes();
  ASSERT_FALSE(table.empty());
  for (size_t i = 1; i < table.size(); ++i) EXPECT_LT(table[i - 1].name, table[i].name);
  for (const auto& info : table) {
    EXPECT_EQ(recipes::find_recipe(info.name), &info);
    EXPECT_FALSE(info.doc.empty()) << info.name;
    EXPECT_LE(info.min_inputs, info.max_inputs) << info.name;
  }
  EXPECT_EQ(recipes::find_recipe("no_such_recipe"), nullptr);
}

TEST(RecipeRegistry, BuildsThroughTheBuilder) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({3}));
  std::vector<Value*> out = g.recipe("cos_float64", {x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]->dtype, DType::Float64);
  EXPECT_EQ((*out[0]->shape)[0].size, 3);
}

TEST(RecipeRegistry, RejectsUnknownNamesWrongArityAndWrongDtypes) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({3}));
  Value* f = g.input("f", DType::Float32, shape_of_sizes({3}));
  EXPECT_THROW(g.recipe("no_such_recipe", {x}), BuildError);
  EXPECT_THROW(g.recipe("sin_float64", {x, x}), BuildError);
  EXPECT_THROW(g.recipe("sin_float64", {}), BuildError);
  EXPECT_THROW(g.recipe("sin_float64", {f}), BuildError);
}

}  // namespace
}  // namespace pytensor_onnx
