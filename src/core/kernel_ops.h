// The ops of the project's ONNX Runtime kernel library (src/kernels) as the
// core sees them: their domain, and the type and shape of what they produce.
// Mode ONNX builds them; exported files hold them only when asked to.
#pragma once

#include <string>

namespace pytensor_onnx {

struct Node;

inline constexpr const char* kKernelDomain = "pytensor_onnx.kernels";
inline constexpr int kKernelDomainVersion = 1;

// Fills in the outputs' dtypes and shapes of a kernel-library node: every
// "<kernel>_<dtype>" node gives its dtype; Elemwise and ScalarLoop are shaped
// as their inputs broadcast, the linear-algebra kernels as their recipes.
// Returns false for ops of other domains.
bool infer_kernel_node(Node& node);

}  // namespace pytensor_onnx
