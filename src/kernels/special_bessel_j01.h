// J0 and J1 (SciPy's j0, j1) from the tables of their portable recipe
// (src/core/recipes/bessel_jy.cc), evaluated in scalar code with the same
// steps: the kernels give the recipe's accuracy next to the zeros of J,
// where Boost's and Cephes' lose it.
#pragma once

namespace pytensor_onnx::kernels::special {

double j0(double x);  // the Bessel function of the first kind of order 0
double j1(double x);  // ... of order 1

}  // namespace pytensor_onnx::kernels::special
