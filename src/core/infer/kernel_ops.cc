// Inference of the nodes of the project's kernel library (kernel_ops.h):
// their types and shapes are those of the recipes they replace.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "errors.h"
#include "infer.h"
#include "infer/common.h"
#include "kernel_ops.h"

namespace pytensor_onnx {
namespace {

// The shape of an Elemwise kernel's input as the view it reads (attribute
// `input_axes`): `rank` dims, 1 but where an axis of `shape` runs along one.
Shape view_shape(const Shape& shape, const std::vector<int64_t>& axes, size_t rank) {
  if (!shape || shape->size() != axes.size()) return std::nullopt;
  std::vector<Dim> dims(rank, Dim::known(1));
  for (size_t j = 0; j < axes.size(); ++j) {
    if (axes[j] >= 0 && static_cast<size_t>(axes[j]) < rank) dims[static_cast<size_t>(axes[j])] = (*shape)[j];
  }
  return dims;
}

// The first dims of `shape` (all but its last `core` ones), or unknown.
Shape leading_dims(const Shape& shape, size_t core) {
  if (!shape || shape->size() < core) return std::nullopt;
  return std::vector<Dim>(shape->begin(), shape->end() - static_cast<long>(core));
}

Shape with_core(const Shape& batch, const Shape& shape, size_t core) {
  if (!batch || !shape || shape->size() < core) return std::nullopt;
  std::vector<Dim> dims = *batch;
  dims.insert(dims.end(), shape->end() - static_cast<long>(core), shape->end());
  return dims;
}

// min(a, b) of two dims: known when both are, the dim itself when they are one.
Dim min_dim(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) return Dim::known(std::min(a.size, b.size));
  return a.same_as(b) ? a : Dim::unknown();
}

// The shapes of QR's and SVD's outputs from a stack of m x n matrices.
std::vector<Shape> qr_svd_shapes(const std::string& kernel, const Shape& a, bool full_matrices) {
  if (!a || a->size() < 2) return {std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  const std::vector<Dim> batch(a->begin(), a->end() - 2);
  const Dim m = (*a)[a->size() - 2], n = a->back(), k = min_dim(m, n);
  auto with = [&batch](std::initializer_list<Dim> tail) {
    std::vector<Dim> dims = batch;
    dims.insert(dims.end(), tail);
    return Shape(dims);
  };
  if (kernel == "QR") return {a, with({k}), with({m, m}), with({n})};
  if (kernel == "SVDValues") return {with({k})};
  return {with({m, full_matrices ? m : k}), with({k}), with({full_matrices ? n : k, n})};
}

// The shape of the one matrix (stack) a Cholesky or a solve makes, from its
// operands' shapes (`b` null for Cholesky): the kernel node's and the stage's
// of an Elemwise node (attribute `linalg`, merge_kernel_stages.h).
Shape one_matrix_shape(const Shape& a, const Shape* b_given, size_t b_core, bool transpose_b) {
  if (!b_given) return a;
  Shape b = *b_given;
  // (A right-hand side read transposed: the matrix is its last two dims swapped.)
  if (transpose_b && b && b->size() >= 2) std::swap(b->back(), (*b)[b->size() - 2]);
  return with_core(broadcast_shapes(leading_dims(a, 2), leading_dims(b, b_core)), b, b_core);
}

// The linear-algebra kernels (src/kernels/linalg_kernel.h): the shapes their
// recipes give. False for another kernel.
bool infer_linalg_kernel(Node& node, const std::string& kernel, DType dtype) {
  std::vector<Shape> shapes;
  const Shape& a = node.inputs.at(0)->shape;
  if (kernel == "Cholesky" || kernel == "PivotToPermutations") {
    shapes = {a};
  } else if (kernel == "SolveTriangular" || kernel == "CholeskySolve" || kernel == "Solve") {
    shapes = {one_matrix_shape(a, &node.inputs.at(1)->shape, static_cast<size_t>(node.attrs.get_int("b_ndim", 1)),
                               node.attrs.get_int("transpose_b", 0) != 0)};
  } else if (kernel == "LUFactor") {
    shapes = {a, leading_dims(a, 1), leading_dims(a, 1), leading_dims(a, 2)};
  } else if (kernel == "MatrixInverse") {
    shapes = {a, leading_dims(a, 2)};
  } else if (kernel == "Det") {
    shapes = {leading_dims(a, 2)};
  } else if (kernel == "SLogDet") {
    shapes = {leading_dims(a, 2), leading_dims(a, 2)};
  } else if (kernel == "Eigh") {
    shapes = {leading_dims(a, 1), a};
  } else if (kernel == "QR" || kernel == "SVD" || kernel == "SVDValues") {
    shapes = qr_svd_shapes(kernel, a, node.attrs.get_int("full_matrices", 1) != 0);
  } else {
    return false;
  }
  // The outputs that are not matrices of the kernel's dtype: flags and LU's pivots.
  const bool lu = kernel == "LUFactor";
  for (size_t i = 0; i < node.outputs.size() && i < shapes.size(); ++i) {
    const bool flag = (kernel == "MatrixInverse" && i == 1) || (lu && i == 3);
    const bool index = (lu && i > 0 && i < 3) || (kernel == "QR" && i == 3);
    node.outputs[i]->dtype = flag ? DType::Bool : index ? DType::Int64 : dtype;
    node.outputs[i]->shape = shapes[i];
  }
  return true;
}

// A matrix operand of the MatMul kernel as it reads it: with its last two dims
// swapped where its trans_a / trans_b attribute is 1.
Shape as_read(const Shape& shape, bool transposed) {
  if (!shape || !transposed || shape->size() < 2) return shape;
  std::vector<Dim> dims = *shape;
  std::swap(dims[dims.size() - 1], dims[dims.size() - 2]);
  return dims;
}

// The MatMul kernel (src/kernels/matmul_kernel.h) and a matrix product
// stage: NumPy's matmul of the operands as read, a vector's dim dropped
// from the result.
Shape matmul_shape(const Shape& a_shape, const Shape& b_shape, bool trans_a, bool trans_b) {
  const Shape a = as_read(a_shape, trans_a);
  const Shape b = as_read(b_shape, trans_b);
  if (!a || !b) return std::nullopt;
  if (a->empty() || b->empty()) throw BuildError("the MatMul kernel's operands must have rank >= 1");
  const bool a_vector = a->size() == 1, b_vector = b->size() == 1;
  const Dim& k_a = a->back();
  const Dim& k_b = b_vector ? b->back() : (*b)[b->size() - 2];
  if (k_a.is_known() && k_b.is_known() && k_a.size != k_b.size) {
    throw BuildError("the MatMul kernel's inner dims " + std::to_string(k_a.size) + " and " +
                     std::to_string(k_b.size) + " differ");
  }
  Shape out = broadcast_shapes(leading_dims(a, a_vector ? 1 : 2), leading_dims(b, b_vector ? 1 : 2));
  if (!out) return std::nullopt;
  if (!a_vector) out->push_back((*a)[a->size() - 2]);
  if (!b_vector) out->push_back(b->back());
  return out;
}

Shape matmul_kernel_shape(const Node& node) {
  return matmul_shape(node.inputs.at(0)->shape, node.inputs.at(1)->shape, node.attrs.get_int("trans_a", 0) != 0,
                      node.attrs.get_int("trans_b", 0) != 0);
}

// The Reduce kernel: its input's shape without the axes it reduces, or with
// 1 there (keepdims).
Shape reduced_shape(const Node& node) {
  const Shape& in = node.inputs.at(0)->shape;
  const std::vector<int64_t> axes = node.attrs.get_ints("axes").value_or(std::vector<int64_t>{});
  const bool keepdims = node.attrs.get_int("keepdims", 0) != 0;
  if (!in) return std::nullopt;
  for (size_t k = 0; k < axes.size(); ++k) {
    if (axes[k] < 0 || axes[k] >= static_cast<int64_t>(in->size()) || (k > 0 && axes[k] <= axes[k - 1])) {
      throw BuildError("the Reduce kernel's axes must be distinct axes of its input in increasing order");
    }
  }
  std::vector<Dim> dims;
  for (size_t d = 0; d < in->size(); ++d) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(d));
    if (!reduced) dims.push_back((*in)[d]);
    else if (keepdims) dims.push_back(Dim::known(1));
  }
  return dims;
}

