#include "elemwise.h"

#include <stdexcept>
#include <vector>

#include "evaluate.h"

namespace pytensor_onnx::kernels {
namespace {

// dtype.cc numbers element types as ONNX does; ONNX Runtime's enum agrees.
static_assert(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT == 1 && ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL == 9 &&
              ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE == 11 && ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64 == 13);

}  // namespace

ElemwiseKernel::ElemwiseKernel(const OrtApi&, const OrtKernelInfo* info) {
  Ort::ConstKernelInfo kernel_info(info);
  const std::string inputs = kernel_info.GetAttribute<std::string>("input_dtypes");
  const std::string text = kernel_info.GetAttribute<std::string>("program");
  const std::vector<int64_t> outputs = kernel_info.GetAttributes<int64_t>("output_registers");
  program_ = parse_program(inputs, text, outputs);
}

OrtStatusPtr ElemwiseKernel::ComputeV2(OrtKernelContext* context) {
  try {
    compute(context);
    return nullptr;
  } catch (const Ort::Exception& e) {
    return Ort::GetApi().CreateStatus(e.GetOrtErrorCode(), e.what());
  } catch (const std::exception& e) {
    return Ort::GetApi().CreateStatus(ORT_INVALID_ARGUMENT, (std::string("Elemwise: ") + e.what()).c_str());
  }
}

void ElemwiseKernel::compute(OrtKernelContext* context) {
  Ort::KernelContext ctx(context);
  const Program& p = program_;
  const size_t n_in = ctx.GetInputCount();
  if (n_in != p.num_inputs()) {
    throw std::invalid_argument("the program reads " + std::to_string(p.num_inputs()) + " inputs, the node has " +
                                std::to_string(n_in));
  }
  std::vector<ArrayArg> inputs;
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < n_in; ++i) {
    Ort::ConstValue value = ctx.GetInput(i);
    auto info = value.GetTensorTypeAndShapeInfo();
    if (dtype_from_onnx(static_cast<int>(info.GetElementType())) != p.registers[i]) {
      throw std::invalid_argument("input " + std::to_string(i) + " is not of the program's dtype " +
                                  dtype_name(p.registers[i]));
    }
    inputs.push_back({value.GetTensorRawData(), info.GetShape()});
    shapes.push_back(inputs.back().shape);
  }
  const std::vector<int64_t> out_shape = broadcast_shapes(shapes);
  if (ctx.GetOutputCount() != p.outputs.size()) {
    throw std::invalid_argument("the program has " + std::to_string(p.outputs.size()) + " outputs, the node " +
                                std::to_string(ctx.GetOutputCount()));
  }
  std::vector<void*> outputs;
  for (size_t j = 0; j < p.outputs.size(); ++j) {
    outputs.push_back(ctx.GetOutput(j, out_shape).GetTensorMutableRawData());
  }
  // ONNX Runtime's intra-op pool takes a C callback and one pointer.
  const ParallelFor parallel = [&ctx](size_t n, const std::function<void(size_t)>& task) {
    ctx.ParallelFor(
        [](void* user, size_t i) { (*static_cast<const std::function<void(size_t)>*>(user))(i); }, n, 0,
        const_cast<std::function<void(size_t)>*>(&task));
  };
  evaluate(p, inputs, out_shape, outputs, &parallel);
}

ElemwiseOp::ElemwiseOp(DType output_dtype)
    : output_dtype_(output_dtype), name_(std::string("Elemwise_") + dtype_name(output_dtype)) {}

OrtStatusPtr ElemwiseOp::CreateKernelV2(const OrtApi& api, const OrtKernelInfo* info, void** kernel) const {
  try {
    auto created = std::make_unique<ElemwiseKernel>(api, info);
    *kernel = created.release();  // ONNX Runtime owns it now; KernelDestroy deletes it
    return nullptr;
  } catch (const Ort::Exception& e) {
    return api.CreateStatus(e.GetOrtErrorCode(), (std::string(GetName()) + ": " + e.what()).c_str());
  } catch (const std::exception& e) {
    return api.CreateStatus(ORT_INVALID_GRAPH, (std::string(GetName()) + ": " + e.what()).c_str());
  }
}

}  // namespace pytensor_onnx::kernels
