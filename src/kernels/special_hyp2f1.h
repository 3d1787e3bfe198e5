// The Gauss hypergeometric function 2F1(a, b; c; z) for real arguments
// (SciPy's hyp2f1) by the method of its portable recipe
// (src/core/recipes/hyp2f1.cc) in scalar code: the same transformations,
// evaluations, error estimates and selection, so the same values and the
// same NaN where the best estimate exceeds the tolerance.
#pragma once

namespace pytensor_onnx::kernels::special {

double hyp2f1(double a, double b, double c, double z);  // 2F1(a, b; c; z), NaN where not good to 1e-11
// The same with the recipe's tolerance for a narrower result dtype (1e-8 for
// float32, 1e-4 for float16 and bfloat16: see the recipe's tolerance_for).
double hyp2f1(double a, double b, double c, double z, double tolerance);

}  // namespace pytensor_onnx::kernels::special
