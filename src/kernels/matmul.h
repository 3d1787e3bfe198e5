// Matrix products by BLAS (blas.h): what the MatMul kernel nodes compute,
// apart from ONNX Runtime. NumPy's matmul on row-major operands: a vector
// operand (rank 1) is a row on the left and a column on the right and its
// dim is dropped from the result, leading dims of stacks broadcast, and
// either matrix operand may be read transposed (its last two dims swapped),
// so that a Transpose before the product needs no copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pytensor_onnx::kernels::matmul {

// One call's shapes: op(A) is m x k and op(B) k x n (a vector operand's
// missing dim is 1), the result's shape, and per result matrix the matrix of
// each operand it reads (leading dims broadcast).
struct Plan {
  std::vector<int64_t> out_shape;
  int m = 1, n = 1, k = 0;
  bool trans_a = false, trans_b = false;
  std::vector<int64_t> a_items, b_items;
  size_t a_size = 0, b_size = 0;  // elements of one operand matrix
};

// Throws std::invalid_argument naming the shapes where the inner dims differ,
// the batch dims do not broadcast, an operand is 0-d, a vector is to be read
// transposed, or a dim does not fit BLAS's 32-bit int.
Plan plan(const std::vector<int64_t>& a_shape, const std::vector<int64_t>& b_shape, bool trans_a, bool trans_b);

// out (plan.out_shape, row-major) = op(A) op(B) for every result matrix.
// k = 0 gives zeros and empty results call no BLAS (which needs leading
// dims of at least 1); a 1 x k by k x 1 product is BLAS's dot, a product
// with one row or column gemv, any other gemm.
template <class T>
void multiply(const T* a, const T* b, T* out, const Plan& plan);

}  // namespace pytensor_onnx::kernels::matmul
