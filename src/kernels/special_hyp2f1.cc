// The Gauss hypergeometric function 2F1(a, b; c; z) for real arguments
// (SciPy's hyp2f1): the portable recipe's method (src/core/recipes/hyp2f1.cc)
// in scalar code.
//
// Method (DLMF 15.2, 15.8; Abramowitz & Stegun 15.3):
//   - Every z < 1 is mapped to x in [0, 1) by one of two transformations:
//     for z < 0 Pfaff's (1 - z)^-a F(a, c - b; c; w) and
//     (1 - z)^-b F(b, c - a; c; w) with w = z / (z - 1), 1 - w = 1 / (1 - z);
//     for 0 <= z < 1 the function itself and Euler's
//     (1 - z)^(c - a - b) F(c - a, c - b; c; z).
//   - F(a, b; c; x) on [0, 1) is the best of three evaluations, each with an
//     estimate of its relative error: the Gauss series (x <= 0.99, or any x
//     when the series terminates); for x >= 1/2 the connection formula in
//     1 - x (DLMF 15.8.4 with z -> 1 - z, AS 15.3.6) with its gamma
//     prefactors from gammaln; for x >= 1/2 and c - a - b an integer m the
//     limit form of that formula (AS 15.3.10-12: a finite sum and a series
//     with digamma terms, the digammas advanced by psi(x + 1) = psi(x) + 1/x).
//   - The evaluation with the smallest estimated error wins (the earlier one
//     on ties, in the order series, connection, limit form; then the first
//     transformation); where even that estimate exceeds the tolerance
//     (cancellation in the series for large parameters, c - a - b close to
//     but not an integer, overflow) the result is NaN, never a number of
//     unknown accuracy.
// A series stops when the rest of it is bounded below 2^-53 of its sum (a
// geometric bound from the term ratio, so a series whose terms first shrink
// and then grow does not stop early) or when it terminates (a term is
// exactly 0); after kMaxSteps steps it has not converged (error inf).
// The error estimate is Cephes' (2^-53 times the largest term over the sum,
// plus 2^-53 per term) plus the error of the prefactors (2^-53 times the
// size of the logarithms that are exponentiated).
//
// The recipe evaluates every candidate on every element and then picks;
// here each candidate is evaluated in the recipe's arithmetic (the same
// operations in the same order, so the same values and estimates; its
// gammaln and digamma are the kernels' gammaln and psi), and a candidate
// is abandoned only where a lower bound of its estimate shows that it
// cannot change the pick (see Selection): the picks, and so the results
// and the NaN, are the recipe's.
//
// Special values follow SciPy (scipy.special.hyp2f1, Cephes' hyp2f1), as the
// recipe's (its header comment lists them; hyp2f1_with below applies them
// in the recipe's order of precedence).
#include "special_hyp2f1.h"

#include <algorithm>
#include <cmath>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "method_constants.h"
#include "special.h"

namespace pytensor_onnx::kernels::special {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kEpsilon = 0x1p-53;
constexpr double kLargest = std::numeric_limits<double>::max();
constexpr double kEulerGamma = 0.57721566490153286061;
constexpr double kPi = 3.14159265358979323846;
// The recipe's tolerance for float64 results, the Gauss series' limit
// (x = 0.99) and the steps of each series (elements that need more are NaN).
using recipes::hyp2f1_method::kMaxSteps;
using recipes::hyp2f1_method::kSeriesLimit;
using recipes::hyp2f1_method::kTolerance;

// Integer tests without C's floor (x86-64's baseline has no rounding
// instruction) and without branches on the sign (the selection tests a few
// dozen arguments per evaluation): truncation by conversion where
// |x| < 2^52, beyond which every double is an integer.

// Whether x is an integer (inf too, as Floor(x) == x in the recipe).
bool is_integer(double x) {
  const bool small = std::fabs(x) < 0x1p52;
  const double y = small ? x : 0.0;
  return small ? static_cast<double>(static_cast<long long>(y)) == y : x == x;
}

// Whether x is an integer <= 0 (a pole of Gamma; a terminating series).
bool nonpositive_integer(double x) { return x <= 0.0 && is_integer(x); }

// The sign of Gamma(x) away from its poles: negative for x in (-1, 0),
// (-3, -2), ... (floor(x) odd and negative). The recipe's rule exactly
// (gammaln gives log|Gamma| only): at a pole it is the sign its parity
// gives, which only ever multiplies exp(-inf) = 0 there. Below -2^53 (and
// at -inf) floor(x) is even.
double gamma_sign(double x) {
  const double y = x < 0.0 && x >= -0x1p53 ? x : 0.0;
  const long long truncated = static_cast<long long>(y);
  const long long floor = truncated - (static_cast<double>(truncated) != y ? 1 : 0);
  return (floor & 1) != 0 ? -1.0 : 1.0;
}

// pi cot(pi x) for x not an integer, from the exactly reduced f = x -
// round(x) in [-1/2, 1/2] (cot has period 1), by tan(pi (1/2 - |f|)) for
// |f| > 1/4 (exact 1/2 - |f|) so that it keeps its relative accuracy next
// to its zeros at the half-integers.
double pi_cot_pi(double x) {
  const double f = x - std::round(x);
  const double af = std::fabs(f);
  if (af <= 0.25) return kPi * (std::cos(kPi * f) / std::sin(kPi * f));
  return std::copysign(kPi * std::tan(kPi * (0.5 - af)), f);
}

// digamma as the recipe's: psi for x > 0 and at the poles; for other x < 0
// the reflection psi(1 - x) - pi cot(pi x) with an accurate cot (the kernel
// psi loses up to 1e-13 relative next to the poles).
double digamma(double x) {
  if (x > 0.0 || is_integer(x)) return psi(x);
  return psi(1.0 - x) - pi_cot_pi(x);
}

// A value with its estimated relative error (inf where it is unusable).
struct Estimate {
  double value;
  double error;
};

constexpr Estimate kUnusable{kNaN, kInf};

// NaN errors count as unusable.
double clean_error(double e) { return std::isnan(e) ? kInf : e; }

// |v| e, 0 where v is 0 (so that an unusable part multiplied by an exact 0
// costs nothing).
double weighted(double v, double e) { return v == 0.0 ? 0.0 : std::fabs(v) * e; }

// |lgamma(x)| where finite (an infinite one is a pole giving an exact 0 or
// is excluded), for error estimates.
double log_size(double lg) { return std::isinf(lg) ? 0.0 : std::fabs(lg); }

// The better of two estimates: q only where strictly better (its error the
// smaller of the two, as the recipe's Min).
Estimate better(const Estimate& p, const Estimate& q) { return q.error < p.error ? q : p; }

// What a candidate's error estimate must beat to change the pick (see
// Selection below): the other candidate of its transformation (`rival`;
// the series wins ties), the other transformation's total error (a bound
// of it; the first transformation wins ties), and the tolerance.
struct Stakes {
  double rival;
  bool rival_wins_ties;
  double power_error;  // added to the candidate's error for the total
  double other_total;
  bool first;          // the candidate's transformation is the first one
  double tolerance;

