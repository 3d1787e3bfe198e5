#include "matmul.h"

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

#include "blas.h"
#include "linalg.h"

namespace pytensor_onnx::kernels::matmul {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

int blas_int(int64_t dim) {
  if (dim < 0 || dim > INT_MAX) throw std::invalid_argument("a matrix dim of " + std::to_string(dim) + " does not fit BLAS's int");
  return static_cast<int>(dim);
}

// A routine pointer, or the error that says which one is missing.
template <class T, class F>
F need(F fn, const char* base) {
  if (fn == nullptr) {
    throw std::runtime_error(std::string("BLAS routine ") + (sizeof(T) == 4 ? "s" : "d") + base +
                             " is not set: the kernel library's BLAS comes from SciPy, set by pytensor_onnx "
                             "(pytensor_onnx.kernels) before mode ONNX runs");
  }
  return fn;
}

// One product: c (m x n, row-major) = op(A) op(B). BLAS is column-major, and
// a row-major matrix read column-major is its transpose: c^T = op(B)^T op(A)^T
// is the column-major product of B's and A's own buffers.
template <class T>
void product(const T* a, const T* b, T* c, const Plan& p) {
  const int m = p.m, n = p.n, k = p.k, one_step = 1;
  const size_t count = static_cast<size_t>(m) * static_cast<size_t>(n);
  if (count == 0) return;
  if (k == 0) {
    std::fill(c, c + count, T(0));
    return;
  }
  const blas::Routines<T>& r = blas::routines<T>();
  const T one = 1, zero = 0;
  if (m == 1 && n == 1) {
    // Both operands are k contiguous values in every layout.
    c[0] = need<T>(r.dot, "dot")(&k, a, &one_step, b, &one_step);
    return;
  }
  if (m == 1 || n == 1) {
    // BLAS need not read y when beta is 0, but some gemv scale y by beta
    // (0 * NaN is NaN) and ONNX Runtime's output buffers hold old values.
    std::fill(c, c + count, T(0));
    auto gemv = need<T>(r.gemv, "gemv");
    if (n == 1) {
      // op(B) is k contiguous values. A is m x k row-major (k x m column-major:
      // "T"), or read transposed k x m row-major (m x k column-major: "N").
      if (p.trans_a) {
        gemv("N", &m, &k, &one, a, &m, b, &one_step, &zero, c, &one_step);
      } else {
        gemv("T", &k, &m, &one, a, &k, b, &one_step, &zero, c, &one_step);
      }
    } else {
      // c = op(B)^T a with op(A) = a, k contiguous values.
      if (p.trans_b) {
        gemv("T", &k, &n, &one, b, &k, a, &one_step, &zero, c, &one_step);
      } else {
        gemv("N", &n, &k, &one, b, &n, a, &one_step, &zero, c, &one_step);
      }
    }
    return;
  }
  const int ldb = p.trans_b ? k : n, lda = p.trans_a ? m : k;
  need<T>(r.gemm, "gemm")(p.trans_b ? "T" : "N", p.trans_a ? "T" : "N", &n, &m, &k, &one, b, &ldb, a, &lda, &zero, c,
                          &n);
}

}  // namespace

Plan plan(const std::vector<int64_t>& a_shape, const std::vector<int64_t>& b_shape, bool trans_a, bool trans_b) {
  auto mismatch = [&](const std::string& why) {
    return std::invalid_argument("operands of shapes " + shape_text(a_shape) + (trans_a ? " (transposed)" : "") +
                                 " and " + shape_text(b_shape) + (trans_b ? " (transposed)" : "") + ": " + why);
  };
  if (a_shape.empty() || b_shape.empty()) throw mismatch("a 0-d operand has no matrix product");
  const bool a_vector = a_shape.size() == 1, b_vector = b_shape.size() == 1;
  if ((a_vector && trans_a) || (b_vector && trans_b)) throw mismatch("a vector cannot be read transposed");
  Plan p;
  p.trans_a = trans_a;
  p.trans_b = trans_b;
  int64_t k_a = a_shape.back(), k_b = b_shape.front();
  if (!a_vector) {
    const int64_t rows = a_shape[a_shape.size() - 2], cols = a_shape.back();
    p.m = blas_int(trans_a ? cols : rows);
    k_a = trans_a ? rows : cols;
  }
  if (!b_vector) {
    const int64_t rows = b_shape[b_shape.size() - 2], cols = b_shape.back();
    p.n = blas_int(trans_b ? rows : cols);
    k_b = trans_b ? cols : rows;
  }
  if (k_a != k_b) {
    throw mismatch("inner dims " + std::to_string(k_a) + " and " + std::to_string(k_b) + " differ");
  }
  p.k = blas_int(k_a);
  linalg::BatchPlan batch = linalg::plan_batch(a_shape, a_vector ? 1 : 2, b_shape, b_vector ? 1 : 2);
  p.out_shape = std::move(batch.batch);
  if (!a_vector) p.out_shape.push_back(p.m);
  if (!b_vector) p.out_shape.push_back(p.n);
  p.a_items = std::move(batch.a_items);
  p.b_items = std::move(batch.b_items);
  p.a_size = static_cast<size_t>(p.m) * static_cast<size_t>(p.k);
  p.b_size = static_cast<size_t>(p.k) * static_cast<size_t>(p.n);
  return p;
}

template <class T>
void multiply(const T* a, const T* b, T* out, const Plan& plan) {
  const size_t out_size = static_cast<size_t>(plan.m) * static_cast<size_t>(plan.n);
  for (size_t i = 0; i < plan.a_items.size(); ++i) {
    product(a + static_cast<size_t>(plan.a_items[i]) * plan.a_size, b + static_cast<size_t>(plan.b_items[i]) * plan.b_size,
            out + i * out_size, plan);
  }
}

template void multiply<float>(const float*, const float*, float*, const Plan&);
template void multiply<double>(const double*, const double*, double*, const Plan&);

}  // namespace pytensor_onnx::kernels::matmul
