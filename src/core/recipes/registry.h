// Named recipes: what rules call with g.recipe("name", *inputs, **attrs).
//
// Each family file (trig.cc, special.cc, linalg.cc, ...) lists its recipes
// in one add_<family>_recipes function; registry.cc collects them. A recipe
// builds its outputs with the builder from standard ops only.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "builder.h"

namespace pytensor_onnx::recipes {

using RecipeFn = std::vector<Value*> (*)(GraphBuilder& g, const std::vector<Value*>& inputs, const Attributes& attrs);

struct RecipeInfo {
  std::string name;
  RecipeFn build;
  size_t min_inputs;
  size_t max_inputs;
  std::string doc;  // one line: what it computes, on which dtypes
};

// Every registered recipe, sorted by name.
const std::vector<RecipeInfo>& all_recipes();
// The recipe called `name`, or null.
const RecipeInfo* find_recipe(const std::string& name);
// Builds recipe `name`; BuildError for an unknown name or a wrong input count.
std::vector<Value*> build_recipe_named(GraphBuilder& g, const std::string& name, const std::vector<Value*>& inputs,
                                       const Attributes& attrs);

// One per family file.
void add_trig_recipes(std::vector<RecipeInfo>& table);
void add_sort_recipes(std::vector<RecipeInfo>& table);

}  // namespace pytensor_onnx::recipes