// The number of space-separated words of `text` (a program's input dtypes).
size_t words(const std::string& text) {
  size_t count = 0;
  bool in_word = false;
  for (char c : text) {
    if (c != ' ' && !in_word) ++count;
    in_word = c != ' ';
  }
  return count;
}

// The shapes of the `n_outputs` outputs of stage `stage` of an element-wise
// kernel node from its program inputs' shapes (null: an omitted input):
// shaped as the inputs broadcast, but for the outputs an Elemwise reduces
// (0-d). Attribute `rank` (passes/fold_into_kernels.h) fixes the output's
// rank: an input's leading axes beyond it are dropped (size 1), and the shape
// is padded with 1s.
std::vector<Shape> elementwise_stage_shapes(const Node& node, size_t stage, const std::vector<const Shape*>& inputs,
                                            size_t n_outputs) {
  if (const auto flags = node.attrs.get_ints(stage_attribute("matmul", stage))) {  // merge_kernel_stages.h
    if (inputs.size() != 2 || !inputs[0] || !inputs[1] || flags->size() != 2) return {std::nullopt};
    return {matmul_shape(*inputs[0], *inputs[1], (*flags)[0] != 0, (*flags)[1] != 0)};
  }
  if (node.attrs.has(stage_attribute("linalg", stage))) {  // a Cholesky or a solve (merge_kernel_stages.h)
    if (inputs.empty() || inputs.size() > 2 || std::find(inputs.begin(), inputs.end(), nullptr) != inputs.end()) {
      return {std::nullopt};
    }
    return {one_matrix_shape(*inputs[0], inputs.size() == 2 ? inputs[1] : nullptr,
                             static_cast<size_t>(node.attrs.get_int(stage_attribute("b_ndim", stage), 1)),
                             node.attrs.get_int(stage_attribute("transpose_b", stage), 0) != 0)};
  }
  if (node.attrs.has(stage_attribute("gather", stage))) {  // data[indices] along axis 0 (merge_kernel_stages.h)
    if (inputs.size() != 2 || !inputs[0] || !*inputs[0] || (*inputs[0])->empty() || !inputs[1] || !*inputs[1]) {
      return {std::nullopt};
    }
    std::vector<Dim> shape(**inputs[1]);
    shape.insert(shape.end(), (*inputs[0])->begin() + 1, (*inputs[0])->end());
    return {Shape(std::move(shape))};
  }
  if (const auto sizes = node.attrs.get_ints(stage_attribute("split_sizes", stage))) {  // merge_kernel_stages.h
    const int64_t axis = node.attrs.get_int(stage_attribute("split", stage), 0);
    std::vector<Shape> pieces;
    for (int64_t size : *sizes) {
      Shape piece = inputs.empty() || !inputs[0] ? Shape(std::nullopt) : *inputs[0];
      if (piece && axis >= 0 && static_cast<size_t>(axis) < piece->size()) (*piece)[static_cast<size_t>(axis)] = Dim::known(size);
      else piece = std::nullopt;
      pieces.push_back(std::move(piece));
    }
    return pieces;
  }
  if (node.attrs.has(stage_attribute("concat", stage))) {  // the inputs joined along the axis
    const int64_t axis = node.attrs.get_int(stage_attribute("concat", stage), 0);
    Shape joined = inputs.empty() || !inputs[0] ? Shape(std::nullopt) : *inputs[0];
    if (!joined || axis < 0 || static_cast<size_t>(axis) >= joined->size()) return {std::nullopt};
    const auto at = static_cast<size_t>(axis);
    Dim total = Dim::known(0);
    for (const Shape* in : inputs) {
      const bool known = in && *in && (*in)->size() > at && (**in)[at].is_known() && total.is_known();
      total = known ? Dim::known(total.size + (**in)[at].size) : Dim::unknown();
    }
    (*joined)[at] = total;
    return {joined};
  }
  if (node.attrs.has(stage_attribute("scatter", stage))) {  // the data's shape
    return {inputs.empty() || !inputs[0] ? Shape(std::nullopt) : *inputs[0]};
  }
  if (const auto map = node.attrs.get_ints(stage_attribute("reshape", stage))) {  // merge_kernel_stages.h
    const Shape in = inputs.empty() || !inputs[0] ? Shape(std::nullopt) : *inputs[0];
    std::vector<Dim> out;
    int64_t known = 1, left = -1;
    for (int64_t m : *map) {
      if (m >= 0) {
        out.push_back(Dim::known(m));
        known *= m;
      } else if (m == -1) {
        left = static_cast<int64_t>(out.size());
        out.push_back(Dim::unknown());
      } else {
        const auto k = static_cast<size_t>(-2 - m);
        out.push_back(in && k < in->size() ? (*in)[k] : Dim::unknown());
        if (out.back().is_known()) known *= out.back().size;
        else known = -1;
      }
    }
    if (left >= 0 && known > 0 && in && std::all_of(in->begin(), in->end(), [](const Dim& d) { return d.is_known(); })) {
      int64_t total = 1;
      for (const Dim& d : *in) total *= d.size;
      out[static_cast<size_t>(left)] = Dim::known(total / known);
    }
    return {Shape(std::move(out))};
  }
  if (node.attrs.has(stage_attribute("reduce", stage))) {  // a reduction stage (merge_kernel_stages.h)
    const Shape* in = inputs.empty() ? nullptr : inputs[0];
    if (!in || !*in) return {std::nullopt};
    const std::vector<int64_t> axes = node.attrs.get_ints(stage_attribute("axes", stage)).value_or(std::vector<int64_t>{});
    const bool keepdims = node.attrs.get_int(stage_attribute("keepdims", stage), 0) != 0;
    std::vector<Dim> dims;
    for (size_t d = 0; d < (*in)->size(); ++d) {
      const bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
      if (!reduced) dims.push_back((**in)[d]);
      else if (keepdims) dims.push_back(Dim::known(1));
    }
    return {Shape(dims)};
  }
  const int64_t rank = node.attrs.get_int(stage_attribute("rank", stage), -1);
  // The output is padded to `rank` dims: an attribute of 2**40 allocated them.
  if (rank > infer::kMaxInferredRank) {
    throw BuildError("attribute 'rank' is " + std::to_string(rank) + "; at most " +
                     std::to_string(infer::kMaxInferredRank) + " dims are supported");
  }
  Shape shape = std::vector<Dim>{};
  for (size_t i = 0; i < inputs.size(); ++i) {
    // (An input read for the size of an axis is one int64: attribute `dim_inputs`.)
    if (!inputs[i] || reads_a_dim(node, i, stage)) continue;
    Shape in = *inputs[i];
    if (const std::optional<std::vector<int64_t>> axes = input_axes_of(node, i, stage); axes && rank >= 0) {
      in = view_shape(in, *axes, static_cast<size_t>(rank));
    } else if (rank >= 0 && in && in->size() > static_cast<size_t>(rank)) {
      in = std::vector<Dim>(in->end() - rank, in->end());
    }
    shape = broadcast_shapes(shape, in);
  }
  if (rank >= 0 && shape && shape->size() < static_cast<size_t>(rank)) {
    std::vector<Dim> padded(static_cast<size_t>(rank) - shape->size(), Dim::known(1));
    padded.insert(padded.end(), shape->begin(), shape->end());
    shape = padded;
  }
  if (const auto target = node.attrs.get_ints(stage_attribute("expand", stage))) {  // merge_kernel_stages.h
    std::vector<Dim> dims;
    for (int64_t d : *target) dims.push_back(Dim::known(d));
    shape = broadcast_shapes(shape, Shape(std::move(dims)));
  }
  const std::vector<int64_t> reductions =
      node.attrs.get_ints(stage_attribute("output_reductions", stage)).value_or(std::vector<int64_t>{});
  std::vector<Shape> shapes;
  for (size_t j = 0; j < n_outputs; ++j) {
    shapes.push_back(j < reductions.size() && reductions[j] != 0 ? Shape(std::vector<Dim>{}) : shape);
  }
  return shapes;
}

}  // namespace

