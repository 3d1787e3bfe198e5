// A run-time check as one kernel node: Check_<dtype>(value, ok...) gives
// `value` where every element of every bool `ok` is true, and fails the run
// otherwise. It is mode ONNX's form of the rules' check
// (pytensor_onnx/dispatch/utils.py `check`), whose portable form is a Not, a
// Cast, an Unsqueeze and a Gather read out of range: four nodes of ~0.5 us
// each, and PyMC checks the parameters of every bounded log-density. The
// node carries the check's name, which ONNX Runtime quotes when it fails:
// that is how pytensor_onnx tells which check failed (linker.py).
#pragma once

#include <string>

#include "dtype.h"
#include "ort_api.h"

namespace pytensor_onnx::kernels {

class CheckKernel {
 public:
  CheckKernel(const OrtApi&, const OrtKernelInfo*) {}
  OrtStatusPtr ComputeV2(OrtKernelContext* context);
};

struct CheckOp : Ort::CustomOpBase<CheckOp, CheckKernel, true> {
  explicit CheckOp(DType dtype);

  OrtStatusPtr CreateKernelV2(const OrtApi& api, const OrtKernelInfo* info, void** kernel) const;
  const char* GetName() const { return name_.c_str(); }
  size_t GetInputTypeCount() const { return 2; }
  ONNXTensorElementDataType GetInputType(size_t index) const;
  OrtCustomOpInputOutputCharacteristic GetInputCharacteristic(size_t index) const;
  int GetVariadicInputMinArity() const { return 1; }
  bool GetVariadicInputHomogeneity() const { return true; }
  size_t GetOutputTypeCount() const { return 1; }
  ONNXTensorElementDataType GetOutputType(size_t) const;

 private:
  DType dtype_;
  std::string name_;
};

}  // namespace pytensor_onnx::kernels
