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

// A reduction as a stage (attributes reduce, axes, keepdims, input_dtypes)
// of the node: ONNX's ReduceSum of float64 over constant axes of an input of
// known rank, or the kernel library's Reduce (max, min, float64 sum);
// nullopt for others.
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
    if (reduce != "max" && reduce != "min" && !(reduce == "sum" && in->dtype == DType::Float64)) return std::nullopt;
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

bool is_kernel_dtype(DType d) { return d == DType::Bool || d == DType::Float32 || d == DType::Float64 || is_integer(d); }

// Whether the kernels' Cast from `from` to `to` gives ONNX Runtime's Cast's
// value for every input: to or from bool (x != 0, NaN included; 0 or 1), and
// widenings that every value survives (integers to wider integers that hold
// them, integers of up to 32 bits and float32 to float64). Casts that round
// or overflow (float64 to int64, ...) stay ONNX's: the two differ out of range.
bool exact_cast(DType from, DType to) {
  if (!is_kernel_dtype(from) || !is_kernel_dtype(to)) return false;
  if (from == to || from == DType::Bool || to == DType::Bool) return true;
  if (to == DType::Float64) return from == DType::Float32 || (is_integer(from) && dtype_size(from) <= 4);
  if (!is_integer(from) || !is_integer(to) || dtype_size(to) <= dtype_size(from)) return false;
  // (A wider signed integer holds every unsigned one; a signed one fits no unsigned.)
  return is_signed_integer(to) || is_unsigned_integer(from);
}

// A stage of one instruction, `op` of `dtype` over the node's inputs in
// order (of `input_dtypes`), whose one output is the node's, of `rank` dims.
Stage one_instruction_stage(const std::string& op, const std::string& dtype, const std::vector<std::string>& input_dtypes,
                            size_t rank) {
  Stage stage;
  std::string program = op + " " + dtype, dtypes;
  for (size_t i = 0; i < input_dtypes.size(); ++i) {
    program += " " + std::to_string(i);
    dtypes += (i ? " " : "") + input_dtypes[i];
    stage.sources.push_back(static_cast<int64_t>(i));
  }
  stage.attrs.set("program", program);
  stage.attrs.set("input_dtypes", dtypes);
  stage.attrs.set("output_registers", std::vector<int64_t>{static_cast<int64_t>(input_dtypes.size())});
  stage.attrs.set("rank", static_cast<int64_t>(rank));
  stage.destinations = {0};
  return stage;
}

// ONNX's Cast as a one-instruction program (exact_cast), of an input of known rank.
std::optional<Stage> cast_stage(const Node& node) {
  if (!node.domain.empty() || node.op_type != "Cast" || node.inputs.size() != 1 || node.outputs.size() != 1) {
    return std::nullopt;
  }
  const Value* in = node.input(0);
  if (!in || !in->rank() || !exact_cast(in->dtype, node.outputs[0]->dtype)) return std::nullopt;
  return one_instruction_stage("Cast", dtype_name(node.outputs[0]->dtype), {dtype_name(in->dtype)}, *in->rank());
}

// The kernel library's MatMul of operands of known rank (a regression's
// X @ beta, and X.T @ residuals in its gradient) as a stage (attribute
// `matmul`: trans_a, trans_b).
std::optional<Stage> matmul_stage(const Node& node) {
  if (node.domain != kKernelDomain || (node.op_type != "MatMul_float64" && node.op_type != "MatMul_float32") ||
      node.inputs.size() != 2 || node.outputs.size() != 1) {
    return std::nullopt;
  }
  const Value* a = node.input(0);
  const Value* b = node.input(1);
  if (!a || !b || !a->rank() || !b->rank() || a->dtype != b->dtype ||
      (a->dtype != DType::Float64 && a->dtype != DType::Float32)) {
    return std::nullopt;
  }
  Stage stage;
  stage.attrs.set("matmul", std::vector<int64_t>{node.attrs.get_int("trans_a", 0), node.attrs.get_int("trans_b", 0)});
  stage.attrs.set("input_dtypes", dtype_name(a->dtype) + " " + dtype_name(b->dtype));
  stage.sources = {0, 1};
  stage.destinations = {0};
  return stage;
}

