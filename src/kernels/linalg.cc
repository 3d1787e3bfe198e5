#include "linalg.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "blas.h"
#include "lapack.h"

namespace pytensor_onnx::kernels::linalg {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

// Row-major index of each output batch position in an operand's own batch
// (size-1 dims read index 0).
std::vector<int64_t> items_of(const std::vector<int64_t>& own, const std::vector<int64_t>& batch) {
  int64_t total = 1;
  for (int64_t d : batch) total *= d;
  std::vector<int64_t> items(static_cast<size_t>(total));
  const size_t offset = batch.size() - own.size();
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat, item = 0, stride = 1;
    for (size_t axis = batch.size(); axis-- > 0;) {
      const int64_t index = rest % batch[axis];
      rest /= batch[axis];
      if (axis >= offset) {
        const int64_t size = own[axis - offset];
        item += (size == 1 ? 0 : index) * stride;
        stride *= size;
      }
    }
    items[static_cast<size_t>(flat)] = item;
  }
  return items;
}

std::vector<int64_t> leading(const std::vector<int64_t>& shape, size_t core) {
  if (shape.size() < core) {
    throw std::invalid_argument("an operand of shape " + shape_text(shape) + " has fewer than " +
                                std::to_string(core) + " dims");
  }
  return {shape.begin(), shape.end() - static_cast<long>(core)};
}

template <class T>
const lapack::Routines<T>& lapack_of() {
  return lapack::routines<T>();
}

// A routine pointer, or the error that says which one is missing.
template <class T, class F>
F need(F fn, const std::string& library, const char* base) {
  if (fn == nullptr) {
    throw std::runtime_error(library + " routine " + (sizeof(T) == 4 ? "s" : "d") + base +
                             " is not set: the kernel library's " + library +
                             " comes from SciPy, set by pytensor_onnx (pytensor_onnx.kernels) before mode ONNX runs");
  }
  return fn;
}

#define PYTENSOR_ONNX_LAPACK(T, routine) need<T>(lapack_of<T>().routine, "LAPACK", #routine)
#define PYTENSOR_ONNX_BLAS(T, routine) need<T>(blas::routines<T>().routine, "BLAS", #routine)

template <class T>
void fill_nan(T* x, size_t count) {
  std::fill(x, x + count, std::numeric_limits<T>::quiet_NaN());
}

// `dst` = `src` transposed (n x n), tile by tile so that both stay in cache:
// how a row-major matrix becomes LAPACK's column-major one and back.
// Rectangular: `src` rows x cols (row-major) into `dst` cols x rows.
template <class T>
void transpose_into(const T* src, T* dst, int rows, int cols) {
  constexpr int kTile = 32;
  for (int i0 = 0; i0 < rows; i0 += kTile) {
    for (int j0 = 0; j0 < cols; j0 += kTile) {
      const int i1 = std::min(rows, i0 + kTile), j1 = std::min(cols, j0 + kTile);
      for (int i = i0; i < i1; ++i) {
        for (int j = j0; j < j1; ++j) dst[static_cast<size_t>(j) * rows + i] = src[static_cast<size_t>(i) * cols + j];
      }
    }
  }
}

template <class T>
void transpose_into(const T* src, T* dst, int n) {
  transpose_into(src, dst, n, n);
}

// `a` as LAPACK's column-major matrix in `out` (n x n): what f2py and NumPy
// hand LAPACK, so the factorizations below see SciPy's and NumPy's data.
template <class T>
T* column_major_copy(const T* a, std::vector<T>& out, int n) {
  out.resize(static_cast<size_t>(n) * n);
  transpose_into(a, out.data(), n);
  return out.data();
}

// `b` as LAPACK's column-major n x k matrix in `out`: one pass over it.
template <class T>
T* column_major_rhs(const RightHandSide<T>& b, std::vector<T>& out, int n, int k) {
  const size_t count = static_cast<size_t>(n) * k;
  out.resize(count);
  if (b.column_major) std::copy(b.data, b.data + count, out.data());
  else transpose_into(b.data, out.data(), n, k);
  if (b.negate) {
    for (T& v : out) v = -v;
  }
  return out.data();
}

