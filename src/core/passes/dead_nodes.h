// Removes nodes whose outputs nothing reads.
#pragma once
#include "../ir.h"
namespace pytensor_onnx {
// Returns true if the graph changed.
bool eliminate_dead_nodes(Graph& graph);
}  // namespace pytensor_onnx
