#include "elemwise.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "constant_inputs.h"
#include "evaluate.h"
#include "matmul.h"
#include "reduce.h"
#include "status.h"
#include "thread_instance.h"

namespace pytensor_onnx::kernels {
namespace {

// The most dims a node's attribute `rank` may give (the core's inference
// has the same limit, src/core/infer/common.h).
constexpr int64_t kMaxRank = 1024;

// dtype.cc numbers element types as ONNX does; ONNX Runtime's enum agrees.
static_assert(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT == 1 && ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL == 9 &&
              ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE == 11 && ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64 == 13);

// What one run of a kernel node reads and writes, kept per thread and reused:
// a PyMC-sized node is a few hundred ns of work, and allocating these vectors
// on every run cost as much.
struct RunBuffers {
  std::vector<ArrayArg> inputs;
  std::vector<int64_t> shape;
  std::vector<void*> outputs;
  std::vector<int64_t> dims;  // the sizes that inputs read for a dim hold (attribute `dim_inputs`)
  std::vector<const std::vector<int64_t>*> shapes;  // the inputs' shapes, to broadcast
  // An Elemwise node's inputs, and what its stages wrote (numbered across
  // stages): node outputs, or memory of `scratch` for those that only later
  // stages read. Kept from run to run: a stage's intermediate array is the
  // largest this thread has run, not allocated again.
  std::vector<ArrayArg> node_inputs;
  std::vector<std::optional<DType>> node_dtypes;
  std::vector<ArrayArg> values;
  std::vector<std::vector<double>> scratch;
  std::vector<int64_t> array_shape;  // an input's shape as an array (read_as_view)
  std::vector<int64_t> expanded;     // a stage's output shape broadcast to its `expand` target
  std::vector<int64_t> key;          // the node inputs' dtypes and shapes (NodeRecord::key)
  std::vector<const void*> data;     // a replayed stage's inputs' memory
  // The node's outputs (ElemwiseKernel::outputs_) and the shapes of those it
  // packs (ElemwiseKernel::packed_shapes_), and where it packs arrays, its
  // packed output's memory, for this run.
  const std::vector<std::pair<size_t, int64_t>>* node_outputs = nullptr;
  const std::vector<std::vector<int64_t>>* packed_shapes = nullptr;
  double* packed = nullptr;
};

// Makes room for n arguments in `args`, which never shrinks: stages read
// different numbers of inputs, and nodes have different numbers of them,
// and each argument a shrink destroyed had its shape allocated again by the
// next stage. The run reads the first n (an ArgList); the arguments past
// them are stale.
void reserve_args(std::vector<ArrayArg>& args, size_t n) {
  if (args.size() < n) args.resize(n);
}

// The inputs of a ScalarLoop node as arrays (the first of run.inputs; their
// count is returned), checked against the dtypes its program reads
// (`dtypes[i]` for input i). Inputs in `constants` (constant_inputs.h) were
// read when the kernel was created.
size_t read_inputs(Ort::KernelContext& ctx, const std::vector<DType>& dtypes,
                   const std::vector<std::optional<ArrayArg>>& constants, RunBuffers& run) {
  std::vector<ArrayArg>& inputs = run.inputs;
  const size_t n_in = ctx.GetInputCount();
  if (n_in != dtypes.size()) {
    throw std::invalid_argument("the program reads " + std::to_string(dtypes.size()) + " inputs, the node has " +
                                std::to_string(n_in));
  }
  reserve_args(inputs, n_in);
  for (size_t i = 0; i < n_in; ++i) {
    inputs[i].strides.clear();
    if (i < constants.size() && constants[i]) {
      inputs[i].data = constants[i]->data;
      inputs[i].shape.assign(constants[i]->shape.begin(), constants[i]->shape.end());
      continue;
    }
    Ort::ConstValue value = ctx.GetInput(i);
    auto info = value.GetTensorTypeAndShapeInfo();
    if (dtype_from_onnx(static_cast<int>(info.GetElementType())) != dtypes[i]) {
      throw std::invalid_argument("input " + std::to_string(i) + " is not of the program's dtype " +
                                  dtype_name(dtypes[i]));
    }
    std::vector<int64_t>& shape = inputs[i].shape;
    shape.resize(info.GetDimensionsCount());
    // (The C call: the C++ wrapper's GetShape returns a new vector.)
    if (!shape.empty()) Ort::ThrowOnError(Ort::GetApi().GetDimensions(info, shape.data(), shape.size()));
    inputs[i].data = value.GetTensorRawData();
  }
  return n_in;
}

// Input `i` (its elements at arg.data, C-contiguous, of shape arg.shape) as
// the view the node reads (attribute `input_axes`): `axes[j]` is the output
// axis that axis j of the array runs along, or -1 where the view drops an
// axis, which must then have size 1 (the Squeeze it replaced would fail
// otherwise). `arg` becomes the view: a shape of `rank` dims and its strides;
// `own` (the caller's buffer) keeps the array's shape.
void read_as_view(ArrayArg& arg, size_t i, const std::vector<int64_t>& axes, size_t rank, std::vector<int64_t>& own) {
  own = arg.shape;
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("input " + std::to_string(i) + " of shape " + shape_text(own) + " " + why);
  };
  if (own.size() != axes.size()) {
    fail("is read as an array of rank " + std::to_string(axes.size()) + " (the node's attribute input_axes)");
  }
  arg.shape.assign(rank, 1);
  arg.strides.assign(rank, 0);
  int64_t stride = 1;
  for (size_t j = own.size(); j-- > 0;) {
    const int64_t axis = axes[j], size = own[j];
    if (axis < 0) {
      if (size != 1) fail("cannot be squeezed on axis " + std::to_string(j) + ", which is not of size 1");
    } else {
      const auto out = static_cast<size_t>(axis);
      arg.shape[out] = size;
      arg.strides[out] = stride;
    }
    stride *= size;
  }
}

// The inputs broadcast (NumPy's rules) into `out`. With the node's attribute
// `rank` (>= 0; set where the core folded an Unsqueeze or Squeeze of leading
// axes into the node, src/core/passes/fold_into_kernels.h), an input's leading
// axes beyond it are dropped, failing as that Squeeze would unless they are 1,
// and the shape is padded with leading 1s to that rank.
void output_shape(ArrayArg* inputs, size_t count, int64_t rank, std::vector<const std::vector<int64_t>*>& shapes,
                  std::vector<int64_t>& out) {
  shapes.clear();
  for (size_t i = 0; i < count; ++i) {
    std::vector<int64_t>& shape = inputs[i].shape;
    if (rank >= 0 && shape.size() > static_cast<size_t>(rank)) {
      const auto extra = static_cast<long>(shape.size() - static_cast<size_t>(rank));
      if (std::any_of(shape.begin(), shape.begin() + extra, [](int64_t d) { return d != 1; })) {
        throw std::invalid_argument("input " + std::to_string(i) + " of shape " + shape_text(shape) +
                                    " cannot be squeezed to rank " + std::to_string(rank) +
                                    ": its leading axes must have size 1");
      }
      shape.erase(shape.begin(), shape.begin() + extra);
    }
    shapes.push_back(&shape);
  }
  try {
    broadcast_into(shapes, out);
  } catch (const std::invalid_argument& e) {
    // PyTensor raises ValueError for element-wise inputs that do not fit: a
    // node named after its strict axes' check fails as that check does
    // (linker.run_error reads these words), though the shapes meet here first.
    throw std::invalid_argument(std::string("Input dimension mismatch: ") + e.what());
  }
  if (rank >= 0 && out.size() < static_cast<size_t>(rank)) out.insert(out.begin(), rank - out.size(), 1);
}

// PyTensor broadcasts a dim only where an input's type says it is 1: pairs
// (input, output axis) in `strict` (attribute `strict_axes`) are dims of
// unknown size that must not broadcast. An input of size 1 there while the
// output's size is not 1 fails the run, as PyTensor raises.
void check_strict_axes(ArgList inputs, const std::vector<int64_t>& strict,
                       const std::vector<int64_t>& out) {
  for (size_t k = 0; k + 1 < strict.size(); k += 2) {
    const auto i = static_cast<size_t>(strict[k]);
    const auto axis = static_cast<size_t>(strict[k + 1]);
    if (i >= inputs.size() || axis >= out.size()) continue;
    const std::vector<int64_t>& shape = inputs[i].shape;
    // A folded ExpandDims leaves an input fewer axes; those were broadcastable.
    if (axis + shape.size() < out.size()) continue;
    const size_t in_axis = axis + shape.size() - out.size();
    if (shape[in_axis] == 1 && out[axis] != 1) {
      throw std::invalid_argument("Input dimension mismatch: input " + std::to_string(i) + " of shape " +
                                  shape_text(shape) + " has size 1 on axis " + std::to_string(axis) +
                                  ", which PyTensor's type does not let broadcast to size " +
                                  std::to_string(out[axis]));
    }
  }
}

// The node's outputs, of `shape`, into `outputs`; those reduced are 0-d.
void make_outputs(Ort::KernelContext& ctx, size_t count, const std::vector<int64_t>& shape,
                  const std::vector<Reduction>& reductions, std::vector<void*>& outputs) {
  if (ctx.GetOutputCount() != count) {
    throw std::invalid_argument("the program has " + std::to_string(count) + " outputs, the node " +
                                std::to_string(ctx.GetOutputCount()));
  }
  outputs.clear();
  for (size_t j = 0; j < count; ++j) {
    const bool reduced = j < reductions.size() && reductions[j] != Reduction::None;
    outputs.push_back(ctx.GetOutput(j, shape.data(), reduced ? 0 : shape.size()).GetTensorMutableRawData());
  }
}

// An optional list attribute of the node (empty when absent).
std::vector<int64_t> optional_ints(const Ort::ConstKernelInfo& info, const char* name) {
  try {
    return info.GetAttributes<int64_t>(name);
  } catch (const Ort::Exception&) {
    return {};
  }
}

// An optional string attribute of the node (empty when absent).
std::string optional_string(const Ort::ConstKernelInfo& info, const char* name) {
  try {
    return info.GetAttribute<std::string>(name);
  } catch (const Ort::Exception&) {
    return {};
  }
}

// An optional integer attribute of the node (`fallback` when absent).
int64_t optional_int(const Ort::ConstKernelInfo& info, const char* name, int64_t fallback) {
  try {
    return info.GetAttribute<int64_t>(name);
  } catch (const Ort::Exception&) {
    return fallback;
  }
}

// The node's output rank (attribute `rank`), or -1 when not fixed. As the
// core's inference, at most kMaxRank: a hand-made node's rank of 2**40 would
// be as many dims allocated on every run.
int64_t rank_attribute(const Ort::ConstKernelInfo& info, const char* name = "rank") {
  const int64_t rank = optional_int(info, name, -1);
  if (rank > kMaxRank) {
    throw std::invalid_argument("attribute '" + std::string(name) + "' is " + std::to_string(rank) + "; at most " +
                                std::to_string(kMaxRank) + " dims are supported");
  }
  return rank;
}

// Attribute `input_axes`: records (input i, its rank k, then k output axes
// or -1), for inputs that are not read for a size (`dim_of_input`), each at
// most once, of a node whose output rank is fixed (attribute `rank`).
std::vector<std::optional<std::vector<int64_t>>> parse_input_axes(const std::vector<int64_t>& flat,
                                                                  const std::vector<int64_t>& dim_of_input,
                                                                  int64_t rank) {
  std::vector<std::optional<std::vector<int64_t>>> axes(dim_of_input.size());
  auto fail = [](const std::string& why) { throw std::invalid_argument("attribute 'input_axes' " + why); };
  if (!flat.empty() && rank < 0) fail("needs the attribute 'rank'");
  for (size_t k = 0; k < flat.size();) {
    if (k + 1 >= flat.size()) fail("ends inside a record");
    const int64_t i = flat[k], count = flat[k + 1];
    if (i < 0 || static_cast<size_t>(i) >= axes.size() || dim_of_input[static_cast<size_t>(i)] >= 0 ||
        axes[static_cast<size_t>(i)]) {
      fail("names input " + std::to_string(i) + ": not an input read for its elements, or named twice");
    }
    if (count < 0 || static_cast<size_t>(count) > flat.size() - k - 2) fail("ends inside a record");
    std::vector<int64_t> map(flat.begin() + static_cast<long>(k) + 2, flat.begin() + static_cast<long>(k) + 2 + count);
    std::vector<bool> read(static_cast<size_t>(rank), false);
    for (int64_t axis : map) {
      if (axis < -1 || axis >= rank || (axis >= 0 && read[static_cast<size_t>(axis)])) {
        fail("maps input " + std::to_string(i) + " to axis " + std::to_string(axis) + " of an output of rank " +
             std::to_string(rank) + " (each axis at most once)");
      }
      if (axis >= 0) read[static_cast<size_t>(axis)] = true;
    }
    axes[static_cast<size_t>(i)] = std::move(map);
    k += 2 + static_cast<size_t>(count);
  }
  return axes;
}

// Per input of the node: the first earlier input of the same name (one
// value), read for its elements as the same dtype (`dtypes`, nullopt for an
// input read only for a size), or -1.
std::vector<int64_t> inputs_of_one_value(const Ort::ConstKernelInfo& info,
                                         const std::vector<std::optional<DType>>& dtypes) {
  const size_t n = std::min(info.GetInputCount(), dtypes.size());
  std::vector<std::string> names(n);
  std::vector<int64_t> same(n, -1);
  for (size_t i = 0; i < n; ++i) {
    names[i] = info.GetInputName(i);
    if (names[i].empty() || !dtypes[i]) continue;  // (an omitted optional input has no name)
    for (size_t j = 0; j < i; ++j) {
      if (names[j] == names[i] && dtypes[j] == dtypes[i]) {
        same[i] = static_cast<int64_t>(j);
        break;
      }
    }
  }
  return same;
}

// A record (key, [dtype,] rank, dims...) of a shapes attribute, read at
// flat[at]; `next`: where the next one starts. `fail` throws, naming what is
// wrong; ranks below `min_rank` and negative sizes are refused.
struct ShapeRecord {
  int64_t key = 0;
  int64_t type = 0;  // (with `typed` only)
  std::vector<int64_t> shape;
  size_t next = 0;
};

template <class Fail>
ShapeRecord read_shape_record(const std::vector<int64_t>& flat, size_t at, bool typed, int64_t min_rank, Fail fail) {
  const size_t head = typed ? 3 : 2;
  if (flat.size() - at < head) fail(typed ? "ends inside a record (input, dtype, rank, dims...)" : "ends inside a record (key, rank, dims...)");
  ShapeRecord record;
  record.key = flat[at];
  record.type = typed ? flat[at + 1] : 0;
  const int64_t rank = flat[at + head - 1];
  if (rank < min_rank || rank > kMaxRank || static_cast<size_t>(rank) > flat.size() - at - head) {
    fail("gives " + std::string(typed ? "input " : "") + std::to_string(record.key) + " a rank of " +
         std::to_string(rank) + " it has no dims for");
  }
  record.shape.assign(flat.begin() + static_cast<long>(at + head), flat.begin() + static_cast<long>(at + head + rank));
  if (std::any_of(record.shape.begin(), record.shape.end(), [](int64_t d) { return d < 0; })) {
    fail("gives " + std::string(typed ? "input " : "") + std::to_string(record.key) + " a negative size");
  }
  record.next = at + head + static_cast<size_t>(rank);
  return record;
}

// Per node input: its dtype and shape as attribute `input_shapes` records
// them (input, dtype, rank, dims), or nullopt. Each must be what ONNX
// Runtime's own graph says the input is: a record that differs would have
// the kernel read past the end of a smaller array.
std::vector<std::optional<std::pair<DType, std::vector<int64_t>>>> parse_input_shapes(
    const Ort::ConstKernelInfo& info, size_t n_in) {
  const std::vector<int64_t> flat = optional_ints(info, "input_shapes");
  std::vector<std::optional<std::pair<DType, std::vector<int64_t>>>> known(n_in);
  auto fail = [](const std::string& why) { throw std::invalid_argument("attribute 'input_shapes' " + why); };
  for (size_t at = 0; at < flat.size();) {
    ShapeRecord record = read_shape_record(flat, at, true, 0, fail);
    const int64_t k = record.key;
    if (k < 0 || static_cast<size_t>(k) >= n_in || known[static_cast<size_t>(k)]) {
      fail("names input " + std::to_string(k) + ": each of the node's " + std::to_string(n_in) + " inputs once");
    }
    const DType dtype = dtype_from_onnx(static_cast<int>(record.type));
    const Ort::TypeInfo type_info = info.GetInputTypeInfo(static_cast<size_t>(k));
    const auto declared = type_info.GetTensorTypeAndShapeInfo();  // (a view into type_info)
    if (static_cast<int64_t>(declared.GetElementType()) != record.type || declared.GetShape() != record.shape) {
      fail("says input " + std::to_string(k) + " is not what the model declares it is");
    }
    known[static_cast<size_t>(k)] = std::make_pair(dtype, std::move(record.shape));
    at = record.next;
  }
  return known;
}

// Records (key, rank, dims...) of attribute `name` (`packed_input_shapes`,
// `packed_output_shapes`) as a shape per key (`count` keys; the others are
// scalars, shape empty).
std::vector<std::vector<int64_t>> parse_packed_shapes(const Ort::ConstKernelInfo& info, const char* name, size_t count) {
  const std::vector<int64_t> flat = optional_ints(info, name);
  std::vector<std::vector<int64_t>> shapes(count);
  std::vector<bool> seen(count, false);
  auto fail = [name](const std::string& why) { throw std::invalid_argument("attribute '" + std::string(name) + "' " + why); };
  for (size_t at = 0; at < flat.size();) {
    ShapeRecord record = read_shape_record(flat, at, false, 1, fail);
    const int64_t key = record.key;
    if (key < 0 || static_cast<size_t>(key) >= count || seen[static_cast<size_t>(key)]) {
      fail("names " + std::to_string(key) + ": each of " + std::to_string(count) + " at most once");
    }
    seen[static_cast<size_t>(key)] = true;
    shapes[static_cast<size_t>(key)] = std::move(record.shape);
    at = record.next;
  }
  return shapes;
}

// Per node input: the offset of its first element in the packed float64
// input it reads in its place (attribute `packed_inputs`,
// src/core/passes/pack_small_arrays.h), or -1; empty without the attribute.
// Its shape is what attribute `packed_input_shapes` records (`shapes`; a
// scalar's where none). That input must be a float64 vector the model
// declares long enough: the kernel reads the elements without asking.
std::vector<int64_t> parse_packed_inputs(const Ort::ConstKernelInfo& info, size_t n_in,
                                         const std::vector<std::optional<DType>>& dtypes,
                                         std::vector<std::vector<int64_t>>& shapes) {
  std::vector<int64_t> offsets = optional_ints(info, "packed_inputs");
  shapes.clear();
  if (offsets.empty()) return offsets;
  auto fail = [](const std::string& why) { throw std::invalid_argument("attribute 'packed_inputs' " + why); };
  if (offsets.size() != n_in) {
    fail("has " + std::to_string(offsets.size()) + " entries for the node's " + std::to_string(n_in) + " inputs");
  }
  shapes = parse_packed_shapes(info, "packed_input_shapes", n_in);
  for (size_t k = 0; k < n_in; ++k) {
    if (offsets[k] < 0) {
      if (!shapes[k].empty()) fail("does not pack input " + std::to_string(k) + ", which 'packed_input_shapes' shapes");
      continue;
    }
    int64_t count = 1;
    for (int64_t d : shapes[k]) count *= d;
    const Ort::TypeInfo type_info = info.GetInputTypeInfo(k);
    const auto declared = type_info.GetTensorTypeAndShapeInfo();  // (a view into type_info)
    const std::vector<int64_t> shape = declared.GetShape();
    if (declared.GetElementType() != ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE || shape.size() != 1 || shape[0] < 0 ||
        shape[0] - offsets[k] < count) {
      fail("reads element" + (count == 1 ? " " + std::to_string(offsets[k])
                                         : "s " + std::to_string(offsets[k]) + " to " + std::to_string(offsets[k] + count - 1)) +
           " of input " + std::to_string(k) + ", which the model does not declare a float64 vector of that many elements");
    }
    if (dtypes[k] && *dtypes[k] != DType::Float64) fail("packs input " + std::to_string(k) + ", which is not read as float64");
  }
  return offsets;
}

// The most stages an Elemwise node may have (attribute `stages`).
constexpr int64_t kMaxStages = 4096;
// The most memory a stage's intermediate keeps from one run to the next.
constexpr size_t kKeptScratchBytes = size_t{16} << 20;

// The name of attribute `name` of stage `s` (kernel_ops.h in the core):
// stage 0's are the single-program node's names, so such a node is a one-stage node.
std::string stage_attribute(const char* name, size_t s) {
  return s == 0 ? std::string(name) : std::string(name) + "_s" + std::to_string(s);
}

// A reduction stage (attribute `reduce`) of an Elemwise node.
ElemwiseStage parse_reduce_stage(const Ort::ConstKernelInfo& info, size_t s, const std::string& reduce) {
  auto name = [s](const char* attribute) { return stage_attribute(attribute, s); };
  ElemwiseStage stage;
  using Reduce = ElemwiseStage::Reduce;
  stage.reduce = reduce == "sum" ? Reduce::Sum : reduce == "max" ? Reduce::Max : reduce == "min" ? Reduce::Min : Reduce::None;
  const DType dtype = dtype_from_name(info.GetAttribute<std::string>(name("input_dtypes").c_str()));
  const bool valid = stage.reduce == Reduce::Sum ? dtype == DType::Float64
                                                 : stage.reduce != Reduce::None &&
                                                       (dtype == DType::Float64 || dtype == DType::Float32);
  if (!valid) {
    throw std::invalid_argument("attribute '" + name("reduce") + "' is '" + reduce + "' of " + dtype_name(dtype) +
                                "; it must be 'sum' of float64, or 'max' or 'min' of float32 or float64");
  }
  stage.axes = info.GetAttributes<int64_t>(name("axes").c_str());
  if (!std::is_sorted(stage.axes.begin(), stage.axes.end()) ||
      std::adjacent_find(stage.axes.begin(), stage.axes.end()) != stage.axes.end() ||
      (!stage.axes.empty() && (stage.axes.front() < 0 || stage.axes.back() >= kMaxRank))) {
    throw std::invalid_argument("attribute '" + name("axes") + "' must be distinct axes in increasing order");
  }
  stage.keepdims = optional_int(info, name("keepdims").c_str(), 0) != 0;
  stage.input_dtypes = {dtype};
  stage.dim_of_input = {-1};
  stage.input_axes.resize(1);
  return stage;
}

// A ScalarLoop stage (attribute `num_state`) of an Elemwise node.
ElemwiseStage parse_loop_stage(const Ort::ConstKernelInfo& info, size_t s) {
  auto name = [s](const char* attribute) { return stage_attribute(attribute, s); };
  const auto input_dtypes = info.GetAttribute<std::string>(name("input_dtypes").c_str());
  const auto program = info.GetAttribute<std::string>(name("program").c_str());
  const int64_t num_state = info.GetAttribute<int64_t>(name("num_state").c_str());
  const auto next_state = info.GetAttributes<int64_t>(name("next_state").c_str());
  const int64_t until = optional_int(info, name("until").c_str(), -1);
  if (num_state < 1) throw std::invalid_argument("attribute '" + name("num_state") + "' must be at least 1");
  auto loop = std::make_shared<LoopProgram>(
      parse_loop(input_dtypes, program, static_cast<size_t>(num_state), next_state, until));
  loop->compiled = compiled_loop(loop_key(input_dtypes, program, static_cast<size_t>(num_state), next_state, until));
  ElemwiseStage stage;
  stage.rank = rank_attribute(info, name("rank").c_str());
  stage.input_dtypes.assign(1, DType::Int64);
  const Program& body = loop->body;
  stage.input_dtypes.insert(stage.input_dtypes.end(), body.registers.begin(),
                            body.registers.begin() + static_cast<long>(body.num_inputs()));
  stage.dim_of_input.assign(stage.input_dtypes.size(), -1);
  stage.input_axes.resize(stage.input_dtypes.size());
  stage.loop = std::move(loop);
  return stage;
}

// A Gather or Scatter stage (attribute `gather` or `scatter`) of an Elemwise node.
ElemwiseStage parse_indexed_stage(const Ort::ConstKernelInfo& info, size_t s, int64_t gather, const std::string& scatter) {
  auto name = [s](const char* attribute) { return stage_attribute(attribute, s); };
  ElemwiseStage stage;
  using Indexed = ElemwiseStage::Indexed;
  stage.input_dtypes = parse_dtypes(info.GetAttribute<std::string>(name("input_dtypes").c_str()));
  const size_t n = stage.input_dtypes.size();
  const DType data = n > 0 ? stage.input_dtypes[0] : DType::Int64;
  if (scatter.empty()) {
    if (gather != 0) throw std::invalid_argument("attribute '" + name("gather") + "' must be 0 (axis 0)");
    stage.indexed = Indexed::Gather;
    if (n != 2 || stage.input_dtypes[1] != DType::Int64) {
      throw std::invalid_argument("attribute '" + name("input_dtypes") + "' of a gather must be the data's dtype, then int64");
    }
  } else {
    if (scatter != "add" && scatter != "none") {
      throw std::invalid_argument("attribute '" + name("scatter") + "' is '" + scatter + "'; it must be 'add' or 'none'");
    }
    stage.indexed = scatter == "add" ? Indexed::ScatterAdd : Indexed::ScatterSet;
    const bool numeric = data == DType::Float64 || data == DType::Float32 || data == DType::Int64 || data == DType::Int32;
    if (n != 3 || !numeric || stage.input_dtypes[1] != DType::Int64 || stage.input_dtypes[2] != data) {
      throw std::invalid_argument("attribute '" + name("input_dtypes") +
                                  "' of a scatter must be the data's dtype (float32, float64, int32 or int64), int64, "
                                  "then the data's dtype again");
    }
  }
  stage.dim_of_input.assign(n, -1);
  stage.input_axes.resize(n);
  return stage;
}

// A reshape stage (attribute `reshape`) of an Elemwise node.
ElemwiseStage parse_reshape_stage(const Ort::ConstKernelInfo& info, size_t s, std::vector<int64_t> map) {
  auto name = [s](const char* attribute) { return stage_attribute(attribute, s); };
  ElemwiseStage stage;
  stage.reshapes = true;
  stage.input_dtypes = {dtype_from_name(info.GetAttribute<std::string>(name("input_dtypes").c_str()))};
  if (static_cast<int64_t>(map.size()) > kMaxRank || std::count(map.begin(), map.end(), -1) > 1 ||
      std::any_of(map.begin(), map.end(), [](int64_t m) { return m < -2 - kMaxRank; })) {
    throw std::invalid_argument("attribute '" + name("reshape") +
                                "' must give each output axis a size, -1 (at most once) or -2 - k for input axis k");
  }
  stage.reshape = std::move(map);
  stage.ones = optional_ints(info, name("reshape_ones").c_str());
  stage.dim_of_input = {-1};
  stage.input_axes.resize(1);
  return stage;
}

// A split or concat stage (attribute `split` or `concat`: the axis) of an Elemwise node.
ElemwiseStage parse_join_stage(const Ort::ConstKernelInfo& info, size_t s, int64_t split, int64_t concat) {
  auto name = [s](const char* attribute) { return stage_attribute(attribute, s); };
  ElemwiseStage stage;
  using Joins = ElemwiseStage::Joins;
  // (-1 is an absent attribute: the other one names the kind.)
  const bool splits = split != -1;
  stage.joins = splits ? Joins::Split : Joins::Concat;
  stage.join_axis = splits ? split : concat;
  if (stage.join_axis < 0 || stage.join_axis >= kMaxRank) {
    throw std::invalid_argument("attribute '" + name(splits ? "split" : "concat") + "' must be an axis");
  }
  stage.input_dtypes = parse_dtypes(info.GetAttribute<std::string>(name("input_dtypes").c_str()));
  const size_t n = stage.input_dtypes.size();
  if (n == 0 || (stage.joins == Joins::Split && n != 1) ||
      std::any_of(stage.input_dtypes.begin(), stage.input_dtypes.end(),
                  [&](DType d) { return d != stage.input_dtypes[0]; })) {
    throw std::invalid_argument("attribute '" + name("input_dtypes") +
                                "' of a split must be one dtype; of a concat, one dtype per input, all the same");
  }
  if (stage.joins == Joins::Split) {
    stage.pieces = info.GetAttributes<int64_t>(name("split_sizes").c_str());
    if (stage.pieces.empty() || std::any_of(stage.pieces.begin(), stage.pieces.end(), [](int64_t k) { return k < 0; })) {
      throw std::invalid_argument("attribute '" + name("split_sizes") + "' must be one size >= 0 per piece");
    }
  }
  stage.dim_of_input.assign(n, -1);
  stage.input_axes.resize(n);
  return stage;
}

// A matrix product stage (attribute `matmul`: trans_a, trans_b) of an Elemwise node.
ElemwiseStage parse_matmul_stage(const Ort::ConstKernelInfo& info, size_t s, const std::vector<int64_t>& flags) {
  auto name = [s](const char* attribute) { return stage_attribute(attribute, s); };
  ElemwiseStage stage;
  stage.multiplies = true;
  if (flags.size() != 2 || (flags[0] != 0 && flags[0] != 1) || (flags[1] != 0 && flags[1] != 1)) {
    throw std::invalid_argument("attribute '" + name("matmul") + "' must be trans_a and trans_b, each 0 or 1");
  }
  stage.trans_a = flags[0] == 1;
  stage.trans_b = flags[1] == 1;
  stage.input_dtypes = parse_dtypes(info.GetAttribute<std::string>(name("input_dtypes").c_str()));
  const std::vector<DType>& dtypes = stage.input_dtypes;
  if (dtypes.size() != 2 || dtypes[0] != dtypes[1] || (dtypes[0] != DType::Float64 && dtypes[0] != DType::Float32)) {
    throw std::invalid_argument("attribute '" + name("input_dtypes") +
                                "' of a matrix product must be float64 float64 or float32 float32");
  }
  stage.dim_of_input.assign(2, -1);
  stage.input_axes.resize(2);
  return stage;
}

// A linear-algebra stage (attribute `linalg`: the kernel's name, beside its
// attributes) of an Elemwise node.
ElemwiseStage parse_linalg_stage(const Ort::ConstKernelInfo& info, size_t s, const std::string& kernel) {
  auto name = [s](const char* attribute) { return stage_attribute(attribute, s); };
  const std::optional<LinalgKind> kind = linalg_kind_from_name(kernel);
  if (!kind || !makes_one_matrix(*kind)) {
    throw std::invalid_argument("attribute '" + name("linalg") + "' is '" + kernel +
                                "'; a stage runs Cholesky, SolveTriangular, CholeskySolve or Solve");
  }
  ElemwiseStage stage;
  stage.linalg = linalg_settings(*kind, info, s == 0 ? "" : "_s" + std::to_string(s));
  stage.input_dtypes = parse_dtypes(info.GetAttribute<std::string>(name("input_dtypes").c_str()));
  const std::vector<DType>& dtypes = stage.input_dtypes;
  const size_t n = *kind == LinalgKind::Cholesky ? 1 : 2;
  if (dtypes.size() != n || dtypes.back() != dtypes[0] || (dtypes[0] != DType::Float64 && dtypes[0] != DType::Float32)) {
    throw std::invalid_argument("attribute '" + name("input_dtypes") + "' of a " + kernel + " stage must be " +
                                std::to_string(n) + " of float64 or of float32");
  }
  stage.dim_of_input.assign(n, -1);
  stage.input_axes.resize(n);
  return stage;
}

// Stage `s` of an Elemwise node, from its attributes (without the wiring).
ElemwiseStage parse_stage(const Ort::ConstKernelInfo& info, size_t s) {
  auto name = [s](const char* attribute) { return stage_attribute(attribute, s); };
  if (const std::string kernel = optional_string(info, name("linalg").c_str()); !kernel.empty()) {
    return parse_linalg_stage(info, s, kernel);
  }
  if (const std::vector<int64_t> flags = optional_ints(info, name("matmul").c_str()); !flags.empty()) {
    return parse_matmul_stage(info, s, flags);
  }
  if (const std::string reduce = optional_string(info, name("reduce").c_str()); !reduce.empty()) {
    return parse_reduce_stage(info, s, reduce);
  }
  if (optional_int(info, name("num_state").c_str(), -1) != -1) return parse_loop_stage(info, s);
  const int64_t gather = optional_int(info, name("gather").c_str(), -1);
  const std::string scatter = optional_string(info, name("scatter").c_str());
  if (gather != -1 || !scatter.empty()) return parse_indexed_stage(info, s, gather, scatter);
  const int64_t split = optional_int(info, name("split").c_str(), -1);
  const int64_t concat = optional_int(info, name("concat").c_str(), -1);
  if (split != -1 || concat != -1) return parse_join_stage(info, s, split, concat);
  // (A reshape to a 0-d array has an empty map: present, without entries.)
  std::optional<std::vector<int64_t>> map;
  try {
    map = info.GetAttributes<int64_t>(name("reshape").c_str());
  } catch (const Ort::Exception&) {
    // (Not a reshape stage.)
  }
  if (map) return parse_reshape_stage(info, s, std::move(*map));
  ElemwiseStage stage;
  const auto input_dtypes = info.GetAttribute<std::string>(name("input_dtypes").c_str());
  const auto program = info.GetAttribute<std::string>(name("program").c_str());
  const auto output_registers = info.GetAttributes<int64_t>(name("output_registers").c_str());
  Program& p = stage.program;
  p = parse_program(input_dtypes, program, output_registers);
  p.compiled = compiled_blocks(block_key(input_dtypes, program, output_registers));
  set_output_reductions(p, optional_ints(info, name("output_reductions").c_str()));
  p.sum_chunk = std::max<int64_t>(0, optional_int(info, name("sum_chunk").c_str(), 0));
  const int64_t rank = rank_attribute(info, name("rank").c_str());
  stage.rank = rank;
  stage.strict_axes = optional_ints(info, name("strict_axes").c_str());
  stage.expand = optional_ints(info, name("expand").c_str());
  if (std::any_of(stage.expand.begin(), stage.expand.end(), [](int64_t d) { return d < 0; }) ||
      static_cast<int64_t>(stage.expand.size()) > kMaxRank) {
    throw std::invalid_argument("attribute '" + name("expand") + "' must be a shape: sizes >= 0");
  }
  stage.input_dtypes.assign(p.registers.begin(), p.registers.begin() + static_cast<long>(p.num_inputs()));
  const std::vector<int64_t> dim_inputs = optional_ints(info, name("dim_inputs").c_str());
  stage.dim_of_input.assign(stage.input_dtypes.size(), -1);
  for (size_t k = 0; k + 1 < dim_inputs.size(); k += 2) {
    const int64_t i = dim_inputs[k], dim = dim_inputs[k + 1];
    if (i < 0 || static_cast<size_t>(i) >= stage.input_dtypes.size() || dim < 0 ||
        stage.input_dtypes[static_cast<size_t>(i)] != DType::Int64) {
      throw std::invalid_argument("attribute '" + name("dim_inputs") + "' names input " + std::to_string(i) +
                                  " and axis " + std::to_string(dim) + ": an int64 input of the program and an axis >= 0");
    }
    stage.dim_of_input[static_cast<size_t>(i)] = dim;
  }
  stage.input_axes = parse_input_axes(optional_ints(info, name("input_axes").c_str()), stage.dim_of_input, rank);
  return stage;
}

// The dtype of output `j` of the node, as ONNX Runtime allocates it.
DType node_output_dtype(const Ort::ConstKernelInfo& info, size_t j) {
  return dtype_from_onnx(static_cast<int>(info.GetOutputTypeInfo(j).GetTensorTypeAndShapeInfo().GetElementType()));
}

// ONNX Runtime's intra-op pool takes a C callback and one pointer.
ParallelFor pool_of(Ort::KernelContext& ctx) {
  return [&ctx](size_t n, const std::function<void(size_t)>& task) {
    ctx.ParallelFor([](void* user, size_t i) { (*static_cast<const std::function<void(size_t)>*>(user))(i); }, n, 0,
                    const_cast<std::function<void(size_t)>*>(&task));
  };
}

}  // namespace

