// The inverse of the regularized incomplete beta function in x (SciPy's
// betaincinv), by the steps of its portable recipe
// (src/core/recipes/incomplete_beta_inverse.cc) from Boost's estimate.
#pragma once

namespace pytensor_onnx::kernels::special {

double betaincinv(double a, double b, double y);  // x in [0, 1] with I_x(a, b) = y

}  // namespace pytensor_onnx::kernels::special
