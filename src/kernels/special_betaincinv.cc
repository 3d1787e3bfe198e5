// Method: the portable recipe's (incomplete_beta_inverse.cc), with its start
// taken from Boost's inverse, which SciPy's betaincinv is:
//   - The equation is solved on the side whose target is below 1/2:
//     I_t(A, B) = y with t = x, (A, B) = (a, b) for y <= 1/2; else
//     I_t(b, a) = 1 - y with t = 1 - x. It is solved for the log-odds
//     u = log(t / (1 - t)) as log I_t(A, B) = log target, whose Newton and
//     Halley iterates approach the root monotonically after at most one
//     overshoot (the log-odds of a beta variable has a log-concave density),
//     with t and 1 - t both formed from u, so neither rounds the other away.
//   - I_t(A, B) is evaluated on its small side (1 - I_1-t(B, A) above the
//     mean), t and 1 - t going to betainc separately (betainc_xy).
//   - Start: Boost's root where it is strictly inside (0, 1) and its
//     residual small (near the root everywhere but the far tails, so the
//     steps end after two or three evaluations instead of the recipe's
//     ten); else the recipe's start, the best by residual of four
//     candidates (the two power laws, the log-odds of the mean, the normal
//     approximation of the log-odds), and Boost's.
//   - At most eight Halley steps, each bounded by 20 in u, falling back to
//     Newton where Halley's denominator is below 1/2; an element stops when
//     its step no longer moves u (2^-52 relative).
//   - Roots below e^-740 are the power law's; b = 1 and a = 1 are the closed
//     forms y^(1/a) and 1 - (1 - y)^(1/b); parameters above 1e10 (other than
//     those) give NaN, where the forward function is not accurate.
// Special values follow SciPy: NaN for NaN inputs, a <= 0, b <= 0 and y
// outside [0, 1]; then 0 for y = 0 and 1 for y = 1 (infinite parameters
// too); for 0 < y < 1 an infinite parameter gives NaN, except a = inf with
// b = 1 (1) and b = inf with a = 1 (0).
#include "special_betaincinv.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "method_constants.h"
#include "special.h"