ElemwiseKernel::ElemwiseKernel(const OrtApi&, const OrtKernelInfo* info) {
  Ort::ConstKernelInfo kernel_info(info);
  const int64_t count = optional_int(kernel_info, "stages", 1);
  if (count < 1 || count > kMaxStages) {
    throw std::invalid_argument("attribute 'stages' is " + std::to_string(count) + "; 1 to " +
                                std::to_string(kMaxStages) + " stages are supported");
  }
  for (size_t s = 0; s < static_cast<size_t>(count); ++s) stages_.push_back(parse_stage(kernel_info, s));
  // The wiring (attributes `stage_inputs`, `stage_outputs`, over the stages'
  // program inputs and outputs in order); a one-stage node without them
  // reads input i as program input i and gives its outputs in order.
  const std::vector<int64_t> sources = optional_ints(kernel_info, "stage_inputs");
  const std::vector<int64_t> destinations = optional_ints(kernel_info, "stage_outputs");
  const bool wired = count > 1 || !sources.empty() || !destinations.empty();
  size_t n_in = stages_[0].input_dtypes.size(), n_sources = 0, n_destinations = 0;
  for (const ElemwiseStage& stage : stages_) {
    n_sources += stage.input_dtypes.size();
    n_destinations += stage.num_outputs();
  }
  const std::vector<int64_t> packed = optional_ints(kernel_info, "packed_outputs");
  if (wired) {
    n_in = kernel_info.GetInputCount();
    num_outputs_ = packed.empty() ? kernel_info.GetOutputCount() : packed.size();
    if (sources.size() != n_sources || destinations.size() != n_destinations) {
      throw std::invalid_argument("attributes 'stage_inputs' and 'stage_outputs' need " + std::to_string(n_sources) +
                                  " and " + std::to_string(n_destinations) + " entries (the stages' inputs and outputs)");
    }
  } else {
    num_outputs_ = stages_[0].num_outputs();
  }
  set_node_outputs(kernel_info, packed);
  input_dtypes_.assign(n_in, std::nullopt);
  std::vector<DType> value_dtypes;
  std::vector<bool> written(num_outputs_, false);
  size_t next_source = 0, next_destination = 0;
  for (size_t s = 0; s < stages_.size(); ++s) {
    ElemwiseStage& stage = stages_[s];
    stage.first_output = value_dtypes.size();
    auto fail = [s](const std::string& why) {
      throw std::invalid_argument("stage " + std::to_string(s) + " of the node " + why);
    };
    for (size_t i = 0; i < stage.input_dtypes.size(); ++i) {
      const int64_t source = wired ? sources[next_source++] : static_cast<int64_t>(i);
      stage.sources.push_back(source);
      const bool elements = stage.dim_of_input[i] < 0;
      if (source >= 0) {
        if (static_cast<size_t>(source) >= n_in) fail("reads input " + std::to_string(source) + ", which it lacks");
        std::optional<DType>& dtype = input_dtypes_[static_cast<size_t>(source)];
        if (!elements) continue;
        if (dtype && *dtype != stage.input_dtypes[i]) {
          fail("reads input " + std::to_string(source) + " as " + dtype_name(stage.input_dtypes[i]) +
               ", an earlier one as " + dtype_name(*dtype));
        }
        dtype = stage.input_dtypes[i];
      } else {
        const auto g = static_cast<size_t>(-(source + 1));
        if (g >= value_dtypes.size()) fail("reads output " + std::to_string(g) + " of its stages before it is written");
        if (elements && value_dtypes[g] != stage.input_dtypes[i]) {
          fail("reads a " + std::string(dtype_name(value_dtypes[g])) + " output as " + dtype_name(stage.input_dtypes[i]));
        }
      }
    }
    for (size_t j = 0; j < stage.num_outputs(); ++j) {
      const DType dtype = stage.output_dtype(j);
      const int64_t destination = wired ? destinations[next_destination++] : static_cast<int64_t>(j);
      stage.destinations.push_back(destination);
      value_dtypes.push_back(dtype);
      if (destination < -1 || destination >= static_cast<int64_t>(num_outputs_) ||
          (destination >= 0 && written[static_cast<size_t>(destination)])) {
        fail("writes output " + std::to_string(destination) + ": each node output once, or -1");
      }
      if (destination < 0) continue;
      written[static_cast<size_t>(destination)] = true;
      // (ONNX Runtime allocates the output as the op's dtype: a program output
      // of another size would be written past its end.)
      const size_t index = outputs_[static_cast<size_t>(destination)].first;
      if (wired || index < kernel_info.GetOutputCount()) {
        const DType allocated = node_output_dtype(kernel_info, index);
        if (allocated != dtype) {
          fail("writes a " + std::string(dtype_name(dtype)) + " program output into output " +
               std::to_string(destination) + ", a " + dtype_name(allocated) + " tensor");
        }
      }
    }
  }
  if (std::find(written.begin(), written.end(), false) != written.end()) {
    throw std::invalid_argument("the stages of the node do not write all its outputs");
  }
  constant_inputs_ = constant_inputs(info, input_dtypes_);
  same_value_as_ = inputs_of_one_value(kernel_info, input_dtypes_);
  known_input_shapes_ = parse_input_shapes(kernel_info, n_in);
  packed_inputs_ = parse_packed_inputs(kernel_info, n_in, input_dtypes_, packed_input_shapes_);
}

