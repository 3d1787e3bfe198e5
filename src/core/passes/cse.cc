#include "cse.h"

#include <functional>
#include <unordered_map>
#include <unordered_set>

namespace pytensor_onnx {
namespace {

// Random ops draw new numbers on each node; subgraph-carrying nodes are left
// alone; a function call is pure when its body is.
bool is_pure(const Node& node, const FunctionLibrary* functions) {
  if (is_random_op(node)) return false;
  if (node.domain == kFunctionDomain) {
    const Function* f = functions ? functions->by_name(node.op_type) : nullptr;
    if (!f || !f->pure) return false;
  }
  for (const auto& attr : node.attrs.items()) {
    if (std::holds_alternative<std::shared_ptr<Graph>>(attr.value)) return false;
  }
  return true;
}

bool same_attrs(const Attributes& a, const Attributes& b) {
  if (a.items().size() != b.items().size()) return false;
  for (const auto& item : a.items()) {
    const AttrValue* other = b.find(item.name);
    if (!other || other->index() != item.value.index()) return false;
    if (const auto* t = std::get_if<Tensor>(&item.value)) {
      if (!t->same_content(std::get<Tensor>(*other))) return false;
    } else if (item.value != *other) {
      return false;
    }
  }
  return true;
}

size_t node_key(const Node& node) {
  size_t h = std::hash<std::string>()(node.op_type) ^ (std::hash<std::string>()(node.domain) << 1);
  for (const Value* in : node.inputs) h = h * 131 + std::hash<const void*>()(in);
  return h * 131 + node.outputs.size();
}

}  // namespace

bool eliminate_common_subexpressions(Graph& graph, const FunctionLibrary* functions) {
  bool changed = false;
  std::unordered_multimap<size_t, Node*> seen;
  // Exact for the whole pass: it never removes a node that has subgraphs.
  const std::unordered_set<std::string> subgraph_reads = graph.names_read_by_own_subgraphs();
  for (Node* node : graph.nodes()) {
    if (!is_pure(*node, functions)) continue;
    const size_t key = node_key(*node);
    Node* twin = nullptr;
    auto range = seen.equal_range(key);
    for (auto it = range.first; it != range.second; ++it) {
      Node* other = it->second;
      if (other->op_type == node->op_type && other->domain == node->domain && other->inputs == node->inputs &&
          other->outputs.size() == node->outputs.size() && same_attrs(other->attrs, node->attrs)) {
        twin = other;
        break;
      }
    }
    if (!twin) {
      seen.emplace(key, node);
      continue;
    }
    bool replaced_all = true;
    for (size_t i = 0; i < node->outputs.size(); ++i) {
      Value* out = node->outputs[i];
      // A graph output keeps its own name; only internal reads are redirected.
      if (graph.is_output(out)) {
        replaced_all = false;
        continue;
      }
      if (!out->users.empty()) changed = true;
      graph.replace_all_uses(out, twin->outputs[i]);
    }
    if (replaced_all) {
      graph.remove_node(node, &subgraph_reads);
      changed = true;
    }
  }
  return changed;
}

}  // namespace pytensor_onnx
