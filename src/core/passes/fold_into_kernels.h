// Lets the kernel library's element-wise nodes read past the Unsqueeze and
// Squeeze nodes that only add or drop leading size-1 axes of their operands.
#pragma once
#include "../ir.h"
namespace pytensor_onnx {
// An Elemwise or ScalarLoop kernel broadcasts its inputs as NumPy does (ranks
// aligned on the right) and, given its output rank (attribute `rank`), drops
// leading axes of an input beyond that rank, failing the run unless they are
// of size 1, as the Squeeze would. ONNX Runtime pays ~0.5 us per node, and
// PyTensor's ExpandDims of scalar parameters is everywhere in PyMC's graphs.
// Returns true if the graph changed (the bypassed nodes are left for the
// dead-node pass).
bool fold_leading_axes_into_kernels(Graph& graph);
}  // namespace pytensor_onnx
