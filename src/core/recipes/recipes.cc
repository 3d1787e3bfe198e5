#include "recipes.h"

#include "registry.h"

namespace pytensor_onnx::recipes {

std::optional<std::vector<Value*>> replacing(GraphBuilder& g, const std::string& op_type,
                                             const std::vector<Value*>& inputs, const Attributes& attrs) {
  const bool float64 = !inputs.empty() && inputs[0] && inputs[0]->dtype == DType::Float64;
  // ONNX Runtime before 1.25 has no float64 Cos kernel, and its float64 Sin
  // loses all relative accuracy near multiples of pi (sin(fl(pi)) = 0).
  // Through the registry, so that they become model-local functions.
  if (float64 && op_type == "Sin") return build_recipe_named(g, "sin_float64", inputs, {});
  if (float64 && op_type == "Cos") return build_recipe_named(g, "cos_float64", inputs, {});
  if (op_type.rfind("Bitwise", 0) == 0) return bitwise_before_opset18(g, op_type, inputs);
  if (op_type == "TopK") return topk_guarding_empty(g, inputs, attrs);
  if (op_type == "Einsum") return einsum_guarding_empty(g, inputs, attrs);
  return std::nullopt;
}

}  // namespace pytensor_onnx::recipes
