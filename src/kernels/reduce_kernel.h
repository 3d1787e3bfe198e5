// The maximum or minimum over some axes, with NumPy's NaN rule, as one
// kernel node: Reduce_<dtype>(x) with attributes `reduction` ("max" or
// "min"), `axes` (sorted, non-negative) and `keepdims`. A NaN in a reduced
// set makes its result NaN, as np.max does; ONNX Runtime's ReduceMax drops
// a NaN depending on where it sits, so the portable form is six nodes
// (ReduceMax, IsNaN, Cast, ReduceMax, Cast, Where: dispatch/math.py
// `reduce`), and PyMC's logsumexp (mixtures, simplex transforms) takes one
// max per call. An empty reduced set gives the identity (-inf for max, +inf
// for min): the rules that reduce a set which may be empty check it
// themselves and fail as NumPy does.
#pragma once

#include <string>
#include <vector>

#include "dtype.h"
#include "ort_api.h"
#include "reduce.h"

namespace pytensor_onnx::kernels {

class ReduceKernel {
 public:
  ReduceKernel(const OrtApi& api, const OrtKernelInfo* info, DType dtype);
  OrtStatusPtr ComputeV2(OrtKernelContext* context);

 private:
  DType dtype_;
  bool max_;
  std::vector<int64_t> axes_;
  bool keepdims_;
};

struct ReduceOp : Ort::CustomOpBase<ReduceOp, ReduceKernel, true> {
  explicit ReduceOp(DType dtype);

  OrtStatusPtr CreateKernelV2(const OrtApi& api, const OrtKernelInfo* info, void** kernel) const;
  const char* GetName() const { return name_.c_str(); }
  size_t GetInputTypeCount() const { return 1; }
  ONNXTensorElementDataType GetInputType(size_t) const;
  size_t GetOutputTypeCount() const { return 1; }
  ONNXTensorElementDataType GetOutputType(size_t) const;

 private:
  DType dtype_;
  std::string name_;
};

// The dtypes the library has Reduce kernels for: those with NaN.
inline constexpr DType kReduceDTypes[] = {DType::Float32, DType::Float64};

}  // namespace pytensor_onnx::kernels