template <class T>
int query_size(T work_size) {
  return std::max(1, static_cast<int>(work_size));
}

const char* uplo_of(bool lower) { return lower ? "L" : "U"; }

}  // namespace

BatchPlan plan_batch(const std::vector<int64_t>& a_shape, size_t core_a, const std::vector<int64_t>& b_shape,
                     size_t core_b) {
  const std::vector<int64_t> a = leading(a_shape, core_a), b = leading(b_shape, core_b);
  BatchPlan plan;
  plan.batch.assign(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < plan.batch.size(); ++i) {
    const size_t from_end = plan.batch.size() - 1 - i;
    const int64_t da = from_end < a.size() ? a[a.size() - 1 - from_end] : 1;
    const int64_t db = from_end < b.size() ? b[b.size() - 1 - from_end] : 1;
    if (da != db && da != 1 && db != 1) {
      throw std::invalid_argument("batch dims of shapes " + shape_text(a_shape) + " and " + shape_text(b_shape) +
                                  " do not broadcast");
    }
    plan.batch[i] = da == 1 ? db : da;
  }
  plan.a_items = items_of(a, plan.batch);
  plan.b_items = items_of(b, plan.batch);
  return plan;
}

BatchPlan plan_batch(const std::vector<int64_t>& a_shape, size_t core_a) {
  BatchPlan plan;
  plan.batch = leading(a_shape, core_a);
  plan.a_items = items_of(plan.batch, plan.batch);
  return plan;
}

Assume assume_from_name(const std::string& name) {
  if (name == "gen") return Assume::General;
  if (name == "sym" || name == "her") return Assume::Symmetric;
  if (name == "pos") return Assume::PositiveDefinite;
  throw std::invalid_argument("assume_a '" + name + "' has no kernel (gen, sym, her and pos have)");
}

template <class T>
void cholesky(const T* a, T* out, int n, bool lower, Workspace<T>& ws) {
  if (n == 0) return;
  T* factor = column_major_copy(a, ws.more, n);
  int info = 0;
  PYTENSOR_ONNX_LAPACK(T, potrf)(uplo_of(lower), &n, factor, &n, &info);
  if (info != 0) {
    fill_nan(out, static_cast<size_t>(n) * n);
    return;
  }
  transpose_into(factor, out, n);
  // potrf leaves the other triangle as it was; PyTensor's factor has zeros.
  for (int i = 0; i < n; ++i) {
    T* row = out + static_cast<size_t>(i) * n;
    if (lower) {
      std::fill(row + i + 1, row + n, T(0));
    } else {
      std::fill(row, row + i, T(0));
    }
  }
}

template <class T>
void solve_triangular(const T* a, const RightHandSide<T>& b, T* x, int n, int k, bool lower, bool trans,
                      bool unit_diagonal, Workspace<T>& ws) {
  if (n == 0 || k == 0) return;
  column_major_rhs(b, ws.values, n, k);
  // Row-major `a` read as a column-major matrix is a^T: its other triangle,
  // and the transposed system (as PyTensor's own perform solves it).
  const char* uplo = uplo_of(!lower);
  const char* op = trans ? "N" : "T";
  const char* diag = unit_diagonal ? "U" : "N";
  if (k == 1) {
    // One right-hand side: trtrs, as SciPy calls it (OpenBLAS solves it with
    // trsv, whose sums differ in the last bit from trsm's).
    int info = 0;
    PYTENSOR_ONNX_LAPACK(T, trtrs)(uplo, op, diag, &n, &k, a, &n, ws.values.data(), &n, &info);
    if (info != 0) {
      fill_nan(x, static_cast<size_t>(n) * k);
      return;
    }
  } else {
    // Several: trtrs's own check (a zero on the diagonal is singular), then
    // its solve, trsm, called directly. OpenBLAS's trtrs hands even a 20 x 20
    // system to its thread pool: ~1 us a call more than trsm (bench/results.md,
    // "seventeenth step"); the results are the same bits.
    if (!unit_diagonal) {
      for (int i = 0; i < n; ++i) {
        if (a[static_cast<size_t>(i) * (n + 1)] == T(0)) {
          fill_nan(x, static_cast<size_t>(n) * k);
          return;
        }
      }
    }
    const T one = 1;
    PYTENSOR_ONNX_BLAS(T, trsm)("L", uplo, op, diag, &n, &k, &one, a, &n, ws.values.data(), &n);
  }
  transpose_into(ws.values.data(), x, k, n);
}

