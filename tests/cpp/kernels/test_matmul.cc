// The matrix-product kernel apart from BLAS and ONNX Runtime: NumPy's matmul
// shapes (vectors, transposed operands, broadcast batch dims, the errors),
// and the row-major/column-major mapping onto gemm, gemv and dot, through
// test doubles of those routines written here from BLAS's definitions. The
// doubles record which routine ran and whether a leading dim was below
// max(1, rows), which BLAS rejects.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "blas.h"
#include "matmul.h"

namespace pytensor_onnx::kernels {
namespace {

struct Calls {
  int gemm = 0, gemv = 0, dot = 0;
  bool bad_leading_dim = false;
};
Calls calls;

// Column-major element (i, j) of `a` with leading dim `ld`.
double at(const double* a, int ld, int i, int j) { return a[i + static_cast<long>(j) * ld]; }

void fake_dgemm(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
                const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
                const int* ldc) {
  ++calls.gemm;
  const bool ta = *transa == 'T', tb = *transb == 'T';
  if (*lda < std::max(1, ta ? *k : *m) || *ldb < std::max(1, tb ? *n : *k) || *ldc < std::max(1, *m)) {
    calls.bad_leading_dim = true;
  }
  for (int i = 0; i < *m; ++i) {
    for (int j = 0; j < *n; ++j) {
      double sum = 0;
      for (int l = 0; l < *k; ++l) sum += (ta ? at(a, *lda, l, i) : at(a, *lda, i, l)) * (tb ? at(b, *ldb, j, l) : at(b, *ldb, l, j));
      double& out = c[i + static_cast<long>(j) * *ldc];
      out = *alpha * sum + (*beta == 0 ? 0.0 : *beta * out);  // beta = 0: c is not read
    }
  }
}

void fake_dgemv(const char* trans, const int* m, const int* n, const double* alpha, const double* a, const int* lda,
                const double* x, const int* incx, const double* beta, double* y, const int* incy) {
  ++calls.gemv;
  if (*lda < std::max(1, *m) || *incx != 1 || *incy != 1) calls.bad_leading_dim = true;
  const bool t = *trans == 'T';
  const int rows = t ? *n : *m, inner = t ? *m : *n;
  for (int i = 0; i < rows; ++i) {
    double sum = 0;
    for (int l = 0; l < inner; ++l) sum += (t ? at(a, *lda, l, i) : at(a, *lda, i, l)) * x[l];
    y[i] = *alpha * sum + (*beta == 0 ? 0.0 : *beta * y[i]);
  }
}

double fake_ddot(const int* n, const double* x, const int* incx, const double* y, const int* incy) {
  ++calls.dot;
  if (*incx != 1 || *incy != 1) calls.bad_leading_dim = true;
  double sum = 0;
  for (int i = 0; i < *n; ++i) sum += x[i] * y[i];
  return sum;
}

void use_fakes() {
  ASSERT_TRUE(blas::set_routine("dgemm", reinterpret_cast<void*>(&fake_dgemm)));
  ASSERT_TRUE(blas::set_routine("dgemv", reinterpret_cast<void*>(&fake_dgemv)));
  ASSERT_TRUE(blas::set_routine("ddot", reinterpret_cast<void*>(&fake_ddot)));
}

using Shape = std::vector<int64_t>;

TEST(MatMulPlan, GivesNumPysShapesForVectorsMatricesAndTransposedOperands) {
  EXPECT_EQ(matmul::plan({3, 5}, {5, 4}, false, false).out_shape, (Shape{3, 4}));
  EXPECT_EQ(matmul::plan({5}, {5, 4}, false, false).out_shape, (Shape{4}));
  EXPECT_EQ(matmul::plan({3, 5}, {5}, false, false).out_shape, (Shape{3}));
  EXPECT_EQ(matmul::plan({5}, {5}, false, false).out_shape, (Shape{}));
  const matmul::Plan t = matmul::plan({5, 3}, {4, 5}, true, true);
  EXPECT_EQ(t.out_shape, (Shape{3, 4}));
  EXPECT_EQ(t.m, 3);
  EXPECT_EQ(t.n, 4);
  EXPECT_EQ(t.k, 5);
}

TEST(MatMulPlan, BroadcastsBatchDimsAndMapsEachResultToItsOperands) {
  const matmul::Plan p = matmul::plan({2, 1, 3, 5}, {3, 5, 4}, false, false);
  EXPECT_EQ(p.out_shape, (Shape{2, 3, 3, 4}));
  EXPECT_EQ(p.a_items, (Shape{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(p.b_items, (Shape{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(matmul::plan({2, 3, 5}, {5}, false, false).out_shape, (Shape{2, 3}));
  EXPECT_EQ(matmul::plan({5}, {2, 5, 4}, false, false).out_shape, (Shape{2, 4}));
  EXPECT_EQ(matmul::plan({0, 3, 5}, {5, 4}, false, false).out_shape, (Shape{0, 3, 4}));
}

void expect_error(const Shape& a, const Shape& b, bool ta, bool tb, const std::string& text) {
  try {
    matmul::plan(a, b, ta, tb);
    ADD_FAILURE() << "expected an error containing " << text;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(MatMulPlan, RefusesShapesThatDoNotFitNamingThem) {
  expect_error({3, 5}, {4, 2}, false, false, "(3, 5) and (4, 2): inner dims 5 and 4 differ");
  expect_error({5, 3}, {5, 2}, true, true, "(5, 3) (transposed) and (5, 2) (transposed): inner dims 5 and 2 differ");
  expect_error({3}, {4}, false, false, "inner dims 3 and 4 differ");
  expect_error({}, {4}, false, false, "0-d operand");
  expect_error({4}, {4, 2}, true, false, "a vector cannot be read transposed");
  expect_error({2, 3, 5}, {4, 5, 2}, false, false, "do not broadcast");
  expect_error({int64_t{1} << 32, 2}, {2, 2}, false, false, "does not fit BLAS's int");
}

TEST(MatMulMultiply, NamesAMissingRoutine) {
  // The single-precision routines are never set in this test program.
  const matmul::Plan p = matmul::plan({2, 2}, {2, 2}, false, false);
  const std::vector<float> a(4, 1.f);
  std::vector<float> out(4);
  try {
    matmul::multiply(a.data(), a.data(), out.data(), p);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("BLAS routine sgemm is not set"), std::string::npos) << e.what();
  }
  EXPECT_NE(blas::missing_routines().find("sgemv"), std::string::npos);
  EXPECT_FALSE(blas::set_routine("dnothing", reinterpret_cast<void*>(&fake_ddot)));
  EXPECT_FALSE(blas::set_routine("dgemm", nullptr));
}

// A stored operand of `rows` x `cols` (row-major) with small integers, so
// every product is exact.
std::vector<double> operand(int rows, int cols, int seed) {
  std::vector<double> v(static_cast<size_t>(rows) * cols);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((static_cast<int>(i) * 7 + seed * 3) % 11 - 5);
  return v;
}

TEST(MatMulMultiply, MatchesTheDefinitionForEveryLayoutAndPicksTheRoutine) {
  use_fakes();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Size {
    int m, n, k;
  };
  for (Size s : {Size{3, 4, 5}, Size{1, 4, 5}, Size{3, 1, 5}, Size{1, 1, 5}, Size{3, 4, 1}, Size{3, 4, 0},
                 Size{1, 1, 0}, Size{0, 4, 5}, Size{3, 0, 5}, Size{0, 0, 0}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        SCOPED_TRACE("m " + std::to_string(s.m) + " n " + std::to_string(s.n) + " k " + std::to_string(s.k) +
                     " trans " + std::to_string(ta) + std::to_string(tb));
        // Stored shapes: op(A) is m x k, so A is k x m when read transposed.
        const Shape a_shape = ta ? Shape{s.k, s.m} : Shape{s.m, s.k};
        const Shape b_shape = tb ? Shape{s.n, s.k} : Shape{s.k, s.n};
        const std::vector<double> a = operand(static_cast<int>(a_shape[0]), static_cast<int>(a_shape[1]), 1);
        const std::vector<double> b = operand(static_cast<int>(b_shape[0]), static_cast<int>(b_shape[1]), 2);
        auto a_at = [&](int i, int l) { return ta ? a[l * s.m + i] : a[i * s.k + l]; };
        auto b_at = [&](int l, int j) { return tb ? b[j * s.k + l] : b[l * s.n + j]; };
        const matmul::Plan p = matmul::plan(a_shape, b_shape, ta, tb);
        ASSERT_EQ(p.out_shape, (Shape{s.m, s.n}));
        std::vector<double> out(static_cast<size_t>(s.m) * s.n, nan);  // an output buffer's old contents
        calls = {};
        matmul::multiply(a.data(), b.data(), out.data(), p);
        for (int i = 0; i < s.m; ++i) {
          for (int j = 0; j < s.n; ++j) {
            double want = 0;
            for (int l = 0; l < s.k; ++l) want += a_at(i, l) * b_at(l, j);
            EXPECT_EQ(out[i * s.n + j], want) << i << ", " << j;
          }
        }
        EXPECT_FALSE(calls.bad_leading_dim);
        const bool empty = s.m == 0 || s.n == 0 || s.k == 0;
        EXPECT_EQ(calls.dot, !empty && s.m == 1 && s.n == 1 ? 1 : 0);
        EXPECT_EQ(calls.gemv, !empty && (s.m == 1) != (s.n == 1) ? 1 : 0);
        EXPECT_EQ(calls.gemm, !empty && s.m > 1 && s.n > 1 ? 1 : 0);
      }
    }
  }
}

TEST(MatMulMultiply, VectorsAndBroadcastStacks) {
  use_fakes();
  // (2, 1, 2, 3) @ (3, 3, 2): the first operand's matrix i of 2 with each of 3.
  const std::vector<double> a = operand(4, 3, 1), b = operand(9, 2, 2);
  const matmul::Plan p = matmul::plan({2, 1, 2, 3}, {3, 3, 2}, false, false);
  std::vector<double> out(2 * 3 * 2 * 2);
  matmul::multiply(a.data(), b.data(), out.data(), p);
  for (int x = 0; x < 2; ++x) {
    for (int y = 0; y < 3; ++y) {
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 2; ++j) {
          double want = 0;
          for (int l = 0; l < 3; ++l) want += a[(x * 2 + i) * 3 + l] * b[(y * 3 + l) * 2 + j];
          EXPECT_EQ(out[((x * 3 + y) * 2 + i) * 2 + j], want);
        }
      }
    }
  }
  // A vector on the left is a row, on the right a column: (3,) @ (3, 2) and (2, 3) @ (3,).
  const std::vector<double> v{1, -2, 3};
  const std::vector<double> m = operand(3, 2, 4);
  std::vector<double> row(2), column(2);
  matmul::multiply(v.data(), m.data(), row.data(), matmul::plan({3}, {3, 2}, false, false));
  matmul::multiply(m.data(), v.data(), column.data(), matmul::plan({3, 2}, {3}, true, false));
  for (int j = 0; j < 2; ++j) {
    const double want = v[0] * m[j] + v[1] * m[2 + j] + v[2] * m[4 + j];
    EXPECT_EQ(row[j], want);
    EXPECT_EQ(column[j], want);  // m read transposed: (2, 3) @ (3,) is the same sums
  }
}

}  // namespace
}  // namespace pytensor_onnx::kernels
