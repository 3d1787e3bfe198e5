// The Bessel function of the first kind of real order, J_v(x) (SciPy's jv):
// a scalar port of the portable recipe (src/core/recipes/bessel_jy.cc), the
// same method, regions, thresholds, constants, iteration caps and special
// values, so the kernel gives the recipe's results at C speed.
//
// Method, for x > 0 (negative x: (-1)^v J_v(|x|) for integer v, else NaN):
//   - Integer orders are taken as |v| with the sign (-1)^v.
//   - The power series (x/2)^v / Gamma(v + 1) sum (-x^2/4)^k / (k! (v + 1)_k)
//     where x <= 2 or x^2 <= 4 (v + 1): below the first zero of J_v, so the
//     alternating terms cancel by at most a factor e. Negative non-integer
//     orders use it as is (1 / Gamma(v + 1) of either sign).
//   - Hankel's expansion sqrt(2 / (pi x)) (P cos chi - Q sin chi),
//     chi = x - (v/2 + 1/4) pi, where x >= max(20, v^2 / 2), with cos chi and
//     sin chi from cos x, sin x (glibc's are accurate for any double) and the
//     exact reduction of (v/2 + 1/4) mod 2 (sinpi/cospi below).
//   - Between them, where x >= max(20, |v|) (below the turning point):
//     Hankel's expansion for J and Y at the orders mu = |v| - floor(|v|)
//     and mu + 1, then the recurrence upward to |v| (stable for both there).
//   - Elsewhere (2 < x < max(20, |v|)) the method of Numerical Recipes'
//     bessjy: the continued fraction CF1 for J'_nu / J_nu (it converges in
//     O(max(x, 1)) steps, hence only below 20 or the order), the downward
//     recurrence to an order mu below x + 1/2 (rescaled by 2^-500 when it
//     grows), Steed's complex continued fraction CF2 for
//     (J'_mu + i Y'_mu) / (J_mu + i Y_mu) and the Wronskian; Y by the upward
//     recurrence (only where the reflection below needs it).
//   - Negative non-integer orders in the last two regions:
//     J_-nu = cos(nu pi) J_nu - sin(nu pi) Y_nu.
// Near the zeros of J_v the result has absolute accuracy (a few ulp of the
// amplitude sqrt(2 / (pi x))), as every evaluation from a phase has.
// An element that needs more than kMaxSteps steps in any iteration (orders
// above ~3 10^4) is NaN, as in the recipe (bessel_common.h); Hankel's
// expansion stops at 400 terms.
#include "special_bessel_jv.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "method_constants.h"
#include "special.h"
#include "special_common.h"

