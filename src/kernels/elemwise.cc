#include "elemwise.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "constant_inputs.h"
#include "evaluate.h"
#include "status.h"

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
};

// An input that the node reads for the size of one of its axes (attribute
// `dim_inputs`, dim >= 0): a 0-d int64 in `slot`.
void read_dim(const Ort::ConstValue& value, size_t i, int64_t dim, int64_t& slot, ArrayArg& arg) {
  auto info = value.GetTensorTypeAndShapeInfo();
  const size_t rank = info.GetDimensionsCount();
  if (static_cast<size_t>(dim) >= rank) {
    throw std::invalid_argument("input " + std::to_string(i) + " has rank " + std::to_string(rank) +
                                "; the node reads the size of its axis " + std::to_string(dim));
  }
  thread_local std::vector<int64_t> shape;
  shape.resize(rank);
  Ort::ThrowOnError(Ort::GetApi().GetDimensions(info, shape.data(), shape.size()));
  slot = shape[static_cast<size_t>(dim)];
  arg.data = &slot;
  arg.shape.clear();
}

// The inputs of a kernel node as arrays, checked against the dtypes the
// kernel's program reads (`dtypes[i]` for input i); an input with
// `dim_of_input[i] >= 0` is the size of that axis instead (int64, 0-d).
// Inputs in `constants` (constant_inputs.h) were read when the kernel was
// created; an input with `same_value_as[i] >= 0` is that earlier input's
// value, read then.
void read_inputs(Ort::KernelContext& ctx, const std::vector<DType>& dtypes, const std::vector<int64_t>& dim_of_input,
                 const std::vector<std::optional<ArrayArg>>& constants, const std::vector<int64_t>& same_value_as,
                 RunBuffers& run) {
  std::vector<ArrayArg>& inputs = run.inputs;
  const size_t n_in = ctx.GetInputCount();
  if (n_in != dtypes.size()) {
    throw std::invalid_argument("the program reads " + std::to_string(dtypes.size()) + " inputs, the node has " +
                                std::to_string(n_in));
  }
  inputs.resize(n_in);
  run.dims.resize(n_in);
  for (size_t i = 0; i < n_in; ++i) {
    inputs[i].strides.clear();
    if (i < constants.size() && constants[i]) {
      inputs[i].data = constants[i]->data;
      inputs[i].shape.assign(constants[i]->shape.begin(), constants[i]->shape.end());
      continue;
    }
    if (i < same_value_as.size() && same_value_as[i] >= 0) {
      // (Read before, in full: GetTensorTypeAndShape allocates, ~80 ns.)
      const ArrayArg& read = inputs[static_cast<size_t>(same_value_as[i])];
      inputs[i].data = read.data;
      inputs[i].shape.assign(read.shape.begin(), read.shape.end());
      continue;
    }
    Ort::ConstValue value = ctx.GetInput(i);
    if (i < dim_of_input.size() && dim_of_input[i] >= 0) {
      read_dim(value, i, dim_of_input[i], run.dims[i], inputs[i]);
      continue;
    }
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
}

// Input `i` (its elements at arg.data, C-contiguous, of shape arg.shape) as
// the view the node reads (attribute `input_axes`): `axes[j]` is the output
// axis that axis j of the array runs along, or -1 where the view drops an
// axis, which must then have size 1 (the Squeeze it replaced would fail
// otherwise). `arg` becomes the view: a shape of `rank` dims and its strides.
void read_as_view(ArrayArg& arg, size_t i, const std::vector<int64_t>& axes, size_t rank) {
  thread_local std::vector<int64_t> own;
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
void output_shape(std::vector<ArrayArg>& inputs, int64_t rank, std::vector<const std::vector<int64_t>*>& shapes,
                  std::vector<int64_t>& out) {
  shapes.clear();
  for (size_t i = 0; i < inputs.size(); ++i) {
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
  broadcast_into(shapes, out);
  if (rank >= 0 && out.size() < static_cast<size_t>(rank)) out.insert(out.begin(), rank - out.size(), 1);
}

// PyTensor broadcasts a dim only where an input's type says it is 1: pairs
// (input, output axis) in `strict` (attribute `strict_axes`) are dims of
// unknown size that must not broadcast. An input of size 1 there while the
// output's size is not 1 fails the run, as PyTensor raises.
void check_strict_axes(const std::vector<ArrayArg>& inputs, const std::vector<int64_t>& strict,
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
int64_t rank_attribute(const Ort::ConstKernelInfo& info) {
  const int64_t rank = optional_int(info, "rank", -1);
  if (rank > kMaxRank) {
    throw std::invalid_argument("attribute 'rank' is " + std::to_string(rank) + "; at most " +
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
// value), read for its elements as the same dtype, or -1.
std::vector<int64_t> inputs_of_one_value(const Ort::ConstKernelInfo& info, const std::vector<DType>& dtypes,
                                         const std::vector<int64_t>& dim_of_input) {
  const size_t n = std::min(info.GetInputCount(), dtypes.size());
  std::vector<std::string> names(n);
  std::vector<int64_t> same(n, -1);
  for (size_t i = 0; i < n; ++i) {
    names[i] = info.GetInputName(i);
    if (names[i].empty() || dim_of_input[i] >= 0) continue;  // (an omitted optional input has no name)
    for (size_t j = 0; j < i; ++j) {
      if (names[j] == names[i] && dim_of_input[j] < 0 && dtypes[j] == dtypes[i]) {
        same[i] = static_cast<int64_t>(j);
        break;
      }
    }
  }
  return same;
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
  const auto input_dtypes = kernel_info.GetAttribute<std::string>("input_dtypes");
  const auto program = kernel_info.GetAttribute<std::string>("program");
  const auto output_registers = kernel_info.GetAttributes<int64_t>("output_registers");
  program_ = parse_program(input_dtypes, program, output_registers);
  program_.compiled = compiled_blocks(block_key(input_dtypes, program, output_registers));
  set_output_reductions(program_, optional_ints(kernel_info, "output_reductions"));
  program_.sum_chunk = std::max<int64_t>(0, optional_int(kernel_info, "sum_chunk", 0));
  rank_ = rank_attribute(kernel_info);
  strict_axes_ = optional_ints(kernel_info, "strict_axes");
  input_dtypes_.assign(program_.registers.begin(), program_.registers.begin() + static_cast<long>(program_.num_inputs()));
  const std::vector<int64_t> dim_inputs = optional_ints(kernel_info, "dim_inputs");
  dim_of_input_.assign(input_dtypes_.size(), -1);
  for (size_t k = 0; k + 1 < dim_inputs.size(); k += 2) {
    const int64_t i = dim_inputs[k], dim = dim_inputs[k + 1];
    if (i < 0 || static_cast<size_t>(i) >= input_dtypes_.size() || dim < 0 ||
        input_dtypes_[static_cast<size_t>(i)] != DType::Int64) {
      throw std::invalid_argument("attribute 'dim_inputs' names input " + std::to_string(i) + " and axis " +
                                  std::to_string(dim) + ": an int64 input of the program and an axis >= 0");
    }
    dim_of_input_[static_cast<size_t>(i)] = dim;
  }
  constant_inputs_ = constant_inputs(info, input_dtypes_);
  for (size_t i = 0; i < dim_of_input_.size(); ++i) {
    if (dim_of_input_[i] >= 0) constant_inputs_[i].reset();  // (read for a size, not as elements)
  }
  input_axes_ = parse_input_axes(optional_ints(kernel_info, "input_axes"), dim_of_input_, rank_);
  same_value_as_ = inputs_of_one_value(kernel_info, input_dtypes_, dim_of_input_);
}

OrtStatusPtr ElemwiseKernel::ComputeV2(OrtKernelContext* context) {
  return as_status(kName, [&] { compute(context); });
}

void ElemwiseKernel::compute(OrtKernelContext* context) {
  Ort::KernelContext ctx(context);
  const Program& p = program_;
  thread_local RunBuffers run;
  read_inputs(ctx, input_dtypes_, dim_of_input_, constant_inputs_, same_value_as_, run);
  for (size_t i = 0; i < input_axes_.size(); ++i) {
    if (input_axes_[i]) read_as_view(run.inputs[i], i, *input_axes_[i], static_cast<size_t>(rank_));
  }
  output_shape(run.inputs, rank_, run.shapes, run.shape);
  check_strict_axes(run.inputs, strict_axes_, run.shape);
  make_outputs(ctx, p.outputs.size(), run.shape, p.reductions, run.outputs);
  const ParallelFor parallel = pool_of(ctx);
  evaluate(p, run.inputs, run.shape, run.outputs, &parallel);
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
  thread_local RunBuffers run;
  read_inputs(ctx, input_dtypes_, {}, constant_inputs_, {}, run);
  output_shape(run.inputs, rank_, run.shapes, run.shape);
  make_outputs(ctx, loop_.num_state + (loop_.until >= 0 ? 1 : 0), run.shape, {}, run.outputs);
  const ParallelFor parallel = pool_of(ctx);
  evaluate_loop(loop_, run.inputs, run.shape, run.outputs, &parallel);
}

}  // namespace pytensor_onnx::kernels
