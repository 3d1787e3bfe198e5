#include "fold_into_kernels.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "../infer/common.h"
#include "../kernel_ops.h"

namespace pytensor_onnx {
namespace {

// (A node of several stages, merge_kernel_stages.h, is left as it is: these
// folds run before that merge.)
bool is_elementwise_kernel(const Node& node) {
  return node.domain == kKernelDomain && !has_stages(node) &&
         (node.op_type.rfind("Elemwise_", 0) == 0 || node.op_type.rfind("ScalarLoop_", 0) == 0);
}

// The number k of leading axes that `node` adds (Unsqueeze) or drops
// (Squeeze) when its axes are exactly 0..k-1; nullopt for any other node.
std::optional<size_t> leading_axes_changed(const Node* node) {
  if (!node || !node->domain.empty() || (node->op_type != "Unsqueeze" && node->op_type != "Squeeze")) {
    return std::nullopt;
  }
  const Value* in = node->input(0);
  const Value* out = node->outputs.empty() ? nullptr : node->outputs[0];
  if (!in || !out || !in->rank() || !out->rank()) return std::nullopt;
  std::optional<std::vector<int64_t>> axes = infer::axes_of(*node);
  if (!axes || axes->empty()) return std::nullopt;  // Squeeze of every size-1 axis: not known which
  const bool unsqueeze = node->op_type == "Unsqueeze";
  const int64_t rank = static_cast<int64_t>(unsqueeze ? *out->rank() : *in->rank());
  std::vector<int64_t> sorted;
  for (int64_t axis : *axes) sorted.push_back(axis < 0 ? axis + rank : axis);
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != static_cast<int64_t>(i)) return std::nullopt;
  }
  const size_t k = sorted.size();
  const size_t expected = unsqueeze ? *in->rank() + k : *in->rank() - std::min(k, *in->rank());
  if (*out->rank() != expected) return std::nullopt;
  return k;
}

// The rank of the kernel node's broadcast (unsummed) outputs: its attribute
// when set, else the largest rank of its inputs; nullopt if unknown.
std::optional<size_t> output_rank(const Node& node) {
  const int64_t declared = node.attrs.get_int("rank", -1);
  if (declared >= 0) return static_cast<size_t>(declared);
  size_t rank = 0;
  for (const Value* in : node.inputs) {
    if (!in || !in->rank()) return std::nullopt;
    rank = std::max(rank, *in->rank());
  }
  return rank;
}

// The x and axis of `value` = Gather(Shape(x), k) for a constant 0-d k (the
// size of axis k of x, as an int64 scalar), x of known rank; else nullopt.
std::optional<std::pair<Value*, int64_t>> size_of_an_axis(const Value* value) {
  const Node* gather = value->producer;
  if (!gather || !gather->domain.empty() || gather->op_type != "Gather" || gather->attrs.get_int("axis", 0) != 0) {
    return std::nullopt;
  }
  const Value* index = gather->input(1);
  const Value* shape = gather->input(0);
  if (!index || !index->constant || !index->rank() || *index->rank() != 0 || !shape || !shape->producer) {
    return std::nullopt;
  }
  const Node* shape_node = shape->producer;
  // (Shape's start/end, opset 15: a slice of the dims, whose positions differ.)
  if (!shape_node->domain.empty() || shape_node->op_type != "Shape" || shape_node->attrs.has("start") ||
      shape_node->attrs.has("end")) {
    return std::nullopt;
  }
  Value* x = shape_node->input(0);
  if (!x || !x->rank() || (index->dtype != DType::Int64 && index->dtype != DType::Int32)) return std::nullopt;
  const std::vector<int64_t> k = index->constant->to_int64s();
  if (k.size() != 1) return std::nullopt;
  const auto rank = static_cast<int64_t>(*x->rank());
  const int64_t axis = k[0] < 0 ? k[0] + rank : k[0];
  if (axis < 0 || axis >= rank) return std::nullopt;
  return std::make_pair(x, axis);
}

// At most this many elements are gathered from a transposed operand per
// run (4 KiB-strided reads of a large one would cost more than ONNX
// Runtime's blocked Transpose).
constexpr int64_t kMaxTransposedElements = int64_t{1} << 16;

