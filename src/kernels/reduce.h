// The maximum or minimum of an array over some of its axes, with NumPy's
// NaN rule: the Reduce kernel's work (reduce_kernel.h), apart from ONNX
// Runtime (so it is tested, and sanitized, without a runtime).
#pragma once

#include <cstdint>
#include <vector>

namespace pytensor_onnx::kernels {

// The reduction of `x` (C-contiguous, of `shape`) over `axes` into `out`
// (the kept dims in order): maximum when `max`, else minimum. T: float or
// double.
template <class T>
void reduce_max_min(const T* x, const std::vector<int64_t>& shape, const std::vector<int64_t>& axes, bool max, T* out);

// The sum of `x` (C-contiguous, of `shape`) over `axes` into `out`, in
// NumPy's order for a C-contiguous array: pairwise along the run of the
// trailing reduced axes, which NumPy's iterator makes one (numpy_sum,
// evaluate.h), row after row otherwise. An empty set sums to 0.
void reduce_sum(const double* x, const std::vector<int64_t>& shape, const std::vector<int64_t>& axes, double* out);

}  // namespace pytensor_onnx::kernels
