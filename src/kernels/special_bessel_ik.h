// The modified Bessel functions of real order (SciPy's ive, iv and kve) by
// the method of their portable recipe (src/core/recipes/bessel_ik.cc) in
// scalar code, with its regions, thresholds, constants, iteration caps and
// special values. Correct for every order, 0 and 1 included.
#pragma once

namespace pytensor_onnx::kernels::special {

double ive(double v, double x);  // exp(-|x|) I_v(x), real order v (SciPy's ive)
double iv(double v, double x);   // I_v(x), real order v (SciPy's iv)
double kve(double v, double x);  // exp(x) K_v(x), real order v (SciPy's kve)

}  // namespace pytensor_onnx::kernels::special
