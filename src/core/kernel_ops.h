// The ops of the project's ONNX Runtime kernel library (src/kernels) as the
// core sees them: their domain, and the type and shape of what they produce.
// Mode ONNX builds them; exported files hold them only when asked to.
#pragma once

#include <cstddef>
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

// Whether input `i` of an Elemwise kernel node is read for the size of one
// of its axes (attribute `dim_inputs`: pairs input, axis; the kernel reads
// that size as an int64 scalar), not for its elements.
bool reads_a_dim(const Node& node, size_t i);

}  // namespace pytensor_onnx