// A linear-algebra kernel node that makes one matrix (stack), of operands of
// known rank: Cholesky, SolveTriangular, CholeskySolve or Solve (a Gaussian
// process's factor of its kernel matrix and its solves) as a stage
// (attribute `linalg`: the kernel, beside its attributes).
std::optional<Stage> linalg_stage(const Node& node) {
  if (node.domain != kKernelDomain || node.outputs.size() != 1) return std::nullopt;
  const size_t cut = node.op_type.rfind('_');
  if (cut == std::string::npos) return std::nullopt;
  const std::string kernel = node.op_type.substr(0, cut), dtype = node.op_type.substr(cut + 1);
  const bool solves = kernel == "SolveTriangular" || kernel == "CholeskySolve" || kernel == "Solve";
  const size_t n = kernel == "Cholesky" ? 1 : solves ? 2 : 0;
  if (n == 0 || (dtype != "float64" && dtype != "float32") || node.inputs.size() != n) return std::nullopt;
  std::string input_dtypes;
  for (const Value* in : node.inputs) {
    if (!in || !in->rank() || dtype_name(in->dtype) != dtype) return std::nullopt;
    input_dtypes += (input_dtypes.empty() ? "" : " ") + dtype;
  }
  Stage stage;
  stage.attrs.set("linalg", kernel);
  for (const char* name : {"lower", "trans", "unit_diagonal", "b_ndim", "transpose_b", "negate_b", "assume_a"}) {
    if (const AttrValue* value = node.attrs.find(name)) stage.attrs.set(name, *value);
  }
  stage.attrs.set("input_dtypes", input_dtypes);
  for (size_t i = 0; i < n; ++i) stage.sources.push_back(static_cast<int64_t>(i));
  stage.destinations = {0};
  return stage;
}

// ONNX's Gather along axis 0 of int64 indices (PyTensor's a[idx]: a
// hierarchical model's group effects per observation) as a stage (attribute
// `gather`: the axis).
std::optional<Stage> gather_stage(const Node& node) {
  if (!node.domain.empty() || node.op_type != "Gather" || node.inputs.size() != 2 || node.outputs.size() != 1) {
    return std::nullopt;
  }
  const Value* data = node.input(0);
  const Value* indices = node.input(1);
  if (!data || !indices || !data->rank() || *data->rank() < 1 || !indices->rank() || indices->dtype != DType::Int64 ||
      !is_kernel_dtype(data->dtype)) {
    return std::nullopt;
  }
  const int64_t axis = node.attrs.get_int("axis", 0);
  if (axis != 0 && axis != -static_cast<int64_t>(*data->rank())) return std::nullopt;
  Stage stage;
  stage.attrs.set("gather", int64_t{0});
  stage.attrs.set("input_dtypes", dtype_name(data->dtype) + " int64");
  stage.sources = {0, 1};
  stage.destinations = {0};
  return stage;
}

// ONNX's ScatterND (reduction "add" or none) of int64 index tuples of known
// length into a numeric array (PyTensor's inc_subtensor and set_subtensor
// by index arrays: the gradient of a[idx]) as a stage (attribute `scatter`).
std::optional<Stage> scatter_stage(const Node& node) {
  if (!node.domain.empty() || node.op_type != "ScatterND" || node.inputs.size() != 3 || node.outputs.size() != 1) {
    return std::nullopt;
  }
  const Value* data = node.input(0);
  const Value* indices = node.input(1);
  const Value* updates = node.input(2);
  const std::string reduction = node.attrs.get_string("reduction").value_or("none");
  if (!data || !indices || !updates || (reduction != "add" && reduction != "none") || !data->rank() ||
      !indices->shape || indices->shape->empty() || !indices->shape->back().is_known() ||
      indices->dtype != DType::Int64 || updates->dtype != data->dtype) {
    return std::nullopt;
  }
  const int64_t k = indices->shape->back().size;
  const DType d = data->dtype;
  if (k < 1 || k > static_cast<int64_t>(*data->rank()) ||
      !(d == DType::Float64 || d == DType::Float32 || d == DType::Int64 || d == DType::Int32)) {
    return std::nullopt;
  }
  Stage stage;
  stage.attrs.set("scatter", reduction);
  stage.attrs.set("input_dtypes", dtype_name(d) + " int64 " + dtype_name(d));
  stage.sources = {0, 1, 2};
  stage.destinations = {0};
  return stage;
}

