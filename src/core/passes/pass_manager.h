// Runs the graph passes to a fixed point.
#pragma once
#include "../ir.h"
namespace pytensor_onnx {
struct PassOptions {
  bool fold_constants = true;
  bool cse = true;
  int max_iterations = 10;
};
// Returns the number of sweeps that changed the graph.
int optimize_graph(Graph& graph, const PassOptions& options = {});
}  // namespace pytensor_onnx
