#include "recipes.h"

#include "registry.h"

namespace pytensor_onnx::recipes {
namespace {

// ONNX Runtime (1.21 to 1.32, checked) fuses Transpose(A) -> MatMul(., v)
// of a vector v into its FusedMatMul with transA, which then multiplies as
// if A were not transposed: a silent wrong result at the default
// optimization level (its MatmulTransposeFusion; A.T @ v of a (3, 2) A gave
// (A.reshape(2, 3)) @ v; fresh-seed fuzz, FUZZ_SEED=2021459674). With v as a
// column the fusion is right, so MatMul(A, v) of a matrix A and a vector v
// is built as MatMul(A, v[:, None])[:, 0], whatever produces A (ONNX
// Runtime's own rewrites, such as removing an Identity, can put a Transpose
// in front of it). A stack of matrices times a vector is as wrong (its last
// two axes swapped, (4, 3, 2) and (5, 4, 3, 2) checked) and is built the
// same way, MatMul(A, v[:, None])[..., 0].
std::optional<std::vector<Value*>> matmul_of_a_column(GraphBuilder& g, const std::vector<Value*>& inputs) {
  if (inputs.size() != 2 || !inputs[0] || !inputs[1] || !inputs[0]->rank() || *inputs[0]->rank() < 2 ||
      !inputs[1]->rank() || *inputs[1]->rank() != 1) {
    return std::nullopt;
  }
  Value* column = g.op1("Unsqueeze", {inputs[1], g.int64s({1})});
  Value* product = g.op1("MatMul", {inputs[0], column});
  return std::vector<Value*>{g.op1("Squeeze", {product, g.int64s({-1})})};
}

}  // namespace

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
  if (op_type == "MatMul") return matmul_of_a_column(g, inputs);
  return std::nullopt;
}

}  // namespace pytensor_onnx::recipes
