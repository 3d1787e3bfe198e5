// The Reduce kernel's work (src/kernels/reduce.h): max and min over some
// axes with NumPy's NaN rule, without ONNX Runtime.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "evaluate.h"
#include "reduce.h"

namespace pytensor_onnx::kernels {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> reduced(const std::vector<double>& x, const std::vector<int64_t>& shape,
                            const std::vector<int64_t>& axes, bool max, size_t out_size) {
  std::vector<double> out(out_size, 12345.0);
  reduce_max_min(x.data(), shape, axes, max, out.data());
  return out;
}

TEST(KernelReduce, EveryAxisChoiceOfAMatrix) {
  // [[1, 5, -2],
  //  [4, 0,  3]]
  const std::vector<double> x = {1, 5, -2, 4, 0, 3};
  EXPECT_EQ(reduced(x, {2, 3}, {0}, true, 3), (std::vector<double>{4, 5, 3}));
  EXPECT_EQ(reduced(x, {2, 3}, {1}, true, 2), (std::vector<double>{5, 4}));
  EXPECT_EQ(reduced(x, {2, 3}, {0, 1}, true, 1), (std::vector<double>{5}));
  EXPECT_EQ(reduced(x, {2, 3}, {0}, false, 3), (std::vector<double>{1, 0, -2}));
  EXPECT_EQ(reduced(x, {2, 3}, {1}, false, 2), (std::vector<double>{-2, 0}));
  EXPECT_EQ(reduced(x, {2, 3}, {}, true, 6), x);  // no axes: the array itself
}

TEST(KernelReduce, AMiddleAxisOfThree) {
  // x[i, j, k] = 100 i + 10 j + k, shape (2, 3, 2): the max over j is at j = 2.
  std::vector<double> x;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) x.push_back(100 * i + 10 * j + k);
  EXPECT_EQ(reduced(x, {2, 3, 2}, {1}, true, 4), (std::vector<double>{20, 21, 120, 121}));
  EXPECT_EQ(reduced(x, {2, 3, 2}, {0, 2}, false, 3), (std::vector<double>{0, 10, 20}));
}

TEST(KernelReduce, ANaNAnywhereInASetIsItsResult) {
  // NumPy's rule, wherever the NaN sits (first, middle, last of the set).
  for (size_t at = 0; at < 3; ++at) {
    std::vector<double> x = {1, 2, 3, 7, 8, 9};
    x[at] = kNaN;
    for (bool max : {true, false}) {
      const std::vector<double> out = reduced(x, {2, 3}, {1}, max, 2);
      EXPECT_TRUE(std::isnan(out[0])) << at;
      EXPECT_EQ(out[1], max ? 9 : 7);
    }
  }
  EXPECT_TRUE(std::isnan(reduced({kNaN, kInf}, {2}, {0}, true, 1)[0]));
  EXPECT_TRUE(std::isnan(reduced({-kInf, kNaN}, {2}, {0}, false, 1)[0]));
}

TEST(KernelReduce, InfinitiesAndEmptySets) {
  EXPECT_EQ(reduced({-kInf, -kInf}, {2}, {0}, true, 1)[0], -kInf);
  EXPECT_EQ(reduced({kInf, 1}, {2}, {0}, false, 1)[0], 1);
  // An empty reduced set gives the identity (the rules check emptiness).
  EXPECT_EQ(reduced({}, {0, 2}, {0}, true, 2), (std::vector<double>{-kInf, -kInf}));
  EXPECT_EQ(reduced({}, {0}, {0}, false, 1), (std::vector<double>{kInf}));
  // An empty kept axis: nothing written.
  EXPECT_EQ(reduced({}, {2, 0}, {0}, true, 0), (std::vector<double>{}));
  // A 0-d array.
  EXPECT_EQ(reduced({-3.5}, {}, {}, true, 1), (std::vector<double>{-3.5}));
}

TEST(KernelReduce, Float32) {
  const std::vector<float> x = {1.5f, -2.0f, std::nanf(""), 4.0f};
  std::vector<float> out(2);
  reduce_max_min(x.data(), {2, 2}, {1}, false, out.data());
  EXPECT_EQ(out[0], -2.0f);
  EXPECT_TRUE(std::isnan(out[1]));
}

