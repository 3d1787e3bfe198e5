// The regularized incomplete gamma functions P(a, x) = gamma(a, x) / Gamma(a)
// (SciPy's gammainc) and Q(a, x) = 1 - P(a, x) (gammaincc) in float64 from
// standard ONNX ops.
//
// The classical split of the (a, x) plane (DLMF 8.7.1 and 8.9.2; the region
// boundaries are those of Cephes' igam/igamc, which SciPy uses):
//   - x > 1.1 and x >= a: Q by the continued fraction of Legendre (DLMF
//     8.9.2) evaluated with the modified Lentz method; P = 1 - Q.
//   - x <= 1.1 and a small (a <= -0.4 / log x for x <= 0.5, a <= 1.1 x
//     above): Q = 1 - x^a / Gamma(a + 1) - x^a / Gamma(a) *
//     sum_{n>=1} (-x)^n / (n! (a + n)) (DLMF 8.7.1 rearranged), so that a
//     small Q keeps its relative accuracy; P by the series below.
//   - elsewhere: P = x^a e^-x / Gamma(a + 1) * sum_{n>=0} x^n / ((a+1)...(a+n))
//     (DLMF 8.7.1 with Kummer's transformation); Q = 1 - P.
// Every series and fraction is one element-wise ONNX Loop (loops.h) that
// stops when every element has converged to double precision.
//
// The prefactor x^a e^-x / Gamma(a) is formed in log space. For a >= 8 it is
// sqrt(a / (2 pi)) exp(a log1pmx((x - a) / a) - mu(a)), with mu the Stirling
// correction of lgamma and log1pmx(t) = log(1 + t) - t summed as an atanh
// series near t = 0: the direct a log x - x - lgamma(a) would lose
// |a log x| * 2^-53 to cancellation (1e-9 relative at a = 1e6).
//
// Special values follow SciPy: NaN for a < 0, x < 0, NaN inputs or
// a = x = 0; P(a, 0) = 0, P(0, x > 0) = 1, P(a, inf) = 1, P(inf, x) = 0
// (x finite), P(inf, inf) = NaN; Q is the complement.
#include <cmath>
#include <limits>

#include "elementwise.h"
#include "log_gamma_parts.h"
#include "loops.h"
#include "recipes.h"
#include "registry.h"