void ElemwiseKernel::set_node_outputs(const Ort::ConstKernelInfo& info, const std::vector<int64_t>& packed) {
  outputs_.clear();
  packed_shapes_.assign(num_outputs_, {});
  num_packed_ = packed_length_ = 0;
  if (packed.empty()) {
    for (size_t j = 0; j < num_outputs_; ++j) outputs_.emplace_back(j, -1);
    num_node_outputs_ = num_outputs_;
    return;
  }
  auto fail = [](const std::string& why) { throw std::invalid_argument("attribute 'packed_outputs' " + why); };
  if (packed.size() != num_outputs_) {
    fail("has " + std::to_string(packed.size()) + " entries for the stages' " + std::to_string(num_outputs_) + " outputs");
  }
  const auto elements = static_cast<size_t>(std::count_if(packed.begin(), packed.end(), [](int64_t e) { return e >= 0; }));
  num_node_outputs_ = num_outputs_ - elements + 1;
  if (elements == 0 || info.GetOutputCount() != num_node_outputs_) {
    fail("must pack some outputs into the node's last, and the node has " + std::to_string(info.GetOutputCount()) +
         " outputs for " + std::to_string(num_outputs_));
  }
  if (node_output_dtype(info, num_node_outputs_ - 1) != DType::Float64) fail("packs into an output that is not float64");
  std::vector<bool> taken(elements, false);
  for (int64_t e : packed) {
    if (e >= static_cast<int64_t>(elements) || (e >= 0 && taken[static_cast<size_t>(e)])) {
      fail("must number the packed elements 0 to " + std::to_string(elements - 1) + ", each once");
    }
    if (e >= 0) taken[static_cast<size_t>(e)] = true;
  }
  // Element e's values follow element e - 1's: its offset is their sizes.
  const std::vector<std::vector<int64_t>> shapes = parse_packed_shapes(info, "packed_output_shapes", elements);
  std::vector<int64_t> offsets(elements);
  for (size_t e = 0; e < elements; ++e) {
    offsets[e] = static_cast<int64_t>(packed_length_);
    size_t count = 1;
    for (int64_t d : shapes[e]) count *= static_cast<size_t>(d);
    packed_length_ += count;
  }
  size_t next = 0;
  for (size_t j = 0; j < num_outputs_; ++j) {
    const int64_t e = packed[j];
    if (e < 0) {
      outputs_.emplace_back(next++, -1);
      continue;
    }
    outputs_.emplace_back(num_node_outputs_ - 1, offsets[static_cast<size_t>(e)]);
    packed_shapes_[j] = shapes[static_cast<size_t>(e)];
  }
  num_packed_ = elements;
}

