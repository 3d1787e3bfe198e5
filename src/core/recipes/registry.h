// Named recipes: what rules call with g.recipe("name", *inputs, **attrs).
//
// Each family file (trig.cc, special.cc, linalg.cc, ...) lists its recipes
// in one add_<family>_recipes function; registry.cc collects them. A recipe
// builds its outputs with the builder from standard ops only.
//
// A recipe built through the registry becomes a model-local function when the
// builder has functions on (the default; see as_function.h): one function per
// recipe, input dtypes (and, unless the recipe is element-wise, input shapes
// and small constant inputs) and attribute values. The recipe's author does
// nothing for that; `function` only refines it.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "builder.h"

namespace pytensor_onnx::recipes {

// A function object, so that one helper can make the entries of a whole kind
// of recipe (float64_recipe in elementwise.h) by binding its name and core.
using RecipeFn = std::function<std::vector<Value*>(GraphBuilder& g, const std::vector<Value*>& inputs,
                                                   const Attributes& attrs)>;

// How calls of a recipe become functions.
enum class FunctionUse {
  // One function per input dtypes, ranks, static dims and small constant
  // inputs (values up to kMaxBakedConstantElements elements are baked into
  // the body, so a recipe that reads them sees them): right for any recipe.
  kPerShape,
  // The recipe is element-wise (outputs have the broadcast shape of the
  // inputs and nothing depends on shapes or constant values): one function
  // per input dtypes, whatever the shapes.
  kElementwise,
  // Always built inline (for recipes that read their callers' context).
  kNever,
};

struct RecipeInfo {
  std::string name;
  RecipeFn build;
  size_t min_inputs;
  size_t max_inputs;
  std::string doc;  // one line: what it computes, on which dtypes
  FunctionUse function = FunctionUse::kPerShape;
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
void add_elementary_recipes(std::vector<RecipeInfo>& table);
void add_special_recipes(std::vector<RecipeInfo>& table);
void add_incomplete_gamma_recipes(std::vector<RecipeInfo>& table);
void add_incomplete_beta_recipes(std::vector<RecipeInfo>& table);
void add_incomplete_gamma_inverse_recipes(std::vector<RecipeInfo>& table);
void add_owens_t_recipes(std::vector<RecipeInfo>& table);
void add_hyp2f1_recipes(std::vector<RecipeInfo>& table);
void add_bessel_ik_recipes(std::vector<RecipeInfo>& table);
void add_bessel_jy_recipes(std::vector<RecipeInfo>& table);
void add_incomplete_beta_inverse_recipes(std::vector<RecipeInfo>& table);
void add_bitwise_recipes(std::vector<RecipeInfo>& table);
void add_linalg_recipes(std::vector<RecipeInfo>& table);
void add_linalg_spectral_recipes(std::vector<RecipeInfo>& table);
void add_linalg_schur_recipes(std::vector<RecipeInfo>& table);
void add_sort_recipes(std::vector<RecipeInfo>& table);

}  // namespace pytensor_onnx::recipes