// ONNX's Reshape of a constant target, Squeeze and Unsqueeze of constant
// axes, of an input of known rank, as a stage (attribute `reshape`, per
// output axis: a size >= 0, -1 for the size the element count leaves, or
// -2 - k for the size of input axis k; `reshape_ones`: the input axes a
// Squeeze drops, which must have size 1). Between a
// factorization and the kernel nodes that read its diagonal (a flat view and
// a Gather), and in a simplex transform's shapes.
std::optional<Stage> reshape_stage(const Node& node) {
  if (!node.domain.empty() || node.outputs.size() != 1 || node.inputs.empty()) return std::nullopt;
  const Value* in = node.input(0);
  if (!in || !in->rank() || !is_kernel_dtype(in->dtype)) return std::nullopt;
  const auto rank = static_cast<int64_t>(*in->rank());
  std::vector<int64_t> map, ones;
  if (node.op_type == "Reshape") {
    const std::optional<std::vector<int64_t>> target = node.inputs.size() == 2 ? infer::const_ints(node.input(1)) : std::nullopt;
    if (!target || node.attrs.get_int("allowzero", 0) != 0) return std::nullopt;
    for (size_t i = 0; i < target->size(); ++i) {
      const int64_t t = (*target)[i];
      if (t < -1 || (t == 0 && static_cast<int64_t>(i) >= rank)) return std::nullopt;
      map.push_back(t == 0 ? -2 - static_cast<int64_t>(i) : t);
    }
    if (std::count(map.begin(), map.end(), -1) > 1) return std::nullopt;
  } else if (node.op_type == "Squeeze" || node.op_type == "Unsqueeze") {
    const std::optional<std::vector<int64_t>> axes = infer::axes_of(node);
    if (!axes) return std::nullopt;  // (a Squeeze of every axis of size 1: sizes known only at run time)
    const bool squeeze = node.op_type == "Squeeze";
    const int64_t out_rank = squeeze ? rank - static_cast<int64_t>(axes->size()) : rank + static_cast<int64_t>(axes->size());
    const int64_t axes_of_rank = squeeze ? rank : out_rank;
    std::vector<bool> marked(static_cast<size_t>(std::max<int64_t>(axes_of_rank, 0)), false);
    for (int64_t a : *axes) {
      if (a < -axes_of_rank || a >= axes_of_rank) return std::nullopt;
      const auto at = static_cast<size_t>(a < 0 ? a + axes_of_rank : a);
      if (marked[at]) return std::nullopt;
      marked[at] = true;
    }
    int64_t k = 0;
    for (int64_t j = 0; j < axes_of_rank; ++j) {
      if (squeeze) {
        if (!marked[static_cast<size_t>(j)]) map.push_back(-2 - j);
        else ones.push_back(j);
      } else {
        map.push_back(marked[static_cast<size_t>(j)] ? 1 : -2 - k++);
      }
    }
  } else {
    return std::nullopt;
  }
  Stage stage;
  stage.attrs.set("reshape", map);
  if (!ones.empty()) stage.attrs.set("reshape_ones", ones);
  stage.attrs.set("input_dtypes", dtype_name(in->dtype));
  stage.sources = {0};
  stage.destinations = {0};
  return stage;
}

// ONNX's Split of constant sizes, and Concat, of inputs of known rank and a
// kernel dtype, as a stage (attribute `split` with `split_sizes`, or
// `concat`: the axis, made non-negative): a simplex transform's pieces.
std::optional<Stage> join_stage(const Node& node) {
  if (!node.domain.empty() || (node.op_type != "Split" && node.op_type != "Concat") || node.inputs.empty()) {
    return std::nullopt;
  }
  const Value* first = node.input(0);
  if (!first || !first->rank() || !is_kernel_dtype(first->dtype)) return std::nullopt;
  const auto rank = static_cast<int64_t>(*first->rank());
  int64_t axis = node.attrs.get_int("axis", 0);
  if (axis < -rank || axis >= rank) return std::nullopt;
  if (axis < 0) axis += rank;
  Stage stage;
  if (node.op_type == "Split") {
    const std::optional<std::vector<int64_t>> sizes = node.inputs.size() == 2 ? infer::const_ints(node.input(1)) : std::nullopt;
    if (!sizes || sizes->size() != node.outputs.size() ||
        std::any_of(sizes->begin(), sizes->end(), [](int64_t k) { return k < 0; })) {
      return std::nullopt;  // (equal pieces of a size known at run time: ONNX's)
    }
    stage.attrs.set("split", axis);
    stage.attrs.set("split_sizes", *sizes);
    stage.attrs.set("input_dtypes", dtype_name(first->dtype));
    stage.sources = {0};
    for (size_t j = 0; j < node.outputs.size(); ++j) stage.destinations.push_back(static_cast<int64_t>(j));
    return stage;
  }
  std::string dtypes;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Value* in = node.input(i);
    if (!in || in->dtype != first->dtype || in->rank() != first->rank()) return std::nullopt;
    dtypes += (i ? " " : "") + dtype_name(first->dtype);
    stage.sources.push_back(static_cast<int64_t>(i));
  }
  stage.attrs.set("concat", axis);
  stage.attrs.set("input_dtypes", dtypes);
  stage.destinations = {0};
  return stage;
}

