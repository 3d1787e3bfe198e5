// Which input dtypes ONNX Runtime's CPU kernels run, and how to cast around
// the gaps without changing results.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "builder.h"

namespace pytensor_onnx {

// The dtypes ORT's CPU provider runs for the type-constrained input of
// `op_type` at `opset`; nullopt when the op has no known restriction.
std::optional<std::vector<DType>> ort_kernel_dtypes(const std::string& op_type, int opset);

// If `inputs` have a dtype with no kernel, builds the op on an exactly
// representable dtype and casts results back; returns the outputs. Returns
// nullopt when no adaptation is needed. Throws UnsupportedError when no exact
// adaptation exists (it never trades precision silently).
std::optional<std::vector<Value*>> adapt_kernel_dtypes(GraphBuilder& g, const std::string& op_type,
                                                       const std::vector<Value*>& inputs,
                                                       const Attributes& attrs, size_t n_outputs);

// Emits `op_type` on inputs whose dtypes have kernels, working around kernels
// known to compute wrong results (ONNX Runtime 1.31's int64 Max/Min/Clip and
// ReduceMax/ReduceMin mix up values beyond 32 bits) with exact recipes.
std::vector<Value*> emit_on_kernel(GraphBuilder& g, const std::string& op_type, const std::vector<Value*>& inputs,
                                   const Attributes& attrs, size_t n_outputs);

}  // namespace pytensor_onnx