bool has_stages(const Node& node) { return node.attrs.has("stages"); }

bool is_elemwise_kernel(const Node& node) {
  return node.domain == kKernelDomain && node.op_type.rfind("Elemwise_", 0) == 0;
}

std::string stage_attribute(const std::string& name, size_t stage) {
  return stage == 0 ? name : name + "_s" + std::to_string(stage);
}

const std::vector<std::string>& stage_attribute_names() {
  static const std::vector<std::string> names = {"program",    "input_dtypes", "output_registers",
                                                 "output_reductions", "sum_chunk", "rank",
                                                 "strict_axes", "dim_inputs",  "input_axes",
                                                 "reduce",     "axes",         "keepdims",
                                                 "num_state",  "next_state",   "until",
                                                 "gather",     "scatter",      "reshape",
                                                 "reshape_ones", "split",      "split_sizes",
                                                 "concat",     "expand",       "matmul",
                                                 "linalg",     "lower",        "trans",
                                                 "unit_diagonal", "b_ndim",    "transpose_b",
                                                 "negate_b",   "assume_a"};
  return names;
}

bool is_loop_stage(const Node& node, size_t stage) { return node.attrs.has(stage_attribute("num_state", stage)); }

size_t stage_input_count(const Node& node, size_t stage) {
  // (A loop's first input is its step count; `input_dtypes` are its body's.)
  return words(node.attrs.get_string(stage_attribute("input_dtypes", stage)).value_or("")) +
         (is_loop_stage(node, stage) ? 1 : 0);
}

