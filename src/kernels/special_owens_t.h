// Owen's T function (SciPy's owens_t) by its portable recipe's quadrature
// (src/core/recipes/owens_t.cc), in scalar code.
#pragma once

namespace pytensor_onnx::kernels::special {

double owens_t(double h, double a);  // T(h, a)

}  // namespace pytensor_onnx::kernels::special
