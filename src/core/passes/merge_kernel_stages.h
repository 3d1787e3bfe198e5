// Merges the kernel library's Elemwise nodes into nodes of several stages.
#pragma once
#include "../ir.h"
namespace pytensor_onnx {
// An Elemwise kernel node whose inputs another Elemwise kernel node makes,
// or that reads an input with it, runs that node's programs first, as
// earlier stages of its own (attribute `stages`, kernel_ops.h): what only
// the merged node reads never becomes an ONNX Runtime value. PyTensor's
// fusion stops where outputs differ in rank or dtype (PyMC's log-density is
// a sum of arrays' sums, then a scalar program), and ONNX Runtime pays per
// node (~0.15 us) and per value a node reads (~0.1 us: allocating its type
// and shape). A node is merged into a later one only where the graph keeps
// its order: every other reader of its outputs comes after that node, and
// the outputs others read have the later node's dtype (a custom op's outputs
// share one). The merged node takes the later node's place. Returns true if
// the graph changed (the merged nodes' own outputs are left for the
// dead-node pass). Reductions (ReduceSum of float64 over constant axes, the
// Reduce kernel), ScalarLoop kernel nodes, ONNX Casts that keep every
// value (to or from bool, widenings), Gathers along axis 0 and ScatterNDs
// (set or add) of int64 indices, MatMul kernel nodes, the Cholesky and
// solve kernel nodes (one matrix out: attribute `linalg`), and Reshapes of
// constant targets, Squeezes and Unsqueezes of constant axes are stages too,
// merged with an Elemwise kernel node (two of them alone stay nodes).
bool merge_kernel_stages(Graph& graph);
}  // namespace pytensor_onnx
