// Boost.Math (Debian's libboost-math-dev, header-only) for the functions C's
// libm lacks: SciPy itself evaluates erfinv, erfcinv and betainc with it.
// The policy turns every error into a value (NaN for domain errors, inf at
// poles and on overflow) and keeps double arithmetic in double: promoting to
// long double costs 3-10x for ~1 ulp that the kernels' 1e-12 target does not
// need.
#include "special.h"

#include <cmath>
#include <limits>

#include <boost/math/special_functions/beta.hpp>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/math/special_functions/trigamma.hpp>

namespace pytensor_onnx::kernels::special {
namespace {

namespace bm = boost::math;
using Policy = bm::policies::policy<bm::policies::domain_error<bm::policies::ignore_error>,
                                    bm::policies::pole_error<bm::policies::ignore_error>,
                                    bm::policies::overflow_error<bm::policies::ignore_error>,
                                    bm::policies::underflow_error<bm::policies::ignore_error>,
                                    bm::policies::evaluation_error<bm::policies::ignore_error>,
                                    bm::policies::rounding_error<bm::policies::ignore_error>,
                                    bm::policies::promote_float<false>, bm::policies::promote_double<false>>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

double gammaln(double x) {
  int sign;
  return lgamma_r(x, &sign);
}

double gamma(double x) { return std::tgamma(x); }

double psi(double x) {
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
  return bm::erfc_inv(x, Policy());
}

double gammainc(double a, double x) {
  if (std::isnan(a) || std::isnan(x) || a < 0 || x < 0) return kNaN;
  if (a == 0) return x > 0 ? 1.0 : kNaN;
  if (x == 0) return 0.0;
  if (std::isinf(a)) return std::isinf(x) ? kNaN : 0.0;
  if (std::isinf(x)) return 1.0;
  return bm::gamma_p(a, x, Policy());
}

double gammaincc(double a, double x) {
  if (std::isnan(a) || std::isnan(x) || a < 0 || x < 0) return kNaN;
  if (a == 0) return x > 0 ? 0.0 : kNaN;
  if (x == 0) return 1.0;
  if (std::isinf(a)) return std::isinf(x) ? kNaN : 1.0;
  if (std::isinf(x)) return 0.0;
  return bm::gamma_q(a, x, Policy());
}

double betainc(double a, double b, double x) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(x) || a < 0 || b < 0 || x < 0 || x > 1) return kNaN;
  if (a == 0 && b == 0) return kNaN;
  if (a == 0) return 1.0;
  if (b == 0) return 0.0;
  if (std::isinf(a) || std::isinf(b)) return kNaN;
  return bm::ibeta(a, b, x, Policy());
}

}  // namespace pytensor_onnx::kernels::special