OrtStatusPtr ElemwiseKernel::ComputeV2(OrtKernelContext* context) {
  return as_status(kName, [&] { compute(context); });
}

namespace {

// Reads the node's inputs into run.node_inputs (their dtypes in
// run.node_dtypes): constants as read when the kernel was created, an input
// that repeats an earlier one's value as that one.
void read_node_inputs(Ort::KernelContext& ctx, const std::vector<std::optional<DType>>& dtypes,
                      const std::vector<std::optional<ArrayArg>>& constants, const std::vector<int64_t>& same_value_as,
                      const std::vector<std::optional<std::pair<DType, std::vector<int64_t>>>>& known_shapes,
                      const std::vector<int64_t>& packed, const std::vector<std::vector<int64_t>>& packed_shapes,
                      RunBuffers& run) {
  const size_t n_in = ctx.GetInputCount();
  if (n_in != dtypes.size()) {
    throw std::invalid_argument("the program reads " + std::to_string(dtypes.size()) + " inputs, the node has " +
                                std::to_string(n_in));
  }
  reserve_args(run.node_inputs, n_in);
  run.node_dtypes.resize(n_in);
  for (size_t k = 0; k < n_in; ++k) {
    ArrayArg& arg = run.node_inputs[k];
    if (k < constants.size() && constants[k]) {
      arg.data = constants[k]->data;
      arg.shape.assign(constants[k]->shape.begin(), constants[k]->shape.end());
      run.node_dtypes[k] = dtypes[k];
      continue;
    }
    if (k < packed.size() && packed[k] >= 0) {
      // (An element of the packed arrays, a vector the model declares long
      // enough and ONNX Runtime checks so.)
      arg.data = static_cast<const double*>(ctx.GetInput(k).GetTensorRawData()) + packed[k];
      arg.shape.assign(packed_shapes[k].begin(), packed_shapes[k].end());
      run.node_dtypes[k] = DType::Float64;
      continue;
    }
    if (k < same_value_as.size() && same_value_as[k] >= 0) {
      // (Read before, in full: GetTensorTypeAndShape allocates, ~80 ns.)
      const auto first = static_cast<size_t>(same_value_as[k]);
      arg.data = run.node_inputs[first].data;
      arg.shape.assign(run.node_inputs[first].shape.begin(), run.node_inputs[first].shape.end());
      run.node_dtypes[k] = run.node_dtypes[first];
      continue;
    }
    Ort::ConstValue value = ctx.GetInput(k);
    if (k < known_shapes.size() && known_shapes[k]) {
      run.node_dtypes[k] = known_shapes[k]->first;
      arg.shape.assign(known_shapes[k]->second.begin(), known_shapes[k]->second.end());
      arg.data = value.GetTensorRawData();
      continue;
    }
    auto info = value.GetTensorTypeAndShapeInfo();
    const auto element_type = static_cast<int>(info.GetElementType());
    std::optional<DType> dtype;
    try {
      dtype = dtype_from_onnx(element_type);
    } catch (const std::invalid_argument&) {
      // (Read for a size, any type will do; read for elements, it fails below.)
    }
    run.node_dtypes[k] = dtype;
    arg.shape.resize(info.GetDimensionsCount());
    // (The C call: the C++ wrapper's GetShape returns a new vector.)
    if (!arg.shape.empty()) Ort::ThrowOnError(Ort::GetApi().GetDimensions(info, arg.shape.data(), arg.shape.size()));
    arg.data = value.GetTensorRawData();
  }
}

// Input `i` of `stage`: a node input or an earlier stage's output.
const ArrayArg& stage_source(const ElemwiseStage& stage, size_t i, const RunBuffers& run) {
  const int64_t source = stage.sources[i];
  return source >= 0 ? run.node_inputs[static_cast<size_t>(source)] : run.values[static_cast<size_t>(-(source + 1))];
}

// Program input `i` of `stage` (node input or an earlier stage's output) into
// `arg`: its elements, or the size of one of its axes (held in `dim`).
void read_stage_input(const ElemwiseStage& stage, size_t i, const RunBuffers& run, int64_t& dim, ArrayArg& arg) {
  const int64_t source = stage.sources[i];
  const bool from_node = source >= 0;
  const ArrayArg& from = stage_source(stage, i, run);
  // (Named only when failing: a string built on every run cost an allocation per input.)
  auto name = [&] { return from_node ? "input " + std::to_string(source) : std::string("an earlier stage's output"); };
  arg.strides.clear();
  if (const int64_t axis = stage.dim_of_input[i]; axis >= 0) {
    if (static_cast<size_t>(axis) >= from.shape.size()) {
      throw std::invalid_argument(name() + " has rank " + std::to_string(from.shape.size()) +
                                  "; the node reads the size of its axis " + std::to_string(axis));
    }
    dim = from.shape[static_cast<size_t>(axis)];
    arg.data = &dim;
    arg.shape.clear();
    return;
  }
  // (An earlier stage's output has the dtype the program reads: checked when
  // the kernel was created.)
  if (from_node && run.node_dtypes[static_cast<size_t>(source)] != stage.input_dtypes[i]) {
    throw std::invalid_argument(name() + " is not of the program's dtype " + dtype_name(stage.input_dtypes[i]));
  }
  arg.data = from.data;
  arg.shape.assign(from.shape.begin(), from.shape.end());
}

// Memory for output `j` of `stage` (of `shape`, 0-d when `reduced`): the node
// output it is, or the run's scratch memory where only later stages read it.
void* stage_output(Ort::KernelContext& ctx, const ElemwiseStage& stage, size_t j, const std::vector<int64_t>& shape,
                   bool reduced, RunBuffers& run) {
  const size_t g = stage.first_output + j;
  ArrayArg& value = run.values[g];
  value.strides.clear();
  if (reduced) value.shape.clear();
  else value.shape.assign(shape.begin(), shape.end());
  const int64_t destination = stage.destinations[j];
  if (destination >= 0) {
    const auto [index, element] = (*run.node_outputs)[static_cast<size_t>(destination)];
    if (element >= 0) {
      // (An array the core packed: inferred of that shape, and so it must be.)
      const std::vector<int64_t>& packed_shape = (*run.packed_shapes)[static_cast<size_t>(destination)];
      if (value.shape != packed_shape) {
        throw std::invalid_argument("output " + std::to_string(destination) + " is packed as " +
                                    (packed_shape.empty() ? "a scalar" : "an array of shape " + shape_text(packed_shape)) +
                                    "; the stage gives it shape " + shape_text(value.shape));
      }
      value.data = run.packed + element;
    } else {
      value.data = ctx.GetOutput(index, value.shape.data(), value.shape.size()).GetTensorMutableRawData();
    }
  } else {
    size_t elements = 1;
    for (int64_t d : value.shape) elements *= static_cast<size_t>(d);
    const size_t bytes = elements * dtype_size(stage.output_dtype(j));
    // (Grown, never shrunk: value g of another node this thread runs may be
    // smaller, and growing back into the capacity zero-filled it each run.)
    std::vector<double>& memory = run.scratch[g];
    const size_t words = (bytes + sizeof(double) - 1) / sizeof(double);
    if (memory.size() < words) memory.resize(words);
    value.data = memory.data();
  }
  return const_cast<void*>(value.data);
}

void reduce_into(const ElemwiseStage& stage, const void* x, const std::vector<int64_t>& in, void* out);

// A reduction stage: its input (C-contiguous: a node input or an earlier
// stage's output) over the stage's axes.
void run_reduce_stage(Ort::KernelContext& ctx, const ElemwiseStage& stage, RunBuffers& run) {
  reserve_args(run.inputs, 1);
  run.dims.resize(1);
  read_stage_input(stage, 0, run, run.dims[0], run.inputs[0]);
  const std::vector<int64_t>& in = run.inputs[0].shape;
  if (!stage.axes.empty() && stage.axes.back() >= static_cast<int64_t>(in.size())) {
    throw std::invalid_argument("axis " + std::to_string(stage.axes.back()) + " is out of range for an input of rank " +
                                std::to_string(in.size()));
  }
  run.shape.clear();
  for (size_t d = 0; d < in.size(); ++d) {
    const bool reduced = std::binary_search(stage.axes.begin(), stage.axes.end(), static_cast<int64_t>(d));
    if (!reduced) run.shape.push_back(in[d]);
    else if (stage.keepdims) run.shape.push_back(1);
  }
  reduce_into(stage, run.inputs[0].data, in, stage_output(ctx, stage, 0, run.shape, false, run));
}

// A reduction stage's values: `x` of shape `in` over the stage's axes into `out`.
void reduce_into(const ElemwiseStage& stage, const void* x, const std::vector<int64_t>& in, void* out) {
  using Reduce = ElemwiseStage::Reduce;
  if (stage.reduce == Reduce::Sum) {
    reduce_sum(static_cast<const double*>(x), in, stage.axes, static_cast<double*>(out));
  } else if (stage.input_dtypes[0] == DType::Float64) {
    reduce_max_min(static_cast<const double*>(x), in, stage.axes, stage.reduce == Reduce::Max, static_cast<double*>(out));
  } else {
    reduce_max_min(static_cast<const float*>(x), in, stage.axes, stage.reduce == Reduce::Max, static_cast<float*>(out));
  }
}

size_t element_count(const std::vector<int64_t>& shape, size_t from = 0) {
  size_t count = 1;
  for (size_t d = from; d < shape.size(); ++d) count *= static_cast<size_t>(shape[d]);
  return count;
}

// Index `index` of an axis of `size`, from the end where negative; throws
// where out of range, in words the linker maps to an IndexError.
size_t checked_index(int64_t index, int64_t size, size_t axis) {
  if (index < -size || index >= size) {
    throw std::invalid_argument("index " + std::to_string(index) + " is out of data bounds of axis " +
                                std::to_string(axis) + " of size " + std::to_string(size));
  }
  return static_cast<size_t>(index < 0 ? index + size : index);
}

// Row i of a gather's output: row index[i] of `from`, rows of `Bytes` bytes.
// (A vector gathered by a vector, PyMC's a[group], copies one element a row:
// a fixed-size copy is one load and store, where a memcpy call per element
// was most of such a stage.)
template <size_t Bytes>
void gather_rows(char* out, const char* from, const int64_t* index, size_t count, int64_t size) {
  for (size_t i = 0; i < count; ++i) std::memcpy(out + i * Bytes, from + checked_index(index[i], size, 0) * Bytes, Bytes);
}

// A scatter's updates: `count` slices of `slice` elements, update i to the
// slice of `out` at index tuple index[i * k .. i * k + k) of `shape`.
struct ScatterCall {
  char* out;
  const char* values;
  const int64_t* index;
  size_t count, k;
  const std::vector<int64_t>& shape;
  size_t slice;
};

struct SetSlice {
  static void apply(char* dst, const char* src, size_t count, size_t item) {
    if (count > 0) std::memcpy(dst, src, count * item);
  }
};

template <class T>
struct AddSlice {
  static void apply(char* dst, const char* src, size_t count, size_t /*item*/) {
    for (size_t k = 0; k < count; ++k) {
      T a, b;
      std::memcpy(&a, dst + k * sizeof(T), sizeof(T));
      std::memcpy(&b, src + k * sizeof(T), sizeof(T));
      if constexpr (std::is_integral_v<T>) {
        // (Wrapping, as NumPy's and ONNX Runtime's integer adds do in practice.)
        using U = std::make_unsigned_t<T>;
        a = static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      } else {
        a += b;
      }
      std::memcpy(dst + k * sizeof(T), &a, sizeof(T));
    }
  }
};

// The updates in order (the last of repeated indices wins a set; adds
// accumulate in order). The operation is chosen once a stage, not per
// update: a vector's scatter (a gather's gradient) updates one element each.
template <class Update>
void scatter(const ScatterCall& c, size_t item) {
  const size_t bytes = c.slice * item;
  if (c.k == 1) {
    const int64_t size = c.shape[0];
    for (size_t i = 0; i < c.count; ++i) {
      Update::apply(c.out + checked_index(c.index[i], size, 0) * bytes, c.values + i * bytes, c.slice, item);
    }
    return;
  }
  for (size_t i = 0; i < c.count; ++i) {
    size_t at = 0;
    for (size_t j = 0; j < c.k; ++j) {
      at = at * static_cast<size_t>(c.shape[j]) + checked_index(c.index[i * c.k + j], c.shape[j], j);
    }
    Update::apply(c.out + at * bytes, c.values + i * bytes, c.slice, item);
  }
}

// A Gather or Scatter stage (ElemwiseStage::Indexed).
void run_indexed_stage(Ort::KernelContext& ctx, const ElemwiseStage& stage, RunBuffers& run) {
  using Indexed = ElemwiseStage::Indexed;
  const size_t n_args = stage.input_dtypes.size();
  reserve_args(run.inputs, n_args);
  run.dims.resize(n_args);
  for (size_t i = 0; i < n_args; ++i) read_stage_input(stage, i, run, run.dims[i], run.inputs[i]);
  const ArrayArg& data = run.inputs[0];
  const ArrayArg& indices = run.inputs[1];
  const size_t item = dtype_size(stage.input_dtypes[0]);
  const auto* index = static_cast<const int64_t*>(indices.data);
  const auto* from = static_cast<const char*>(data.data);
  if (stage.indexed == Indexed::Gather) {
    if (data.shape.empty()) throw std::invalid_argument("a gather's data must have an axis 0");
    run.shape.assign(indices.shape.begin(), indices.shape.end());
    run.shape.insert(run.shape.end(), data.shape.begin() + 1, data.shape.end());
    auto* out = static_cast<char*>(stage_output(ctx, stage, 0, run.shape, false, run));
    const size_t row = element_count(data.shape, 1) * item, count = element_count(indices.shape);
    switch (row) {
      case 1: gather_rows<1>(out, from, index, count, data.shape[0]); break;
      case 2: gather_rows<2>(out, from, index, count, data.shape[0]); break;
      case 4: gather_rows<4>(out, from, index, count, data.shape[0]); break;
      case 8: gather_rows<8>(out, from, index, count, data.shape[0]); break;
      default:
        for (size_t i = 0; i < count; ++i) {
          const size_t at = checked_index(index[i], data.shape[0], 0);
          if (row > 0) std::memcpy(out + i * row, from + at * row, row);
        }
    }
    return;
  }
  // Scatter: index tuples of k coordinates, each the slice data[tuple].
  const ArrayArg& updates = run.inputs[2];
  if (indices.shape.empty() || indices.shape.back() < 1 || static_cast<size_t>(indices.shape.back()) > data.shape.size()) {
    throw std::invalid_argument("a scatter's indices must end in an axis of 1 to " + std::to_string(data.shape.size()) +
                                " coordinates (the data's rank)");
  }
  const auto k = static_cast<size_t>(indices.shape.back());
  std::vector<int64_t>& expected = run.shape;
  expected.assign(indices.shape.begin(), indices.shape.end() - 1);
  expected.insert(expected.end(), data.shape.begin() + static_cast<long>(k), data.shape.end());
  if (updates.shape != expected) {
    throw std::invalid_argument("a scatter's updates must have the indices' shape without their last axis, then the "
                                "data's from axis " + std::to_string(k));
  }
  auto* out = static_cast<char*>(stage_output(ctx, stage, 0, data.shape, false, run));
  const size_t slice = element_count(data.shape, k), total = element_count(data.shape);
  if (total > 0) std::memcpy(out, from, total * item);
  const ScatterCall call{out, static_cast<const char*>(updates.data), index, element_count(indices.shape) / k, k,
                         data.shape, slice};
  if (stage.indexed == Indexed::ScatterSet) {
    scatter<SetSlice>(call, item);
    return;
  }
  switch (stage.input_dtypes[0]) {
    case DType::Float64: scatter<AddSlice<double>>(call, item); break;
    case DType::Float32: scatter<AddSlice<float>>(call, item); break;
    case DType::Int64: scatter<AddSlice<int64_t>>(call, item); break;
    default: scatter<AddSlice<int32_t>>(call, item); break;  // (parse_indexed_stage allows these four)
  }
}

// A matrix product stage: op(A) op(B) of its two inputs (C-contiguous: node
// inputs or earlier stages' outputs), as the MatMul kernel node computes it.
void run_matmul_stage(Ort::KernelContext& ctx, const ElemwiseStage& stage, RunBuffers& run) {
  reserve_args(run.inputs, 2);
  run.dims.resize(2);
  for (size_t i = 0; i < 2; ++i) read_stage_input(stage, i, run, run.dims[i], run.inputs[i]);
  const ArrayArg& a = run.inputs[0];
  const ArrayArg& b = run.inputs[1];
  const matmul::Plan plan = matmul::plan(a.shape, b.shape, stage.trans_a, stage.trans_b);
  void* out = stage_output(ctx, stage, 0, plan.out_shape, false, run);
  if (stage.input_dtypes[0] == DType::Float64) {
    matmul::multiply(static_cast<const double*>(a.data), static_cast<const double*>(b.data), static_cast<double*>(out),
                     plan);
  } else {
    matmul::multiply(static_cast<const float*>(a.data), static_cast<const float*>(b.data), static_cast<float*>(out), plan);
  }
}

// A linear-algebra stage: what the kernel node of its kind computes, from
// its inputs (C-contiguous: node inputs or earlier stages' outputs).
template <class T>
void run_linalg_stage(Ort::KernelContext& ctx, const ElemwiseStage& stage, RunBuffers& run) {
  const size_t n_args = stage.input_dtypes.size();
  reserve_args(run.inputs, n_args);
  run.dims.resize(n_args);
  for (size_t i = 0; i < n_args; ++i) read_stage_input(stage, i, run, run.dims[i], run.inputs[i]);
  const ArrayArg& a = run.inputs[0];
  const ArrayArg* b = n_args == 2 ? &run.inputs[1] : nullptr;
  auto output = [&](const std::vector<int64_t>& shape) {
    return static_cast<T*>(stage_output(ctx, stage, 0, shape, false, run));
  };
  make_one_matrix<T>(*stage.linalg, static_cast<const T*>(a.data), a.shape, b ? static_cast<const T*>(b->data) : nullptr,
                     b ? &b->shape : nullptr, output);
}

// A reshape stage: the input's elements in the shape its map gives.
void run_reshape_stage(Ort::KernelContext& ctx, const ElemwiseStage& stage, RunBuffers& run) {
  reserve_args(run.inputs, 1);
  run.dims.resize(1);
  read_stage_input(stage, 0, run, run.dims[0], run.inputs[0]);
  const ArrayArg& in = run.inputs[0];
  const size_t count = element_count(in.shape);
  std::vector<int64_t>& shape = run.shape;
  shape.clear();
  size_t known = 1;
  int64_t left = -1;
  for (int64_t m : stage.reshape) {
    if (m >= 0) {
      shape.push_back(m);
    } else if (m == -1) {
      left = static_cast<int64_t>(shape.size());
      shape.push_back(1);
    } else {
      const auto k = static_cast<size_t>(-2 - m);
      if (k >= in.shape.size()) {
        throw std::invalid_argument("a reshape reads the size of axis " + std::to_string(k) + " of an input of rank " +
                                    std::to_string(in.shape.size()));
      }
      shape.push_back(in.shape[k]);
    }
    // (A hand-made map's sizes could overflow the count: refused, never
    // taken as a shape that fits.)
    if (__builtin_mul_overflow(known, static_cast<size_t>(shape.back()), &known)) {
      throw std::invalid_argument("a reshape's sizes overflow the element count");
    }
  }
  for (int64_t axis : stage.ones) {
    if (axis < 0 || static_cast<size_t>(axis) >= in.shape.size() || in.shape[static_cast<size_t>(axis)] != 1) {
      throw std::invalid_argument("a squeeze drops axis " + std::to_string(axis) + ", which does not have size 1");
    }
  }
  // (-1 takes the count the other axes leave, which must be a whole number
  // of them, and they must hold some: ONNX Runtime's Reshape, and NumPy's.)
  const bool fits = left < 0 ? known == count : known > 0 && count % known == 0;
  if (left >= 0 && fits) shape[static_cast<size_t>(left)] = static_cast<int64_t>(count / known);
  if (!fits) {
    std::string dims;
    for (size_t d = 0; d < shape.size(); ++d) {
      dims += (d ? ", " : "") + std::to_string(static_cast<int64_t>(d) == left ? -1 : shape[d]);
    }
    throw std::invalid_argument("cannot reshape an array of " + std::to_string(count) + " elements into shape (" + dims + ")");
  }
  const size_t g = stage.first_output;
  if (stage.destinations[0] < 0) {
    // (Only later stages read it: the input's memory, as it is.)
    ArrayArg& value = run.values[g];
    value.strides.clear();
    value.shape.assign(shape.begin(), shape.end());
    value.data = in.data;
    return;
  }
  void* out = stage_output(ctx, stage, 0, shape, false, run);
  if (count > 0) std::memcpy(out, in.data, count * dtype_size(stage.input_dtypes[0]));
}

// A split or concat stage: the pieces of the input along the axis, or the
// inputs joined along it. Each piece is `outer` runs of its size times
// `inner` elements (the axes before and after the axis).
void run_join_stage(Ort::KernelContext& ctx, const ElemwiseStage& stage, RunBuffers& run) {
  const size_t n_args = stage.input_dtypes.size();
  reserve_args(run.inputs, n_args);
  run.dims.resize(n_args);
  for (size_t i = 0; i < n_args; ++i) read_stage_input(stage, i, run, run.dims[i], run.inputs[i]);
  const auto axis = static_cast<size_t>(stage.join_axis);
  const size_t item = dtype_size(stage.input_dtypes[0]);
  const std::vector<int64_t>& first = run.inputs[0].shape;
  if (axis >= first.size()) {
    throw std::invalid_argument("axis " + std::to_string(axis) + " is out of range for an input of rank " +
                                std::to_string(first.size()));
  }
  size_t outer = 1;
  for (size_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(first[d]);
  const size_t inner = element_count(first, axis + 1) * item;  // (bytes)
  if (stage.joins == ElemwiseStage::Joins::Split) {
    // (Sizes a hand-made node gives could wrap around to the axis's size:
    // refused, never cut into pieces past the input's end.)
    int64_t total = 0;
    for (int64_t k : stage.pieces) {
      if (__builtin_add_overflow(total, k, &total)) throw std::invalid_argument("a split's sizes overflow int64");
    }
    if (total != first[axis]) {
      throw std::invalid_argument("cannot split an axis of size " + std::to_string(first[axis]) + " into pieces of " +
                                  std::to_string(total) + " elements");
    }
    const auto* from = static_cast<const char*>(run.inputs[0].data);
    const size_t row = static_cast<size_t>(first[axis]) * inner;
    size_t offset = 0;  // (bytes into a row)
    for (size_t j = 0; j < stage.pieces.size(); ++j) {
      run.shape.assign(first.begin(), first.end());
      run.shape[axis] = stage.pieces[j];
      const size_t piece = static_cast<size_t>(stage.pieces[j]) * inner;
      if (stage.destinations[j] < 0 && outer == 1) {
        // (Only later stages read it, and it is one run: the input's memory.)
        ArrayArg& value = run.values[stage.first_output + j];
        value.strides.clear();
        value.shape.assign(run.shape.begin(), run.shape.end());
        value.data = from + offset;
      } else {
        auto* out = static_cast<char*>(stage_output(ctx, stage, j, run.shape, false, run));
        for (size_t o = 0; o < outer && piece > 0; ++o) std::memcpy(out + o * piece, from + o * row + offset, piece);
      }
      offset += piece;
    }
    return;
  }
  run.shape.assign(first.begin(), first.end());
  run.shape[axis] = 0;
  for (size_t i = 0; i < n_args; ++i) {
    const std::vector<int64_t>& shape = run.inputs[i].shape;
    bool fits = shape.size() == first.size();
    for (size_t d = 0; d < shape.size() && fits; ++d) fits = d == axis || shape[d] == first[d];
    if (!fits) {
      throw std::invalid_argument("cannot join input " + std::to_string(i) + " of shape " + shape_text(shape) +
                                  " to one of shape " + shape_text(first) + " along axis " + std::to_string(axis));
    }
    run.shape[axis] += shape[axis];
  }
  auto* out = static_cast<char*>(stage_output(ctx, stage, 0, run.shape, false, run));
  const size_t row = static_cast<size_t>(run.shape[axis]) * inner;
  size_t offset = 0;
  for (size_t i = 0; i < n_args; ++i) {
    const auto* from = static_cast<const char*>(run.inputs[i].data);
    const size_t piece = static_cast<size_t>(run.inputs[i].shape[axis]) * inner;
    for (size_t o = 0; o < outer && piece > 0; ++o) std::memcpy(out + o * row + offset, from + o * piece, piece);
    offset += piece;
  }
}

// A ScalarLoop stage: its step count and body inputs broadcast, run element by element.
void run_loop_stage(Ort::KernelContext& ctx, const ElemwiseStage& stage, RunBuffers& run, const ParallelFor& parallel) {
  const size_t n_args = stage.input_dtypes.size();
  reserve_args(run.inputs, n_args);
  run.dims.resize(n_args);
  for (size_t i = 0; i < n_args; ++i) read_stage_input(stage, i, run, run.dims[i], run.inputs[i]);
  output_shape(run.inputs.data(), n_args, stage.rank, run.shapes, run.shape);
  run.outputs.clear();
  for (size_t j = 0; j < stage.num_outputs(); ++j) run.outputs.push_back(stage_output(ctx, stage, j, run.shape, false, run));
  evaluate_loop(*stage.loop, ArgList(run.inputs.data(), n_args), run.shape, run.outputs, &parallel);
}

// A program stage: its program over its inputs broadcast. `ran`, when
// given, tells whether it ran one compiled block (evaluate.h).
void run_program_stage(Ort::KernelContext& ctx, const ElemwiseStage& stage, RunBuffers& run,
                       const ParallelFor& parallel, OneBlockRun* ran) {
  const Program& p = stage.program;
  const size_t n_args = stage.input_dtypes.size();
  reserve_args(run.inputs, n_args);
  run.dims.resize(n_args);
  for (size_t i = 0; i < n_args; ++i) {
    read_stage_input(stage, i, run, run.dims[i], run.inputs[i]);
    if (stage.input_axes[i]) {
      const int64_t source = stage.sources[i];
      read_as_view(run.inputs[i], source >= 0 ? static_cast<size_t>(source) : i, *stage.input_axes[i],
                   static_cast<size_t>(stage.rank), run.array_shape);
    }
  }
  const ArgList args(run.inputs.data(), n_args);
  output_shape(run.inputs.data(), n_args, stage.rank, run.shapes, run.shape);
  check_strict_axes(args, stage.strict_axes, run.shape);
  if (!stage.expand.empty()) {
    run.shapes.assign({&run.shape, &stage.expand});
    broadcast_into(run.shapes, run.expanded);
    run.shape.swap(run.expanded);
    // (A hand-made target's sizes could overflow the count: refused.)
    size_t count = 1;
    for (int64_t d : run.shape) {
      if (__builtin_mul_overflow(count, static_cast<size_t>(d), &count)) {
        throw std::invalid_argument("an expand's sizes overflow the element count");
      }
    }
  }
  run.outputs.clear();
  for (size_t j = 0; j < p.outputs.size(); ++j) {
    const bool reduced = j < p.reductions.size() && p.reductions[j] != Reduction::None;
    run.outputs.push_back(stage_output(ctx, stage, j, run.shape, reduced, run));
  }
  evaluate(p, args, run.shape, run.outputs, &parallel, ran);
}

// Stage `stage` of a node, as its kind runs.
void run_stage(Ort::KernelContext& ctx, const ElemwiseStage& stage, RunBuffers& run, const ParallelFor& parallel,
               OneBlockRun* ran) {
  if (ran != nullptr) *ran = {};
  if (stage.reduce != ElemwiseStage::Reduce::None) return run_reduce_stage(ctx, stage, run);
  if (stage.loop) return run_loop_stage(ctx, stage, run, parallel);
  if (stage.indexed != ElemwiseStage::Indexed::None) return run_indexed_stage(ctx, stage, run);
  if (stage.reshapes) return run_reshape_stage(ctx, stage, run);
  if (stage.multiplies) return run_matmul_stage(ctx, stage, run);
  if (stage.linalg) {
    if (stage.input_dtypes[0] == DType::Float64) return run_linalg_stage<double>(ctx, stage, run);
    return run_linalg_stage<float>(ctx, stage, run);
  }
  if (stage.joins != ElemwiseStage::Joins::None) return run_join_stage(ctx, stage, run);
  run_program_stage(ctx, stage, run, parallel, ran);
}

// How `stage` replays what this run did (`one`: whether it ran one block).
StageRecord::Replay replay_kind(const ElemwiseStage& stage, const OneBlockRun& one) {
  using Replay = StageRecord::Replay;
  if (one.block != nullptr) return Replay::Block;
  if (stage.reduce != ElemwiseStage::Reduce::None) return Replay::Reduce;
  if (stage.reshapes && stage.destinations[0] < 0) return Replay::Alias;
  return Replay::None;
}

// A stage as `record` says an earlier run of inputs of the same dtypes and
// shapes ran it, into outputs of the shapes it gave them: a program stage's
// block on its inputs' memory, a reduction of its input of the shape it had,
// a reshape's input as it is.
void replay_stage(Ort::KernelContext& ctx, const ElemwiseStage& stage, const StageRecord& record, RunBuffers& run) {
  using Replay = StageRecord::Replay;
  if (record.replay == Replay::Reduce) {
    reduce_into(stage, stage_source(stage, 0, run).data, record.input_shape,
                stage_output(ctx, stage, 0, record.output_shapes[0], false, run));
    return;
  }
  if (record.replay == Replay::Alias) {
    ArrayArg& value = run.values[stage.first_output];
    value.strides.clear();
    value.shape.assign(record.output_shapes[0].begin(), record.output_shapes[0].end());
    value.data = stage_source(stage, 0, run).data;
    return;
  }
  const size_t n_args = stage.input_dtypes.size();
  std::vector<const void*>& data = run.data;
  data.resize(n_args);
  for (size_t i = 0; i < n_args; ++i) {
    data[i] = stage.dim_of_input[i] >= 0 ? &record.dims[i] : stage_source(stage, i, run).data;
  }
  run.outputs.clear();
  for (size_t j = 0; j < record.output_shapes.size(); ++j) {
    run.outputs.push_back(stage_output(ctx, stage, j, record.output_shapes[j], false, run));
  }
  run_one_block(stage.program, record.one, data.data(), run.outputs);
}

// The node inputs' dtypes and shapes, as NodeRecord::key lists them.
void node_key(const RunBuffers& run, size_t n_in, std::vector<int64_t>& key) {
  key.clear();
  for (size_t k = 0; k < n_in; ++k) {
    const std::optional<DType> dtype = run.node_dtypes[k];
    const std::vector<int64_t>& shape = run.node_inputs[k].shape;
    key.push_back(dtype ? static_cast<int64_t>(*dtype) : -1);
    key.push_back(static_cast<int64_t>(shape.size()));
    key.insert(key.end(), shape.begin(), shape.end());
  }
}

}  // namespace

void ElemwiseKernel::compute(OrtKernelContext* context) {
  Ort::KernelContext ctx(context);
  RunBuffers& run = thread_instance<RunBuffers>();
  read_node_inputs(ctx, input_dtypes_, constant_inputs_, same_value_as_, known_input_shapes_, packed_inputs_,
                   packed_input_shapes_, run);
  if (ctx.GetOutputCount() != num_node_outputs_) {
    throw std::invalid_argument("the program has " + std::to_string(num_node_outputs_) + " outputs, the node " +
                                std::to_string(ctx.GetOutputCount()));
  }
  run.node_outputs = &outputs_;
  run.packed_shapes = &packed_shapes_;
  run.packed = nullptr;
  if (num_packed_ > 0) {
    const auto count = static_cast<int64_t>(packed_length_);
    run.packed = ctx.GetOutput(num_node_outputs_ - 1, &count, 1).GetTensorMutableData<double>();
  }
  const ParallelFor parallel = pool_of(ctx);
  const ElemwiseStage& last = stages_.back();
  const size_t n_values = last.first_output + last.num_outputs();
  reserve_args(run.values, n_values);
  if (run.scratch.size() < n_values) run.scratch.resize(n_values);
  // A record of an earlier run of inputs of these dtypes and shapes, or a
  // new one, kept once this run has succeeded (node_record.h). (A node fed
  // ever new shapes stops making records once it keeps all it may.)
  node_key(run, input_dtypes_.size(), run.key);
  const NodeRecord* record = records_.find(run.key);
  std::optional<NodeRecord> recording;
  if (record == nullptr && !records_.full()) {
    recording.emplace(NodeRecord{run.key, std::vector<StageRecord>(stages_.size())});
  }
  for (size_t s = 0; s < stages_.size(); ++s) {
    const ElemwiseStage& stage = stages_[s];
    if (record != nullptr) {
      const StageRecord& replay = record->stages[s];
      if (replay.replay != StageRecord::Replay::None) replay_stage(ctx, stage, replay, run);
      else run_stage(ctx, stage, run, parallel, nullptr);
      continue;
    }
    if (!recording) {
      run_stage(ctx, stage, run, parallel, nullptr);
      continue;
    }
    StageRecord& made = recording->stages[s];
    run_stage(ctx, stage, run, parallel, &made.one);
    made.replay = replay_kind(stage, made.one);
    if (made.replay == StageRecord::Replay::None) continue;
    if (made.replay == StageRecord::Replay::Block) {
      made.dims.assign(run.dims.begin(), run.dims.begin() + static_cast<long>(stage.input_dtypes.size()));
    }
    if (made.replay == StageRecord::Replay::Reduce) made.input_shape = run.inputs[0].shape;
    for (size_t j = 0; j < stage.num_outputs(); ++j) made.output_shapes.push_back(run.values[stage.first_output + j].shape);
  }
  if (recording) records_.add(std::move(*recording));
  // (Kept for the next run unless large: a thread holds no more than this
  // for good, where a large intermediate costs more to compute than to allocate.)
  for (size_t g = 0; g < n_values; ++g) {
    if (run.scratch[g].capacity() * sizeof(double) > kKeptScratchBytes) std::vector<double>().swap(run.scratch[g]);
  }
}

ScalarLoopKernel::ScalarLoopKernel(const OrtApi&, const OrtKernelInfo* info) {
  Ort::ConstKernelInfo kernel_info(info);
  const auto input_dtypes = kernel_info.GetAttribute<std::string>("input_dtypes");
  const auto program = kernel_info.GetAttribute<std::string>("program");
  const auto num_state = static_cast<size_t>(kernel_info.GetAttribute<int64_t>("num_state"));
  const auto next_state = kernel_info.GetAttributes<int64_t>("next_state");
  const auto until = kernel_info.GetAttribute<int64_t>("until");
  loop_ = parse_loop(input_dtypes, program, num_state, next_state, until);
  loop_.compiled = compiled_loop(loop_key(input_dtypes, program, num_state, next_state, until));
  rank_ = rank_attribute(kernel_info);
  // Input 0 is the step count.
  const Program& body = loop_.body;
  input_dtypes_.assign(1, DType::Int64);
  input_dtypes_.insert(input_dtypes_.end(), body.registers.begin(),
                       body.registers.begin() + static_cast<long>(body.num_inputs()));
  constant_inputs_ = constant_inputs(info, input_dtypes_);
}

OrtStatusPtr ScalarLoopKernel::ComputeV2(OrtKernelContext* context) {
  return as_status(kName, [&] { compute(context); });
}

void ScalarLoopKernel::compute(OrtKernelContext* context) {
  Ort::KernelContext ctx(context);
  RunBuffers& run = thread_instance<RunBuffers>();
  const size_t n_in = read_inputs(ctx, input_dtypes_, constant_inputs_, run);
  output_shape(run.inputs.data(), n_in, rank_, run.shapes, run.shape);
  make_outputs(ctx, loop_.num_state + (loop_.until >= 0 ? 1 : 0), run.shape, {}, run.outputs);
  const ParallelFor parallel = pool_of(ctx);
  evaluate_loop(loop_, ArgList(run.inputs.data(), n_in), run.shape, run.outputs, &parallel);
}

}  // namespace pytensor_onnx::kernels
