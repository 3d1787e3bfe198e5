#include "elemwise.h"

#include <stdexcept>
#include <vector>

#include "evaluate.h"
#include "status.h"

namespace pytensor_onnx::kernels {
namespace {

// dtype.cc numbers element types as ONNX does; ONNX Runtime's enum agrees.
static_assert(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT == 1 && ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL == 9 &&
              ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE == 11 && ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64 == 13);

// The inputs of a kernel node as arrays, checked against the dtypes the
// kernel's program reads (`dtypes[i]` for input i).
std::vector<ArrayArg> read_inputs(Ort::KernelContext& ctx, const std::vector<DType>& dtypes) {
  const size_t n_in = ctx.GetInputCount();
  if (n_in != dtypes.size()) {
    throw std::invalid_argument("the program reads " + std::to_string(dtypes.size()) + " inputs, the node has " +
                                std::to_string(n_in));
  }
  std::vector<ArrayArg> inputs;
  for (size_t i = 0; i < n_in; ++i) {
    Ort::ConstValue value = ctx.GetInput(i);
    auto info = value.GetTensorTypeAndShapeInfo();
    if (dtype_from_onnx(static_cast<int>(info.GetElementType())) != dtypes[i]) {
      throw std::invalid_argument("input " + std::to_string(i) + " is not of the program's dtype " +
                                  dtype_name(dtypes[i]));
    }
    inputs.push_back({value.GetTensorRawData(), info.GetShape()});
  }
  return inputs;
}

std::vector<int64_t> output_shape(const std::vector<ArrayArg>& inputs) {
  std::vector<std::vector<int64_t>> shapes;
  for (const ArrayArg& a : inputs) shapes.push_back(a.shape);
  return broadcast_shapes(shapes);
}

// The node's outputs, of `shape`; those flagged in `sums` are 0-d.
std::vector<void*> make_outputs(Ort::KernelContext& ctx, size_t count, const std::vector<int64_t>& shape,
                                const std::vector<bool>& sums = {}) {
  if (ctx.GetOutputCount() != count) {
    throw std::invalid_argument("the program has " + std::to_string(count) + " outputs, the node " +
                                std::to_string(ctx.GetOutputCount()));
  }
  const std::vector<int64_t> scalar;
  std::vector<void*> outputs;
  for (size_t j = 0; j < count; ++j) {
    const bool summed = j < sums.size() && sums[j];
    outputs.push_back(ctx.GetOutput(j, summed ? scalar : shape).GetTensorMutableRawData());
  }
  return outputs;
}

// An optional list attribute of the node (empty when absent).
std::vector<int64_t> optional_ints(const Ort::ConstKernelInfo& info, const char* name) {
  try {
    return info.GetAttributes<int64_t>(name);
  } catch (const Ort::Exception&) {
    return {};
  }
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
  program_ = parse_program(kernel_info.GetAttribute<std::string>("input_dtypes"),
                           kernel_info.GetAttribute<std::string>("program"),
                           kernel_info.GetAttributes<int64_t>("output_registers"));
  set_output_sums(program_, optional_ints(kernel_info, "output_sums"));
}

OrtStatusPtr ElemwiseKernel::ComputeV2(OrtKernelContext* context) {
  return as_status(kName, [&] { compute(context); });
}

void ElemwiseKernel::compute(OrtKernelContext* context) {
  Ort::KernelContext ctx(context);
  const Program& p = program_;
  const std::vector<DType> dtypes(p.registers.begin(), p.registers.begin() + static_cast<long>(p.num_inputs()));
  const std::vector<ArrayArg> inputs = read_inputs(ctx, dtypes);
  const std::vector<int64_t> shape = output_shape(inputs);
  const std::vector<void*> outputs = make_outputs(ctx, p.outputs.size(), shape, p.sums);
  const ParallelFor parallel = pool_of(ctx);
  evaluate(p, inputs, shape, outputs, &parallel);
}

ScalarLoopKernel::ScalarLoopKernel(const OrtApi&, const OrtKernelInfo* info) {
  Ort::ConstKernelInfo kernel_info(info);
  loop_ = parse_loop(kernel_info.GetAttribute<std::string>("input_dtypes"),
                     kernel_info.GetAttribute<std::string>("program"),
                     static_cast<size_t>(kernel_info.GetAttribute<int64_t>("num_state")),
                     kernel_info.GetAttributes<int64_t>("next_state"), kernel_info.GetAttribute<int64_t>("until"));
}

OrtStatusPtr ScalarLoopKernel::ComputeV2(OrtKernelContext* context) {
  return as_status(kName, [&] { compute(context); });
}

void ScalarLoopKernel::compute(OrtKernelContext* context) {
  Ort::KernelContext ctx(context);
  const Program& body = loop_.body;
  std::vector<DType> dtypes{DType::Int64};
  dtypes.insert(dtypes.end(), body.registers.begin(), body.registers.begin() + static_cast<long>(body.num_inputs()));
  const std::vector<ArrayArg> inputs = read_inputs(ctx, dtypes);
  const std::vector<int64_t> shape = output_shape(inputs);
  const std::vector<void*> outputs = make_outputs(ctx, loop_.num_state + (loop_.until >= 0 ? 1 : 0), shape);
  const ParallelFor parallel = pool_of(ctx);
  evaluate_loop(loop_, inputs, shape, outputs, &parallel);
}

}  // namespace pytensor_onnx::kernels