size_t stage_output_count(const Node& node, size_t stage) {
  if (const auto sizes = node.attrs.get_ints(stage_attribute("split_sizes", stage))) return sizes->size();
  if (node.attrs.has(stage_attribute("reduce", stage)) || node.attrs.has(stage_attribute("gather", stage)) ||
      node.attrs.has(stage_attribute("scatter", stage)) || node.attrs.has(stage_attribute("reshape", stage)) ||
      node.attrs.has(stage_attribute("concat", stage)) || node.attrs.has(stage_attribute("matmul", stage)) ||
      node.attrs.has(stage_attribute("linalg", stage))) {
    return 1;
  }
  if (is_loop_stage(node, stage)) {
    const int64_t state = std::max<int64_t>(0, node.attrs.get_int(stage_attribute("num_state", stage), 0));
    return static_cast<size_t>(state) + (node.attrs.get_int(stage_attribute("until", stage), -1) >= 0 ? 1 : 0);
  }
  return node.attrs.get_ints(stage_attribute("output_registers", stage)).value_or(std::vector<int64_t>{}).size();
}

bool reads_a_dim(const Node& node, size_t i, size_t stage) {
  const std::optional<std::vector<int64_t>> pairs = node.attrs.get_ints(stage_attribute("dim_inputs", stage));
  if (!pairs) return false;
  for (size_t k = 0; k + 1 < pairs->size(); k += 2) {
    if ((*pairs)[k] == static_cast<int64_t>(i)) return true;
  }
  return false;
}

