#include "registry.h"

#include <algorithm>

#include "as_function.h"
#include "errors.h"

namespace pytensor_onnx::recipes {

const std::vector<RecipeInfo>& all_recipes() {
  static const std::vector<RecipeInfo> table = [] {
    std::vector<RecipeInfo> t;
    add_trig_recipes(t);
    add_elementary_recipes(t);
    add_special_recipes(t);
    add_incomplete_gamma_recipes(t);
    add_incomplete_beta_recipes(t);
    add_incomplete_gamma_inverse_recipes(t);
    add_owens_t_recipes(t);
    add_hyp2f1_recipes(t);
    add_bessel_ik_recipes(t);
    add_bessel_jy_recipes(t);
    add_incomplete_beta_inverse_recipes(t);
    add_bitwise_recipes(t);
    add_linalg_recipes(t);
    add_linalg_spectral_recipes(t);
    add_linalg_schur_recipes(t);
    add_sort_recipes(t);
    std::sort(t.begin(), t.end(), [](const RecipeInfo& a, const RecipeInfo& b) { return a.name < b.name; });
    return t;
  }();
  return table;
}

const RecipeInfo* find_recipe(const std::string& name) {
  const auto& table = all_recipes();
  auto it = std::lower_bound(table.begin(), table.end(), name,
                             [](const RecipeInfo& info, const std::string& n) { return info.name < n; });
  return it != table.end() && it->name == name ? &*it : nullptr;
}

std::vector<Value*> build_recipe_named(GraphBuilder& g, const std::string& name, const std::vector<Value*>& inputs,
                                       const Attributes& attrs) {
  const RecipeInfo* info = find_recipe(name);
  if (!info) throw BuildError("no recipe named '" + name + "'");
  if (inputs.size() < info->min_inputs || inputs.size() > info->max_inputs) {
    throw BuildError("recipe '" + name + "' takes " + std::to_string(info->min_inputs) + ".." +
                     std::to_string(info->max_inputs) + " inputs, got " + std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) throw BuildError("recipe '" + name + "': input " + std::to_string(i) + " is missing");
  }
  if (auto call = build_as_function_call(g, *info, inputs, attrs)) return *call;
  return info->build(g, inputs, attrs);
}

}  // namespace pytensor_onnx::recipes