// How an operand of a kernel of output rank `rank` is read without a view:
// aligned on the right, its leading axes beyond `rank` dropped.
std::vector<int64_t> broadcast_axes(size_t operand_rank, size_t rank) {
  std::vector<int64_t> axes(operand_rank);
  for (size_t j = 0; j < operand_rank; ++j) {
    axes[j] = j + rank < operand_rank ? -1 : static_cast<int64_t>(j + rank - operand_rank);
  }
  return axes;
}

// Constant axes of an Unsqueeze or Squeeze, normalized against `rank` (the
// rank of the Unsqueeze's output, the Squeeze's input), sorted; nullopt if
// not constant or out of range.
std::optional<std::vector<int64_t>> normalized_axes(const Node& node, size_t rank) {
  std::optional<std::vector<int64_t>> axes = infer::axes_of(node);
  if (!axes || axes->empty()) return std::nullopt;  // (Squeeze of every size-1 axis: not known which)
  for (int64_t& axis : *axes) {
    if (axis < 0) axis += static_cast<int64_t>(rank);
    if (axis < 0 || axis >= static_cast<int64_t>(rank)) return std::nullopt;
  }
  std::sort(axes->begin(), axes->end());
  if (std::adjacent_find(axes->begin(), axes->end()) != axes->end()) return std::nullopt;
  return axes;
}

// Whether every element of `value` is known to be at most `limit` many.
bool at_most_elements(const Value& value, int64_t limit) {
  if (!value.shape) return false;
  int64_t count = 1;
  for (const Dim& d : *value.shape) {
    if (!d.is_known()) return false;
    if (d.size == 0) return true;
    if (d.size > limit / std::max<int64_t>(count, 1)) return false;
    count *= d.size;
  }
  return count <= limit;
}

// The operand of `value`'s producer and how its axes are read, when that
// producer is an Unsqueeze, Squeeze or Transpose that a view can replace and
// `axes` says how `value` is read; else nullopt.
std::optional<std::pair<Value*, std::vector<int64_t>>> read_past(const Value& value, const std::vector<int64_t>& axes) {
  const Node* producer = value.producer;
  if (!producer || !producer->domain.empty() || producer->outputs.size() != 1) return std::nullopt;
  Value* source = producer->input(0);
  if (!source || !source->rank() || !value.rank() || *value.rank() != axes.size()) return std::nullopt;
  const size_t rank = *source->rank();
  std::vector<int64_t> source_axes(rank, -1);
  if (producer->op_type == "Unsqueeze") {
    const std::optional<std::vector<int64_t>> added = normalized_axes(*producer, axes.size());
    if (!added || added->size() + rank != axes.size()) return std::nullopt;
    size_t j = 0;
    for (size_t k = 0; k < axes.size(); ++k) {
      if (!std::binary_search(added->begin(), added->end(), static_cast<int64_t>(k))) source_axes[j++] = axes[k];
    }
  } else if (producer->op_type == "Squeeze") {
    const std::optional<std::vector<int64_t>> dropped = normalized_axes(*producer, rank);
    if (!dropped || rank != dropped->size() + axes.size()) return std::nullopt;
    size_t k = 0;
    for (size_t j = 0; j < rank; ++j) {
      if (!std::binary_search(dropped->begin(), dropped->end(), static_cast<int64_t>(j))) source_axes[j] = axes[k++];
    }
  } else if (producer->op_type == "Transpose") {
    if (rank != axes.size() || source->constant) return std::nullopt;
    std::vector<int64_t> perm = producer->attrs.get_ints("perm").value_or(std::vector<int64_t>{});
    if (perm.empty()) {
      for (size_t j = rank; j-- > 0;) perm.push_back(static_cast<int64_t>(j));
    }
    if (perm.size() != rank) return std::nullopt;
    const bool inner_kept = rank == 0 || perm.back() == static_cast<int64_t>(rank) - 1;
    if (!inner_kept && !at_most_elements(*source, kMaxTransposedElements)) return std::nullopt;
    std::vector<bool> seen(rank, false);
    for (size_t k = 0; k < rank; ++k) {
      if (perm[k] < 0 || perm[k] >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(perm[k])]) {
        return std::nullopt;
      }
      seen[static_cast<size_t>(perm[k])] = true;
      source_axes[static_cast<size_t>(perm[k])] = axes[k];
    }
  } else {
    return std::nullopt;
  }
  return std::make_pair(source, std::move(source_axes));
}

