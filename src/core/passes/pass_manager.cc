#include "pass_manager.h"

#include "cleanup.h"
#include "cse.h"
#include "dead_nodes.h"
#include "dedup_initializers.h"
#include "fold_constants.h"

namespace pytensor_onnx {

int optimize_graph(Graph& graph, const PassOptions& options) {
  int sweeps = 0;
  for (int i = 0; i < options.max_iterations; ++i) {
    bool changed = false;
    changed |= remove_redundant_casts_and_identities(graph);
    if (options.fold_constants) changed |= fold_constants(graph);
    changed |= deduplicate_initializers(graph);
    if (options.cse) changed |= eliminate_common_subexpressions(graph, options.functions);
    changed |= eliminate_dead_nodes(graph);
    if (!changed) break;
    ++sweeps;
  }
  return sweeps;
}

int optimize_model(Graph& main, const FunctionLibrary* functions, PassOptions options) {
  options.functions = functions;
  if (functions) {
    for (const Function* f : functions->all()) optimize_graph(*f->body, options);
  }
  return optimize_graph(main, options);
}

}  // namespace pytensor_onnx
