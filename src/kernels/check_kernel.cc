#include "check_kernel.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "status.h"

namespace pytensor_onnx::kernels {

OrtStatusPtr CheckKernel::ComputeV2(OrtKernelContext* context) {
  return as_status("Check", [&] {
    Ort::KernelContext ctx(context);
    const size_t n_in = ctx.GetInputCount();
    for (size_t i = 1; i < n_in; ++i) {
      Ort::ConstValue ok = ctx.GetInput(i);
      const size_t n = ok.GetTensorTypeAndShapeInfo().GetElementCount();
      const bool* data = ok.GetTensorData<bool>();
      if (!std::all_of(data, data + n, [](bool v) { return v; })) {
        // The message ONNX Runtime reports after the node's name, which
        // says which check this is.
        throw std::runtime_error("condition " + std::to_string(i) + " is false");
      }
    }
    Ort::ConstValue value = ctx.GetInput(0);
    auto info = value.GetTensorTypeAndShapeInfo();
    const std::vector<int64_t> shape = info.GetShape();
    Ort::UnownedValue out = ctx.GetOutput(0, shape.data(), shape.size());
    const size_t bytes = info.GetElementCount() * dtype_size(dtype_from_onnx(static_cast<int>(info.GetElementType())));
    if (bytes > 0) std::memcpy(out.GetTensorMutableRawData(), value.GetTensorRawData(), bytes);
  });
}

CheckOp::CheckOp(DType dtype) : dtype_(dtype), name_(std::string("Check_") + dtype_name(dtype)) {}

OrtStatusPtr CheckOp::CreateKernelV2(const OrtApi& api, const OrtKernelInfo* info, void** kernel) const {
  return create_kernel(api, name_, kernel, [&] { return std::make_unique<CheckKernel>(api, info); });
}

ONNXTensorElementDataType CheckOp::GetInputType(size_t index) const {
  const DType dtype = index == 0 ? dtype_ : DType::Bool;
  return static_cast<ONNXTensorElementDataType>(onnx_element_type(dtype));
}

OrtCustomOpInputOutputCharacteristic CheckOp::GetInputCharacteristic(size_t index) const {
  return index == 0 ? INPUT_OUTPUT_REQUIRED : INPUT_OUTPUT_VARIADIC;
}

ONNXTensorElementDataType CheckOp::GetOutputType(size_t) const {
  return static_cast<ONNXTensorElementDataType>(onnx_element_type(dtype_));
}

}  // namespace pytensor_onnx::kernels
