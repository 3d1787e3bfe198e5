// Special functions of the element-wise kernels: float64 in, float64 out;
// float32 operands are computed in float64 and rounded back, as the portable
// recipes do. Domain errors give NaN, poles and overflow give +-inf, never an
// exception (the kernels' callers expect NumPy/SciPy's values, not errors).
#pragma once

namespace pytensor_onnx::kernels::special {

double gammaln(double x);    // log|Gamma(x)|, thread-safe (no signgam)
double gamma(double x);
double psi(double x);        // digamma
double trigamma(double x);
double erfinv(double x);
double erfcinv(double x);
double gammainc(double a, double x);   // regularized lower incomplete gamma P(a, x)
double gammaincc(double a, double x);  // regularized upper incomplete gamma Q(a, x)
double betainc(double a, double b, double x);  // regularized incomplete beta I_x(a, b)
// I_x(a, b) given both x and y = 1 - x, exact (0 < x < 1): the small one of
// them goes to Boost, so neither carries the other's rounding.
double betainc_xy(double a, double b, double x, double y);
// Boost's inverse of I_x(a, b) in x, for 0 < y < 1 and finite a, b > 0:
// x, with 1 - x in `one_minus_x` (a start for betaincinv's polishing steps:
// in its tails it is far less accurate than they make it).
double betaincinv_estimate(double a, double b, double y, double* one_minus_x);
double gammaincinv(double a, double y);        // x with P(a, x) = y
double gammainccinv(double a, double y);       // x with Q(a, x) = y
// (Boost's j0/j1 and inverse of the incomplete beta function are not used:
// next to the zeros of J (relative error 6e-4) and in the inverse's tails
// (1e8 relative) they are far less accurate than the portable recipes, whose
// methods the kernels run instead: special_bessel_j01.h,
// special_betaincinv.h.)
double i0(double x);
double i1(double x);

}  // namespace pytensor_onnx::kernels::special
