// The linear-algebra kernels apart from LAPACK and ONNX Runtime: batch
// broadcasting, the permutations of LU pivots, the error without LAPACK, and
// the row-major/column-major handling around a LAPACK call, through a test
// double of potrf (an unblocked Cholesky written here from its definition).
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "lapack.h"
#include "linalg.h"

namespace pytensor_onnx::kernels {
namespace {

using linalg::plan_batch;

TEST(LinalgBatch, BroadcastsLeadingDimsAndMapsEachOutputMatrixToItsOperands) {
  const linalg::BatchPlan plan = plan_batch({2, 1, 4, 4}, 2, {3, 4}, 1);
  EXPECT_EQ(plan.batch, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(plan.a_items, (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(plan.b_items, (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  const linalg::BatchPlan single = plan_batch({4, 4}, 2, {4}, 1);
  EXPECT_TRUE(single.batch.empty());
  EXPECT_EQ(single.a_items, (std::vector<int64_t>{0}));
}

TEST(LinalgBatch, RefusesBatchDimsThatDoNotBroadcastAndTooFewDims) {
  try {
    plan_batch({2, 3, 3}, 2, {4, 3}, 1);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("(2, 3, 3) and (4, 3) do not broadcast"), std::string::npos) << e.what();
  }
  EXPECT_THROW(plan_batch({3}, 2), std::invalid_argument);
}

TEST(LinalgPermutation, AppliesLapacksSwapsInOrderAndInverts) {
  // Swaps (0 2), (1 2), (2 2): rows of P A are A's rows 2, 0, 1.
  const std::vector<int64_t> pivots{2, 2, 2};
  std::vector<int64_t> rows(3), inverse(3);
  linalg::pivots_to_permutation(pivots.data(), rows.data(), 3, true);
  EXPECT_EQ(rows, (std::vector<int64_t>{2, 0, 1}));
  linalg::pivots_to_permutation(pivots.data(), inverse.data(), 3, false);
  EXPECT_EQ(inverse, (std::vector<int64_t>{1, 2, 0}));
  const std::vector<int64_t> bad{3, 0, 0};
  EXPECT_THROW(linalg::pivots_to_permutation(bad.data(), rows.data(), 3, true), std::invalid_argument);
}

// An unblocked Cholesky of a column-major matrix, reading one triangle as
// LAPACK's potrf does and leaving the other as it was; info = k for a
// non-positive pivot k.
void fake_potrf(const char* uplo, const int* n_ptr, double* a, const int* lda, int* info) {
  const int n = *n_ptr;
  const bool lower = *uplo == 'L';
  auto at = [&](int i, int j) -> double& { return lower ? a[i + j * *lda] : a[j + i * *lda]; };  // L(i, j), i >= j
  *info = 0;
  for (int j = 0; j < n; ++j) {
    double d = at(j, j);
    for (int k = 0; k < j; ++k) d -= at(j, k) * at(j, k);
    if (!(d > 0)) {
      *info = j + 1;
      return;
    }
    at(j, j) = std::sqrt(d);
    for (int i = j + 1; i < n; ++i) {
      double s = at(i, j);
      for (int k = 0; k < j; ++k) s -= at(i, k) * at(j, k);
      at(i, j) = s / at(j, j);
    }
  }
}

TEST(LinalgCholesky, NamesTheMissingRoutineThenFactorsRowMajorMatricesThroughLapack) {
  // Row-major, with garbage in the triangle the factorization must not read.
  const std::vector<double> a{4, 99, 99, 2, 5, 99, 2, 3, 6};
  std::vector<double> out(9);
  linalg::Workspace<double> ws;
  if (lapack::routines<double>().potrf == nullptr) {
    try {
      linalg::cholesky(a.data(), out.data(), 3, true, ws);
      FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("LAPACK routine dpotrf is not set"), std::string::npos) << e.what();
    }
  }
  ASSERT_TRUE(lapack::set_routine("dpotrf", reinterpret_cast<void*>(&fake_potrf)));
  EXPECT_FALSE(lapack::set_routine("dnothing", reinterpret_cast<void*>(&fake_potrf)));
  EXPECT_EQ(lapack::missing_routines().find("dpotrf"), std::string::npos);

  linalg::cholesky(a.data(), out.data(), 3, true, ws);
  // L with L L^T = [[4, 2, 2], [2, 5, 3], [2, 3, 6]], zeros above the diagonal.
  const std::vector<double> lower{2, 0, 0, 1, 2, 0, 1, 1, 2};
  for (size_t i = 0; i < 9; ++i) EXPECT_DOUBLE_EQ(out[i], lower[i]) << i;

  // The upper factor reads the upper triangle: the transposed matrix gives U = L^T.
  const std::vector<double> upper_input{4, 2, 2, 99, 5, 3, 99, 99, 6};
  linalg::cholesky(upper_input.data(), out.data(), 3, false, ws);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) EXPECT_DOUBLE_EQ(out[i * 3 + j], lower[j * 3 + i]) << i << j;
  }

  // Not positive definite: NaN everywhere, as PyTensor returns.
  const std::vector<double> indefinite{1, 0, 0, 2, 1, 0, 0, 0, 1};
  linalg::cholesky(indefinite.data(), out.data(), 3, true, ws);
  for (double x : out) EXPECT_TRUE(std::isnan(x));
}

}  // namespace
}  // namespace pytensor_onnx::kernels
