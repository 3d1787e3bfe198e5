#include "pack_scalars.h"

#include <algorithm>
#include <unordered_map>

#include "../kernel_ops.h"

namespace pytensor_onnx {

std::vector<PackedScalars> pack_scalar_outputs_of_kernels(Graph& graph) {
  std::vector<PackedScalars> made;
  const std::unordered_set<std::string> subgraph_reads = graph.names_read_by_own_subgraphs();
  std::vector<Value*>& graph_outputs = graph.mutable_outputs();
  for (Node* node : graph.nodes()) {
    if (!is_elemwise_kernel(*node) || node->attrs.get_ints("packed_outputs")) continue;
    std::vector<Value*> scalars;
    for (Value* out : node->outputs) {
      const bool scalar = out->dtype == DType::Float64 && out->shape && out->shape->empty();
      const bool only_an_output = out->users.empty() && subgraph_reads.count(out->name) == 0 &&
                                  std::count(graph_outputs.begin(), graph_outputs.end(), out) == 1;
      if (scalar && only_an_output) scalars.push_back(out);
    }
    if (scalars.size() < 2) continue;
    PackedScalars packed;
    std::vector<int64_t> elements;
    std::vector<Value*> kept;
    for (Value* out : node->outputs) {
      const auto at = std::find(scalars.begin(), scalars.end(), out);
      elements.push_back(at == scalars.end() ? -1 : at - scalars.begin());
      if (at == scalars.end()) kept.push_back(out);
      else packed.elements.push_back(out->name);
    }
    node->outputs = std::move(kept);
    Value* vector = graph.add_node_output(node, "scalar_outputs");
    vector->dtype = DType::Float64;
    vector->shape = shape_of_sizes({static_cast<int64_t>(scalars.size())});
    node->attrs.set("packed_outputs", std::move(elements));
    // (The packed output where the first scalar was; the scalars go.)
    const auto first = std::find(graph_outputs.begin(), graph_outputs.end(), scalars.front());
    *first = vector;
    for (Value* out : scalars) {
      out->producer = nullptr;
      graph_outputs.erase(std::remove(graph_outputs.begin(), graph_outputs.end(), out), graph_outputs.end());
    }
    packed.name = vector->name;
    made.push_back(std::move(packed));
  }
  if (!made.empty()) graph.remove_unused_values();
  return made;
}

std::vector<PackedScalars> pack_scalar_inputs_of_kernels(Graph& graph, const std::unordered_set<std::string>& kept) {
  const std::unordered_set<std::string> subgraph_reads = graph.names_read_by_own_subgraphs();
  auto read_by_kernels_only = [&](const Value* in) {
    if (in->users.empty() || graph.is_output(in) || subgraph_reads.count(in->name)) return false;
    return std::all_of(in->users.begin(), in->users.end(), [](const Node* user) {
      return is_elemwise_kernel(*user) && !user->attrs.get_ints("packed_inputs");
    });
  };
  std::vector<Value*> scalars;
  for (Value* in : graph.inputs()) {
    const bool scalar = in->dtype == DType::Float64 && in->shape && in->shape->empty();
    if (scalar && !in->is_constant() && !kept.count(in->name) && read_by_kernels_only(in)) scalars.push_back(in);
  }
  if (scalars.size() < 2) return {};
  PackedScalars packed;
  Value* vector = graph.add_input(graph.unique_name("scalar_inputs"), DType::Float64,
                                  shape_of_sizes({static_cast<int64_t>(scalars.size())}));
  packed.name = vector->name;
  // Per node that reads them: its inputs' elements (each slot of each user).
  std::unordered_map<Node*, std::vector<int64_t>> elements;
  for (size_t e = 0; e < scalars.size(); ++e) {
    Value* in = scalars[e];
    packed.elements.push_back(in->name);
    const std::vector<Node*> users = in->users;  // (replace_input edits the list)
    for (Node* user : users) {
      std::vector<int64_t>& slots = elements.try_emplace(user, user->inputs.size(), -1).first->second;
      for (size_t k = 0; k < user->inputs.size(); ++k) {
        if (user->inputs[k] != in) continue;
        user->replace_input(k, vector);
        slots[k] = static_cast<int64_t>(e);
      }
    }
  }
  for (auto& [node, slots] : elements) node->attrs.set("packed_inputs", std::move(slots));
  for (Value* in : scalars) graph.remove_input(in);
  graph.remove_unused_values();
  return {packed};
}

}  // namespace pytensor_onnx