namespace pytensor_onnx::recipes {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kEpsilon = 0x1p-53;  // a series stops when its term is below this fraction of the sum
// The fraction stops when its last factor is within this of 1: delta is
// computed as c * d and may stay one ulp below 1 forever (x = 1e30).
constexpr double kFractionTolerance = 0x1p-51;
constexpr double kLentzTiny = 1e-300;            // the modified Lentz method's guard against zero divisors
constexpr double kInvSqrt2Pi = 0x1.9884533d43651p-2;  // 1 / sqrt(2 pi)
// Steps of each Loop: the series and the fraction need about 9 sqrt(a)
// steps where x is close to a, so a up to about 3e7 converges; elements that
// have not converged by then are NaN (never a silently truncated sum).
constexpr int64_t kMaxSteps = 50000;

Value* lgamma(const Ew& f, Value* x) { return build_recipe_named(f.g(), "gammaln", {x}, {})[0]; }
Value* expm1(const Ew& f, Value* x) { return build_recipe_named(f.g(), "expm1", {x}, {})[0]; }

// x^a e^-x / Gamma(a) for finite a > 0 and finite x >= 0.
Value* prefactor(const Ew& f, Value* a, Value* x) {
  Value* direct = f.exp(f.sub(f.sub(f.mul(a, f.log(x)), x), lgamma(f, a)));
  // a log(x / a) - x + a = a log1pmx((x - a) / a).
  Value* exponent = f.sub(f.mul(a, log1pmx(f, f.div(f.sub(x, a), a), x, a)), stirling_correction(f, a));
  Value* scaled = f.mul(f.exp(exponent), f.mul(f.sqrt(a), kInvSqrt2Pi));
  return f.where(f.lt(a, 8.0), direct, scaled);
}

// Per element: whether |change| <= tolerance |reference| (NaN counts as converged).
Value* converged(const Ew& b, Value* change, Value* reference, double tolerance = kEpsilon) {
  return b.not_(b.gt(b.abs(change), b.mul(b.abs(reference), tolerance)));
}

// sum_{n>=0} x^n / ((a+1)...(a+n)) (its elements converged; NaN where not).
Value* lower_series(const Ew& f, Value* a, Value* x) {
  Value* one = f.add(f.mul(x, 0.0), 1.0);
  LoopResult r = elementwise_loop(
      f.g(), {one, one, a, x}, kMaxSteps,
      [](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        const Ew b(body, DType::Float64);
        Value *sum = s[0], *term = s[1], *ap = s[2], *x_ = s[3];
        Value* next_ap = b.add(ap, 1.0);
        Value* next_term = b.mul(term, b.div(x_, next_ap));
        Value* next_sum = b.add(sum, next_term);
        return LoopStep{{next_sum, next_term, next_ap, x_}, converged(b, next_term, next_sum)};
      },
      "igam_series");
  return f.where(r.converged, r.state[0], kNaN);
}

// Legendre's continued fraction of Gamma(a, x) e^x x^-a (x >= a), modified
// Lentz method (Numerical Recipes' gcf, with b_n = x + 1 - a + 2n,
// a_n = -n (n - a)).
Value* upper_fraction(const Ew& f, Value* a, Value* x) {
  Value* b0 = f.sub(f.add(x, 1.0), a);
  Value* d0 = f.div(1.0, b0);
  Value* c0 = f.add(f.mul(x, 0.0), 1.0 / kLentzTiny);
  LoopResult r = elementwise_loop(
      f.g(), {d0, c0, d0, f.mul(x, 0.0), a, b0}, kMaxSteps,
      [](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        const Ew b(body, DType::Float64);
        Value *h = s[0], *c = s[1], *d = s[2], *n = s[3], *a_ = s[4], *b0_ = s[5];
        auto guard = [&](Value* v) { return b.where(b.lt(b.abs(v), kLentzTiny), kLentzTiny, v); };
        Value* next_n = b.add(n, 1.0);
        Value* an = b.neg(b.mul(next_n, b.sub(next_n, a_)));
        Value* bn = b.add(b0_, b.mul(next_n, 2.0));
        Value* next_d = b.div(1.0, guard(b.add(b.mul(an, d), bn)));
        Value* next_c = guard(b.add(bn, b.div(an, c)));
        Value* delta = b.mul(next_c, next_d);
        return LoopStep{{b.mul(h, delta), next_c, next_d, next_n, a_, b0_}, converged(b, b.sub(delta, 1.0), delta, kFractionTolerance)};
      },
      "igamc_fraction");
  return f.where(r.converged, r.state[0], kNaN);
}

// sum_{n>=1} (-x)^n / (n! (a + n)).
Value* small_a_series(const Ew& f, Value* a, Value* x) {
  Value* zero = f.mul(x, 0.0);
  LoopResult r = elementwise_loop(
      f.g(), {zero, f.add(zero, 1.0), zero, a, x}, kMaxSteps,
      [](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        const Ew b(body, DType::Float64);
        Value *sum = s[0], *factor = s[1], *n = s[2], *a_ = s[3], *x_ = s[4];
        Value* next_n = b.add(n, 1.0);
        Value* next_factor = b.mul(factor, b.div(b.neg(x_), next_n));
        Value* term = b.div(next_factor, b.add(a_, next_n));
        Value* next_sum = b.add(sum, term);
        return LoopStep{{next_sum, next_factor, next_n, a_, x_}, converged(b, term, next_sum)};
      },
      "igamc_small_a");
  return f.where(r.converged, r.state[0], kNaN);
}

// P and Q on the whole domain; `upper` picks Q.
Value* incomplete_gamma(const Ew& f, Value* a, Value* x, bool upper) {
  Value* nan_result = f.or_(f.or_(f.isnan(a), f.isnan(x)), f.or_(f.lt(a, 0.0), f.lt(x, 0.0)));
  nan_result = f.or_(nan_result, f.and_(f.eq(a, 0.0), f.eq(x, 0.0)));
  nan_result = f.or_(nan_result, f.and_(f.isinf(a), f.isinf(x)));
  // P is 0 (Q is 1) at x = 0 and a = inf; P is 1 at a = 0 and x = inf.
  Value* p_zero = f.or_(f.eq(x, 0.0), f.isinf(a));
  Value* p_one = f.or_(f.eq(a, 0.0), f.isinf(x));
  Value* special = f.or_(nan_result, f.or_(p_zero, p_one));
  // The iterations see only ordinary elements (others get a = 1, x = 1/2).
  a = f.where(special, 1.0, a);
  x = f.where(special, 0.5, x);

  Value* small_limit = f.where(f.le(x, 0.5), f.div(-0.4, f.log(x)), f.mul(x, 1.1));
  Value* use_fraction = f.and_(f.gt(x, 1.1), f.ge(x, a));
  Value* use_small_a = f.and_(f.le(x, 1.1), f.le(a, small_limit));

  // Each iteration runs on its own elements; the others get inputs that
  // converge at once (x = 0 ends a series, a = 1 the fraction).
  Value* power = prefactor(f, a, x);
  Value* series_x = f.where(use_fraction, 0.0, x);
  Value* p_series = f.mul(f.div(power, a), lower_series(f, a, series_x));
  Value* q_fraction =
      f.mul(power, upper_fraction(f, f.where(use_fraction, a, 1.0), f.where(use_fraction, x, 2.0)));

  Value* result;
  if (upper) {
    Value* log_x = f.log(x);
    Value* power_over_gamma1p = f.sub(f.mul(a, log_x), lgamma1p_small(f, f.min(a, f.c(2.0))));
    Value* sum = small_a_series(f, a, f.where(use_small_a, x, 0.0));
    // x^a / Gamma(a) = a x^a / Gamma(a + 1).
    Value* q_small = f.sub(f.neg(expm1(f, power_over_gamma1p)), f.mul(f.mul(a, f.exp(power_over_gamma1p)), sum));
    result = f.where(use_fraction, q_fraction, f.where(use_small_a, q_small, f.sub(1.0, p_series)));
    result = f.where(p_zero, 1.0, f.where(p_one, 0.0, result));
  } else {
    result = f.where(use_fraction, f.sub(1.0, q_fraction), p_series);
    result = f.where(p_zero, 0.0, f.where(p_one, 1.0, result));
  }
  return f.where(nan_result, kNaN, result);
}

std::vector<Value*> gammainc_core(const Ew& f, const std::vector<Value*>& in, const Attributes&) {
  return {incomplete_gamma(f, in[0], in[1], false)};
}

std::vector<Value*> gammaincc_core(const Ew& f, const std::vector<Value*>& in, const Attributes&) {
  return {incomplete_gamma(f, in[0], in[1], true)};
}

}  // namespace

void add_incomplete_gamma_recipes(std::vector<RecipeInfo>& table) {
  table.push_back(
      float64_recipe("gammainc", gammainc_core, 2, "the regularized lower incomplete gamma function P(a, x)"));
  table.push_back(float64_recipe("gammaincc", gammaincc_core, 2,
                                 "the regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)"));
}

}  // namespace pytensor_onnx::recipes