  // Whether a candidate whose error is at least `least` can no longer
  // change the pick (nor whether it is NaN).
  bool loses(double least) const {
    if (rival_wins_ties ? least >= rival : least > rival) return true;
    const double total = least + power_error;
    return total > tolerance || (first ? total > other_total : total >= other_total);
  }
};

// log|Gamma(x)| by gammaln, each argument once per evaluation: the two
// transformations' formulas share most of theirs.
class LogGammaMemo {
 public:
  double operator()(double x) {
    int hit = -1;
    for (int i = 0; i < count_; ++i) hit = args_[i] == x ? i : hit;
    if (hit >= 0) return values_[hit];
    const double value = gammaln(x);
    if (count_ < kSize) args_[count_] = x, values_[count_++] = value;
    return value;
  }

 private:
  static constexpr int kSize = 16;
  double args_[kSize];
  double values_[kSize];
  int count_ = 0;
};

// --- Gauss series -------------------------------------------------------

// A Gauss series sum_k (a)_k (b)_k / ((c)_k k!) x^k in progress: the
// recipe's loop state (sum, term, largest term, steps taken) and the
// constants of its step.
struct Series {
  double a, b, c, x;
  double abs_a, abs_b, abs_x;
  // |x| / (1 - |x|): every bound q of the tail test is >= |x|, so
  // |term| r0 <= |term| q / (1 - q) (rounding is monotonic), and the exact
  // test is needed only where |term| r0 passes it.
  double r0;
  double sum, term, largest;
  int steps;
};

Series start_series(double a, double b, double c, double x) {
  const double abs_x = std::fabs(x);
  const double r0 = abs_x < 1.0 ? abs_x / (1.0 - abs_x) : kInf;
  return {a, b, c, x, std::fabs(a), std::fabs(b), abs_x, r0, 1.0, 1.0, 1.0, 0};
}

// The recipe's stopping rule after step k1 gave `term` and `sum`: the term
// is exactly 0 (the series terminated), the sum is not finite, or the rest
// is bounded below 2^-53 of the sum (a geometric bound from the term ratio,
// so a series whose terms first shrink and then grow does not stop early).
// A bound q of the magnitude of every term ratio after step k1, when
// c + k1 > 0 ((|a| + j) / (j + 1) and (|b| + j) / (c + j) move
// monotonically to 1); inf otherwise.
double ratio_bound(const Series& s, double k1) {
  const double q = s.abs_x * std::max(1.0, (s.abs_a + k1) / (k1 + 1.0)) * std::max(1.0, (s.abs_b + k1) / (s.c + k1));
  return s.c + k1 > 0.0 ? q : kInf;
}

bool series_done(const Series& s, double term, double sum, double k1) {
  const double size = std::fabs(term), bound = std::fabs(sum) * kEpsilon;
  if (term == 0.0 || !(std::fabs(sum) <= kLargest)) return true;
  if (size * s.r0 > bound) return false;
  const double q = ratio_bound(s, k1);
  return q < 1.0 && size * (q / (1.0 - q)) <= bound;
}

// A bound of the rest of the series after its last term (inf where the
// geometric bound does not hold yet).
double series_tail(const Series& s) {
  const double q = ratio_bound(s, s.steps);
  return q < 1.0 ? std::fabs(s.term) * (q / (1.0 - q)) : kInf;
}

// One step of the recipe's loop; whether the series is done after it.
bool series_step(Series& s) {
  const double k = s.steps, k1 = k + 1.0;
  const double ratio = ((s.a + k) * (s.b + k) * s.x) / ((s.c + k) * k1);
  s.term = s.term * ratio;
  s.sum = s.sum + s.term;
  const double size = std::fabs(s.term);
  s.largest = size > s.largest ? size : s.largest;
  s.steps += 1;
  // (series_done's first test, inline: most steps stop here.)
  return !(size * s.r0 > std::fabs(s.sum) * kEpsilon) && series_done(s, s.term, s.sum, k1);
}

// Steps until the series is done (true) or has taken `limit` steps.
bool run_series(Series& s, int limit) {
  while (s.steps < limit) {
    if (series_step(s)) return true;
  }
  return false;
}

// Two lanes of doubles (SSE2 on x86-64): two series stepped together cost
// about as much as one.
using Pair = double __attribute__((vector_size(16)));
using PairMask = long long __attribute__((vector_size(16)));

Pair pair_abs(Pair v) { return (Pair)((PairMask)v & PairMask{0x7fffffffffffffffLL, 0x7fffffffffffffffLL}); }

// Whether both lanes of a comparison hold.
bool both_lanes(PairMask m) {
#if defined(__SSE2__)
  return _mm_movemask_pd((__m128d)m) == 3;
#else
  return m[0] && m[1];
#endif
}

// Steps p and q (at the same step) together, each lane in series_step's
// arithmetic, until one of them is done or they reach `limit` steps; sets
// the done flags.
void run_series_pair(Series& p, Series& q, int limit, bool* p_done, bool* q_done) {
  const Pair a{p.a, q.a}, b{p.b, q.b}, c{p.c, q.c}, x{p.x, q.x}, r0{p.r0, q.r0};
  Pair sum{p.sum, q.sum}, term{p.term, q.term}, largest{p.largest, q.largest};
  int steps = p.steps;  // (= q.steps)
  *p_done = *q_done = false;
  // k carried along (exact integers) rather than converted every step.
  for (Pair k{static_cast<double>(steps), static_cast<double>(steps)}; steps < limit; k = k + 1.0) {
    const Pair k1 = k + 1.0;
    const Pair ratio = ((a + k) * (b + k) * x) / ((c + k) * k1);
    term = term * ratio;
    sum = sum + term;
    const Pair size = pair_abs(term);
    largest = size > largest ? size : largest;
    ++steps;
    // Neither lane can stop while |term| r0 exceeds 2^-53 |sum| (a zero
    // term or a sum that is not finite fails this test too).
    if (!both_lanes(size * r0 > pair_abs(sum) * kEpsilon)) {
      *p_done = series_done(p, term[0], sum[0], k1[0]);
      *q_done = series_done(q, term[1], sum[1], k1[1]);
      if (*p_done || *q_done) break;
    }
  }
  p.sum = sum[0], p.term = term[0], p.largest = largest[0], p.steps = steps;
  q.sum = sum[1], q.term = term[1], q.largest = largest[1], q.steps = steps;
}

// The estimate of a finished series (Cephes': 2^-53 times the largest term
// over the sum, plus 2^-53 per term); unusable if it did not converge.
Estimate series_estimate(const Series& s, bool done) {
  if (!done) return {s.sum, kInf};
  // A sum that is exactly 0 has converged only by terminating: a
  // polynomial with an exact zero (F(1, -1; 1; 1)), returned as 0.
  const double error = s.sum == 0.0 ? 0.0 : s.largest * (2.0 * kEpsilon) / std::fabs(s.sum) + s.steps * kEpsilon;
  return {s.sum, clean_error(error)};
}

// The series cut after the term k = last (the finite sum of the limit
// form, SciPy's truncated series for b = c).
Estimate series_to(double a, double b, double c, double x, double last) {
  Series s = start_series(a, b, c, x);
  while (s.steps < kMaxSteps) {
    const double k = s.steps, k1 = k + 1.0;
    const double ratio = ((a + k) * (b + k) * x) / ((c + k) * k1);
    s.term = k1 > last ? 0.0 : s.term * ratio;
    s.sum = s.sum + s.term;
    const double size = std::fabs(s.term);
    s.largest = size > s.largest ? size : s.largest;
    s.steps += 1;
    if (k1 >= last || series_done(s, s.term, s.sum, k1)) return series_estimate(s, true);
  }
  return series_estimate(s, false);
}

// The connection formula's parts besides its two series s1, s2:
//   t1 = sign1 factor1 s1, t2 = sign2 factor2 s2,
//   e1 = error of s1 + fixed1, e2 = error of s2 + fixed2,
// fixed = (size + 4) 2^-53 2, the error of the prefactors exponentiated
// from logarithms of total size `size`.
struct ConnectionPrefactors {
  double sign1, factor1, fixed1;
  double sign2, factor2, fixed2;
};

ConnectionPrefactors connection_prefactors(double a, double b, double c, double d, double s, LogGammaMemo& lgamma) {
  const double lc = lgamma(c), ld = lgamma(d), lnd = lgamma(-d), lca = lgamma(c - a), lcb = lgamma(c - b),
               la = lgamma(a), lb = lgamma(b);
  const double sign1 = (gamma_sign(c) * gamma_sign(d)) * (gamma_sign(c - a) * gamma_sign(c - b));
  const double sign2 = (gamma_sign(c) * gamma_sign(-d)) * (gamma_sign(a) * gamma_sign(b));
  const double log_s = std::log(s);
  const double log1 = (lc + ld) - (lca + lcb);
  const double log2 = ((lc + lnd) - (la + lb)) + d * log_s;
  const double size1 = (log_size(lc) + log_size(ld)) + (log_size(lca) + log_size(lcb));
  const double size2 = ((log_size(lc) + log_size(lnd)) + (log_size(la) + log_size(lb))) + std::fabs(d * log_s);
  return {sign1, std::exp(log1), (size1 + 4.0) * (2.0 * kEpsilon),
          sign2, std::exp(log2), (size2 + 4.0) * (2.0 * kEpsilon)};
}

// The recipe's value and error of the connection formula.
Estimate connection_estimate(const ConnectionPrefactors& f, const Estimate& s1, const Estimate& s2) {
  const double t1 = (f.sign1 * f.factor1) * s1.value;
  const double t2 = (f.sign2 * f.factor2) * s2.value;
  const double e1 = s1.error + f.fixed1;
  const double e2 = s2.error + f.fixed2;
  const double y = t1 + t2;
  const double numerator = weighted(t1, e1) + weighted(t2, e2);
  // Both parts exactly 0 (1 / Gamma at poles, s^d at s = 0): an exact 0.
  const double error = numerator == 0.0 ? 0.0 : numerator / std::fabs(y);
  return {y, clean_error(error)};
}

// What a series in progress says of its final value and error estimate:
// the value within `radius` of `center`, the error at least `least`.
struct SeriesOutlook {
  double center, radius, least;
};

SeriesOutlook series_outlook(const Series& s, bool done) {
  if (done) return {s.sum, 0.0, series_estimate(s, true).error};
  // The tail bound, plus the rounding of up to kMaxSteps further steps
  // (under 1e-11 of the sum of the terms' magnitudes); at least one more
  // step, 2^-53 each.
  const double tail = series_tail(s);
  const double radius = tail + 1e-11 * ((s.steps + 1.0) * s.largest + tail);
  return {s.sum, radius, (s.steps + 1.0) * kEpsilon};
}

// A lower bound of the connection formula's error estimate while its
// series are in progress: numerator / |y| with the numerator bounded below
// and |y| = |t1 + t2| above (with the rounding of t1 + t2, which matters
// where they cancel, as they do for c - a - b near an integer). 0 where
// nothing is known yet.
double connection_error_floor(const ConnectionPrefactors& f, const SeriesOutlook& s1, const SeriesOutlook& s2) {
  // |t1| and |t2| at least; a part that might underflow to an exact 0
  // (weighted 0) counts 0.
  auto least_part = [](double factor, const SeriesOutlook& s) {
    const double low = factor * std::max(0.0, std::fabs(s.center) - s.radius);
    return low >= 1e-290 ? low : 0.0;
  };
  const double low1 = least_part(f.factor1, s1);
  const double low2 = least_part(f.factor2, s2);
  const double numerator = low1 * (s1.least + f.fixed1) + low2 * (s2.least + f.fixed2);
  const double high = f.factor1 * (std::fabs(s1.center) + s1.radius) + f.factor2 * (std::fabs(s2.center) + s2.radius);
  const double y = std::fabs(f.sign1 * f.factor1 * s1.center + f.sign2 * f.factor2 * s2.center) +
                   (f.factor1 * s1.radius + f.factor2 * s2.radius) + 8.0 * kEpsilon * high;
  const double floor = 0.999 * numerator / y;
  return floor >= 0.0 ? floor : 0.0;  // NaN: no bound
}

// Steps of the connection formula's series between looks at its error
// floor (doubling).
constexpr int kFirstLook = 8;

// F(a, b; c; x) for 1/2 <= x < 1 by the connection formula in s = 1 - x
// (c - a - b not an integer); unusable as soon as its error floor shows
// that it cannot change the pick.
Estimate connection(double a, double b, double c, double s, const Stakes& stakes, LogGammaMemo& lgamma) {
  const double d = (c - a) - b;
  const ConnectionPrefactors f = connection_prefactors(a, b, c, d, s, lgamma);
  Series s1 = start_series(a, b, 1.0 - d, s), s2 = start_series(c - a, c - b, d + 1.0, s);
  bool done1 = false, done2 = false;
  for (int look = kFirstLook;; look = std::min(2 * look, kMaxSteps)) {
    if (!done1 && !done2) run_series_pair(s1, s2, look, &done1, &done2);
    if (!done1) done1 = run_series(s1, look);
    if (!done2) done2 = run_series(s2, look);
    if ((done1 && done2) || look == kMaxSteps) break;
    if (stakes.loses(connection_error_floor(f, series_outlook(s1, done1), series_outlook(s2, done2)))) {
      return kUnusable;
    }
  }
  return connection_estimate(f, series_estimate(s1, done1), series_estimate(s2, done2));
}

// The digamma series of the limit form, with its size (the sum of the
// magnitudes of its terms and their parts) and step count.
struct DigammaSeries {
  double sum;
  double size;
  double steps;
  bool converged;
};

// sum_{t>=0} (ad1)_t (bd1)_t / (t! (m + 1)_t) s^t
//   [psi(1 + t) + psi(1 + m + t) - psi(ad1 + t) - psi(bd1 + t) - log s]
DigammaSeries digamma_series(double ad1, double bd1, double m, double s, double log_s) {
  double p1 = -kEulerGamma, p2 = digamma(m + 1.0), p3 = digamma(ad1), p4 = digamma(bd1);
  double sum = ((p1 + p2) - (p3 + p4)) - log_s;
  double size = ((std::fabs(p1) + std::fabs(p2)) + (std::fabs(p3) + std::fabs(p4))) + std::fabs(log_s);
  double p = 1.0;
  const double abs_ad1 = std::fabs(ad1), abs_bd1 = std::fabs(bd1), abs_log_s = std::fabs(log_s);
  for (int step = 1; step <= kMaxSteps; ++step) {
    const double t = step - 1, t1 = step;
    const double next_p = ((p * s) * ((ad1 + t) * (bd1 + t))) / (t1 * (t1 + m));
    p1 = p1 + 1.0 / t1;
    p2 = p2 + 1.0 / (t1 + m);
    p3 = p3 + 1.0 / (ad1 + t);
    p4 = p4 + 1.0 / (bd1 + t);
    const double bracket = ((p1 + p2) - (p3 + p4)) - log_s;
    const double next_sum = sum + next_p * bracket;
    const double part = ((std::fabs(p1) + std::fabs(p2)) + (std::fabs(p3) + std::fabs(p4))) + abs_log_s;
    size = size + std::fabs(next_p) * part;
    p = next_p;
    sum = next_sum;
    // Later ratios of p are at most q; the bracket grows by at most
    // 4 / (t + 1) per step.
    const double q =
        (s * std::max(1.0, (abs_ad1 + t1) / (t1 + 1.0))) * std::max(1.0, (abs_bd1 + t1) / ((t1 + m) + 1.0));
    const double one_minus_q = 1.0 - q;
    const double tail =
        (std::fabs(next_p) * (q / one_minus_q)) * (std::fabs(bracket) + 4.0 / (one_minus_q * t1));
    const bool done = (q < 1.0 && tail <= std::fabs(next_sum) * kEpsilon) || next_p == 0.0 ||
                      std::isnan(next_sum) || std::isinf(next_sum);
    if (done) return {sum, size, t1, true};
  }
  return {sum, size, static_cast<double>(kMaxSteps), false};
}

// F(a, b; c; x) for 1/2 <= x < 1 when c - a - b = d is an integer (AS
// 15.3.10-12 in Cephes' unified form, m = |d|, s = 1 - x):
//   F = Gamma(c) Gamma(m) / (Gamma(a + d1) Gamma(b + d1)) s^min(d, 0)
//         sum_{n<m} (a + d2)_n (b + d2)_n / (n! (1 - m)_n) s^n
//     + (-1)^m Gamma(c) / (Gamma(a + d2) Gamma(b + d2) m!) s^max(d, 0)
//         sum_{t>=0} (a + d1)_t (b + d1)_t / (t! (m + 1)_t) s^t
//         [psi(1 + t) + psi(1 + m + t) - psi(a + d1 + t) - psi(b + d1 + t) - log s]
// with d1 = max(d, 0), d2 = min(d, 0).
Estimate integer_difference(double a, double b, double c, double s, LogGammaMemo& lgamma) {
  const double d = (c - a) - b;
  const double m = std::fabs(d);
  const bool positive = d >= 0.0;
  const double d1 = positive ? d : 0.0, d2 = positive ? 0.0 : d;
  const double ad1 = a + d1, bd1 = b + d1, ad2 = a + d2, bd2 = b + d2;
  const double log_s = std::log(s);
  // d2 log s and d1 log s, 0 where the power is 1 (also at s = 0).
  const double d2_log_s = d2 == 0.0 ? 0.0 : d2 * log_s;
  const double d1_log_s = d1 == 0.0 ? 0.0 : d1 * log_s;
  const double lc = lgamma(c);
  const double sign_c = gamma_sign(c);

  // The finite sum (empty for m = 0): a Gauss series with c = 1 - m cut
  // after the term n = m - 1.
  double y1 = 0.0, e1 = 0.0;
  if (m > 0.0) {
    const Estimate finite = series_to(ad2, bd2, 1.0 - m, s, m - 1.0);
    const double lm = lgamma(std::max(m, 1.0)), lad1 = lgamma(ad1), lbd1 = lgamma(bd1);
    const double log_finite = ((lm + lc) - (lad1 + lbd1)) + d2_log_s;
    y1 = ((sign_c * (gamma_sign(ad1) * gamma_sign(bd1))) * std::exp(log_finite)) * finite.value;
    const double size1 = ((log_size(lm) + log_size(lc)) + (log_size(lad1) + log_size(lbd1))) + std::fabs(d2_log_s);
    e1 = finite.error + (size1 + 4.0) * (2.0 * kEpsilon);
  }

  // The digamma series; at s = 0 (x = 1, Gauss's sum, d > 0) this part
  // vanishes (s^d times a series whose bracket holds log s), and the
  // recipe's estimate of it is then unusable but weighted by 0.
  double y2 = 0.0, e2 = kInf;
  if (s != 0.0) {
    const DigammaSeries series = digamma_series(ad1, bd1, m, s, log_s);
    const double series_error = series.converged
                                    ? series.size * (4.0 * kEpsilon) / std::fabs(series.sum) + series.steps * kEpsilon
                                    : kInf;
    const double lad2 = lgamma(ad2), lbd2 = lgamma(bd2), lm1 = lgamma(m + 1.0);
    // (-1)^m
    const double parity = is_integer(m * 0.5) ? 1.0 : -1.0;
    const double log_inf = (lc - ((lad2 + lbd2) + lm1)) + d1_log_s;
    const double sign_inf = (parity * sign_c) * (gamma_sign(ad2) * gamma_sign(bd2));
    y2 = (sign_inf * std::exp(log_inf)) * series.sum;
    const double size2 = ((log_size(lc) + log_size(lm1)) + (log_size(lad2) + log_size(lbd2))) + std::fabs(d1_log_s);
    e2 = clean_error(series_error) + (size2 + 4.0) * (2.0 * kEpsilon);
  }
  const double y = y1 + y2;
  const double numerator = weighted(y1, e1) + weighted(y2, e2);
  // Both parts exactly 0 (1 / Gamma at poles, s^d at s = 0): an exact 0.
  const double error = numerator == 0.0 ? 0.0 : numerator / std::fabs(y);
  return {y, clean_error(error)};
}

// --- Selection ------------------------------------------------------------
//
// The recipe evaluates, for each transformation ("unit": F(a, b; c; x) with
// its power (1 - z)^exponent), the series in x and the near-one evaluation
// (the connection formula or its limit form), and keeps
//   unit = better(series, near one)  (the near-one one only if strictly better)
//   total = unit error + power error (inf for Euler's at a pole of c)
//   result = better(first, second)   (the second only if strictly better)
// and NaN where that total exceeds the tolerance. Here the series come
// first (both units' together), then the near-one evaluations, and each
// candidate is abandoned as soon as a lower bound of its error shows that
// it can no longer change the pick (Stakes::loses; the bounds of the other
// candidates only shrink as they are evaluated): a series' error is at
// least 2^-53 per step (Cephes' estimate adds only non-negative terms; an
// exact 0 sum, error 0, needs a terminating series: a polynomial, never
// cut), the connection formula's from connection_error_floor (for most
// arguments its two parts cancel, and a few steps of its series show that
// its estimate is far above the series'). Every pick, and so every result,
// is the recipe's.

// The candidates of one transformation F(a, b; c; x) (1 - z)^exponent.
struct Unit {
  double a, b, c, x, s;
  double exponent;
  double power_error;  // of (1 - z)^exponent, added where exponent != 0
  bool usable;         // false: Euler's transformation at a pole of c
  bool polynomial;     // a or b a non-positive integer
  bool series_use;     // the Gauss series in x is a candidate
  bool near_one_use;   // the connection formula or its limit form is
  Estimate series;
  Estimate near_one;
  bool series_pending;

