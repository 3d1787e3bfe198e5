// Runs the graph passes to a fixed point.
#pragma once
#include "../functions.h"
#include "../ir.h"
namespace pytensor_onnx {
struct PassOptions {
  bool fold_constants = true;
  bool cse = true;
  int max_iterations = 10;
  // Elemwise kernel nodes merged into nodes of several stages (merge_kernel_stages.h).
  bool merge_kernel_stages = true;
  // The model's functions: CSE merges calls of the pure ones.
  const FunctionLibrary* functions = nullptr;
};
// Returns the number of sweeps that changed the graph.
int optimize_graph(Graph& graph, const PassOptions& options = {});
// The main graph and the body of every function in `functions` (may be
// null); returns the main graph's sweeps.
int optimize_model(Graph& main, const FunctionLibrary* functions, PassOptions options = {});
}  // namespace pytensor_onnx
