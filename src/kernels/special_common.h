// Scalar tests the special-function kernels share, written as their
// recipes' element-wise forms compute them.
#pragma once

#include <cmath>

namespace pytensor_onnx::kernels::special {

// Whether an iteration is done: not(error >= tolerance), so NaN stops it.
inline bool small(double error, double tolerance) { return !(error >= tolerance); }

// Whether a is an integer (infinities count as ones, NaN does not).
inline bool is_integer(double a) { return std::floor(a) == a; }

}  // namespace pytensor_onnx::kernels::special
