#include "merge_kernel_stages.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../kernel_ops.h"

namespace pytensor_onnx {
namespace {

// The most stages a merged node gets (its attributes grow with them).
constexpr size_t kMaxStages = 64;

// One stage of an Elemwise kernel node, its wiring as kernel_ops.h says.
struct Stage {
  Attributes attrs;                   // stage_attribute_names(), without the stage's suffix
  std::vector<int64_t> sources;       // per program input: node input k >= 0, or -(g + 1)
  std::vector<int64_t> destinations;  // per program output: node output j, or -1
};

bool is_elemwise_kernel(const Node* node, const std::unordered_set<std::string>& subgraph_reads) {
  if (!node || node->domain != kKernelDomain || node->op_type.rfind("Elemwise_", 0) != 0 || node->outputs.empty()) {
    return false;
  }
  if (std::find(node->inputs.begin(), node->inputs.end(), nullptr) != node->inputs.end()) return false;
  // (A node of one program whose attributes do not match its inputs and
  // outputs is left for the kernel to refuse.)
  if (!has_stages(*node) &&
      (stage_input_count(*node, 0) != node->inputs.size() || stage_output_count(*node, 0) != node->outputs.size())) {
    return false;
  }
  // (A subgraph reads by name, outside the users lists the order check reads.)
  return std::none_of(node->outputs.begin(), node->outputs.end(),
                      [&](const Value* out) { return subgraph_reads.count(out->name) > 0; });
}

size_t stage_count(const Node& node) { return static_cast<size_t>(std::max<int64_t>(1, node.attrs.get_int("stages", 1))); }

std::vector<Stage> stages_of(const Node& node) {
  const bool wired = has_stages(node);
  const std::vector<int64_t> sources = node.attrs.get_ints("stage_inputs").value_or(std::vector<int64_t>{});
  const std::vector<int64_t> destinations = node.attrs.get_ints("stage_outputs").value_or(std::vector<int64_t>{});
  std::vector<Stage> stages(stage_count(node));
  size_t next_source = 0, next_destination = 0;
  for (size_t s = 0; s < stages.size(); ++s) {
    Stage& stage = stages[s];
    for (const std::string& name : stage_attribute_names()) {
      if (const AttrValue* value = node.attrs.find(stage_attribute(name, s))) stage.attrs.set(name, *value);
    }
    for (size_t i = 0; i < stage_input_count(node, s); ++i) {
      stage.sources.push_back(wired ? sources.at(next_source++) : static_cast<int64_t>(i));
    }
    for (size_t j = 0; j < stage_output_count(node, s); ++j) {
      stage.destinations.push_back(wired ? destinations.at(next_destination++) : static_cast<int64_t>(j));
    }
  }
  return stages;
}

Attributes stage_attributes(const std::vector<Stage>& stages) {
  Attributes attrs;
  std::vector<int64_t> sources, destinations;
  for (size_t s = 0; s < stages.size(); ++s) {
    for (const Attribute& attr : stages[s].attrs.items()) attrs.set(stage_attribute(attr.name, s), attr.value);
    sources.insert(sources.end(), stages[s].sources.begin(), stages[s].sources.end());
    destinations.insert(destinations.end(), stages[s].destinations.begin(), stages[s].destinations.end());
  }
  attrs.set("stages", static_cast<int64_t>(stages.size()));
  attrs.set("stage_inputs", sources);
  attrs.set("stage_outputs", destinations);
  return attrs;
}

// Whether a reader other than `late` (or the graph) reads `value`.
bool read_elsewhere(const Graph& graph, const Value* value, const Node& late) {
  return graph.is_output(value) ||
         std::any_of(value->users.begin(), value->users.end(), [&](const Node* user) { return user != &late; });
}

// Whether `early` (before `late`) can run as stages of `late`, in late's
// place: its other readers come after late, and what they read has late's dtype.
bool can_merge(const Graph& graph, const Node& early, const Node& late,
               const std::unordered_map<const Node*, size_t>& position) {
  if (stage_count(early) + stage_count(late) > kMaxStages) return false;
  const size_t at = position.at(&late);
  const DType dtype = late.outputs[0]->dtype;
  for (const Value* out : early.outputs) {
    for (const Node* user : out->users) {
      if (user == &late) continue;
      const auto it = position.find(user);
      if (it == position.end() || it->second < at) return false;
    }
    if (read_elsewhere(graph, out, late) && out->dtype != dtype) return false;
  }
  return true;
}

void merge_into(Graph& graph, Node& early, Node& late) {
  std::vector<Stage> stages = stages_of(early);
  std::vector<Stage> later = stages_of(late);
  std::vector<Value*> inputs, outputs;
  std::unordered_map<const Value*, int64_t> input_index;
  auto index_of = [&](Value* value) {
    auto [it, added] = input_index.emplace(value, static_cast<int64_t>(inputs.size()));
    if (added) inputs.push_back(value);
    return it->second;
  };
  // Early's outputs, numbered across its stages.
  std::unordered_map<const Value*, int64_t> number_of;
  int64_t numbered = 0;
  for (Stage& stage : stages) {
    for (int64_t& source : stage.sources) {
      if (source >= 0) source = index_of(early.inputs.at(static_cast<size_t>(source)));
    }
    for (int64_t& destination : stage.destinations) {
      if (destination >= 0) {
        Value* out = early.outputs.at(static_cast<size_t>(destination));
        number_of[out] = numbered;
        destination = -1;
        if (read_elsewhere(graph, out, late)) {
          destination = static_cast<int64_t>(outputs.size());
          outputs.push_back(out);
        }
      }
      ++numbered;
    }
  }
  for (Stage& stage : later) {
    for (int64_t& source : stage.sources) {
      if (source < 0) {
        source -= numbered;  // (its number, after early's outputs)
        continue;
      }
      Value* in = late.inputs.at(static_cast<size_t>(source));
      const auto it = number_of.find(in);
      source = it != number_of.end() ? -(it->second + 1) : index_of(in);
    }
    for (int64_t& destination : stage.destinations) {
      if (destination < 0) continue;
      Value* out = late.outputs.at(static_cast<size_t>(destination));
      destination = static_cast<int64_t>(outputs.size());
      outputs.push_back(out);
    }
    stages.push_back(std::move(stage));
  }
  for (Value* in : late.inputs) {
    const auto it = std::find(in->users.begin(), in->users.end(), &late);
    if (it != in->users.end()) in->users.erase(it);
  }
  late.inputs = inputs;
  for (Value* in : inputs) in->users.push_back(&late);
  std::vector<Value*> left;  // early's outputs only late read: now inside it
  for (Value* out : early.outputs) {
    if (std::find(outputs.begin(), outputs.end(), out) == outputs.end()) left.push_back(out);
  }
  for (Value* out : outputs) out->producer = &late;
  late.outputs = outputs;
  early.outputs = left;
  late.attrs = stage_attributes(stages);
  // A node with strict axes is named after the check that raises its
  // failures (pytensor_onnx.dispatch.kernel): the merged node fails as it did.
  const bool early_checks = std::any_of(stages.begin(), stages.end() - static_cast<long>(later.size()),
                                        [](const Stage& s) { return s.attrs.has("strict_axes"); });
  const bool late_checks = std::any_of(stages.end() - static_cast<long>(later.size()), stages.end(),
                                       [](const Stage& s) { return s.attrs.has("strict_axes"); });
  std::string name = early_checks && !late_checks ? early.name : late.name;
  graph.remove_node(&early);
  late.name = std::move(name);
}

}  // namespace

bool merge_kernel_stages(Graph& graph) {
  const std::unordered_set<std::string> subgraph_reads = graph.names_read_by_own_subgraphs();
  std::unordered_map<const Node*, size_t> position;
  for (Node* node : graph.nodes()) position.emplace(node, position.size());
  bool changed = false;
  // (Merged nodes go before the node that takes them, which this walk has passed.)
  for (Node* late : graph.nodes()) {
    if (!is_elemwise_kernel(late, subgraph_reads)) continue;
    for (bool merged = true; merged;) {
      merged = false;
      // Early nodes that make late's inputs, or read one of them too.
      std::vector<Node*> candidates;
      for (Value* in : late->inputs) {
        if (in->producer) candidates.push_back(in->producer);
        for (Node* user : in->users) candidates.push_back(user);
      }
      for (Node* early : candidates) {
        // (A subgraph's nodes read enclosing values directly: readers of an
        // input may be nodes of another graph.)
        const auto at = position.find(early);
        if (early == late || at == position.end() || at->second > position.at(late) ||
            !is_elemwise_kernel(early, subgraph_reads) || !can_merge(graph, *early, *late, position)) {
          continue;
        }
        merge_into(graph, *early, *late);
        changed = merged = true;
        break;
      }
    }
  }
  return changed;
}

}  // namespace pytensor_onnx
