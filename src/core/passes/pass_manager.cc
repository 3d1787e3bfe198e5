#include "pass_manager.h"

#include "check_links.h"
#include "cleanup.h"
#include "cse.h"
#include "dead_nodes.h"
#include "dedup_initializers.h"
#include "fold_constants.h"
#include "fold_into_kernels.h"
#include "fold_transposes_into_kernels.h"
#include "merge_kernel_stages.h"

namespace pytensor_onnx {

namespace {

// Optimizes the If/Loop bodies of `graph`'s nodes; whether any changed.
// Subgraph nodes read enclosing values directly (they are in those values'
// user lists), so work a subgraph drops frees outer values for the outer
// graph's dead-node pass.
bool optimize_subgraphs(Graph& graph, const PassOptions& options) {
  bool changed = false;
  for (Node* node : graph.nodes()) {
    for (const auto& attr : node->attrs.items()) {
      if (const auto* sub = std::get_if<std::shared_ptr<Graph>>(&attr.value)) {
        changed |= optimize_graph(**sub, options) > 0;
      }
    }
  }
  return changed;
}

}  // namespace

int optimize_graph(Graph& graph, const PassOptions& options) {
  int sweeps = 0;
  for (int i = 0; i < options.max_iterations; ++i) {
    bool changed = optimize_subgraphs(graph, options);
    changed |= remove_redundant_casts_and_identities(graph);
    changed |= fold_leading_axes_into_kernels(graph);
    changed |= fold_shape_reads_into_kernels(graph);
    changed |= fold_transposes_into_matmul_kernels(graph);
    changed |= fold_transposes_into_solve_kernels(graph);
    changed |= fold_vector_axes_into_matmul_kernels(graph);
    // (After the MatMul folds: a Squeeze of a product that only an Elemwise
    // kernel reads is a gemv first.)
    changed |= fold_axis_views_into_kernels(graph);
    if (options.fold_constants) changed |= fold_constants(graph);
    changed |= deduplicate_initializers(graph);
    if (options.cse) changed |= eliminate_common_subexpressions(graph, options.functions);
    changed |= eliminate_dead_nodes(graph);
    if (!changed) break;
    ++sweeps;
  }
  // (Last: the folds above read one-stage nodes.)
  // (Again while views fold: a Transpose that a fold takes in can be what
  // kept two nodes apart.)
  if (options.merge_kernel_stages) {
    for (bool merged = merge_kernel_stages(graph); merged;) {
      const bool folded = fold_axis_views_into_merged_kernels(graph);
      eliminate_dead_nodes(graph);
      merged = folded && merge_kernel_stages(graph);
    }
  }
  return sweeps;
}

int optimize_model(Graph& main, const FunctionLibrary* functions, PassOptions options) {
  options.functions = functions;
  if (functions) {
    for (const Function* f : functions->all()) {
      optimize_graph(*f->body, options);
      check_links(*f->body);
    }
  }
  const int sweeps = optimize_graph(main, options);
  check_links(main);
  return sweeps;
}

}  // namespace pytensor_onnx
