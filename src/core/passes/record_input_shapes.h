// Tells the kernel library's Elemwise nodes the shapes of the graph inputs
// they read, where those shapes are static and checked before a run starts.
#pragma once
#include "../ir.h"
namespace pytensor_onnx {
// An Elemwise kernel node asks ONNX Runtime for each input's type and shape
// on every run, ~80 ns an input (an allocation), as much as a PyMC-sized
// program's work. A graph input of static shape whose value ONNX Runtime
// checks against that shape before the run needs no asking: the node gets
// attribute `input_shapes`, records (input, dtype, rank, dims...) (the
// kernel's `known_input_shapes`, src/kernels/elemwise.h).
//
// ONNX Runtime checks the rank, dims and dtype of a graph input of rank 1 or
// more, and only the dtype of one of rank 0 (it takes any shape there). Rank
// 0 inputs are recorded only with `scalar_ranks_checked`: the caller's runs
// check them (mode ONNX's native sessions, src/runtime/session.h). Exported
// models never get the attribute. Returns true if the graph changed.
bool record_input_shapes_in_kernels(Graph& graph, bool scalar_ranks_checked);
}  // namespace pytensor_onnx
