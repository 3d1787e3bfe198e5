#include "cleanup.h"

#include <unordered_set>

namespace pytensor_onnx {

bool remove_redundant_casts_and_identities(Graph& graph) {
  bool changed = false;
  // Exact for the whole pass: it removes only Identity and Cast nodes.
  const std::unordered_set<std::string> subgraph_reads = graph.names_read_by_own_subgraphs();
  for (Node* node : graph.nodes()) {
    if (!node->domain.empty() || node->inputs.size() != 1 || node->outputs.size() != 1) continue;
    Value* in = node->inputs[0];
    Value* out = node->outputs[0];
    if (!in || graph.is_output(out)) continue;
    const bool identity = node->op_type == "Identity";
    const bool no_op_cast = node->op_type == "Cast" && in->dtype != DType::Undefined &&
                            static_cast<DType>(node->attrs.get_int("to", 0)) == in->dtype;
    if (identity || no_op_cast) {
      graph.replace_all_uses(out, in);
      graph.remove_node(node, &subgraph_reads);
      changed = true;
    }
  }
  return changed;
}

}  // namespace pytensor_onnx