std::optional<std::vector<int64_t>> input_axes_of(const Node& node, size_t i, size_t stage) {
  const std::optional<std::vector<int64_t>> records = node.attrs.get_ints(stage_attribute("input_axes", stage));
  if (!records) return std::nullopt;
  for (size_t k = 0; k + 1 < records->size();) {
    const int64_t count = std::max<int64_t>(0, (*records)[k + 1]);
    const size_t end = std::min(records->size(), k + 2 + static_cast<size_t>(count));
    if ((*records)[k] == static_cast<int64_t>(i)) {
      return std::vector<int64_t>(records->begin() + static_cast<long>(k) + 2, records->begin() + static_cast<long>(end));
    }
    k = end;
  }
  return std::nullopt;
}

std::vector<int64_t> input_axes_attribute(const std::vector<std::optional<std::vector<int64_t>>>& axes) {
  std::vector<int64_t> records;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (!axes[i]) continue;
    records.push_back(static_cast<int64_t>(i));
    records.push_back(static_cast<int64_t>(axes[i]->size()));
    records.insert(records.end(), axes[i]->begin(), axes[i]->end());
  }
  return records;
}

std::vector<std::vector<int64_t>> packed_shapes(const Node& node, const std::string& name, size_t count) {
  std::vector<std::vector<int64_t>> shapes(count);
  const std::vector<int64_t> records = node.attrs.get_ints(name).value_or(std::vector<int64_t>{});
  std::vector<bool> seen(count, false);
  for (size_t at = 0; at < records.size();) {
    if (records.size() - at < 2) throw BuildError("attribute '" + name + "' ends inside a record (key, rank, dims...)");
    const int64_t key = records[at], rank = records[at + 1];
    if (key < 0 || static_cast<size_t>(key) >= count || seen[static_cast<size_t>(key)]) {
      throw BuildError("attribute '" + name + "' names " + std::to_string(key) + ": each of " + std::to_string(count) +
                       " at most once");
    }
    if (rank < 1 || static_cast<size_t>(rank) > records.size() - at - 2) {
      throw BuildError("attribute '" + name + "' gives " + std::to_string(key) + " a rank of " + std::to_string(rank) +
                       " it has no dims for");
    }
    std::vector<int64_t> shape(records.begin() + static_cast<long>(at + 2),
                               records.begin() + static_cast<long>(at + 2 + static_cast<size_t>(rank)));
    if (std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; })) {
      throw BuildError("attribute '" + name + "' gives " + std::to_string(key) + " a negative size");
    }
    seen[static_cast<size_t>(key)] = true;
    shapes[static_cast<size_t>(key)] = std::move(shape);
    at += 2 + static_cast<size_t>(rank);
  }
  return shapes;
}

