// Recipes: what standard ONNX or ONNX Runtime's kernels lack, built only
// from standard ops (so models stay portable to ONNX Runtime Web and
// mobile). One source file per family (trig.cc, ...), one function per
// recipe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "builder.h"

namespace pytensor_onnx::recipes {

// The recipe the builder uses for `op_type` on `inputs` instead of the ONNX
// op itself (a kernel is missing for the dtype, or computes it less
// accurately than PyTensor needs); nullopt when the op needs none.
std::optional<std::vector<Value*>> replacing(GraphBuilder& g, const std::string& op_type,
                                             const std::vector<Value*>& inputs, const Attributes& attrs);

// bitwise.cc: BitwiseAnd/Or/Xor/Not on integers before opset 18 (nullopt
// for other ops and from opset 18).
std::optional<std::vector<Value*>> bitwise_before_opset18(GraphBuilder& g, const std::string& op_type,
                                                          const std::vector<Value*>& inputs);

// trig.cc: sin and cos of a float64 value, accurate to a few ulp over the
// whole range (relative accuracy near their zeros included).
Value* sin_float64(GraphBuilder& g, Value* x);
Value* cos_float64(GraphBuilder& g, Value* x);
Value* tan_float64(GraphBuilder& g, Value* x);
// elementary.cc: log1p and expm1 of float64 values (building blocks of the
// special functions).
Value* log1p_float64(GraphBuilder& g, Value* x);
Value* expm1_float64(GraphBuilder& g, Value* x);
// sin(pi x) and cos(pi x), exact at their zeros (reflection formulas of the
// gamma family need them near poles).
Value* sinpi_float64(GraphBuilder& g, Value* x);
Value* cospi_float64(GraphBuilder& g, Value* x);

// sort.cc: NumPy's stable sort order along `axis` (NaN last), the sorted
// values, np.searchsorted on a 1-D sorted array, and np.cumprod.
Value* argsort_stable(GraphBuilder& g, Value* x, int64_t axis);
Value* sort_stable(GraphBuilder& g, Value* x, int64_t axis);
Value* searchsorted(GraphBuilder& g, Value* sorted, Value* v, bool right);
Value* cumprod(GraphBuilder& g, Value* x, int64_t axis);
// TopK guarded for ONNX Runtime 1.21, which crashes on an input with an empty
// axis other than the sorted one: an If whose branch for such inputs needs no
// TopK (nullopt when the static shape rules that out, or the op is malformed).
std::optional<std::vector<Value*>> topk_guarding_empty(GraphBuilder& g, const std::vector<Value*>& inputs,
                                                       const Attributes& attrs);
// einsum.cc: Einsum guarded the same way (ONNX Runtime 1.21 crashes on an
// empty operand); equations with "..." or without "->" are left as they are.
std::optional<std::vector<Value*>> einsum_guarding_empty(GraphBuilder& g, const std::vector<Value*>& inputs,
                                                         const Attributes& attrs);
// The name of the If branch that TopK (or Einsum) runs in once its input is known to
// have no other empty axis, and whether `g` builds such a branch.
inline constexpr const char* kNonemptyBranch = "nonempty_input";
bool builds_for_nonempty_input(const GraphBuilder& g);
// np.unique of a 1-D x: {values, first-occurrence index, inverse, counts}; of a
// 2-D x the same for its rows (np.unique(x, axis=0)).
std::vector<Value*> unique(GraphBuilder& g, Value* x);

}  // namespace pytensor_onnx::recipes
