// ive(v, x) = exp(-|x|) I_v(x), iv(v, x) = I_v(x) and kve(v, x) =
// exp(x) K_v(x) of real order: the portable recipe's method
// (src/core/recipes/bessel_ik.cc) step for step in scalar code, with its
// regions, thresholds, constants (bessel_ik_coefficients.h), iteration caps
// and special values; where the recipe computes a region for every element
// and keeps it for some, this computes only the region an argument is in.
//
// Method, for nu = |v| and x > 0 (Temme's method as Numerical Recipes'
// bessik arranges it, with the power series and the large-x expansion
// where they are cheaper or more accurate):
//   - nu = mu + n with n = round(nu) (halves to even) and |mu| <= 1/2.
//   - K_mu and K_mu+1: for x <= 2 Temme's series (its gamma-function
//     factors from the Taylor series of 1/Gamma(1 + z) at 0, so nothing
//     cancels as mu -> 0); for x > 2 Steed's continued fraction CF2, which
//     gives exp(x) K directly. K_nu by the upward recurrence
//     K_k+1 = 2k/x K_k + K_k-1 (stable: K grows with the order), stopped
//     once it overflows.
//   - I_nu (v >= 0): the power series (x/2)^nu / Gamma(nu + 1)
//     sum (x^2/4)^k / (k! (nu + 1)_k) where x <= 2 or x^2 <= 16 (nu + 1)
//     (positive terms, no cancellation); Hankel's expansion
//     sum (-1)^k a_k(nu) / x^k / sqrt(2 pi x) for x >= max(20, nu^2 / 2);
//     between them the continued fraction CF1 for I'_nu / I_nu, the
//     downward recurrence to order mu (rescaled by 2^-500 when it grows),
//     and the Wronskian I_mu K'_mu - I'_mu K_mu = -1/x with K from CF2.
//     Where (x/2)^nu / Gamma(nu + 1) exp(-x), a bound of ive, is below
//     exp(-760), ive is 0.
//   - v < 0: I_-nu = I_nu + (2/pi) sin(nu pi) K_nu; K_-nu = K_nu.
//   - x < 0: ive(v, x) = (-1)^v ive(v, |x|) for integer v, else NaN; kve NaN.
// An iteration that needs more than kMaxSteps steps (orders above ~10^4
// with large x) gives NaN, as the recipe's capped Loops do.
#include "special_bessel_ik.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "method_constants.h"
#include "bessel_ik_coefficients.h"
#include "special.h"
#include "special_common.h"

