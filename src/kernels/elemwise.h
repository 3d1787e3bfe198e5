// The fused element-wise kernel: one ONNX node that evaluates a scalar
// program (program.h) over its broadcast inputs in one pass, in blocks that
// stay in cache, on ONNX Runtime's intra-op threads. One op per output dtype
// ("Elemwise_float64", ...): ONNX Runtime needs a custom op's output type
// fixed, while its inputs may be of any mix of dtypes.
#pragma once

#include <memory>
#include <string>

#include "dtype.h"
#include "ort_api.h"
#include "program.h"

namespace pytensor_onnx::kernels {

class ElemwiseKernel {
 public:
  ElemwiseKernel(const OrtApi& api, const OrtKernelInfo* info);
  OrtStatusPtr ComputeV2(OrtKernelContext* context);

 private:
  void compute(OrtKernelContext* context);
  Program program_;
};

struct ElemwiseOp : Ort::CustomOpBase<ElemwiseOp, ElemwiseKernel, true> {
  explicit ElemwiseOp(DType output_dtype);

  OrtStatusPtr CreateKernelV2(const OrtApi& api, const OrtKernelInfo* info, void** kernel) const;
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