namespace {

// An Elemwise node's outputs as its stages number them: with attribute
// `packed_outputs` (passes/pack_small_arrays.h) the scalars that are
// elements of its last output are `stand_ins` (sized here), the others its
// outputs in order.
std::vector<Value*> outputs_as_the_stages_number_them(Node& node, std::vector<Value>& stand_ins) {
  const std::optional<std::vector<int64_t>> packed = node.attrs.get_ints("packed_outputs");
  if (!packed) return node.outputs;
  const auto elements = static_cast<size_t>(std::count_if(packed->begin(), packed->end(), [](int64_t e) { return e >= 0; }));
  if (elements == 0 || node.outputs.size() != packed->size() - elements + 1) {
    throw BuildError("attribute 'packed_outputs' must pack some outputs into the node's last, and it has " +
                     std::to_string(node.outputs.size()) + " outputs for " + std::to_string(packed->size()));
  }
  stand_ins.resize(elements);
  std::vector<bool> taken(elements, false);
  std::vector<Value*> outputs;
  size_t next = 0;
  for (int64_t e : *packed) {
    if (e >= static_cast<int64_t>(elements) || (e >= 0 && taken[static_cast<size_t>(e)])) {
      throw BuildError("attribute 'packed_outputs' must number the packed elements 0 to " +
                       std::to_string(elements - 1) + ", each once");
    }
    if (e >= 0) taken[static_cast<size_t>(e)] = true;
    outputs.push_back(e < 0 ? node.outputs[next++] : &stand_ins[static_cast<size_t>(e)]);
  }
  return outputs;
}

// The shapes of the node's inputs as the stages read them: an element of a
// packed input (attribute `packed_inputs`, passes/pack_small_arrays.h) has
// the shape attribute `packed_input_shapes` records (a scalar's where none),
// held in `held`; null for an omitted input.
std::vector<const Shape*> node_input_shapes(const Node& node, std::deque<Shape>& held) {
  const std::optional<std::vector<int64_t>> packed = node.attrs.get_ints("packed_inputs");
  if (packed && packed->size() != node.inputs.size()) {
    throw BuildError("attribute 'packed_inputs' needs one entry per input of the node");
  }
  const std::vector<std::vector<int64_t>> shapes =
      packed ? packed_shapes(node, "packed_input_shapes", node.inputs.size()) : std::vector<std::vector<int64_t>>{};
  std::vector<const Shape*> inputs;
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    const Value* in = node.input(k);
    if (!in) {
      inputs.push_back(nullptr);
    } else if (packed && (*packed)[k] >= 0) {
      inputs.push_back(&held.emplace_back(shape_of_sizes(shapes[k])));
    } else {
      if (packed && !shapes[k].empty()) {
        throw BuildError("attribute 'packed_input_shapes' gives input " + std::to_string(k) + ", which is not packed, a shape");
      }
      inputs.push_back(&in->shape);
    }
  }
  return inputs;
}

