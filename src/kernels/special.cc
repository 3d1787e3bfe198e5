// Boost.Math (Debian's libboost-math-dev, header-only) for the functions C's
// libm lacks: SciPy itself evaluates erfinv, erfcinv and betainc with it.
// The policy turns every error into a value (NaN for domain errors, inf at
// poles and on overflow) and keeps double arithmetic in double: promoting to
// long double costs 3-10x for ~1 ulp that the kernels' 1e-12 target does not
// need.
#include "special.h"

#include "scipy_special.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <boost/math/special_functions/bessel.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/math/special_functions/trigamma.hpp>

namespace pytensor_onnx::kernels::special {
namespace {

namespace bm = boost::math;
// Every error as a value; `PromoteDouble` computes double arguments in long
// double internally.
template <bool PromoteDouble>
using PolicyOf = bm::policies::policy<bm::policies::domain_error<bm::policies::ignore_error>,
                                      bm::policies::pole_error<bm::policies::ignore_error>,
                                      bm::policies::overflow_error<bm::policies::ignore_error>,
                                      bm::policies::underflow_error<bm::policies::ignore_error>,
                                      bm::policies::evaluation_error<bm::policies::ignore_error>,
                                      bm::policies::rounding_error<bm::policies::ignore_error>,
                                      bm::policies::promote_float<false>,
                                      bm::policies::promote_double<PromoteDouble>>;
using Policy = PolicyOf<false>;
using LongPolicy = PolicyOf<true>;  // for the cases named where it is used

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
// Below this, Boost's double incomplete beta may have underflowed inside.
constexpr double kTinyIncompleteBeta = 1e-200;

}  // namespace

double gammaln(double x) {
  if (x == -kInf) return -kInf;  // SciPy's gammaln (C's lgamma gives +inf)
  int sign;
  return lgamma_r(x, &sign);
}

double gamma(double x) { return std::tgamma(x); }

double psi(double x) {
  if (double value; scipy_special::psi(x, &value)) return value;
  if (std::isnan(x)) return x;
  if (x == kInf) return kInf;
  if (x == -kInf) return kNaN;
  // Poles at 0 and the negative integers: SciPy gives -inf at 0... and NaN
  // at the negative integers; Boost's ignored pole error gives NaN for both.
  if (x == 0) return std::signbit(x) ? kInf : -kInf;
  if (x < 0 && x == std::floor(x)) return kNaN;
  return bm::digamma(x, Policy());
}

double trigamma(double x) {
  if (std::isnan(x)) return x;
  if (x == kInf) return 0.0;
  if (x <= 0 && x == std::floor(x)) return kInf;
  return bm::trigamma(x, Policy());
}

double erfinv(double x) {
  if (std::isnan(x) || x < -1 || x > 1) return kNaN;
  if (x == 1) return kInf;
  if (x == -1) return -kInf;
  return bm::erf_inv(x, Policy());
}

double erfcinv(double x) {
  if (std::isnan(x) || x < 0 || x > 2) return kNaN;
  if (x == 0) return kInf;
  if (x == 2) return -kInf;
  // SciPy's erfcinv is -ndtri(x / 2) / sqrt(2): -0.0 at 1, where Boost's is +0.0.
  if (x == 1) return -0.0;
  return bm::erfc_inv(x, Policy());
}

// P(a, x) where the edges of the domain fix it (NaN outside the domain);
// false where it must be computed. Q = 1 - P there.
bool incomplete_gamma_edge(double a, double x, double* p) {
  if (std::isnan(a) || std::isnan(x) || a < 0 || x < 0) *p = kNaN;
  else if (a == 0) *p = x > 0 ? 1.0 : kNaN;
  else if (x == 0) *p = 0.0;
  else if (std::isinf(a)) *p = std::isinf(x) ? kNaN : 0.0;
  else if (std::isinf(x)) *p = 1.0;
  else return false;
  return true;
}

double gammainc(double a, double x) {
  if (double value; scipy_special::gammainc(a, x, &value)) return value;
  double p;
  return incomplete_gamma_edge(a, x, &p) ? p : bm::gamma_p(a, x, Policy());
}

double gammaincc(double a, double x) {
  double p;
  return incomplete_gamma_edge(a, x, &p) ? 1.0 - p : bm::gamma_q(a, x, Policy());
}

namespace {

// I_x(a, b), or 1 - I_x(a, b) for `complement`, for ordinary arguments.
// Boost 1.74's double arithmetic loses accuracy for large parameters (a = b
// = 1e10, x = 0.5: 0.5000004), underflows for tiny ones (a = b = 1e-300
// gives 0, not 0.5) and for tiny results (I_x(449, 26) = 1.4e-289 gives 0),
// and is 2.8e-9 off next to x = 1 (a = b = 1/2, x = 1 - 2^-53;
// tests/python/test_special_beta.py checks these against mpmath); long
// double gets them right but costs 8x (5.7 us against 0.7 us a call), so it
// is kept for those regions.
double incomplete_beta(double a, double b, double x, bool complement) {
  const bool long_double = a + b > 1e3 || std::min(a, b) < 1e-100 || (!complement && x > 0.9);
  if (!long_double) {
    const double value = complement ? bm::ibetac(a, b, x, Policy()) : bm::ibeta(a, b, x, Policy());
    if (!(value < kTinyIncompleteBeta)) return value;
  }
  return complement ? bm::ibetac(a, b, x, LongPolicy()) : bm::ibeta(a, b, x, LongPolicy());
}

}  // namespace

// SciPy's edges: both parameters 0 or both infinite are NaN, then x = 0 and
// x = 1, then one degenerate parameter.
double betainc(double a, double b, double x) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(x) || a < 0 || b < 0 || x < 0 || x > 1) return kNaN;
  if ((a == 0 && b == 0) || (std::isinf(a) && std::isinf(b))) return kNaN;
  if (x == 0) return 0.0;
  if (x == 1) return 1.0;
  if (a == 0 || std::isinf(b)) return 1.0;
  if (b == 0 || std::isinf(a)) return 0.0;
  return incomplete_beta(a, b, x, false);
}

