// The maximum or minimum over some axes, with NumPy's NaN rule, as one
// kernel node: Reduce_<dtype>(x) with attributes `reduction` ("max" or
// "min"), `axes` (sorted, non-negative) and `keepdims`. A NaN in a reduced
// set makes its result NaN, as np.max does; ONNX Runtime's ReduceMax drops
// a NaN depending on where it sits, so the portable form is six nodes
// (ReduceMax, IsNaN, Cast, ReduceMax, Cast, Where: dispatch/math.py
// `reduce`), and PyMC's logsumexp (mixtures, simplex transforms) takes one
// max per call. An empty reduced set gives the identity (-inf for max, +inf
// for min): the rules that reduce a set which may be empty check it
// themselves and fail as NumPy does. Reduction "sum" (float64): NumPy's
// add.reduce to the bit (reduce.h), where ONNX Runtime's ReduceSum adds in
// an order of its own and gives -0.0 for a sum of -0.0s (NumPy: +0.0).
#pragma once

#include <string>
#include <vector>

#include "dtype.h"
#include "ort_api.h"
#include "reduce.h"
#include "same_dtype_op.h"

namespace pytensor_onnx::kernels {

class ReduceKernel {
 public:
  static constexpr const char* kName = "Reduce";
  ReduceKernel(const OrtKernelInfo* info, DType dtype);
  OrtStatusPtr ComputeV2(OrtKernelContext* context);

 private:
  DType dtype_;
  bool sum_ = false;
  bool max_ = false;
  std::vector<int64_t> axes_;
  bool keepdims_;
};

using ReduceOp = SameDTypeOp<ReduceKernel, 1>;

// The dtypes the library has Reduce kernels for: those with NaN.
inline constexpr DType kReduceDTypes[] = {DType::Float32, DType::Float64};

}  // namespace pytensor_onnx::kernels