// ONNX's Expand of a constant shape, of an input of known rank and a kernel
// dtype, as an Identity program whose output is broadcast to that shape too
// (attribute `expand`).
std::optional<Stage> expand_stage(const Node& node) {
  if (!node.domain.empty() || node.op_type != "Expand" || node.inputs.size() != 2 || node.outputs.size() != 1) {
    return std::nullopt;
  }
  const Value* in = node.input(0);
  const std::optional<std::vector<int64_t>> target = infer::const_ints(node.input(1));
  if (!in || !in->rank() || !is_kernel_dtype(in->dtype) || !target || target->empty() ||
      std::any_of(target->begin(), target->end(), [](int64_t d) { return d < 0; })) {
    return std::nullopt;
  }
  const std::string dtype = dtype_name(in->dtype);
  Stage stage = one_instruction_stage("Identity", dtype, {dtype}, std::max(*in->rank(), target->size()));
  stage.attrs.set("expand", *target);
  return stage;
}

// ONNX's float64 arithmetic as a one-instruction program, of inputs of
// known rank (broadcast as NumPy does, which ONNX's are): the kernels' ops
// give the same IEEE results (exp and log: libm's, as PyTensor's C and
// Numba backends take them).
std::optional<Stage> arithmetic_stage(const Node& node) {
  static const std::unordered_map<std::string, std::pair<std::string, size_t>> kPrograms = {
      {"Add", {"Add", 2}}, {"Sub", {"Sub", 2}}, {"Mul", {"Mul", 2}}, {"Div", {"TrueDiv", 2}}, {"Neg", {"Neg", 1}},
      {"Abs", {"Abs", 1}}, {"Exp", {"Exp", 1}}, {"Log", {"Log", 1}}, {"Sqrt", {"Sqrt", 1}},
  };
  if (!node.domain.empty() || node.outputs.size() != 1) return std::nullopt;
  const auto it = kPrograms.find(node.op_type);
  if (it == kPrograms.end() || node.inputs.size() != it->second.second) return std::nullopt;
  size_t rank = 0;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Value* in = node.input(i);
    if (!in || !in->rank() || in->dtype != DType::Float64) return std::nullopt;
    rank = std::max(rank, *in->rank());
  }
  return one_instruction_stage(it->second.first, "float64", std::vector<std::string>(node.inputs.size(), "float64"), rank);
}

// A node of another kind as a stage: a reduction, a loop, a cast, a gather,
// a scatter, a matrix product, a factor or solve, a reshape, a split or
// concat, an expand, or float64 arithmetic.
std::optional<Stage> other_stage(const Node& node) {
  if (std::optional<Stage> stage = arithmetic_stage(node)) return stage;
  if (std::optional<Stage> stage = join_stage(node)) return stage;
  if (std::optional<Stage> stage = expand_stage(node)) return stage;
  if (std::optional<Stage> stage = reduction_stage(node)) return stage;
  if (std::optional<Stage> stage = loop_stage(node)) return stage;
  if (std::optional<Stage> stage = gather_stage(node)) return stage;
  if (std::optional<Stage> stage = scatter_stage(node)) return stage;
  if (std::optional<Stage> stage = matmul_stage(node)) return stage;
  if (std::optional<Stage> stage = linalg_stage(node)) return stage;
  if (std::optional<Stage> stage = reshape_stage(node)) return stage;
  return cast_stage(node);
}

// Whether `node` can be a stage of a merged node: an Elemwise kernel node
// (of one program whose attributes match its inputs and outputs, or of
// stages), a reduction (reduction_stage), a ScalarLoop kernel node
// (loop_stage), an exact Cast (cast_stage), a Gather (gather_stage), a
// ScatterND (scatter_stage), a MatMul kernel node (matmul_stage) or a
// Cholesky or solve kernel node (linalg_stage).
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