  // The error added to a candidate's for the transformation's total.
  double power_margin() const { return exponent == 0.0 ? 0.0 : power_error; }
  // The transformation's error for a unit error e.
  double total(double e) const { return usable ? clean_error(e + power_margin()) : kInf; }
  // A bound of the unit's error: the smaller of its candidates' known
  // errors (better() keeps the smaller), inf while none is known.
  double error_bound() const { return std::min(series_pending ? kInf : series.error, near_one.error); }
  Estimate best() const { return better(series, near_one); }
};

// The candidates the recipe evaluates for F(a, b; c; x), s = 1 - x given
// separately (x >= 0; x < 1 unless the series terminates).
Unit plan_unit(double a, double b, double c, double x, double s, double exponent, double log_base, bool usable) {
  Unit u{a, b, c, x, s, exponent, 0.0, usable, false, false, false, kUnusable, kUnusable, false};
  u.power_error = ((std::fabs(exponent) * (std::fabs(log_base) + 1.0)) + 2.0) * (2.0 * kEpsilon);
  if (!usable) return u;
  u.polynomial = nonpositive_integer(a) || nonpositive_integer(b);
  // x <= 1 is tested on s: x = z / (z - 1) rounds to 1 for z < -2^53. At
  // x = 1 (s = 0) the connection formulas give Gauss's sum (for d > 0).
  const bool inside = x >= 0.0 && s >= 0.0;
  u.series_use = u.polynomial || (inside && x <= kSeriesLimit);
  u.series_pending = u.series_use;
  // The limit form for c - a - b an integer m, unless m is beyond the cap.
  const double d = (c - a) - b;
  u.near_one_use = s <= 0.5 && inside && !u.polynomial &&
                   (!is_integer(d) || std::fabs(d) <= static_cast<double>(kMaxSteps - 1));
  return u;
}

// What a candidate of `unit` must beat; `series`: the candidate is the
// series (which wins ties against the near-one evaluation).
Stakes stakes_of(const Unit& unit, const Unit& other, bool first, bool series, double tolerance) {
  const double rival = series ? unit.near_one.error : (unit.series_pending ? kInf : unit.series.error);
  return {rival, !series, unit.power_margin(), other.total(other.error_bound()), first, tolerance};
}

// The number of steps the series of `unit` may take: after that many
// without stopping, its error is at least (steps + 1) 2^-53, which loses.
int series_step_limit(const Stakes& stakes, const Unit& unit) {
  // A polynomial may sum to an exact 0 (error 0): never cut.
  if (unit.polynomial) return kMaxSteps;
  // The first losing step from the thresholds, then exactly by the
  // (monotone) test.
  const double threshold =
      std::min({stakes.rival, stakes.tolerance - stakes.power_error, stakes.other_total - stakes.power_error});
  double k = std::floor(std::max(threshold, 0.0) / kEpsilon) + 1.0;
  k = std::min(k, static_cast<double>(kMaxSteps) + 1.0);
  while (k > 1.0 && stakes.loses((k - 1.0) * kEpsilon)) k -= 1.0;
  while (k <= kMaxSteps && !stakes.loses(k * kEpsilon)) k += 1.0;
  return static_cast<int>(k) - 1;
}

// The series of both units, stepped together while both are pending; each
// stops at its step limit, recomputed whenever the other finishes.
void run_unit_series(Unit& first, Unit& second, double tolerance) {
  Unit* units[2] = {&first, &second};
  Series series[2] = {start_series(first.a, first.b, first.c, first.x),
                      start_series(second.a, second.b, second.c, second.x)};
  while (first.series_pending || second.series_pending) {
    int limits[2];
    bool done[2] = {false, false};
    for (int i = 0; i < 2; ++i) {
      Unit& unit = *units[i];
      limits[i] = unit.series_pending
                      ? series_step_limit(stakes_of(unit, *units[1 - i], i == 0, true, tolerance), unit)
                      : 0;
    }
    if (first.series_pending && second.series_pending && series[0].steps < limits[0] &&
        series[1].steps < limits[1]) {
      run_series_pair(series[0], series[1], std::min(limits[0], limits[1]), &done[0], &done[1]);
    } else {
      for (int i = 0; i < 2; ++i) {
        if (units[i]->series_pending) done[i] = run_series(series[i], limits[i]);
      }
    }
    // A series is finished when done, or cut at its limit (unusable then:
    // not converged within the cap, or no longer able to change the pick).
    for (int i = 0; i < 2; ++i) {
      if (units[i]->series_pending && (done[i] || series[i].steps >= limits[i])) {
        units[i]->series = series_estimate(series[i], done[i]);
        units[i]->series_pending = false;
      }
    }
  }
}

// The near-one evaluation of `unit`, if it is a candidate.
void run_near_one(Unit& unit, const Unit& other, bool first, double tolerance, LogGammaMemo& lgamma) {
  if (!unit.near_one_use) return;
  if (is_integer((unit.c - unit.a) - unit.b)) {
    unit.near_one = integer_difference(unit.a, unit.b, unit.c, unit.s, lgamma);
  } else {
    unit.near_one =
        connection(unit.a, unit.b, unit.c, unit.s, stakes_of(unit, other, first, false, tolerance), lgamma);
  }
}

// The general case: the better of the two transformations, NaN where its
// estimate exceeds the tolerance.
double hyp2f1_general(double a, double b, double c, double z, double tolerance) {
  // The transformations need c not a pole (there only a terminating series
  // in z itself is defined).
  const bool c_pole = nonpositive_integer(c);
  const bool negative = z < 0.0 && !c_pole;
  const double one_minus_z = 1.0 - z;
  const double log_base = std::log(std::fabs(one_minus_z));
  const double d = (c - a) - b;
  // z < 0: w = z / (z - 1) and 1 - w = 1 / (1 - z); z = -inf is w = 1.
  const double x = negative ? (std::isinf(z) ? 1.0 : z / (z - 1.0)) : z;
  const double s = negative ? 1.0 / one_minus_z : one_minus_z;
  // z < 0: Pfaff's (1 - z)^-a F(a, c - b; c; w), (1 - z)^-b F(b, c - a; c; w);
  // else F itself and Euler's (1 - z)^(c - a - b) F(c - a, c - b; c; z),
  // which does not hold for c a pole.
  Unit first = plan_unit(a, negative ? c - b : b, c, x, s, negative ? -a : 0.0, log_base, true);
  Unit second = plan_unit(negative ? b : c - a, negative ? c - a : c - b, c, x, s, negative ? -b : d, log_base, !c_pole);
  run_unit_series(first, second, tolerance);
  LogGammaMemo lgamma;
  run_near_one(first, second, true, tolerance, lgamma);
  run_near_one(second, first, false, tolerance, lgamma);
  const Estimate unit1 = first.best(), unit2 = second.best();
  const bool pick_second = second.total(unit2.error) < first.total(unit1.error);
  const Unit& unit = pick_second ? second : first;
  const Estimate& best = pick_second ? unit2 : unit1;
  if (!(unit.total(best.error) <= tolerance)) return kNaN;
  // (1 - z)^exponent by pow (exact sign for the integer exponents of z > 1).
  const double power = unit.exponent == 0.0 ? 1.0 : std::pow(one_minus_z, unit.exponent);
  return power * best.value;
}

// ONNX Runtime's Where gives +0 for a selected -0 (it adds the branches'
// masked values), and every result of the recipe is the selected branch of
// a Where (the tolerance test, or a special case's): never -0.
double ort_selected(double v) { return v == 0.0 ? 0.0 : v; }

// SciPy's a = c shortcut's sibling: F(a, b; b; z) for b a non-positive
// integer -n, the series sum_{k<=n} (a)_k z^k / k! (NaN where it cancels).
double truncated_series(double a, double b, double z, double tolerance) {
  const Estimate t = series_to(a, 1.0, 1.0, z, -b);
  // SciPy gives NaN where this sum cancels to 0 (its loss test).
  return t.error <= tolerance && t.value != 0.0 ? t.value : kNaN;
}

// The special cases in the recipe's order of precedence (the recipe applies
// them last to first, the last one winning); the general case otherwise.
double hyp2f1_with(double a, double b, double c, double z, double tolerance) {
  // 1 for a = 0 or b = 0 (c != 0) and for z = 0, whatever the rest (NaN
  // too), as SciPy.
  if (z == 0.0) return 1.0;
  if ((a == 0.0 || b == 0.0) && c != 0.0) return 1.0;
  // NaN anywhere, infinite a, b or c: NaN.
  if (std::isnan(a) || std::isnan(b) || std::isnan(c) || std::isnan(z) || std::isinf(a) || std::isinf(b) ||
      std::isinf(c)) {
    return kNaN;
  }
  const double one_minus_z = 1.0 - z;
  const bool int_a = nonpositive_integer(a), int_b = nonpositive_integer(b);
  // a = c, b = c (|z| < 1 or z = -1).
  const bool inside = std::fabs(z) < 1.0 || z == -1.0;
  if (inside && b == c) return int_b ? truncated_series(a, b, z, tolerance) : std::pow(one_minus_z, -a);
  if (inside && a == c && c != -1.0) return std::pow(one_minus_z, -b);
  // a = c = -1: SciPy gives the series cut at its zero term, 1 + b z.
  if (a == -1.0 && c == -1.0) return b * z + 1.0;
  // c a pole of the series, unless a or b ends it first.
  const bool ends_first = (int_a && a > c) || (int_b && b > c);
  if (nonpositive_integer(c) && !ends_first) return kInf;
  // z = -inf: F ~ (-z)^-a and (-z)^-b: 0 when a, b > 0.
  if (z == -kInf) return a > 0.0 && b > 0.0 ? 0.0 : kNaN;
  const bool polynomial = int_a || int_b;
  const double d = (c - a) - b;
  // z = 1, c - a - b <= 0: infinite with the sign of the leading term as
  // z -> 1: Gamma(c) Gamma(-d) / (Gamma(a) Gamma(b)) (1 - z)^d for d < 0,
  // Gamma(c) / (Gamma(a) Gamma(b)) (-log(1 - z)) for d = 0.
  if (z == 1.0 && !polynomial && d <= 0.0) {
    return (gamma_sign(c) * gamma_sign(-d)) * (gamma_sign(a) * gamma_sign(b)) * kInf;
  }
  // z > 1: real only for polynomials, and (1 - z)^d times a polynomial when
  // d is an integer <= -1 (SciPy's Euler step at the top of hyp2f1).
  const bool euler_polynomial =
      is_integer(d) && d <= -1.0 && (nonpositive_integer(c - a) || nonpositive_integer(c - b));
  if (z > 1.0 && !(polynomial || euler_polynomial)) return kInf;
  return hyp2f1_general(a, b, c, z, tolerance);
}

}  // namespace

double hyp2f1(double a, double b, double c, double z) { return ort_selected(hyp2f1_with(a, b, c, z, kTolerance)); }

double hyp2f1(double a, double b, double c, double z, double tolerance) {
  return ort_selected(hyp2f1_with(a, b, c, z, tolerance));
}

}  // namespace pytensor_onnx::kernels::special