template <class T>
void cholesky_solve(const T* c, const RightHandSide<T>& b, T* x, int n, int k, bool lower, Workspace<T>& ws) {
  if (n == 0 || k == 0) return;
  column_major_rhs(b, ws.values, n, k);
  // Row-major L read as a column-major matrix is L^T = U, and A = U^T U.
  int info = 0;
  PYTENSOR_ONNX_LAPACK(T, potrs)(uplo_of(!lower), &n, &k, c, &n, ws.values.data(), &n, &info);
  if (info != 0) {
    fill_nan(x, static_cast<size_t>(n) * k);
    return;
  }
  transpose_into(ws.values.data(), x, k, n);
}

template <class T>
void solve(const T* a, const RightHandSide<T>& b, T* x, int n, int k, Assume assume, bool lower, Workspace<T>& ws) {
  if (n == 0 || k == 0) return;
  T* lu = column_major_copy(a, ws.more, n);
  T* rhs = column_major_rhs(b, ws.values, n, k);
  int info = 0;
  switch (assume) {
    case Assume::General:
      ws.ints.resize(static_cast<size_t>(n));
      PYTENSOR_ONNX_LAPACK(T, getrf)(&n, &n, lu, &n, ws.ints.data(), &info);
      if (info == 0) PYTENSOR_ONNX_LAPACK(T, getrs)("N", &n, &k, lu, &n, ws.ints.data(), rhs, &n, &info);
      break;
    case Assume::PositiveDefinite:
      PYTENSOR_ONNX_LAPACK(T, potrf)(uplo_of(lower), &n, lu, &n, &info);
      if (info == 0) PYTENSOR_ONNX_LAPACK(T, potrs)(uplo_of(lower), &n, &k, lu, &n, rhs, &n, &info);
      break;
    case Assume::Symmetric: {
      ws.ints.resize(static_cast<size_t>(n));
      T size{};
      int query = -1;
      PYTENSOR_ONNX_LAPACK(T, sytrf)(uplo_of(lower), &n, lu, &n, ws.ints.data(), &size, &query, &info);
      std::vector<T> work(static_cast<size_t>(query_size(size)));
      const int lwork = static_cast<int>(work.size());
      PYTENSOR_ONNX_LAPACK(T, sytrf)(uplo_of(lower), &n, lu, &n, ws.ints.data(), work.data(), &lwork, &info);
      if (info == 0) PYTENSOR_ONNX_LAPACK(T, sytrs)(uplo_of(lower), &n, &k, lu, &n, ws.ints.data(), rhs, &n, &info);
      break;
    }
  }
  // SciPy raises LinAlgError where the factorization fails; PyTensor's Solve
  // returns NaN then.
  if (info != 0) {
    fill_nan(x, static_cast<size_t>(n) * k);
    return;
  }
  transpose_into(rhs, x, k, n);
}

template <class T>
bool lu_factor(const T* a, T* packed, int64_t* pivots, int64_t* perm, int n, Workspace<T>& ws) {
  if (n == 0) return false;
  T* lu = column_major_copy(a, ws.more, n);
  ws.ints.resize(static_cast<size_t>(n));
  int info = 0;
  PYTENSOR_ONNX_LAPACK(T, getrf)(&n, &n, lu, &n, ws.ints.data(), &info);
  transpose_into(lu, packed, n);
  for (int i = 0; i < n; ++i) perm[i] = i;
  for (int i = 0; i < n; ++i) {
    pivots[i] = ws.ints[static_cast<size_t>(i)] - 1;
    std::swap(perm[i], perm[pivots[i]]);
  }
  return info > 0;
}