// Whether a stage is a plain program: no reduction, loop, gather, scatter,
// reshape, join, expand, product or linear algebra.
bool is_program_stage(const Stage& stage) {
  for (const char* kind :
       {"reduce", "num_state", "gather", "scatter", "reshape", "split", "concat", "expand", "matmul", "linalg"}) {
    if (stage.attrs.has(kind)) return false;
  }
  return stage.attrs.has("program");
}

// Whether two attribute values are equal (of the kinds stages have).
bool same_value(const AttrValue* a, const AttrValue* b) {
  if (!a || !b) return a == b;
  if (a->index() != b->index()) return false;
  if (const auto* x = std::get_if<int64_t>(a)) return *x == std::get<int64_t>(*b);
  if (const auto* x = std::get_if<std::string>(a)) return *x == std::get<std::string>(*b);
  if (const auto* x = std::get_if<std::vector<int64_t>>(a)) return *x == std::get<std::vector<int64_t>>(*b);
  return false;  // (no stage attribute is of another kind: taken as different)
}

// Whether two program stages run one program the same way (every attribute
// but their outputs equal); their sources are compared by the caller.
bool same_program(const Stage& a, const Stage& b) {
  if (!is_program_stage(a) || !is_program_stage(b)) return false;
  for (const std::string& name : stage_attribute_names()) {
    if (name == "output_registers" || name == "output_reductions") continue;
    if (!same_value(a.attrs.find(name), b.attrs.find(name))) return false;
  }
  return true;
}

// Program stages that run one program over the same values become one,
// whose outputs are both's (the union). PyTensor's graphs repeat a fused
// program with other outputs (the censored Gamma's log-survival and its
// gradients: three runs of a 109-instruction program with digamma over the
// same values). Returns true if the stages changed.
bool merge_duplicate_stages(std::vector<Stage>& stages) {
  // Sources as node inputs (stage -1) or (stage, output) of earlier stages.
  struct Ref {
    int64_t stage;
    int64_t index;  // node input, or the stage's output
    bool operator==(const Ref& o) const { return stage == o.stage && index == o.index; }
  };
  std::vector<int64_t> first;  // each stage's first output number
  int64_t numbered = 0;
  for (const Stage& stage : stages) {
    first.push_back(numbered);
    numbered += static_cast<int64_t>(stage.destinations.size());
  }
  std::vector<std::vector<Ref>> refs(stages.size());
  for (size_t s = 0; s < stages.size(); ++s) {
    for (int64_t source : stages[s].sources) {
      if (source >= 0) {
        refs[s].push_back({-1, source});
        continue;
      }
      const int64_t g = -(source + 1);
      const auto owner = static_cast<int64_t>(std::upper_bound(first.begin(), first.end(), g) - first.begin()) - 1;
      refs[s].push_back({owner, g - first[static_cast<size_t>(owner)]});
    }
  }
  std::vector<bool> removed(stages.size(), false);
  bool changed = false;
  for (size_t c = 0; c < stages.size(); ++c) {
    for (size_t a = 0; a < c; ++a) {
      if (removed[a] || refs[a] != refs[c] || !same_program(stages[a], stages[c])) continue;
      Stage& kept = stages[a];
      const Stage& gone = stages[c];
      if (!kept.attrs.get_ints("output_registers") || !gone.attrs.get_ints("output_registers")) continue;
      std::vector<int64_t> registers = *kept.attrs.get_ints("output_registers");
      const std::vector<int64_t> gone_registers = *gone.attrs.get_ints("output_registers");
      std::vector<int64_t> reductions =
          kept.attrs.get_ints("output_reductions").value_or(std::vector<int64_t>(registers.size(), 0));
      const std::vector<int64_t> gone_reductions =
          gone.attrs.get_ints("output_reductions").value_or(std::vector<int64_t>(gone_registers.size(), 0));
      if (reductions.size() != registers.size() || gone_reductions.size() != gone_registers.size() ||
          kept.destinations.size() != registers.size() || gone.destinations.size() != gone_registers.size()) {
        continue;  // (malformed: left for the kernel to refuse)
      }
      std::vector<int64_t> now(gone_registers.size());  // where each of gone's outputs is now
      for (size_t j = 0; j < gone_registers.size(); ++j) {
        size_t k = 0;
        while (k < registers.size() && !(registers[k] == gone_registers[j] && reductions[k] == gone_reductions[j] &&
                                         (kept.destinations[k] < 0 || gone.destinations[j] < 0))) {
          ++k;
        }
        if (k == registers.size()) {
          registers.push_back(gone_registers[j]);
          reductions.push_back(gone_reductions[j]);
          kept.destinations.push_back(-1);
        }
        if (gone.destinations[j] >= 0) kept.destinations[k] = gone.destinations[j];
        now[j] = static_cast<int64_t>(k);
      }
      kept.attrs.set("output_registers", registers);
      if (std::any_of(reductions.begin(), reductions.end(), [](int64_t r) { return r != 0; })) {
        kept.attrs.set("output_reductions", reductions);
      }
      for (std::vector<Ref>& stage_refs : refs) {
        for (Ref& ref : stage_refs) {
          if (ref.stage == static_cast<int64_t>(c)) ref = {static_cast<int64_t>(a), now[static_cast<size_t>(ref.index)]};
        }
      }
      removed[c] = changed = true;
      break;
    }
  }
  if (!changed) return false;
  // Numbered again without the stages merged away.
  std::vector<int64_t> renumbered(stages.size(), -1);
  numbered = 0;
  for (size_t s = 0; s < stages.size(); ++s) {
    if (removed[s]) continue;
    renumbered[s] = numbered;
    numbered += static_cast<int64_t>(stages[s].destinations.size());
  }
  std::vector<Stage> left;
  for (size_t s = 0; s < stages.size(); ++s) {
    if (removed[s]) continue;
    for (size_t i = 0; i < refs[s].size(); ++i) {
      const Ref& ref = refs[s][i];
      stages[s].sources[i] = ref.stage < 0 ? ref.index : -(renumbered[static_cast<size_t>(ref.stage)] + ref.index + 1);
    }
    left.push_back(std::move(stages[s]));
  }
  stages = std::move(left);
  return true;
}

}  // namespace

