#include "dead_nodes.h"

#include <algorithm>

namespace pytensor_onnx {

bool eliminate_dead_nodes(Graph& graph) {
  bool changed = false;
  std::vector<Node*> nodes = graph.nodes();
  // Reverse topological order: a node's users are visited before the node, so
  // whole dead chains go in one sweep.
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    Node* node = *it;
    const bool used = std::any_of(node->outputs.begin(), node->outputs.end(),
                                  [&](const Value* v) { return graph.has_users(v); });
    if (!used) {
      graph.remove_node(node);
      changed = true;
    }
  }
  graph.remove_unused_values();
  return changed;
}

}  // namespace pytensor_onnx
