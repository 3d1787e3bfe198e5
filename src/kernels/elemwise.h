// The kernels as ONNX Runtime custom ops. One op per kernel and output dtype
// ("Elemwise_float64", "ScalarLoop_float32", ...): ONNX Runtime needs a
// custom op's output type fixed, while its inputs may mix dtypes.
//   Elemwise_<dtype>:   a fused element-wise scalar program (program.h,
//                       evaluate.h) over broadcast inputs, in cache-sized
//                       blocks, on ONNX Runtime's intra-op threads;
//   ScalarLoop_<dtype>: PyTensor's ScalarLoop, element by element
//                       (scalar_loop.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dtype.h"
#include "evaluate.h"
#include "linalg_kernel.h"
#include "node_record.h"
#include "ort_api.h"
#include "program.h"
#include "scalar_loop.h"
#include "status.h"

namespace pytensor_onnx::kernels {

// One fused program of an Elemwise node. A node runs one or more, in order
// (attribute `stages`, passes/merge_kernel_stages.h in the core): a later
// stage reads what earlier ones wrote without ONNX Runtime seeing it.
struct ElemwiseStage {
  // A stage that reduces its one input over `axes` instead of running a
  // program (attribute `reduce`: "sum", "max" or "min", with `axes` and
  // `keepdims`): the core merges ReduceSum and Reduce kernel nodes so.
  enum class Reduce { None, Sum, Max, Min };
  Reduce reduce = Reduce::None;
  std::vector<int64_t> axes;  // distinct, in increasing order
  bool keepdims = false;

  // A stage that runs a ScalarLoop (attributes `num_state`, `next_state`,
  // `until` beside `program` and `input_dtypes`, as the ScalarLoop node's):
  // its inputs are the step count (int64), then its body's; its outputs the
  // final state and, with an until flag, the flag in the state's dtype. The
  // core merges ScalarLoop nodes so (PyTensor's gradients of the incomplete
  // gamma and beta functions: loops between the programs that feed them and
  // read them).
  std::shared_ptr<const LoopProgram> loop;

  // A stage of ONNX's indexing (the core merges Gather and ScatterND nodes
  // so: a hierarchical model's group effects per observation, a[idx], and
  // their gradient): Gather takes rows of its first input along axis 0 at
  // its int64 indices (attribute `gather`: 0); Scatter writes a copy of its
  // first input with the slices of its third at its second's int64 index
  // tuples (attribute `scatter`: "add" adds them up in order, as np.add.at;
  // "none" sets them, the last one winning). Indices may be negative (from
  // the end); one out of range fails the run, as ONNX Runtime's nodes do.
  enum class Indexed { None, Gather, ScatterSet, ScatterAdd };
  Indexed indexed = Indexed::None;

  // A stage that gives its one input another shape (the core merges ONNX's
  // Reshape, Squeeze and Unsqueeze so; attribute `reshape`): per output axis
  // a size >= 0, -1 for the size the element count leaves, or -2 - k for the
  // size of input axis k; `ones`: input axes that must have size 1 (a
  // Squeeze's). A value only later stages read is the input's memory.
  bool reshapes = false;
  std::vector<int64_t> reshape, ones;

  // A stage that splits its one input along an axis into pieces of the
  // sizes `pieces` (attributes `split`: the axis, and `split_sizes`), or
  // joins its inputs, all of one dtype, along an axis (attribute `concat`):
  // the core merges ONNX's Split of constant sizes and Concat so (a simplex
  // transform's pieces). A piece only later stages read, of an axis with no
  // axes of more than one element before it, is the input's memory.
  enum class Joins { None, Split, Concat };
  Joins joins = Joins::None;
  int64_t join_axis = 0;
  std::vector<int64_t> pieces;

  // A stage that multiplies its two inputs as the MatMul kernel node does
  // (matmul.h; attribute `matmul`: trans_a, trans_b): the core merges
  // MatMul kernel nodes so (a regression's X @ beta and X.T @ residuals
  // between the programs that make and read them).
  bool multiplies = false;
  bool trans_a = false, trans_b = false;

  // A stage that runs a linear-algebra kernel of one matrix output
  // (linalg_kernel.h: makes_one_matrix; attribute `linalg`: "Cholesky",
  // "SolveTriangular", "CholeskySolve" or "Solve", with that kernel's
  // attributes): the core merges those kernel nodes so (a Gaussian
  // process's factor and solves between the programs that make the kernel
  // matrix and read the factor).
  std::optional<LinalgSettings> linalg;

  Program program;
  int64_t rank = -1;  // the output's rank when fixed (attribute `rank`)
  std::vector<DType> input_dtypes;
  std::vector<int64_t> strict_axes;  // (input, output axis) pairs that must not broadcast
  // A shape the output is broadcast to as well (attribute `expand`; the core
  // merges ONNX's Expand of a constant shape as an Identity program so).
  std::vector<int64_t> expand;
  // Per program input: the axis whose size the program reads as that input
  // (an int64 scalar; attribute `dim_inputs`), or -1: its elements.
  std::vector<int64_t> dim_of_input;
  // Per program input read as a view of another array (attribute
  // `input_axes`): for each axis of that array, the output axis it runs
  // along, or -1 for an axis of size 1 that the view drops.
  std::vector<std::optional<std::vector<int64_t>>> input_axes;
  // Per program input: node input k >= 0, or -(g + 1): output g of the node's
  // stages (numbered across stages, in order), written by an earlier stage.
  std::vector<int64_t> sources;
  // Per program output: the node output it is, or -1 (read by later stages only).
  std::vector<int64_t> destinations;
  size_t first_output = 0;  // the number of its first output across stages

