// The matrix-product kernel as ONNX Runtime custom ops, "MatMul_float32" and
// "MatMul_float64": ONNX's MatMul (NumPy's matmul) on BLAS (matmul.h), with
// attributes trans_a and trans_b (0 or 1) that read a matrix operand with
// its last two dims swapped, so a Transpose feeding the product needs no
// copy (the core's pass fold_transposes_into_matmul_kernels sets them).
//   MatMul(a, b; trans_a, trans_b) -> op(a) @ op(b)
#pragma once

#include <string>

#include "dtype.h"
#include "ort_api.h"
#include "same_dtype_op.h"

namespace pytensor_onnx::kernels {

class MatMulKernel {
 public:
  static constexpr const char* kName = "MatMul";
  // (The dtype is the inputs': compute reads it from them.)
  MatMulKernel(const OrtKernelInfo* info, DType dtype);
  OrtStatusPtr ComputeV2(OrtKernelContext* context);

 private:
  template <class T>
  void compute(Ort::KernelContext& ctx);

  bool trans_a_ = false;
  bool trans_b_ = false;
};

using MatMulOp = SameDTypeOp<MatMulKernel, 2>;

// The dtypes of the MatMul kernel's ops.
inline constexpr DType kMatMulDTypes[] = {DType::Float32, DType::Float64};

}  // namespace pytensor_onnx::kernels