// The shapes of a node of several stages, inferred stage by stage as the
// kernel runs them: each stage's inputs' (node inputs', or earlier stages'
// outputs') and the stages' outputs' (numbered across the stages). Checks
// the wiring (attributes `stage_inputs`, `stage_outputs`).
struct StageShapes {
  std::vector<std::vector<const Shape*>> inputs;  // per stage
  std::deque<Shape> values;  // (a deque: `inputs` point into it, through pushes and moves of the whole)
  std::deque<Shape> node_inputs;  // the shapes of packed node inputs (node_input_shapes)
};

StageShapes stage_shapes(const Node& node) {
  const int64_t stages = node.attrs.get_int("stages", 1);
  const std::vector<int64_t> sources = node.attrs.get_ints("stage_inputs").value_or(std::vector<int64_t>{});
  const size_t n_destinations = node.attrs.get_ints("stage_outputs").value_or(std::vector<int64_t>{}).size();
  // (As the kernel, src/kernels/elemwise.cc.)
  constexpr int64_t kMaxStages = 4096;
  if (stages < 1 || stages > kMaxStages) throw BuildError("attribute 'stages' must be 1 to 4096");
  StageShapes shapes;
  const std::vector<const Shape*> node_inputs = node_input_shapes(node, shapes.node_inputs);
  size_t next_source = 0;
  for (size_t s = 0; s < static_cast<size_t>(stages); ++s) {
    const size_t n_in = stage_input_count(node, s), n_out = stage_output_count(node, s);
    if (next_source + n_in > sources.size() || shapes.values.size() + n_out > n_destinations) {
      throw BuildError("attributes 'stage_inputs' and 'stage_outputs' must wire every stage's inputs and outputs");
    }
    std::vector<const Shape*>& inputs = shapes.inputs.emplace_back();
    for (size_t i = 0; i < n_in; ++i) {
      const int64_t source = sources[next_source++];
      const size_t g = static_cast<size_t>(-(source + 1));
      if (source >= 0 ? static_cast<size_t>(source) >= node.inputs.size() : g >= shapes.values.size()) {
        throw BuildError("attribute 'stage_inputs' names input " + std::to_string(source) +
                         ": not a node input, nor an earlier stage's output");
      }
      inputs.push_back(source >= 0 ? node_inputs[static_cast<size_t>(source)] : &shapes.values[g]);
    }
    for (Shape& shape : elementwise_stage_shapes(node, s, inputs, n_out)) shapes.values.push_back(std::move(shape));
  }
  return shapes;
}

// The input shapes of a node of one stage (no stage attributes; its outputs'
// are not needed here).
StageShapes one_stage_shapes(const Node& node) {
  StageShapes shapes;
  shapes.inputs.push_back(node_input_shapes(node, shapes.node_inputs));
  return shapes;
}

// The packed output of the float64 arrays `stand_ins` (none: the node packs
// nothing), each of the shape attribute `packed_output_shapes` records.
void pack_stand_ins(Node& node, const std::vector<Value>& stand_ins) {
  if (stand_ins.empty()) return;
  const std::vector<std::vector<int64_t>> shapes = packed_shapes(node, "packed_output_shapes", stand_ins.size());
  int64_t length = 0;
  for (size_t e = 0; e < stand_ins.size(); ++e) {
    const Value& element = stand_ins[e];
    if (element.dtype != DType::Float64 || (element.shape && !is_fully_known(element.shape)) ||
        (element.shape && known_sizes(element.shape) != shapes[e])) {
      throw BuildError("attribute 'packed_outputs' packs an output that is not a float64 array of the shape "
                       "'packed_output_shapes' gives it");
    }
    length += element_count(shapes[e]);
  }
  node.outputs.back()->dtype = DType::Float64;
  node.outputs.back()->shape = shape_of_sizes({length});
}

}  // namespace