  // Whether the stage makes one array of its first input's dtype (every
  // kind but programs, loops and splits).
  bool makes_one_array() const {
    return reduce != Reduce::None || indexed != Indexed::None || reshapes || joins == Joins::Concat || multiplies ||
           linalg.has_value();
  }
  size_t num_outputs() const {
    if (loop) return loop->num_state + (loop->until >= 0 ? 1 : 0);
    if (joins == Joins::Split) return pieces.size();
    return makes_one_array() ? 1 : program.outputs.size();
  }
  DType output_dtype(size_t j) const {
    if (loop) return loop->body.registers[0];
    if (makes_one_array() || joins == Joins::Split) return input_dtypes[0];
    return program.registers[static_cast<size_t>(program.outputs[j])];
  }
};

class ElemwiseKernel {
 public:
  static constexpr const char* kName = "Elemwise";
  ElemwiseKernel(const OrtApi& api, const OrtKernelInfo* info);
  OrtStatusPtr ComputeV2(OrtKernelContext* context);

 private:
  void compute(OrtKernelContext* context);
  void set_node_outputs(const Ort::ConstKernelInfo& info, const std::vector<int64_t>& packed);
  std::vector<ElemwiseStage> stages_;
  size_t num_outputs_ = 0;  // as the stages number them
  // Per output as the stages number them: the node output it is, and the
  // offset of its values there where the node packs small arrays into its
  // last output (attribute `packed_outputs`,
  // src/core/passes/pack_small_arrays.h), or -1; and the shape of a packed
  // one (attribute `packed_output_shapes`; empty for a scalar or an output
  // of its own).
  std::vector<std::pair<size_t, int64_t>> outputs_;
  std::vector<std::vector<int64_t>> packed_shapes_;
  size_t num_node_outputs_ = 0;
  size_t num_packed_ = 0;     // the packed arrays
  size_t packed_length_ = 0;  // their elements, the packed output's length
  // Per node input: the dtype the stages read its elements as, or nullopt
  // where they only read the size of one of its axes.
  std::vector<std::optional<DType>> input_dtypes_;
  std::vector<std::optional<ArrayArg>> constant_inputs_;  // constant_inputs.h
  // Per node input: an earlier input of the same value (the node reads one
  // value as two views, x and x.T), whose array it shares, or -1.
  std::vector<int64_t> same_value_as_;
  // Per node input: its dtype and shape where they are checked before the
  // run starts (attribute `input_shapes`: records input, dtype, rank, dims;
  // src/core/passes/record_input_shapes.h), so a run asks ONNX Runtime for
  // its data only; nullopt elsewhere.
  std::vector<std::optional<std::pair<DType, std::vector<int64_t>>>> known_input_shapes_;
  // Per node input: the offset of its first element in the packed input it
  // reads in its place (attribute `packed_inputs`,
  // src/core/passes/pack_small_arrays.h), or -1, and its shape there
  // (attribute `packed_input_shapes`; empty for a scalar); empty without them.
  std::vector<int64_t> packed_inputs_;
  std::vector<std::vector<int64_t>> packed_input_shapes_;
  // What runs found from their inputs' dtypes and shapes (node_record.h).
  NodeRecordCache records_;
};

class ScalarLoopKernel {
 public:
  static constexpr const char* kName = "ScalarLoop";
  ScalarLoopKernel(const OrtApi& api, const OrtKernelInfo* info);
  OrtStatusPtr ComputeV2(OrtKernelContext* context);

 private:
  void compute(OrtKernelContext* context);
  LoopProgram loop_;
  int64_t rank_ = -1;  // the output's rank when fixed (attribute `rank`)
  std::vector<DType> input_dtypes_;
  std::vector<std::optional<ArrayArg>> constant_inputs_;  // constant_inputs.h
};

template <class Kernel>
struct KernelOp : Ort::CustomOpBase<KernelOp<Kernel>, Kernel, true> {
  explicit KernelOp(DType output_dtype)
      : output_dtype_(output_dtype), name_(std::string(Kernel::kName) + "_" + dtype_name(output_dtype)) {}

  OrtStatusPtr CreateKernelV2(const OrtApi& api, const OrtKernelInfo* info, void** kernel) const {
    return create_kernel(api, name_, kernel, [&] { return std::make_unique<Kernel>(api, info); });
  }
  const char* GetName() const { return name_.c_str(); }
  size_t GetInputTypeCount() const { return 1; }
  ONNXTensorElementDataType GetInputType(size_t) const { return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED; }
  OrtCustomOpInputOutputCharacteristic GetInputCharacteristic(size_t) const { return INPUT_OUTPUT_VARIADIC; }
  int GetVariadicInputMinArity() const { return 1; }
  bool GetVariadicInputHomogeneity() const { return false; }
  size_t GetOutputTypeCount() const { return 1; }
  ONNXTensorElementDataType GetOutputType(size_t) const {
    return static_cast<ONNXTensorElementDataType>(onnx_element_type(output_dtype_));
  }
  OrtCustomOpInputOutputCharacteristic GetOutputCharacteristic(size_t) const { return INPUT_OUTPUT_VARIADIC; }
  int GetVariadicOutputMinArity() const { return 1; }
  bool GetVariadicOutputHomogeneity() const { return true; }

 private:
  DType output_dtype_;
  std::string name_;
};

}  // namespace pytensor_onnx::kernels