double betainc_xy(double a, double b, double x, double y) {
  if (x <= y) return betainc(a, b, x);
  // I_x(a, b) = 1 - I_y(b, a), which Boost gives directly, y exact.
  return incomplete_beta(b, a, y, true);
}

double betaincinv_estimate(double a, double b, double y, double* one_minus_x) {
  // Boost 1.74's root finder raises in the far tails whatever the policy
  // says (newton_raphson_iterate: "no root to be found"): no estimate there.
  try {
    return bm::ibeta_inv(a, b, y, one_minus_x, Policy());
  } catch (const std::exception&) {
    *one_minus_x = kNaN;
    return kNaN;
  }
}

// SciPy's order for the inverses of P and Q: NaN, a < 0 and y outside [0, 1]
// first, then y = 0 and y = 1 (for every other a, 0 and inf included), then
// a = 0 or inf are NaN.
template <class Inverse>
double incomplete_gamma_inverse(double a, double y, double at_zero, double at_one, Inverse inverse) {
  if (std::isnan(a) || std::isnan(y) || a < 0 || y < 0 || y > 1) return kNaN;
  if (y == 0) return at_zero;
  if (y == 1) return at_one;
  if (a == 0 || std::isinf(a)) return kNaN;
  return inverse(a, y);
}

double gammaincinv(double a, double y) {
  return incomplete_gamma_inverse(a, y, 0.0, kInf, [](double a, double y) { return bm::gamma_p_inv(a, y, Policy()); });
}

double gammainccinv(double a, double y) {
  return incomplete_gamma_inverse(a, y, kInf, 0.0, [](double a, double y) { return bm::gamma_q_inv(a, y, Policy()); });
}

// SciPy's i0/i1 are NaN at +-inf.
double i0(double x) {
  if (std::isnan(x) || std::isinf(x)) return kNaN;
  return bm::cyl_bessel_i(0, std::fabs(x), Policy());
}

double i1(double x) {
  if (std::isnan(x) || std::isinf(x)) return kNaN;
  // (Negated for x < 0, as SciPy's Cephes i1 does: +0.0 at -0.0.)
  const double magnitude = bm::cyl_bessel_i(1, std::fabs(x), Policy());
  return x < 0 ? -magnitude : magnitude;
}

}  // namespace pytensor_onnx::kernels::special
