#include "dead_nodes.h"

#include <algorithm>

namespace pytensor_onnx {

bool eliminate_dead_nodes(Graph& graph) {
  bool changed = false;
  std::vector<Node*> nodes = graph.nodes();
  // Computed once: nodes removed below only make it a superset, which keeps
  // a value a sweep too long at worst (the pass manager sweeps again).
  const std::unordered_set<std::string> subgraph_reads = graph.names_read_by_own_subgraphs();
  // Reverse topological order: a node's users are visited before the node, so
  // whole dead chains go in one sweep.
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    Node* node = *it;
    const bool used = std::any_of(node->outputs.begin(), node->outputs.end(),
                                  [&](const Value* v) { return graph.has_users(v, subgraph_reads); });
    if (!used) {
      graph.remove_node(node, &subgraph_reads);
      changed = true;
    }
  }
  graph.remove_unused_values();
  return changed;
}

}  // namespace pytensor_onnx