// Sums over some axes (a reduction stage of an Elemwise node): NumPy's
// order for a C-contiguous array, a run along a reduced innermost axis
// pairwise (numpy_sum), rows of a kept one added in order.
TEST(KernelReduce, SumsInNumPysOrder) {
  auto summed = [](const std::vector<double>& x, std::vector<int64_t> shape, std::vector<int64_t> axes, size_t n) {
    std::vector<double> out(n, 99.0);
    reduce_sum(x.data(), shape, axes, out.data());
    return out;
  };
  const std::vector<double> x = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(summed(x, {2, 3}, {0}, 3), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(summed(x, {2, 3}, {1}, 2), (std::vector<double>{6, 15}));
  EXPECT_EQ(summed(x, {2, 3}, {0, 1}, 1), (std::vector<double>{21}));
  EXPECT_EQ(summed(x, {2, 1, 3}, {1}, 6), x);
  // Rows of 40: each the pairwise sum NumPy gives a contiguous run.
  std::vector<double> rows(80);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = 1.0 / static_cast<double>(i + 3);
  const std::vector<double> sums = summed(rows, {2, 40}, {1}, 2);
  EXPECT_EQ(sums[0], numpy_sum(rows.data(), 40));
  EXPECT_EQ(sums[1], numpy_sum(rows.data() + 40, 40));
  // Trailing reduced axes are one run, as NumPy's iterator makes them, and
  // axes of size 1 are none: one pairwise sum of the run.
  std::vector<double> many(240);
  for (size_t i = 0; i < many.size(); ++i) many[i] = 1.0 / static_cast<double>(i + 3) * (i % 3 == 0 ? -1e3 : 1.0);
  EXPECT_EQ(summed(many, {80, 3}, {0, 1}, 1)[0], numpy_sum(many.data(), 240));
  EXPECT_EQ(summed(many, {80, 3, 1}, {0, 1}, 1)[0], numpy_sum(many.data(), 240));
  EXPECT_EQ(summed(many, {80, 1, 3}, {0, 2}, 1)[0], numpy_sum(many.data(), 240));
  EXPECT_EQ(summed(many, {240, 1}, {0}, 1)[0], numpy_sum(many.data(), 240));
  const std::vector<double> blocks = summed(many, {2, 1, 3, 40}, {2, 3}, 2);
  EXPECT_EQ(blocks[0], numpy_sum(many.data(), 120));
  EXPECT_EQ(blocks[1], numpy_sum(many.data() + 120, 120));
  // (These values tell the orders apart: row sums added in turn differ.)
  double row_by_row = -0.0;
  for (double row_sum : summed(many, {80, 3}, {1}, 80)) row_by_row += row_sum;
  EXPECT_NE(row_by_row, numpy_sum(many.data(), 240));
  // Down a kept innermost axis: in order, one row after the other.
  const std::vector<double> column = summed({1e16, 1.0, -1e16, 1.0}, {4, 1}, {0}, 1);
  EXPECT_EQ(column[0], ((1e16 + 1.0) + -1e16) + 1.0);
  // Every sum starts from +0.0, as NumPy's: -0.0s sum to +0.0, along a
  // reduced innermost axis or down a kept one; an empty set sums to 0.
  EXPECT_FALSE(std::signbit(summed({-0.0, -0.0}, {2, 1}, {0}, 1)[0]));
  EXPECT_FALSE(std::signbit(summed({-0.0, -0.0, -0.0, -0.0}, {2, 2}, {0}, 2)[1]));
  EXPECT_FALSE(std::signbit(summed({-0.0, -0.0, -0.0, -0.0}, {2, 2}, {1}, 2)[0]));
  EXPECT_EQ(summed({}, {0, 3}, {0}, 3), (std::vector<double>{0, 0, 0}));
  EXPECT_FALSE(std::signbit(summed({}, {2, 0}, {1}, 2)[1]));
}

}  // namespace
}  // namespace pytensor_onnx::kernels