namespace pytensor_onnx::kernels::special {
namespace {

using recipes::bessel::kRecipGammaEven;
using recipes::bessel::kRecipGammaOdd;
using recipes::bessel::kSinhOverX;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 0x1.921fb54442d18p+1;
constexpr double kLn2 = 0x1.62e42fefa39efp-1;  // log(2), correctly rounded
using recipes::bessel::kEpsilon;
using recipes::bessel::kMaxSteps;
using recipes::bessel::kRescale;

// ive is 0 where its bound (x/2)^nu / Gamma(nu + 1) exp(-x) is below
// exp(kLogUnderflow) (the series would need many terms for nothing).
constexpr double kLogUnderflow = -760.0;

// sum_j c[j] x^j (Horner, as the recipe's Ew::poly).
template <size_t N>
double poly(const std::array<double, N>& c, double x) {
  double p = c[N - 1];
  for (size_t j = N - 1; j-- > 0;) p = p * x + c[j];
  return p;
}

// Round half to even (ONNX's Round) in the default rounding mode.
double round_even(double a) { return std::nearbyint(a); }

// exp(x) K_mu(x) and exp(x) K_mu+1(x), |mu| <= 1/2.
struct KPair {
  double k_mu;
  double k_mu1;
};

// Temme's series, for 0 < x <= 2. Its cap is not checked (as in the
// recipe): it converges in a few dozen steps there.
KPair k_temme(double mu, double x) {
  const double x2 = x * 0.5;
  const double pimu = mu * kPi;
  const double fact = mu == 0.0 ? 1.0 : pimu / std::sin(pimu);
  // -log(x / 2), with x / 2 not formed: it underflows for the smallest
  // subnormal x, where K_0 is still finite (744.4).
  const double d = kLn2 - std::log(x);
  const double e = mu * d;
  const double ep = std::exp(e);
  const double em = std::exp(-e);
  const double sinh_over_e = std::fabs(e) < 0.5 ? poly(kSinhOverX, e * e) : (ep - em) / (e * 2.0);
  const double cosh_e = (ep + em) * 0.5;
  const double mu2 = mu * mu;
  // gam1 = (1/Gamma(1 - mu) - 1/Gamma(1 + mu)) / (2 mu), gam2 their mean.
  const double gam1 = -poly(kRecipGammaOdd, mu2);
  const double gam2 = poly(kRecipGammaEven, mu2);
  const double gampl = gam2 - mu * gam1;  // 1 / Gamma(1 + mu)
  const double gammi = gam2 + mu * gam1;  // 1 / Gamma(1 - mu)
  double ff = fact * (gam1 * cosh_e + (gam2 * sinh_over_e) * d);
  double p = (ep * 0.5) / gampl;
  double q = (em * 0.5) / gammi;
  const double dd = x2 * x2;
  double c = 1.0, sum = ff, sum1 = p, i = 0.0;
  for (int64_t step = 0; step < kMaxSteps; ++step) {
    const double i1 = i + 1.0;
    ff = (i1 * ff + (p + q)) / (i1 * i1 - mu2);
    c = (c * dd) / i1;
    p = p / (i1 - mu);
    q = q / (i1 + mu);
    const double term = c * ff;
    sum = sum + term;
    sum1 = sum1 + c * (p - i1 * ff);
    i = i1;
    if (small(std::fabs(term), std::fabs(sum) * kEpsilon)) break;
  }
  const double scale = std::exp(x);
  return {sum * scale, (sum1 * (2.0 / x)) * scale};
}

// Steed's continued fraction CF2, for x > 2 (cap unchecked, as above).
KPair k_steed(double mu, double x) {
  double b = (x + 1.0) * 2.0;
  double d = 1.0 / b;
  const double a1 = 0.25 - mu * mu;
  double a = -a1, c = a1, q1 = 0.0, q2 = 1.0, q = a1, delh = d, h = d;
  double sum = a1 * d + 1.0, i = 1.0;
  for (int64_t step = 0; step < kMaxSteps; ++step) {
    const double i1 = i + 1.0;
    a = a - i * 2.0;  // a - 2 (i1 - 1)
    c = -(a * c) / i1;
    const double q_new = (q1 - b * q2) / a;
    q1 = q2;
    q2 = q_new;
    q = q + c * q_new;
    b = b + 2.0;
    d = 1.0 / (b + a * d);
    delh = (b * d - 1.0) * delh;
    h = h + delh;
    const double dels = q * delh;
    sum = sum + dels;
    i = i1;
    if (small(std::fabs(dels), std::fabs(sum) * kEpsilon)) break;
  }
  h = a1 * h;
  const double k_mu = std::sqrt((kPi / 2) / x) / sum;
  const double k_mu1 = (k_mu * (((mu + x) + 0.5) - h)) / x;
  return {k_mu, k_mu1};
}

KPair k_at_mu(double mu, double x) { return x <= 2.0 ? k_temme(mu, x) : k_steed(mu, x); }

// exp(x) K_nu(x) from K_mu, K_mu+1 by n upward steps (n = 0: K_mu); NaN if
// that takes more than kMaxSteps steps without overflowing.
double k_upward(double mu, double n, double x, KPair start) {
  double k = start.k_mu, k1 = start.k_mu1, i = 0.0;
  for (int64_t step = 0; step < kMaxSteps; ++step) {
    const double i1 = i + 1.0;
    if (i < n) {
      const double next = ((mu + i1) * 2.0 / x) * k1 + k;
      k = k1;
      k1 = next;
    }
    i = i1;
    // Stopped by overflow: K_nu is larger still.
    if (std::isinf(k)) return kInf;
    if (i1 >= n) return k;
  }
  return kNaN;
}

// exp(x) K_nu(x) for nu >= 0 finite, x > 0 finite.
double kve_positive(double nu, double x) {
  const double n = round_even(nu);
  const double mu = nu - n;
  return k_upward(mu, n, x, k_at_mu(mu, x));
}

// exp(-x) I_nu(x) by the power series (x <= 2 or x^2 <= 16 (nu + 1));
// log_bound = log((x/2)^nu / Gamma(nu + 1)).
double ive_series(double nu, double x, double log_bound) {
  const double y = (x * x) * 0.25;
  double sum = 1.0, term = 1.0, k = 0.0;
  for (int64_t step = 0; step < kMaxSteps; ++step) {
    const double k1 = k + 1.0;
    term = (term * y) / (k1 * (nu + k1));
    sum = sum + term;
    k = k1;
    if (small(term, sum * kEpsilon)) return std::exp(log_bound - x) * sum;
  }
  return kNaN;
}

// exp(-x) I_nu(x) by Hankel's expansion (x >= max(20, nu^2 / 2)).
double ive_hankel(double nu, double x) {
  const double m = (nu * nu) * 4.0;
  double sum = 1.0, term = 1.0, k = 0.0;
  for (int64_t step = 0; step < recipes::bessel::kHankelITerms; ++step) {
    const double k1 = k + 1.0;
    const double odd = k1 * 2.0 - 1.0;
    term = -((term * (m - odd * odd)) / ((k1 * 8.0) * x));
    sum = sum + term;
    k = k1;
    if (small(std::fabs(term), std::fabs(sum) * kEpsilon)) return sum / std::sqrt(x * (2.0 * kPi));
  }
  return kNaN;
}

// CF1: I'_nu / I_nu (modified Lentz), NaN past the cap; xi = 1 / x.
double i_cf1(double nu, double xi) {
  const double xi2 = xi * 2.0;
  double h = std::max(nu * xi, 1e-300);
  double b = xi2 * nu, d = 0.0, c = h;
  for (int64_t step = 0; step < kMaxSteps; ++step) {
    b = b + xi2;
    d = 1.0 / (b + d);
    c = b + 1.0 / c;
    const double del = c * d;
    h = h * del;
    if (small(std::fabs(del - 1.0), kEpsilon)) return h;
  }
  return kNaN;
}

// exp(-x) I_nu(x) by CF1, the downward recurrence and the Wronskian with
// K from CF2 (2 < x < max(20, nu^2 / 2)).
double ive_temme(double nu, double x) {
  const double n = round_even(nu);
  const double mu = nu - n;
  const double xi = 1.0 / x;
  const double h = i_cf1(nu, xi);
  if (std::isnan(h)) return kNaN;
  // Downward recurrence from (I_nu, I'_nu) = (1, h) to order mu: I_l-1 =
  // (l / x) I_l + I'_l, I'_l-1 = ((l - 1) / x) I_l-1 + I_l; each time I
  // passes 2^500 both are scaled by 2^-500.
  double z = 1.0, z_prime = h, fact = nu * xi, rescales = 0.0, l = 0.0;
  bool converged = false;
  for (int64_t step = 0; step < kMaxSteps; ++step) {
    const double l1 = l + 1.0;
    if (l < n) {
      double next_z = fact * z + z_prime;
      fact = fact - xi;
      double next_z_prime = fact * next_z + z;
      if (std::fabs(next_z) > 1.0 / kRescale) {
        next_z = next_z * kRescale;
        next_z_prime = next_z_prime * kRescale;
        rescales = rescales + 1.0;
      }
      z = next_z;
      z_prime = next_z_prime;
    }
    l = l1;
    if (l1 >= n) {
      converged = true;
      break;
    }
  }
  if (!converged) return kNaN;
  const double f_mu = z_prime / z;
  const KPair k = k_steed(mu, x);
  const double k_prime = (mu * xi) * k.k_mu - k.k_mu1;
  const double i_mu = xi / (f_mu * k.k_mu - k_prime);
  double value = i_mu / z;  // times I_nu / I_mu of the recurrence (I_nu = 1 there)
  if (rescales >= 1.0) value = value * kRescale;
  if (rescales >= 2.0) value = value * kRescale;
  if (rescales >= 3.0) value = 0.0;
  return value;  // NaN stays NaN
}

// exp(-x) I_nu(x) for nu >= 0 finite, x > 0 finite.
double ive_positive(double nu, double x) {
  const bool series = x <= 2.0 || x * x <= (nu + 1.0) * 16.0;
  // In Hankel's region (x >= 20, x >= nu^2 / 2) the bound is at least 1,
  // so the underflow test is left out there.
  if (!series && x >= std::max(20.0, (nu * nu) * 0.5)) return ive_hankel(nu, x);
  // The bound's log, log((x/2)^nu / Gamma(nu + 1)), is above
  // -log Gamma(51) > -149 between the series and Hankel (x > 2) for
  // nu <= 50: no log-gamma needed there to know it does not underflow.
  if (!series && nu <= 50.0) return ive_temme(nu, x);
  // (nu log(x/2) is 0 for nu = 0.)
  const double nu_log = nu == 0.0 ? 0.0 : nu * (std::log(x) - kLn2);
  const double log_bound = nu_log - gammaln(nu + 1.0);
  if (log_bound < kLogUnderflow) return 0.0;
  return series ? ive_series(nu, x, log_bound) : ive_temme(nu, x);
}

// sin(nu pi) = (-1)^k sin((nu - k) pi) with k = round(nu): the reduced
// argument is exact and in [-1/2, 1/2], so the result keeps its relative
// accuracy next to the integers (where it is exactly 0).
double sin_pi(double nu) {
  const double k = round_even(nu);
  const double s = std::sin((nu - k) * kPi);
  return is_integer(k * 0.5) ? s : -s;
}

}  // namespace

double kve(double v, double x) {
  // SciPy: inf at x = 0 whatever the order (NaN too), NaN for x < 0.
  if (x == 0.0) return kInf;
  const double nu = std::fabs(v);
  if (!std::isfinite(nu) || !std::isfinite(x) || !(x > 0.0)) return kNaN;
  return kve_positive(nu, x);
}

double ive(double v, double x) {
  const double nu = std::fabs(v);
  const bool integer_v = is_integer(v);
  if (!std::isfinite(nu)) return kNaN;
  // x = 0: 1 for v = 0, 0 for other integer and for positive orders; NaN
  // for negative non-integer orders (SciPy; I_v itself is infinite there).
  if (x == 0.0) return v == 0.0 ? 1.0 : (v > 0.0 || integer_v) ? 0.0 : kNaN;
  // Negative x: real only for integer orders. SciPy's ive is NaN at +-inf
  // (where the limit is 0).
  if (!std::isfinite(x) || (x < 0.0 && !integer_v)) return kNaN;
  const double ax = std::fabs(x);
  double value = ive_positive(nu, ax);
  if (v < 0.0 && !integer_v) {
    // Negative non-integer orders: + (2/pi) sin(nu pi) K_nu(x) exp(-x), as
    // exp(x) K_nu times exp(-2x). (0 * inf where K overflows and exp(-2x)
    // underflows cannot happen: K overflows only for small x.)
    const double k = kve_positive(nu, ax);
    value = value + (sin_pi(nu) * (2.0 / kPi)) * (k * std::exp(ax * -2.0));
  }
  // x < 0 (integer orders): (-1)^v. A zero stays +0 (what the recipe gives:
  // ONNX Runtime's Where returns +0 for a -0 it selects; SciPy's ive too).
  return x < 0.0 && !is_integer(nu * 0.5) && value != 0.0 ? -value : value;
}

double iv(double v, double x) {
  // inf at x = 0 for negative non-integer orders (SciPy's iv).
  if (x == 0.0 && v < 0.0 && !(is_integer(v) || std::isinf(v))) return kInf;
  // exp(|x|) applied as two halves: finite up to where I_v itself
  // overflows (|x| ~ 713.9).
  const double half = std::exp(std::fabs(x) * 0.5);
  return (ive(v, x) * half) * half;
}

}  // namespace pytensor_onnx::kernels::special
