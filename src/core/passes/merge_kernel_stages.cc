#include "merge_kernel_stages.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../infer/common.h"
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

bool is_elemwise_kernel(const Node& node) {
  return node.domain == kKernelDomain && node.op_type.rfind("Elemwise_", 0) == 0;
}

// A reduction as a stage (attributes reduce, axes, keepdims, input_dtypes)
// of the node: ONNX's ReduceSum of float64 over constant axes of an input of
// known rank, or the kernel library's Reduce (max, min); nullopt for others.
std::optional<Stage> reduction_stage(const Node& node) {
  const Value* in = node.input(0);
  if (!in || !in->rank() || node.outputs.size() != 1) return std::nullopt;
  const auto rank = static_cast<int64_t>(*in->rank());
  std::vector<int64_t> axes;
  std::string reduce;
  if (node.domain.empty() && node.op_type == "ReduceSum" && in->dtype == DType::Float64) {
    const std::optional<std::vector<int64_t>> given = infer::axes_of(node);
    if (node.input(1) && !given) return std::nullopt;  // axes known only at run time
    axes = given.value_or(std::vector<int64_t>{});
    if (axes.empty()) {
      if (node.attrs.get_int("noop_with_empty_axes", 0) != 0) return std::nullopt;
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    for (int64_t& axis : axes) {
      if (axis < -rank || axis >= rank) return std::nullopt;
      if (axis < 0) axis += rank;
    }
    reduce = "sum";
  } else if (node.domain == kKernelDomain && (node.op_type == "Reduce_float64" || node.op_type == "Reduce_float32")) {
    reduce = node.attrs.get_string("reduction").value_or("");
    axes = node.attrs.get_ints("axes").value_or(std::vector<int64_t>{});
    if (reduce != "max" && reduce != "min") return std::nullopt;
  } else {
    return std::nullopt;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end() ||
      std::any_of(axes.begin(), axes.end(), [&](int64_t a) { return a < 0 || a >= rank; })) {
    return std::nullopt;
  }
  Stage stage;
  stage.attrs.set("reduce", reduce);
  stage.attrs.set("axes", axes);
  stage.attrs.set("keepdims", node.attrs.get_int("keepdims", 1));
  stage.attrs.set("input_dtypes", dtype_name(in->dtype));
  stage.sources = {0};
  stage.destinations = {0};
  return stage;
}

// A ScalarLoop kernel node as a stage: its attributes as they are
// (kernel_ops.h: is_loop_stage), where they match its inputs and outputs.
std::optional<Stage> loop_stage(const Node& node) {
  if (node.domain != kKernelDomain || node.op_type.rfind("ScalarLoop_", 0) != 0) return std::nullopt;
  if (std::find(node.inputs.begin(), node.inputs.end(), nullptr) != node.inputs.end() || !is_loop_stage(node, 0) ||
      stage_input_count(node, 0) != node.inputs.size() || stage_output_count(node, 0) != node.outputs.size()) {
    return std::nullopt;
  }
  Stage stage;
  for (const std::string& name : stage_attribute_names()) {
    if (const AttrValue* value = node.attrs.find(name)) stage.attrs.set(name, *value);
  }
  for (size_t i = 0; i < node.inputs.size(); ++i) stage.sources.push_back(static_cast<int64_t>(i));
  for (size_t j = 0; j < node.outputs.size(); ++j) stage.destinations.push_back(static_cast<int64_t>(j));
  return stage;
}

// Whether the kernels' Cast from `from` to `to` gives ONNX Runtime's Cast's
// value for every input: to or from bool (x != 0, NaN included; 0 or 1), and
// widenings that every value survives (integers to wider integers that hold
// them, integers of up to 32 bits and float32 to float64). Casts that round
// or overflow (float64 to int64, ...) stay ONNX's: the two differ out of range.
bool exact_cast(DType from, DType to) {
  auto kernel_dtype = [](DType d) {
    return d == DType::Bool || d == DType::Float32 || d == DType::Float64 || is_integer(d);
  };
  if (!kernel_dtype(from) || !kernel_dtype(to)) return false;
  if (from == to || from == DType::Bool || to == DType::Bool) return true;
  if (to == DType::Float64) return from == DType::Float32 || (is_integer(from) && dtype_size(from) <= 4);
  if (!is_integer(from) || !is_integer(to) || dtype_size(to) <= dtype_size(from)) return false;
  // (A wider signed integer holds every unsigned one; a signed one fits no unsigned.)
  return is_signed_integer(to) || is_unsigned_integer(from);
}

// ONNX's Cast as a one-instruction program (exact_cast), of an input of known rank.
std::optional<Stage> cast_stage(const Node& node) {
  if (!node.domain.empty() || node.op_type != "Cast" || node.inputs.size() != 1 || node.outputs.size() != 1) {
    return std::nullopt;
  }
  const Value* in = node.input(0);
  if (!in || !in->rank() || !exact_cast(in->dtype, node.outputs[0]->dtype)) return std::nullopt;
  Stage stage;
  stage.attrs.set("program", "Cast " + dtype_name(node.outputs[0]->dtype) + " 0");
  stage.attrs.set("input_dtypes", dtype_name(in->dtype));
  stage.attrs.set("output_registers", std::vector<int64_t>{1});
  stage.attrs.set("rank", static_cast<int64_t>(*in->rank()));
  stage.sources = {0};
  stage.destinations = {0};
  return stage;
}

// A node of another kind as a stage: a reduction, a loop or a cast.
std::optional<Stage> other_stage(const Node& node) {
  if (std::optional<Stage> stage = reduction_stage(node)) return stage;
  if (std::optional<Stage> stage = loop_stage(node)) return stage;
  return cast_stage(node);
}

// Whether `node` can be a stage of a merged node: an Elemwise kernel node
// (of one program whose attributes match its inputs and outputs, or of
// stages), a reduction (reduction_stage), a ScalarLoop kernel node
// (loop_stage) or an exact Cast (cast_stage).
bool is_stage_node(const Node* node, const std::unordered_set<std::string>& subgraph_reads) {
  if (!node || node->outputs.empty()) return false;
  if (is_elemwise_kernel(*node)) {
    if (std::find(node->inputs.begin(), node->inputs.end(), nullptr) != node->inputs.end()) return false;
    // (A node of one program whose attributes do not match its inputs and
    // outputs is left for the kernel to refuse.)
    if (!has_stages(*node) &&
        (stage_input_count(*node, 0) != node->inputs.size() || stage_output_count(*node, 0) != node->outputs.size())) {
      return false;
    }
  } else if (!other_stage(*node)) {
    return false;
  }
  // (A subgraph reads by name, outside the users lists the order check reads.)
  return std::none_of(node->outputs.begin(), node->outputs.end(),
                      [&](const Value* out) { return subgraph_reads.count(out->name) > 0; });
}

size_t stage_count(const Node& node) {
  return is_elemwise_kernel(node) ? static_cast<size_t>(std::max<int64_t>(1, node.attrs.get_int("stages", 1))) : 1;
}

std::vector<Stage> stages_of(const Node& node) {
  if (!is_elemwise_kernel(node)) return {*other_stage(node)};
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

// Where the node that runs `early`'s stages then `late`'s can go: in late's
// place, where early's other readers come after late; or in early's, where
// late's other inputs are made before early. Either way what others read must
// have late's dtype (the merged node's).
enum class Place { Nowhere, AtLate, AtEarly };

Place placement(const Graph& graph, const Node& early, const Node& late,
                const std::unordered_map<const Node*, size_t>& position) {
  if (stage_count(early) + stage_count(late) > kMaxStages) return Place::Nowhere;
  const DType dtype = late.outputs[0]->dtype;
  bool at_late = true;
  for (const Value* out : early.outputs) {
    for (const Node* user : out->users) {
      if (user == &late) continue;
      const auto it = position.find(user);
      if (it == position.end() || it->second < position.at(&late)) at_late = false;
    }
    if (read_elsewhere(graph, out, late) && out->dtype != dtype) return Place::Nowhere;
  }
  if (at_late) return Place::AtLate;
  for (const Value* in : late.inputs) {
    if (!in->producer || in->producer == &early) continue;
    // (A producer of another graph, an enclosing one's, comes before this graph's nodes.)
    const auto it = position.find(in->producer);
    if (it != position.end() && it->second > position.at(&early)) return Place::Nowhere;
  }
  return Place::AtEarly;
}

void merge(Graph& graph, Node& early, Node& late, Place place) {
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
  // A node with strict axes is named after the check that raises its
  // failures (pytensor_onnx.dispatch.kernel): the merged node fails as it did.
  auto checks = [](auto first, auto last) {
    return std::any_of(first, last, [](const Stage& s) { return s.attrs.has("strict_axes"); });
  };
  const auto split = stages.end() - static_cast<long>(later.size());
  std::string name = checks(stages.begin(), split) && !checks(split, stages.end()) ? early.name : late.name;
  const DType dtype = late.outputs[0]->dtype;
  Node& host = place == Place::AtEarly ? early : late;
  Node& gone = place == Place::AtEarly ? late : early;
  for (Value* in : host.inputs) {
    const auto it = std::find(in->users.begin(), in->users.end(), &host);
    if (it != in->users.end()) in->users.erase(it);
  }
  host.inputs = inputs;
  for (Value* in : inputs) in->users.push_back(&host);
  // Early's outputs only late read: now inside the merged node.
  std::vector<Value*> inside;
  for (Value* out : early.outputs) {
    if (std::find(outputs.begin(), outputs.end(), out) == outputs.end()) inside.push_back(out);
  }
  for (Value* out : outputs) out->producer = &host;
  host.outputs = outputs;
  if (place == Place::AtEarly) {
    for (Value* out : inside) out->producer = nullptr;  // (left for the dead-node pass)
    gone.outputs.clear();
  } else {
    gone.outputs = inside;
  }
  host.attrs = stage_attributes(stages);
  // (A reduction, loop or cast that takes other stages becomes the Elemwise node of its dtype.)
  host.op_type = "Elemwise_" + dtype_name(dtype);
  host.domain = kKernelDomain;
  graph.remove_node(&gone);
  host.name = std::move(name);
}

}  // namespace

bool merge_kernel_stages(Graph& graph) {
  const std::unordered_set<std::string> subgraph_reads = graph.names_read_by_own_subgraphs();
  std::unordered_map<const Node*, size_t> position;
  for (Node* node : graph.nodes()) position.emplace(node, position.size());
  bool changed = false;
  // (Merged nodes go before the node that takes them, which this walk has passed.)
  for (Node* late : graph.nodes()) {
    if (!is_stage_node(late, subgraph_reads)) continue;
    // (Until late is merged into an earlier node, in its place.)
    for (bool merged = true, gone = false; merged && !gone;) {
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
        // (Two nodes of other kinds alone stay as they are: two reductions
        // stay ONNX's, whose Elemwise node would need the kernel domain
        // imported; a cast and a loop only merge into a node that runs more.)
        if (early == late || at == position.end() || at->second > position.at(late) ||
            !is_stage_node(early, subgraph_reads) || (!is_elemwise_kernel(*early) && !is_elemwise_kernel(*late))) {
          continue;
        }
        const Place place = placement(graph, *early, *late, position);
        if (place == Place::Nowhere) continue;
        merge(graph, *early, *late, place);
        changed = merged = true;
        gone = place == Place::AtEarly;
        break;
      }
    }
  }
  return changed;
}

}  // namespace pytensor_onnx
