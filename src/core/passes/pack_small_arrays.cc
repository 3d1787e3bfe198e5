#include "pack_small_arrays.h"

#include <algorithm>
#include <unordered_map>

#include "../kernel_ops.h"

namespace pytensor_onnx {

bool packable(DType dtype, const Shape& shape) {
  return dtype == DType::Float64 && is_fully_known(shape) && element_count(known_sizes(shape)) <= kMaxPackedArrayElements;
}

namespace {

// Records (key, rank, dims...) of the keys whose shapes are not scalars'.
void add_shape_record(std::vector<int64_t>& records, int64_t key, const std::vector<int64_t>& shape) {
  if (shape.empty()) return;
  records.push_back(key);
  records.push_back(static_cast<int64_t>(shape.size()));
  records.insert(records.end(), shape.begin(), shape.end());
}

}  // namespace

std::vector<PackedArrays> pack_small_outputs_of_kernels(Graph& graph) {
  std::vector<PackedArrays> made;
  const std::unordered_set<std::string> subgraph_reads = graph.names_read_by_own_subgraphs();
  std::vector<Value*>& graph_outputs = graph.mutable_outputs();
  for (Node* node : graph.nodes()) {
    if (!is_elemwise_kernel(*node) || node->attrs.get_ints("packed_outputs")) continue;
    std::vector<Value*> arrays;
    for (Value* out : node->outputs) {
      const bool only_an_output = out->users.empty() && subgraph_reads.count(out->name) == 0 &&
                                  std::count(graph_outputs.begin(), graph_outputs.end(), out) == 1;
      if (packable(out->dtype, out->shape) && only_an_output) arrays.push_back(out);
    }
    if (arrays.size() < 2) continue;
    PackedArrays packed;
    std::vector<int64_t> elements, shape_records;
    std::vector<Value*> kept;
    int64_t length = 0;
    for (Value* out : node->outputs) {
      const auto at = std::find(arrays.begin(), arrays.end(), out);
      elements.push_back(at == arrays.end() ? -1 : at - arrays.begin());
      if (at == arrays.end()) kept.push_back(out);
    }
    for (size_t e = 0; e < arrays.size(); ++e) {
      std::vector<int64_t> shape = known_sizes(arrays[e]->shape);
      length += element_count(shape);
      add_shape_record(shape_records, static_cast<int64_t>(e), shape);
      packed.elements.push_back(arrays[e]->name);
      packed.shapes.push_back(std::move(shape));
    }
    node->outputs = std::move(kept);
    Value* vector = graph.add_node_output(node, "packed_outputs");
    vector->dtype = DType::Float64;
    vector->shape = shape_of_sizes({length});
    node->attrs.set("packed_outputs", std::move(elements));
    if (!shape_records.empty()) node->attrs.set("packed_output_shapes", std::move(shape_records));
    // (The packed output where the first element was; the elements go.)
    const auto first = std::find(graph_outputs.begin(), graph_outputs.end(), arrays.front());
    *first = vector;
    for (Value* out : arrays) {
      out->producer = nullptr;
      graph_outputs.erase(std::remove(graph_outputs.begin(), graph_outputs.end(), out), graph_outputs.end());
    }
    packed.name = vector->name;
    made.push_back(std::move(packed));
  }
  if (!made.empty()) graph.remove_unused_values();
  return made;
}

std::vector<PackedArrays> pack_small_inputs_of_kernels(Graph& graph, const std::unordered_set<std::string>& kept) {
  const std::unordered_set<std::string> subgraph_reads = graph.names_read_by_own_subgraphs();
  auto read_by_kernels_only = [&](const Value* in) {
    if (in->users.empty() || graph.is_output(in) || subgraph_reads.count(in->name)) return false;
    return std::all_of(in->users.begin(), in->users.end(), [](const Node* user) {
      return is_elemwise_kernel(*user) && !user->attrs.get_ints("packed_inputs");
    });
  };
  std::vector<Value*> arrays;
  for (Value* in : graph.inputs()) {
    if (packable(in->dtype, in->shape) && !in->is_constant() && !kept.count(in->name) && read_by_kernels_only(in)) {
      arrays.push_back(in);
    }
  }
  if (arrays.size() < 2) return {};
  PackedArrays packed;
  std::vector<int64_t> offsets;
  int64_t length = 0;
  for (Value* in : arrays) {
    std::vector<int64_t> shape = known_sizes(in->shape);
    offsets.push_back(length);
    length += element_count(shape);
    packed.elements.push_back(in->name);
    packed.shapes.push_back(std::move(shape));
  }
  Value* vector = graph.add_input(graph.unique_name("packed_inputs"), DType::Float64, shape_of_sizes({length}));
  packed.name = vector->name;
  // Per node that reads them: per slot, the element it reads, or -1.
  std::unordered_map<Node*, std::vector<int64_t>> elements_of;
  std::vector<Node*> users_in_order;
  for (size_t e = 0; e < arrays.size(); ++e) {
    Value* in = arrays[e];
    const std::vector<Node*> users = in->users;  // (replace_input edits the list)
    for (Node* user : users) {
      auto [it, added] = elements_of.try_emplace(user, user->inputs.size(), -1);
      if (added) users_in_order.push_back(user);
      for (size_t k = 0; k < user->inputs.size(); ++k) {
        if (user->inputs[k] != in) continue;
        user->replace_input(k, vector);
        it->second[k] = static_cast<int64_t>(e);
      }
    }
  }
  for (Node* node : users_in_order) {
    std::vector<int64_t> slots = elements_of.at(node), shape_records;
    for (size_t k = 0; k < slots.size(); ++k) {
      if (slots[k] < 0) continue;
      const auto e = static_cast<size_t>(slots[k]);
      add_shape_record(shape_records, static_cast<int64_t>(k), packed.shapes[e]);
      slots[k] = offsets[e];
    }
    node->attrs.set("packed_inputs", std::move(slots));
    if (!shape_records.empty()) node->attrs.set("packed_input_shapes", std::move(shape_records));
  }
  for (Value* in : arrays) graph.remove_input(in);
  graph.remove_unused_values();
  return {packed};
}

}  // namespace pytensor_onnx
