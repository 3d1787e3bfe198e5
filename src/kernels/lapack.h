// The LAPACK routines the linear-algebra kernels call, as function pointers
// set at run time. pytensor_onnx sets them from SciPy's LAPACK
// (scipy.linalg.cython_lapack, the routines PyTensor's own backends call), so
// the library links no LAPACK and mode ONNX factors matrices with the very
// code PyTensor's default mode uses. Signatures are LAPACK's Fortran ones as
// cython_lapack declares them (32-bit integers).
#pragma once

#include <string>

namespace pytensor_onnx::kernels::lapack {

template <class T>
struct Routines {
  void (*potrf)(const char* uplo, const int* n, T* a, const int* lda, int* info) = nullptr;
  void (*potrs)(const char* uplo, const int* n, const int* nrhs, const T* a, const int* lda, T* b, const int* ldb,
                int* info) = nullptr;
  void (*trtrs)(const char* uplo, const char* trans, const char* diag, const int* n, const int* nrhs, const T* a,
                const int* lda, T* b, const int* ldb, int* info) = nullptr;
  void (*getrf)(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info) = nullptr;
  void (*getrs)(const char* trans, const int* n, const int* nrhs, const T* a, const int* lda, const int* ipiv, T* b,
                const int* ldb, int* info) = nullptr;
  void (*sytrf)(const char* uplo, const int* n, T* a, const int* lda, int* ipiv, T* work, const int* lwork,
                int* info) = nullptr;
  void (*sytrs)(const char* uplo, const int* n, const int* nrhs, const T* a, const int* lda, const int* ipiv, T* b,
                const int* ldb, int* info) = nullptr;
  void (*syevd)(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, T* w, T* work,
                const int* lwork, int* iwork, const int* liwork, int* info) = nullptr;
  void (*syevr)(const char* jobz, const char* range, const char* uplo, const int* n, T* a, const int* lda,
                const T* vl, const T* vu, const int* il, const int* iu, const T* abstol, int* m, T* w, T* z,
                const int* ldz, int* isuppz, T* work, const int* lwork, int* iwork, const int* liwork,
                int* info) = nullptr;
  void (*geqrf)(const int* m, const int* n, T* a, const int* lda, T* tau, T* work, const int* lwork,
                int* info) = nullptr;
  void (*geqp3)(const int* m, const int* n, T* a, const int* lda, int* jpvt, T* tau, T* work, const int* lwork,
                int* info) = nullptr;
  void (*orgqr)(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau, T* work,
                const int* lwork, int* info) = nullptr;
  void (*gesdd)(const char* jobz, const int* m, const int* n, T* a, const int* lda, T* s, T* u, const int* ldu,
                T* vt, const int* ldvt, T* work, const int* lwork, int* iwork, int* info) = nullptr;
};

// The routines of one precision (float: LAPACK's s*, double: d*).
template <class T>
const Routines<T>& routines();

// Sets routine `name` ("dpotrf", "sgetrf", ...) to `fn`; false for a name the
// kernels do not call. Set every routine before the first session runs.
bool set_routine(const std::string& name, void* fn);

// The names of the routines not set yet, space-separated ("" when complete).
std::string missing_routines();

}  // namespace pytensor_onnx::kernels::lapack