void pivots_to_permutation(const int64_t* pivots, int64_t* perm, int64_t n, bool inverse) {
  std::vector<int64_t> rows(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) rows[static_cast<size_t>(i)] = i;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t p = pivots[k];
    if (p < 0 || p >= n) {
      throw std::invalid_argument("pivot " + std::to_string(p) + " is out of range for " + std::to_string(n) + " rows");
    }
    std::swap(rows[static_cast<size_t>(k)], rows[static_cast<size_t>(p)]);
  }
  for (int64_t i = 0; i < n; ++i) {
    if (inverse) {
      perm[i] = rows[static_cast<size_t>(i)];
    } else {
      perm[rows[static_cast<size_t>(i)]] = i;
    }
  }
}

template <class T>
bool inverse(const T* a, T* out, int n, Workspace<T>& ws) {
  if (n == 0) return false;
  // numpy.linalg.inv: gesv with the identity as right-hand side.
  T* lu = column_major_copy(a, ws.more, n);
  ws.values.assign(static_cast<size_t>(n) * n, T(0));
  for (int i = 0; i < n; ++i) ws.values[static_cast<size_t>(i) * n + i] = T(1);
  ws.ints.resize(static_cast<size_t>(n));
  int info = 0;
  PYTENSOR_ONNX_LAPACK(T, getrf)(&n, &n, lu, &n, ws.ints.data(), &info);
  if (info == 0) PYTENSOR_ONNX_LAPACK(T, getrs)("N", &n, &n, lu, &n, ws.ints.data(), ws.values.data(), &n, &info);
  if (info != 0) {
    fill_nan(out, static_cast<size_t>(n) * n);
    return true;
  }
  transpose_into(ws.values.data(), out, n);
  return false;
}

template <class T>
void slogdet(const T* a, int n, T* sign, T* log_abs, Workspace<T>& ws) {
  *sign = T(1);
  *log_abs = T(0);
  if (n == 0) return;
  T* lu = column_major_copy(a, ws.more, n);
  ws.ints.resize(static_cast<size_t>(n));
  int info = 0;
  PYTENSOR_ONNX_LAPACK(T, getrf)(&n, &n, lu, &n, ws.ints.data(), &info);
  if (info != 0) {
    // An exactly zero pivot: NumPy's (0, -inf).
    *sign = T(0);
    *log_abs = -std::numeric_limits<T>::infinity();
    return;
  }
  // NumPy's order: the permutation's sign, then each pivot's, log|u_ii| summed in order.
  bool negative = false;
  for (int i = 0; i < n; ++i) negative ^= ws.ints[static_cast<size_t>(i)] != i + 1;
  T total = T(0);
  for (int i = 0; i < n; ++i) {
    const T d = lu[static_cast<size_t>(i) * n + i];
    if (d < 0) negative = !negative;
    total += std::log(std::abs(d));
  }
  *sign = negative ? T(-1) : T(1);
  *log_abs = total;
}

EighDriver eigh_driver_from_name(const std::string& name) {
  if (name == "evr") return EighDriver::Evr;
  if (name == "evd") return EighDriver::Evd;
  throw std::invalid_argument("eigh driver '" + name + "' has no kernel (evr and evd have)");
}

namespace {

// syevd on the column-major copy in `a`, which it overwrites with the eigenvectors.
template <class T>
int eigh_evd(T* a, T* w, int n, const char* uplo, Workspace<T>& ws) {
  T size{};
  int isize = 0, query = -1, info = 0;
  PYTENSOR_ONNX_LAPACK(T, syevd)("V", uplo, &n, a, &n, w, &size, &query, &isize, &query, &info);
  ws.values.resize(static_cast<size_t>(query_size(size)));
  ws.ints.resize(static_cast<size_t>(std::max(1, isize)));
  const int lwork = static_cast<int>(ws.values.size()), liwork = static_cast<int>(ws.ints.size());
  PYTENSOR_ONNX_LAPACK(T, syevd)("V", uplo, &n, a, &n, w, ws.values.data(), &lwork, ws.ints.data(), &liwork, &info);
  return info;
}

// syevr (all eigenvalues, abstol 0 as SciPy and PyTensor's Numba backend ask)
// on the column-major copy in `a`; the eigenvectors go to `z`.
template <class T>
int eigh_evr(T* a, T* w, T* z, int n, const char* uplo, Workspace<T>& ws) {
  const T bound{}, abstol{};
  const int first = 0;
  int found = 0, isize = 0, query = -1, info = 0;
  T size{};
  std::vector<int> support(2 * static_cast<size_t>(n));
  PYTENSOR_ONNX_LAPACK(T, syevr)("V", "A", uplo, &n, a, &n, &bound, &bound, &first, &first, &abstol, &found, w, z, &n,
                                 support.data(), &size, &query, &isize, &query, &info);
  ws.values.resize(static_cast<size_t>(query_size(size)));
  ws.ints.resize(static_cast<size_t>(std::max(1, isize)));
  const int lwork = static_cast<int>(ws.values.size()), liwork = static_cast<int>(ws.ints.size());
  PYTENSOR_ONNX_LAPACK(T, syevr)("V", "A", uplo, &n, a, &n, &bound, &bound, &first, &first, &abstol, &found, w, z, &n,
                                 support.data(), ws.values.data(), &lwork, ws.ints.data(), &liwork, &info);
  return info;
}

}  // namespace

