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
double gammaincinv(double a, double y);        // x with P(a, x) = y
double gammainccinv(double a, double y);       // x with Q(a, x) = y
double betaincinv(double a, double b, double y);  // x with I_x(a, b) = y
double owens_t(double h, double a);
double j0(double x);
double j1(double x);
double i0(double x);
double i1(double x);

}  // namespace pytensor_onnx::kernels::special