namespace pytensor_onnx::kernels::special {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 0x1.921fb54442d18p+1;
constexpr double kTiny = 1e-300;
using recipes::bessel::kEpsilon;
using recipes::bessel::kHankelJYTerms;
using recipes::bessel::kMaxSteps;
using recipes::bessel::kRescale;


// Whether the integer k is odd (true for NaN, as the recipe's test is).
bool odd(double k) { return !is_integer(k * 0.5); }

// sin(pi r) and cos(pi r) with |r| <= 1/4, and the quadrant of x = r + n/2:
// n = round(2x) and r = x - n/2 are exact (n/2 is within 1/4 of x), so
// sinpi and cospi are exactly 0 at the integers and half-integers.
struct PiReduced {
  double sin_r;
  double cos_r;
  bool odd;    // n mod 4 is 1 or 3
  bool upper;  // n mod 4 is 2 or 3
};

PiReduced reduce_pi(double x) {
  const double n = std::nearbyint(x * 2.0);  // halves to even, as ONNX's Round
  const double pi_r = (x - n * 0.5) * kPi;
  // n mod 4 and n mod 2 of an integer-valued double (exact below 2^53).
  const double q = n - 4.0 * std::floor(n * 0.25);
  const double parity = q - 2.0 * std::floor(q * 0.5);
  return {std::sin(pi_r), std::cos(pi_r), parity == 1.0, q >= 2.0};
}

// sin(pi x): sin r, cos r, -sin r, -cos r for n mod 4 = 0..3.
double sinpi(double x) {
  const PiReduced red = reduce_pi(x);
  const double magnitude = red.odd ? red.cos_r : red.sin_r;
  return red.upper ? -magnitude : magnitude;
}

// cos(pi x): cos r, -sin r, -cos r, sin r for n mod 4 = 0..3.
double cospi(double x) {
  const PiReduced red = reduce_pi(x);
  const double magnitude = red.odd ? red.sin_r : red.cos_r;
  return red.odd != red.upper ? -magnitude : magnitude;
}

// The sign of Gamma(w) away from its poles: negative for w in (-1, 0),
// (-3, -2), ...
double gamma_sign(double w) { return w < 0 && odd(std::floor(w)) ? -1.0 : 1.0; }

// J_w(x) by the power series (w > -1 or w a negative non-integer; x > 0):
// sum_k t_k with t_0 = 1 and t_k = -t_k-1 y / (k (w + k)), y = x^2 / 4,
// until a term falls below kEpsilon of the sum, and not before k = -w, past
// which the terms only shrink (negative non-integer orders).
double j_series(double w, double x) {
  const double y = x * x * 0.25;
  double sum = 1.0;
  double term = 1.0;
  bool converged = false;
  for (int k = 1; k <= kMaxSteps && !converged; ++k) {
    const double k1 = k;
    term = -(term * y / (k1 * (w + k1)));
    sum += term;
    converged = small(std::fabs(term), std::fabs(sum) * kEpsilon) && k1 + w >= 0;
  }
  if (!converged) return kNaN;
  // (x/2)^w / Gamma(w + 1), w log(x/2) taken as 0 at w = 0.
  const double w_log = w == 0 ? 0.0 : w * (std::log(x) - std::log(2.0));
  return gamma_sign(w + 1.0) * std::exp(w_log - gammaln(w + 1.0)) * sum;
}

struct JY {
  double j;
  double y;
};

// J_v(x) and Y_v(x) by Hankel's expansion (x >= max(20, v^2 / 2)):
// sqrt(2 / (pi x)) (P cos chi - Q sin chi) and (P sin chi + Q cos chi),
// chi = x - phi pi with phi = v/2 + 1/4 reduced mod 2 exactly.
JY jy_hankel(double v, double x) {
  const double m = v * v * 4.0;
  // P and Q from the terms t_k = a_k(v) / x^k, which go to Q for odd k and
  // to P for even k, with the signs +, -, -, + for k mod 4 = 1, 2, 3, 0.
  double p = 1.0;
  double q = 0.0;
  double term = 1.0;
  bool converged = false;
  for (int k = 1; k <= kHankelJYTerms && !converged; ++k) {
    const double k1 = k;
    const double odd_factor = k1 * 2.0 - 1.0;
    term = term * (m - odd_factor * odd_factor) / (k1 * 8.0 * x);
    const double signed_term = (k % 4 == 2 || k % 4 == 3) ? -term : term;
    if (k % 2 == 1) {
      q += signed_term;
    } else {
      p += signed_term;
    }
    converged = small(std::fabs(term), (std::fabs(p) + std::fabs(q)) * kEpsilon);
  }
  if (!converged) return {kNaN, kNaN};
  double phi = v * 0.5 + 0.25;
  phi -= std::nearbyint(phi * 0.5) * 2.0;  // mod 2, exact
  const double cp = cospi(phi);
  const double sp = sinpi(phi);
  const double cx = std::cos(x);
  const double sx = std::sin(x);
  const double cos_chi = cx * cp + sx * sp;
  const double sin_chi = sx * cp - cx * sp;
  const double amplitude = std::sqrt(2.0 / kPi / x);
  return {amplitude * (p * cos_chi - q * sin_chi), amplitude * (p * sin_chi + q * cos_chi)};
}

// J_nu(x) and Y_nu(x) for nu >= 0 and x >= max(20, nu): Hankel's expansion
// at the orders mu = nu - floor(nu) and mu + 1, then the three-term
// recurrence upward to nu. Below the turning point (order <= x) J and Y
// oscillate with the same amplitude, so the recurrence is stable for both;
// it takes floor(nu) steps where the continued fraction CF1 of Steed's
// method would take about x (and lose ~1e-9 over 10^4 steps). Y is carried
// only where `want_y`.
JY jy_upward(double nu, double x, bool want_y) {
  const double n = std::floor(nu);
  const double mu = nu - n;
  const JY first = jy_hankel(mu, x);
  if (n == 0) return first;
  // n - 1 steps take J_mu+1 to J_nu (at least one step of the recipe's Loop).
  const double steps = n - 1.0;
  if (steps > kMaxSteps) return {kNaN, kNaN};
  const JY second = jy_hankel(mu + 1.0, x);
  const double xi2 = 2.0 / x;
  double j0 = first.j, j1 = second.j;
  double y0 = first.y, y1 = second.y;
  for (double i1 = 1.0; i1 <= steps; i1 += 1.0) {
    const double factor = (mu + i1) * xi2;
    const double j2 = factor * j1 - j0;
    j0 = j1;
    j1 = j2;
    if (want_y) {
      const double y2 = factor * y1 - y0;
      y0 = y1;
      y1 = y2;
    }
  }
  return {j1, want_y ? y1 : kNaN};
}

// CF1 (modified Lentz): h = J'_nu / J_nu, and the sign of J_nu relative to
// the downward recurrence's start. NaN h where it does not converge.
struct CF1 {
  double h;
  double sign;
};

double away_from_0(double v) { return std::fabs(v) < kTiny ? kTiny : v; }

CF1 steed_cf1(double nu, double xi, double xi2) {
  double h = std::max(nu * xi, kTiny);
  double b = xi2 * nu;
  double d = 0.0;
  double c = h;
  double sign = 1.0;
  for (int i = 0; i < kMaxSteps; ++i) {
    b += xi2;
    d = 1.0 / away_from_0(b - d);
    c = away_from_0(b - 1.0 / c);
    const double del = c * d;
    if (d < 0) sign = -sign;
    h *= del;
    if (small(std::fabs(del - 1.0), kEpsilon)) return {h, sign};
  }
  return {kNaN, sign};
}

// The downward recurrence n steps from (J_nu, J'_nu) = (value, derivative):
// J_l-1 = (l / x) J_l + J'_l, J'_l-1 = ((l - 1) / x) J_l-1 - J_l; each time
// |J| passes 1 / kRescale both are scaled by kRescale (counted).
struct Downward {
  double value;       // J at order nu - n, times kRescale^rescales
  double derivative;  // J' there, scaled alike
  int rescales;
};

Downward downward_recurrence(double value, double derivative, double nu, double xi, double n) {
  double z = value, z_prime = derivative, fact = nu * xi;
  int count = 0;
  for (double l = 0; l < n; l += 1.0) {
    double next_z = fact * z + z_prime;
    fact -= xi;
    double next_z_prime = fact * next_z - z;
    if (std::fabs(next_z) > 1.0 / kRescale) {
      next_z *= kRescale;
      next_z_prime *= kRescale;
      ++count;
    }
    z = next_z;
    z_prime = next_z_prime;
  }
  return {z, z_prime, count};
}

// CF2 (Steed, complex): p + i q = (J'_mu + i Y'_mu) / (J_mu + i Y_mu), by
// the modified Lentz method in complex arithmetic.
struct CF2 {
  double p;
  double q;
  bool converged;
};

CF2 steed_cf2(double mu, double x, double xi) {
  double a = 0.25 - mu * mu;
  const double p0 = xi * -0.5;
  const double br = x * 2.0;
  double bi = 2.0;
  const double fact0 = a * xi / (p0 * p0 + 1.0);
  double cr = br + fact0;        // br + q fact, q = 1
  double ci = p0 * fact0 + 2.0;  // bi + p fact
  const double den0 = br * br + 4.0;
  double dr = br / den0;
  double di = -2.0 / den0;
  const double dlr0 = cr * dr - ci * di;
  const double dli0 = cr * di + ci * dr;
  double p = p0 * dlr0 - dli0;  // p dlr - q dli, q = 1
  double q = p0 * dli0 + dlr0;  // p dli + q dlr
  for (int i = 1; i <= kMaxSteps; ++i) {
    a += i * 2.0;
    bi += 2.0;
    double ndr = a * dr + br;
    double ndi = a * di + bi;
    if (std::fabs(ndr) + std::fabs(ndi) < kTiny) ndr = kTiny;
    const double fact = a / (cr * cr + ci * ci);
    cr = br + cr * fact;
    ci = bi - ci * fact;
    if (std::fabs(cr) + std::fabs(ci) < kTiny) cr = kTiny;
    const double den = ndr * ndr + ndi * ndi;
    dr = ndr / den;
    di = -(ndi / den);
    const double dlr = cr * dr - ci * di;
    const double dli = cr * di + ci * dr;
    const double next_p = p * dlr - q * dli;
    q = p * dli + q * dlr;
    p = next_p;
    if (small(std::fabs(dlr - 1.0) + std::fabs(dli), kEpsilon)) return {p, q, true};
  }
  return {p, q, false};
}

// Y_mu upward n steps to Y_nu (stable: Y grows with the order); it stops at
// the step after Y overflows, as the recipe's Loop does.
double y_upward(double y_mu, double y_mu1, double mu, double xi2, double n) {
  double ym = y_mu, y1 = y_mu1;
  for (double i1 = 1.0; i1 <= n; i1 += 1.0) {
    const bool overflowed = std::isinf(y1);
    const double next = (mu + i1) * xi2 * y1 - ym;
    ym = y1;
    y1 = next;
    if (overflowed) break;
  }
  return ym;
}

// J_nu(x) and Y_nu(x) for nu >= 0 and x > 2 (NR's bessjy, x >= 2 branch);
// Y only where `want_y`.
JY jy_steed(double nu, double x, bool want_y) {
  const double n = std::max(0.0, std::floor(nu - x + 1.5));
  const double mu = nu - n;
  const double xi = 1.0 / x;
  const double xi2 = xi * 2.0;
  const CF1 cf1 = steed_cf1(nu, xi, xi2);
  // The recipe's Loops give NaN past kMaxSteps steps (at least one is taken).
  if (std::isnan(cf1.h) || n > kMaxSteps) return {kNaN, kNaN};
  const double start = cf1.sign;
  const Downward down = downward_recurrence(start, start * cf1.h, nu, xi, n);
  const double rjl = down.value == 0 ? kEpsilon : down.value;
  const double f_mu = down.derivative / rjl;
  const CF2 cf2 = steed_cf2(mu, x, xi);
  if (!cf2.converged) return {kNaN, kNaN};
  // The Wronskian J_mu Y'_mu - Y_mu J'_mu = 2 / (pi x).
  const double w = 2.0 / kPi / x;
  const double gam = (cf2.p - f_mu) / cf2.q;
  double j_mu = std::sqrt(w / ((cf2.p - f_mu) * gam + cf2.q));
  if (rjl < 0) j_mu = -j_mu;
  // J_nu = start J_mu / rjl, with the rescaling undone.
  double j = start * (j_mu / rjl);
  if (down.rescales >= 1) j *= kRescale;
  if (down.rescales >= 2) j *= kRescale;
  if (down.rescales >= 3) j = 0.0;
  if (!want_y) return {j, kNaN};
  const double y_mu = j_mu * gam;
  const double y_mu_prime = y_mu * (cf2.p + cf2.q / gam);
  const double y_mu1 = mu * xi * y_mu - y_mu_prime;
  return {j, y_upward(y_mu, y_mu1, mu, xi2, n)};
}

// J_v(x) for finite v and x > 0, v not a negative integer (those come as
// |v|): the region's method.
double jv_positive_x(double w, double x) {
  const bool negative_order = w < 0;  // negative non-integer orders
  const double wa = std::fabs(w);
  if (x <= 2.0 || (!negative_order && x * x <= (wa + 1.0) * 4.0)) return j_series(w, x);
  if (x >= std::max(20.0, wa * wa * 0.5)) return jy_hankel(w, x).j;
  const JY jy = x >= std::max(20.0, wa) ? jy_upward(wa, x, negative_order) : jy_steed(wa, x, negative_order);
  if (!negative_order) return jy.j;
  // J_-nu = cos(nu pi) J_nu - sin(nu pi) Y_nu.
  return cospi(wa) * jy.j - sinpi(wa) * jy.y;
}

// J_v(0): 1 for v = 0, 0 for positive and integer orders (-0.0 for the
// negative odd ones, J_-n = (-1)^n J_n, as SciPy gives), +-inf for negative
// non-integer ones (the sign of 1 / Gamma(v + 1)).
double jv_at_zero(double v) {
  if (v == 0) return 1.0;
  if (v < 0 && is_integer(v) && odd(-v)) return -0.0;
  if (v > 0 || is_integer(v)) return 0.0;
  return gamma_sign(v + 1.0) * kInf;
}

}  // namespace

double jv(double v, double x) {
  if (x == 0 && !std::isnan(v)) return jv_at_zero(v);
  // An infinite order gives 0 for finite x >= 0 (SciPy); J_-inf has no limit.
  if (v == kInf && x >= 0 && !std::isinf(x)) return 0.0;
  const bool integer_v = is_integer(v);
  if (!std::isfinite(v) || !std::isfinite(x) || (x < 0 && !integer_v)) return kNaN;
  const double nu = std::fabs(v);
  const double value = jv_positive_x(integer_v ? nu : v, std::fabs(x));
  // (-1)^v for negative integer orders (J_-n = (-1)^n J_n), and again for
  // negative x (J_n(-x) = (-1)^n J_n(x)).
  const bool sign_order = integer_v && v < 0 && odd(nu);
  const bool sign_x = x < 0 && odd(nu);
  return sign_order != sign_x ? -value : value;
}

}  // namespace pytensor_onnx::kernels::special
