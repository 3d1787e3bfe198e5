// A kernel library op whose inputs and output all have one dtype, named
// "<Kernel::kName>_<dtype>" (MatMul_float64, Reduce_float32): ONNX Runtime
// needs a custom op's types fixed, so the library registers one op per
// dtype. The kernel is made from the node's info and that dtype.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "dtype.h"
#include "ort_api.h"
#include "status.h"

namespace pytensor_onnx::kernels {

template <class Kernel, size_t kInputs>
struct SameDTypeOp : Ort::CustomOpBase<SameDTypeOp<Kernel, kInputs>, Kernel, true> {
  explicit SameDTypeOp(DType dtype) : dtype_(dtype), name_(std::string(Kernel::kName) + "_" + dtype_name(dtype)) {}

  OrtStatusPtr CreateKernelV2(const OrtApi& api, const OrtKernelInfo* info, void** kernel) const {
    return create_kernel(api, name_, kernel, [&] { return std::make_unique<Kernel>(info, dtype_); });
  }
  const char* GetName() const { return name_.c_str(); }
  size_t GetInputTypeCount() const { return kInputs; }
  ONNXTensorElementDataType GetInputType(size_t) const { return element_type(); }
  size_t GetOutputTypeCount() const { return 1; }
  ONNXTensorElementDataType GetOutputType(size_t) const { return element_type(); }

 private:
  ONNXTensorElementDataType element_type() const {
    return static_cast<ONNXTensorElementDataType>(onnx_element_type(dtype_));
  }
  DType dtype_;
  std::string name_;
};

}  // namespace pytensor_onnx::kernels