template <class T>
void eigh(const T* a, T* w, T* v, int n, bool lower, EighDriver driver, Workspace<T>& ws) {
  if (n == 0) return;
  T* matrix = column_major_copy(a, ws.more, n);
  T* vectors = matrix;  // syevd writes the eigenvectors over the matrix
  int info = 0;
  if (driver == EighDriver::Evd) {
    info = eigh_evd(matrix, w, n, uplo_of(lower), ws);
  } else {
    ws.extra.resize(static_cast<size_t>(n) * n);
    vectors = ws.extra.data();
    info = eigh_evr(matrix, w, vectors, n, uplo_of(lower), ws);
  }
  if (info != 0) {
    fill_nan(w, static_cast<size_t>(n));
    fill_nan(v, static_cast<size_t>(n) * n);
    return;
  }
  transpose_into(vectors, v, n);
}

template <class T>
void qr(const T* a, T* packed, T* tau, T* q, int64_t* perm, int m, int n, bool pivoting, Workspace<T>& ws) {
  const int k = std::min(m, n), lda = std::max(1, m);
  ws.more.resize(static_cast<size_t>(m) * n);
  T* factor = ws.more.data();
  transpose_into(a, factor, m, n);  // column-major, as f2py hands it over
  T size{};
  int query = -1, info = 0;
  if (pivoting) {
    ws.ints.assign(static_cast<size_t>(n), 0);  // every column free
    PYTENSOR_ONNX_LAPACK(T, geqp3)(&m, &n, factor, &lda, ws.ints.data(), tau, &size, &query, &info);
    ws.values.resize(static_cast<size_t>(query_size(size)));
    const int lwork = static_cast<int>(ws.values.size());
    PYTENSOR_ONNX_LAPACK(T, geqp3)(&m, &n, factor, &lda, ws.ints.data(), tau, ws.values.data(), &lwork, &info);
    for (int j = 0; j < n; ++j) perm[j] = ws.ints[static_cast<size_t>(j)] - 1;
  } else {
    if (k > 0) {
      PYTENSOR_ONNX_LAPACK(T, geqrf)(&m, &n, factor, &lda, tau, &size, &query, &info);
      ws.values.resize(static_cast<size_t>(query_size(size)));
      const int lwork = static_cast<int>(ws.values.size());
      PYTENSOR_ONNX_LAPACK(T, geqrf)(&m, &n, factor, &lda, tau, ws.values.data(), &lwork, &info);
    }
    for (int j = 0; j < n; ++j) perm[j] = j;
  }
  transpose_into(factor, packed, n, m);
  if (m == 0) return;
  // The full Q from the k reflectors: SciPy's orgqr on an m x m copy.
  ws.extra.assign(static_cast<size_t>(m) * m, T(0));
  std::copy(factor, factor + static_cast<size_t>(m) * k, ws.extra.begin());
  PYTENSOR_ONNX_LAPACK(T, orgqr)(&m, &m, &k, ws.extra.data(), &m, tau, &size, &query, &info);
  ws.values.resize(static_cast<size_t>(query_size(size)));
  const int lwork = static_cast<int>(ws.values.size());
  PYTENSOR_ONNX_LAPACK(T, orgqr)(&m, &m, &k, ws.extra.data(), &m, tau, ws.values.data(), &lwork, &info);
  transpose_into(ws.extra.data(), q, m);
}

