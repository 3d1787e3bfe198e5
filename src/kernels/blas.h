// The BLAS routines the matrix-product kernels call, as function pointers set
// at run time, as lapack.h does for LAPACK: pytensor_onnx sets them from
// SciPy's BLAS (scipy.linalg.cython_blas, the routines PyTensor's Numba
// backend calls for its products), so the library links no BLAS and mode
// ONNX multiplies float64 matrices with OpenBLAS instead of ONNX Runtime's
// Eigen path. Signatures are BLAS's Fortran ones as cython_blas declares
// them (32-bit integers, every argument by pointer; dot returns its value).
#pragma once

#include <string>

namespace pytensor_onnx::kernels::blas {

template <class T>
struct Routines {
  void (*gemm)(const char* transa, const char* transb, const int* m, const int* n, const int* k, const T* alpha,
               const T* a, const int* lda, const T* b, const int* ldb, const T* beta, T* c,
               const int* ldc) = nullptr;
  void (*gemv)(const char* trans, const int* m, const int* n, const T* alpha, const T* a, const int* lda, const T* x,
               const int* incx, const T* beta, T* y, const int* incy) = nullptr;
  T (*dot)(const int* n, const T* x, const int* incx, const T* y, const int* incy) = nullptr;
  void (*trsm)(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
               const T* alpha, const T* a, const int* lda, T* b, const int* ldb) = nullptr;
};

// The routines of one precision (float: BLAS's s*, double: d*).
template <class T>
const Routines<T>& routines();

// Sets routine `name` ("dgemm", "sgemv", ...) to `fn`; false for a name the
// kernels do not call (or a null `fn`). Set every routine before the first
// session runs.
bool set_routine(const std::string& name, void* fn);

// The names of the routines not set yet, space-separated ("" when complete).
std::string missing_routines();

}  // namespace pytensor_onnx::kernels::blas