namespace pytensor_onnx::kernels::special {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSqrt2 = 0x1.6a09e667f3bcdp+0;
using namespace recipes::betaincinv_method;
// A start whose residual |log I - log target| is below this is Halley's
// within the step cap.
constexpr double kTrustedStart = 1e-2;

bool is_finite(double v) { return !std::isnan(v) && !std::isinf(v); }

// 1 / (1 + e^-u), without overflow for either sign of u.
double sigmoid(double u) {
  const double e = std::exp(-std::fabs(u));
  const double one_plus = e + 1.0;
  return u >= 0.0 ? 1.0 / one_plus : e / one_plus;
}

// log(1 + e^v), without overflow.
double softplus(double v) { return std::max(v, 0.0) + std::log(std::exp(-std::fabs(v)) + 1.0); }

// The problem on its side: I_t(a, b) = exp(log_target), t = sigmoid(u).
struct Side {
  double a;
  double b;
  double log_target;
  double lbeta;  // log B(a, b)
};

// log I_t(a, b) at t = sigmoid(u), from the small side of the function.
double log_incomplete_beta(const Side& s, double u) {
  const double t = sigmoid(u);
  const double one_minus_t = sigmoid(-u);
  if (t <= s.a / (s.a + s.b)) return std::log(betainc_xy(s.a, s.b, t, one_minus_t));
  return std::log1p(-betainc_xy(s.b, s.a, one_minus_t, t));
}

double residual(const Side& s, double u) {
  const double r = std::fabs(log_incomplete_beta(s, u) - s.log_target);
  return is_finite(r) ? r : kInf;
}

// The step from u, where log I_t(a, b) is `log_i`.
double halley_step(const Side& s, double u, double log_i) {
  const double g = log_i - s.log_target;
  // log D = A log t + B log(1 - t) - log B(A, B) = -A softplus(-u) - B softplus(u) - lbeta.
  const double log_density = -(s.a * softplus(-u) + s.b * softplus(u)) - s.lbeta;
  const double slope = std::exp(log_density - log_i);
  const double t = sigmoid(u);
  const double curvature = slope * ((s.a - (s.a + s.b) * t) - slope);
  const double newton = g / slope;
  const double denominator = 1.0 - newton * curvature / (slope * 2.0);
  double step = denominator > 0.5 ? newton / denominator : newton;
  step = is_finite(step) ? std::max(std::min(step, kMaxStep), -kMaxStep) : 0.0;
  return u - step;
}

// log(e^l / (1 - e^l)) for l = log t < 0.
double logit_of_log(double l) {
  l = std::min(l, std::log(0.5));  // a power law past t = 1/2 is only a start
  return l - std::log1p(-std::exp(l));
}

// The recipe's start on the side's variable: the candidate (as log-odds of
// x, then of t) with the smallest residual, `u_boost` (on t already, NaN
// for none) the last of them.
double candidate_start(const Side& s, double a, double b, double y, bool lower, double log_x_power,
                       double log_1mx_power, double u_boost) {
  const double of_mean = std::log(a) - std::log(b);
  const double z = erfcinv(y * 2.0) * -kSqrt2;  // ndtri(y)
  const double spread = std::sqrt(trigamma(a) + trigamma(b));
  double normal = (psi(a) - psi(b)) + z * spread;
  if (!is_finite(normal)) normal = of_mean;
  const double candidates[] = {logit_of_log(log_x_power), -logit_of_log(log_1mx_power), of_mean, normal};
  double best_u = 0.0, best = kInf;
  for (size_t i = 0; i < 5; ++i) {
    if (i == 4 && std::isnan(u_boost)) break;
    const double u = i == 4 ? u_boost : lower ? candidates[i] : -candidates[i];
    const double r = residual(s, u);
    if (i == 0 || r < best) {
      best_u = u;
      best = std::min(r, best);
    }
  }
  return best_u;
}

// The root for finite a, b > 0 and 0 < y < 1.
double ordinary_root(double a, double b, double y) {
  const bool lower = y <= 0.5;
  const double log_y = std::log(y);
  const double log_1my = std::log1p(-y);
  const double lbeta = (gammaln(a) + gammaln(b)) - gammaln(a + b);
  const Side side{lower ? a : b, lower ? b : a, lower ? log_y : log_1my, lbeta};
  const double log_x_power = ((log_y + std::log(a)) + lbeta) / a;
  const double log_1mx_power = ((log_1my + std::log(b)) + lbeta) / b;

  double one_minus_x = kNaN;
  const double estimate = betaincinv_estimate(a, b, y, &one_minus_x);
  double u = kNaN, log_i = kNaN;
  if (estimate > 0.0 && one_minus_x > 0.0 && is_finite(estimate) && is_finite(one_minus_x)) {
    const double logit_x = std::log(estimate) - std::log(one_minus_x);
    u = lower ? logit_x : -logit_x;
    log_i = log_incomplete_beta(side, u);
  }
  // Boost's estimate is far off in places (I_x(2, 1e4) = 1e-300: 1e-52
  // for 1.4e-154), where the steps, bounded by 20 in u, would not reach the
  // root: then the recipe's start, Boost's among its candidates.
  if (!(std::fabs(log_i - side.log_target) <= kTrustedStart)) {
    u = candidate_start(side, a, b, y, lower, log_x_power, log_1mx_power, u);
    log_i = log_incomplete_beta(side, u);
  }
  for (int i = 0; i < kHalleySteps; ++i) {
    const double next = halley_step(side, u, log_i);
    const bool converged = !(std::fabs(next - u) > std::fabs(next) * (2 * kEpsilon));
    u = next;
    if (converged) break;
    log_i = log_incomplete_beta(side, u);
  }
  // x = t below, 1 - t = sigmoid(-u) above.
  double x = lower ? sigmoid(u) : sigmoid(-u);
  // Roots the steps cannot represent: the power laws (their corrections
  // are of the order of the root itself).
  if (log_x_power < kLogUnderflow) x = std::exp(log_x_power);
  if (log_1mx_power < kLogUnderflow) x = 1.0;
  return x;
}

}  // namespace

double betaincinv(double a, double b, double y) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(y) || a <= 0.0 || b <= 0.0 || y < 0.0 || y > 1.0) return kNaN;
  if (y == 0.0) return 0.0;
  if (y == 1.0) return 1.0;
  if (std::isinf(a) || std::isinf(b)) {
    // SciPy's closed forms of I_x(a, 1) = x^a and I_x(1, b) = 1 - (1 - x)^b.
    if (std::isinf(a) && b == 1.0) return 1.0;
    if (std::isinf(b) && a == 1.0) return 0.0;
    return kNaN;
  }
  // The closed forms, exact for any size of the other parameter.
  if (a == 1.0) return -std::expm1(std::log1p(-y) / b);
  if (b == 1.0) return std::exp(std::log(y) / a);
  // Beyond 1e10 the forward function (and so the root) is not accurate.
  if (std::max(a, b) > kLargestParameter) return kNaN;
  return ordinary_root(a, b, y);
}

}  // namespace pytensor_onnx::kernels::special
