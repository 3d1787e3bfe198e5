// The inputs of a kernel node that are constants of its session
// (initializers: an exported model's data, the shared variables mode ONNX
// bakes in), read once when ONNX Runtime creates the kernel instead of on
// every run: asking ONNX Runtime for an input's type and shape allocates,
// and on PyMC-sized nodes (a few hundred ns of work) the per-input reads
// were about half of a kernel run.
#pragma once

#include <optional>
#include <vector>

#include "dtype.h"
#include "evaluate.h"
#include "ort_api.h"

namespace pytensor_onnx::kernels {

// Per input of the node: its array when it is a constant of the session
// whose dtype is `dtypes[i]`, else nothing (read on each run, which checks
// the dtype). ONNX Runtime keeps an initializer as long as the session, and
// the kernel lives no longer.
std::vector<std::optional<ArrayArg>> constant_inputs(const OrtKernelInfo* info, const std::vector<DType>& dtypes);
// The same where some inputs are not read for their elements (nullopt: not read here).
std::vector<std::optional<ArrayArg>> constant_inputs(const OrtKernelInfo* info,
                                                     const std::vector<std::optional<DType>>& dtypes);

}  // namespace pytensor_onnx::kernels
