#include "constant_inputs.h"

#include <stdexcept>

namespace pytensor_onnx::kernels {
namespace {

bool has_dtype(int onnx_type, DType dtype) {
  try {
    return dtype_from_onnx(onnx_type) == dtype;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

}  // namespace

std::vector<std::optional<ArrayArg>> constant_inputs(const OrtKernelInfo* info, const std::vector<DType>& dtypes) {
  return constant_inputs(info, std::vector<std::optional<DType>>(dtypes.begin(), dtypes.end()));
}

std::vector<std::optional<ArrayArg>> constant_inputs(const OrtKernelInfo* info,
                                                     const std::vector<std::optional<DType>>& dtypes) {
  const OrtApi& api = Ort::GetApi();
  std::vector<std::optional<ArrayArg>> constants(dtypes.size());
  for (size_t i = 0; i < dtypes.size(); ++i) {
    if (!dtypes[i]) continue;
    int is_constant = 0;
    const OrtValue* value = nullptr;
    Ort::ThrowOnError(api.KernelInfoGetConstantInput_tensor(info, i, &is_constant, &value));
    if (!is_constant || value == nullptr) continue;
    OrtTensorTypeAndShapeInfo* raw_info = nullptr;
    Ort::ThrowOnError(api.GetTensorTypeAndShape(value, &raw_info));
    const Ort::TensorTypeAndShapeInfo shape_info(raw_info);  // (releases it)
    // A constant of another dtype is left to the run, which fails naming it.
    if (!has_dtype(static_cast<int>(shape_info.GetElementType()), *dtypes[i])) continue;
    ArrayArg arg;
    arg.shape = shape_info.GetShape();
    void* data = nullptr;
    Ort::ThrowOnError(api.GetTensorMutableData(const_cast<OrtValue*>(value), &data));
    arg.data = data;
    constants[i] = std::move(arg);
  }
  return constants;
}

}  // namespace pytensor_onnx::kernels