bool infer_kernel_node(Node& node) {
  if (node.domain != kKernelDomain) return false;
  // Every kernel op is "<kernel>_<output dtype>".
  const size_t cut = node.op_type.rfind('_');
  if (cut == std::string::npos) return true;
  const DType dtype = dtype_from_name(node.op_type.substr(cut + 1));
  if (infer_linalg_kernel(node, node.op_type.substr(0, cut), dtype)) return true;
  if (node.op_type.substr(0, cut) == "Check") {  // its value, passed through (src/kernels/check_kernel.h)
    node.outputs.at(0)->dtype = dtype;
    node.outputs.at(0)->shape = node.inputs.at(0)->shape;
    return true;
  }
  if (node.op_type.substr(0, cut) == "Reduce") {  // src/kernels/reduce_kernel.h
    node.outputs.at(0)->dtype = dtype;
    node.outputs.at(0)->shape = reduced_shape(node);
    return true;
  }
  if (node.op_type.substr(0, cut) == "MatMul") {
    node.outputs.at(0)->dtype = dtype;
    node.outputs.at(0)->shape = matmul_kernel_shape(node);
    return true;
  }
  // The element-wise kernels (Elemwise, ScalarLoop), stage by stage, into
  // the outputs as the stages number them (stand-ins for packed scalars).
  std::vector<Value> stand_ins;
  const std::vector<Value*> outputs = outputs_as_the_stages_number_them(node, stand_ins);
  if (!has_stages(node)) {
    std::deque<Shape> held;
    const std::vector<const Shape*> inputs = node_input_shapes(node, held);
    const std::vector<Shape> shapes = elementwise_stage_shapes(node, 0, inputs, outputs.size());
    for (size_t j = 0; j < outputs.size(); ++j) {
      outputs[j]->dtype = dtype;
      outputs[j]->shape = shapes[j];
    }
    pack_stand_ins(node, stand_ins);
    return true;
  }
  const StageShapes shapes = stage_shapes(node);
  const std::vector<int64_t> destinations = node.attrs.get_ints("stage_outputs").value_or(std::vector<int64_t>{});
  for (size_t j = 0; j < shapes.values.size(); ++j) {
    const int64_t destination = destinations[j];
    if (destination < -1 || destination >= static_cast<int64_t>(outputs.size())) {
      throw BuildError("attribute 'stage_outputs' names output " + std::to_string(destination) + " of " +
                       std::to_string(outputs.size()));
    }
    if (destination < 0) continue;
    outputs[static_cast<size_t>(destination)]->dtype = dtype;
    outputs[static_cast<size_t>(destination)]->shape = shapes.values[j];
  }
  pack_stand_ins(node, stand_ins);
  return true;
}

namespace {

// Whether a value of `shape` holds one element whatever the run.
bool one_element(const Shape* shape) {
  return shape && *shape && std::all_of((*shape)->begin(), (*shape)->end(), [](const Dim& d) {
           return d.size == 1;
         });
}

using ProgramKey = std::tuple<std::string, std::string, std::vector<int64_t>, std::vector<bool>>;

// Program stage of `node` (an Elemwise kernel node) not seen yet, into `programs`.
void add_stage_programs(const Node& node, std::set<ProgramKey>& seen, std::vector<StageProgram>& programs) {
  if (!is_elemwise_kernel(node)) return;
  const StageShapes shapes = has_stages(node) ? stage_shapes(node) : one_stage_shapes(node);
  const std::vector<std::vector<const Shape*>>& inputs = shapes.inputs;
  for (size_t s = 0; s < inputs.size(); ++s) {
    const std::optional<std::string> program = node.attrs.get_string(stage_attribute("program", s));
    if (!program || is_loop_stage(node, s)) continue;
    StageProgram found{node.attrs.get_string(stage_attribute("input_dtypes", s)).value_or(""), *program,
                       node.attrs.get_ints(stage_attribute("output_registers", s)).value_or(std::vector<int64_t>{}),
                       {}};
    for (size_t i = 0; i < inputs[s].size(); ++i) {
      found.scalar_inputs.push_back(reads_a_dim(node, i, s) || one_element(inputs[s][i]));
    }
    if (seen.emplace(found.input_dtypes, found.program, found.output_registers, found.scalar_inputs).second) {
      programs.push_back(std::move(found));
    }
  }
}

}  // namespace

std::vector<StageProgram> stage_programs(const Graph& graph) {
  std::set<ProgramKey> seen;
  std::vector<StageProgram> programs;
  for_each_node(graph, [&](const Graph&, const Node& node) { add_stage_programs(node, seen, programs); });
  return programs;
}

}  // namespace pytensor_onnx