namespace {

template <class T>
void identity(T* out, int rows, int cols) {
  std::fill(out, out + static_cast<size_t>(rows) * cols, T(0));
  for (int i = 0; i < std::min(rows, cols); ++i) out[static_cast<size_t>(i) * cols + i] = T(1);
}

}  // namespace

template <class T>
void svd(const T* a, T* u, T* s, T* vt, int m, int n, bool vectors, bool full_matrices, Workspace<T>& ws) {
  const int k = std::min(m, n);
  const int u_cols = full_matrices ? m : k, vt_rows = full_matrices ? n : k;
  if (k == 0) {  // NumPy: identity singular vectors, no values
    if (vectors) {
      identity(u, m, u_cols);
      identity(vt, vt_rows, n);
    }
    return;
  }
  ws.more.resize(static_cast<size_t>(m) * n);
  transpose_into(a, ws.more.data(), m, n);
  const char* jobz = !vectors ? "N" : full_matrices ? "A" : "S";
  const int ldu = m, ldvt = std::max(1, vt_rows);
  // Column-major singular vectors, transposed into the outputs afterwards.
  ws.extra.resize(vectors ? static_cast<size_t>(m) * u_cols + static_cast<size_t>(vt_rows) * n : 1);
  T* u_col = ws.extra.data();
  T* vt_col = vectors ? u_col + static_cast<size_t>(m) * u_cols : u_col;
  ws.ints.resize(8 * static_cast<size_t>(k));
  T size{};
  int query = -1, info = 0;
  PYTENSOR_ONNX_LAPACK(T, gesdd)(jobz, &m, &n, ws.more.data(), &m, s, u_col, &ldu, vt_col, &ldvt, &size, &query,
                                 ws.ints.data(), &info);
  ws.values.resize(static_cast<size_t>(query_size(size)));
  const int lwork = static_cast<int>(ws.values.size());
  PYTENSOR_ONNX_LAPACK(T, gesdd)(jobz, &m, &n, ws.more.data(), &m, s, u_col, &ldu, vt_col, &ldvt, ws.values.data(),
                                 &lwork, ws.ints.data(), &info);
  if (info > 0) throw std::runtime_error("SVD did not converge");
  if (!vectors) return;
  transpose_into(u_col, u, u_cols, m);
  transpose_into(vt_col, vt, n, vt_rows);
}

#undef PYTENSOR_ONNX_LAPACK
#undef PYTENSOR_ONNX_BLAS

#define PYTENSOR_ONNX_INSTANTIATE(T)                                                                            \
  template void cholesky<T>(const T*, T*, int, bool, Workspace<T>&);                                            \
  template void solve_triangular<T>(const T*, const RightHandSide<T>&, T*, int, int, bool, bool, bool,         \
                                      Workspace<T>&);                                                         \
  template void cholesky_solve<T>(const T*, const RightHandSide<T>&, T*, int, int, bool, Workspace<T>&);       \
  template void solve<T>(const T*, const RightHandSide<T>&, T*, int, int, Assume, bool, Workspace<T>&);        \
  template bool lu_factor<T>(const T*, T*, int64_t*, int64_t*, int, Workspace<T>&);                            \
  template bool inverse<T>(const T*, T*, int, Workspace<T>&);                                                   \
  template void slogdet<T>(const T*, int, T*, T*, Workspace<T>&);                                               \
  template void eigh<T>(const T*, T*, T*, int, bool, EighDriver, Workspace<T>&);                                \
  template void qr<T>(const T*, T*, T*, T*, int64_t*, int, int, bool, Workspace<T>&);                           \
  template void svd<T>(const T*, T*, T*, T*, int, int, bool, bool, Workspace<T>&);
PYTENSOR_ONNX_INSTANTIATE(float)
PYTENSOR_ONNX_INSTANTIATE(double)
#undef PYTENSOR_ONNX_INSTANTIATE

}  // namespace pytensor_onnx::kernels::linalg
