// The Bessel function of the first kind of real order as a scalar kernel: a
// port of the portable recipe's algorithm (src/core/recipes/bessel_jy.cc),
// float64 in and out, NaN where the recipe gives NaN, never an exception.
#pragma once

namespace pytensor_onnx::kernels::special {

double jv(double v, double x);  // J_v(x), real order v (SciPy's jv)

}  // namespace pytensor_onnx::kernels::special