// The value `in`, read with `axes`, is a view of: past every producer
// read_past can replace (a chain, x[:, None].T: each step composes), `axes`
// updated to how that value is read. `in` itself if none.
Value* read_through(const Graph& graph, Value* in, std::vector<int64_t>& axes) {
  Value* source = in;
  while (auto step = read_past(*source, axes)) {
    // A subgraph's node may read only what its graph can see.
    if (!graph.can_read(step->first)) break;
    source = step->first;
    axes = std::move(step->second);
  }
  return source;
}

// Sets the node's attribute input_axes to `views`, or removes it when no
// input is a view.
void set_input_axes(Node& node, const std::vector<std::optional<std::vector<int64_t>>>& views) {
  std::vector<int64_t> records = input_axes_attribute(views);
  if (records.empty()) {
    node.attrs.take("input_axes");
  } else {
    node.attrs.set("input_axes", std::move(records));
  }
}

}  // namespace

bool fold_axis_views_into_kernels(Graph& graph) {
  bool changed = false;
  for (Node* node : graph.nodes()) {
    if (!is_elemwise_kernel(*node) || has_stages(*node)) continue;  // (one-stage Elemwise nodes)
    const std::optional<size_t> rank = output_rank(*node);
    if (!rank) continue;
    std::vector<std::optional<std::vector<int64_t>>> views(node->inputs.size());
    bool folded = false;
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      views[i] = input_axes_of(*node, i);
      Value* in = node->inputs[i];
      if (!in || !in->rank() || reads_a_dim(*node, i)) continue;
      std::vector<int64_t> axes = views[i] ? *views[i] : broadcast_axes(*in->rank(), *rank);
      Value* source = read_through(graph, in, axes);
      if (source == in) continue;
      node->replace_input(i, source);
      views[i] = std::move(axes);
      folded = true;
    }
    if (folded) {
      set_input_axes(*node, views);
      node->attrs.set("rank", static_cast<int64_t>(*rank));
      changed = true;
    }
  }
  return changed;
}

bool fold_axis_views_into_merged_kernels(Graph& graph) {
  // A stage that is a plain program (no reduction, loop, gather, scatter,
  // reshape, join or expand: those read their inputs contiguous) of a
  // declared rank reads its inputs through views.
  auto reads_views = [](const Node& node, size_t s) {
    for (const char* kind : {"reduce", "num_state", "gather", "scatter", "reshape", "split", "concat", "expand"}) {
      if (node.attrs.has(stage_attribute(kind, s))) return false;
    }
    return node.attrs.has(stage_attribute("program", s)) && node.attrs.get_int(stage_attribute("rank", s), -1) >= 0;
  };
  bool changed = false;
  for (Node* node : graph.nodes()) {
    if (!is_elemwise_kernel(*node) || !has_stages(*node)) continue;
    const auto count = static_cast<size_t>(node->attrs.get_int("stages", 1));
    const std::vector<int64_t> sources = node->attrs.get_ints("stage_inputs").value_or(std::vector<int64_t>{});
    // Per stage, the view of each program input (as recorded).
    std::vector<std::vector<std::optional<std::vector<int64_t>>>> views(count);
    std::vector<std::pair<size_t, size_t>> at;  // (stage, program input) of each entry of `sources`
    for (size_t s = 0; s < count; ++s) {
      for (size_t p = 0; p < stage_input_count(*node, s); ++p) {
        views[s].push_back(input_axes_of(*node, p, s));
        at.emplace_back(s, p);
      }
    }
    if (at.size() != sources.size()) continue;  // (malformed: left for the kernel to refuse)
    std::vector<bool> stage_changed(count, false);
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      Value* in = node->inputs[i];
      if (!in || !in->rank()) continue;
      // Every program input that reads node input i, each by its own view of it.
      std::vector<size_t> readers;
      bool viewable = true;
      for (size_t k = 0; k < sources.size() && viewable; ++k) {
        if (sources[k] != static_cast<int64_t>(i)) continue;
        const auto [s, p] = at[k];
        viewable = reads_views(*node, s) && !reads_a_dim(*node, p, s);
        readers.push_back(k);
      }
      if (!viewable || readers.empty()) continue;
      Value* source = nullptr;
      std::vector<std::vector<int64_t>> read(readers.size());
      for (size_t r = 0; r < readers.size() && viewable; ++r) {
        const auto [s, p] = at[readers[r]];
        const auto rank = static_cast<size_t>(node->attrs.get_int(stage_attribute("rank", s), 0));
        std::vector<int64_t> axes = views[s][p] ? *views[s][p] : broadcast_axes(*in->rank(), rank);
        Value* from = read_through(graph, in, axes);
        // (Each reader walks the same producers: their views differ, not the steps.)
        viewable = from != in && (source == nullptr || source == from);
        source = from;
        read[r] = std::move(axes);
      }
      if (!viewable) continue;
      node->replace_input(i, source);
      for (size_t r = 0; r < readers.size(); ++r) {
        const auto [s, p] = at[readers[r]];
        views[s][p] = std::move(read[r]);
        stage_changed[s] = true;
      }
      changed = true;
    }
    for (size_t s = 0; s < count; ++s) {
      if (!stage_changed[s]) continue;
      node->attrs.set(stage_attribute("input_axes", s), input_axes_attribute(views[s]));
    }
  }
  return changed;
}