bool merge_kernel_stages(Graph& graph) {
  const std::unordered_set<std::string> subgraph_reads = graph.names_read_by_own_subgraphs();
  std::unordered_map<const Node*, size_t> position;
  for (Node* node : graph.nodes()) position.emplace(node, position.size());
  // A graph with kernel nodes runs on the kernel library (mode ONNX), whose
  // domain its model imports: there a chain of ONNX's arithmetic (a
  // log-softmax's Sub, Exp, ReduceSum, Log) becomes an Elemwise node of its
  // own. A graph without them stays as it is (a portable export).
  const bool runs_kernels = std::any_of(position.begin(), position.end(), [](const auto& entry) {
    return entry.first->domain == kKernelDomain;
  });
  // Whether `early` and `late` may make one node: one of them is an
  // Elemwise kernel node, or runs arithmetic in a graph of kernel nodes.
  // (Other pairs alone stay as they are: two reductions stay ONNX's; a cast
  // and a loop only merge into a node that runs more.)
  auto mergeable = [runs_kernels](const Node& early, const Node& late) {
    return is_elemwise_kernel(early) || is_elemwise_kernel(late) ||
           (runs_kernels && (arithmetic_stage(early) || arithmetic_stage(late)));
  };
  bool changed = false;
  // (Merged nodes go before the node that takes them, which this walk has
  // passed; so only nodes the walk has passed are removed.)
  for (Node* walked : graph.nodes()) {
    if (!is_stage_node(walked, subgraph_reads)) continue;
    // Merges into `late` until none is left; a merge in the earlier node's
    // place goes on from there (a Reshape before that place may then merge).
    Node* late = walked;
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
            !is_stage_node(early, subgraph_reads) || !mergeable(*early, *late)) {
          continue;
        }
        const Place place = placement(graph, *early, *late, position);
        if (place == Place::Nowhere) continue;
        merge(graph, *early, *late, place);
        changed = merged = true;
        if (place == Place::AtEarly) late = early;
        break;
      }
    }
  }
  for (Node* node : graph.nodes()) {
    if (!is_elemwise_kernel(*node) || !has_stages(*node)) continue;
    std::vector<Stage> stages = stages_of(*node);
    if (!merge_duplicate_stages(stages)) continue;
    node->attrs = stage_attributes(stages);
    changed = true;
  }
  return changed;
}

}  // namespace pytensor_onnx
