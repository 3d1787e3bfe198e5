// Linear algebra on stacks of row-major matrices by LAPACK (lapack.h): what
// the linear-algebra kernel nodes compute, apart from ONNX Runtime. The
// conventions are PyTensor's: NaN results where LAPACK reports that a
// factorization failed (not positive definite, exactly singular), SciPy's
// and NumPy's choices of routine (potrf, trtrs, potrs, getrf/getrs,
// sytrf/sytrs, gesv's getrf/getrs for the inverse, syevr or syevd,
// geqrf/geqp3/orgqr, gesdd).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pytensor_onnx::kernels::linalg {

// How the leading (batch) dims of one or two operands broadcast: the output's
// batch shape and, per output matrix, the matrix of each operand it reads.
struct BatchPlan {
  std::vector<int64_t> batch;
  std::vector<int64_t> a_items, b_items;
};

// `core_a` / `core_b` trailing dims are the matrices (or vectors); the rest
// broadcast as NumPy does. Throws std::invalid_argument naming the shapes.
BatchPlan plan_batch(const std::vector<int64_t>& a_shape, size_t core_a, const std::vector<int64_t>& b_shape,
                     size_t core_b);
BatchPlan plan_batch(const std::vector<int64_t>& a_shape, size_t core_a);

enum class Assume { General, Symmetric, PositiveDefinite };
Assume assume_from_name(const std::string& name);  // "gen", "sym"/"her", "pos"

// Scratch space reused over the matrices of one call.
template <class T>
struct Workspace {
  std::vector<T> values;
  std::vector<T> more;
  std::vector<T> extra;
  std::vector<int> ints;
};

// A solve's n x k right-hand side: row-major, or column-major (LAPACK's
// layout: the memory of the k x n matrix it transposes, which a solve of a
// transposed `b` reads in place of transposing it twice), negated or not.
template <class T>
struct RightHandSide {
  const T* data;
  bool column_major = false;
  bool negate = false;
};

// Each takes one n x n matrix `a` (row-major) and, for the solves, the n x k
// right-hand side `b` (k = 1 for a vector); n and k fit LAPACK's int.
template <class T>
void cholesky(const T* a, T* out, int n, bool lower, Workspace<T>& ws);
template <class T>
void solve_triangular(const T* a, const RightHandSide<T>& b, T* x, int n, int k, bool lower, bool trans,
                      bool unit_diagonal, Workspace<T>& ws);
template <class T>
void cholesky_solve(const T* c, const RightHandSide<T>& b, T* x, int n, int k, bool lower, Workspace<T>& ws);
template <class T>
void solve(const T* a, const RightHandSide<T>& b, T* x, int n, int k, Assume assume, bool lower, Workspace<T>& ws);
// scipy.linalg.lu_factor (getrf): `packed` holds the unit-lower L below the
// diagonal and U on and above (row-major), `pivots` LAPACK's row swaps
// 0-based, `perm` the rows of P A in terms of A's; returns whether a pivot
// is exactly zero (the factors are complete all the same, as LAPACK's).
template <class T>
bool lu_factor(const T* a, T* packed, int64_t* pivots, int64_t* perm, int n, Workspace<T>& ws);
// PyTensor's PivotToPermutations: LAPACK's sequential row swaps `pivots`
// (0-based) applied to 0..n-1, the rows of P A in terms of A's; with
// `inverse` false, its inverse permutation. Throws for a pivot out of range.
void pivots_to_permutation(const int64_t* pivots, int64_t* perm, int64_t n, bool inverse);
// Returns whether `a` is exactly singular (then `out` is NaN).
template <class T>
bool inverse(const T* a, T* out, int n, Workspace<T>& ws);
// numpy.linalg.slogdet: (0, -inf) where exactly singular.
template <class T>
void slogdet(const T* a, int n, T* sign, T* log_abs, Workspace<T>& ws);
// Ascending eigenvalues `w` (n) and eigenvectors as the columns of `v`
// (n x n), by syevr (scipy.linalg.eigh's default driver, PyTensor 3's Eigh)
// or syevd (numpy.linalg.eigh, PyTensor 2's); NaN where LAPACK fails. An
// eigenvector's sign is whatever the driver gives.
enum class EighDriver { Evr, Evd };
EighDriver eigh_driver_from_name(const std::string& name);  // "evr", "evd"
template <class T>
void eigh(const T* a, T* w, T* v, int n, bool lower, EighDriver driver, Workspace<T>& ws);

// scipy.linalg.qr's LAPACK steps on the m x n `a`: geqrf (geqp3 with
// `pivoting`) gives `packed` (m x n) and `tau` (min(m, n)), orgqr the full Q
// (`q`, m x m); `perm` is the column permutation (the identity without
// pivoting).
template <class T>
void qr(const T* a, T* packed, T* tau, T* q, int64_t* perm, int m, int n, bool pivoting, Workspace<T>& ws);
// numpy.linalg.svd (gesdd) of the m x n `a`: `s` descending (min(m, n)), and
// with `vectors` the singular vectors `u` and `vt` (m x m and n x n with
// `full_matrices`, else m x k and k x n). Throws std::runtime_error where
// gesdd does not converge, as NumPy raises.
template <class T>
void svd(const T* a, T* u, T* s, T* vt, int m, int n, bool vectors, bool full_matrices, Workspace<T>& ws);

}  // namespace pytensor_onnx::kernels::linalg