bool fold_shape_reads_into_kernels(Graph& graph) {
  bool changed = false;
  for (Node* node : graph.nodes()) {
    if (!is_elemwise_kernel(*node) || has_stages(*node)) continue;  // (one-stage Elemwise nodes)
    std::vector<int64_t> pairs = node->attrs.get_ints("dim_inputs").value_or(std::vector<int64_t>{});
    const size_t before = pairs.size();
    std::vector<std::optional<std::vector<int64_t>>> views(node->inputs.size());
    for (size_t i = 0; i < views.size(); ++i) views[i] = input_axes_of(*node, i);
    bool views_changed = false;
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      Value* in = node->inputs[i];
      if (!in || in->dtype != DType::Int64 || reads_a_dim(*node, i)) continue;
      const std::optional<std::pair<Value*, int64_t>> read = size_of_an_axis(in);
      // A subgraph's node may read only what its graph can see.
      if (!read || !graph.can_read(read->first)) continue;
      node->replace_input(i, read->first);
      pairs.push_back(static_cast<int64_t>(i));
      pairs.push_back(read->second);
      // A size read past DimShuffles (a view of a 0-d value, which
      // fold_axis_views_into_kernels may have recorded) is one int64 read
      // as 0-d, broadcast as the view was: an input read for a size is no
      // view (FUZZ_SEED=2297328082: the kernel refused a node that had both).
      if (views[i]) {
        views[i].reset();
        views_changed = true;
      }
    }
    if (pairs.size() != before) {
      node->attrs.set("dim_inputs", pairs);
      changed = true;
    }
    if (views_changed) set_input_axes(*node, views);
  }
  return changed;
}

bool fold_leading_axes_into_kernels(Graph& graph) {
  bool changed = false;
  for (Node* node : graph.nodes()) {
    if (!is_elementwise_kernel(*node)) continue;
    const std::optional<size_t> rank = output_rank(*node);
    if (!rank) continue;
    // ScalarLoop's input 0 is its step count, read as a scalar.
    const size_t first = node->op_type.rfind("ScalarLoop_", 0) == 0 ? 1 : 0;
    bool folded = false;
    for (size_t i = first; i < node->inputs.size(); ++i) {
      Value* in = node->inputs[i];
      if (!in || !in->producer || !leading_axes_changed(in->producer) || reads_a_dim(*node, i) ||
          input_axes_of(*node, i)) {
        continue;
      }
      Value* source = in->producer->inputs[0];
      // A subgraph's node may read only what its graph can see.
      if (!graph.can_read(source)) continue;
      node->replace_input(i, source);
      folded = true;
    }
    if (folded) {
      node->attrs.set("rank", static_cast<int64_t>(*rank));
      changed = true;
    }
  }
  return changed;
}

}  // namespace pytensor_onnx
