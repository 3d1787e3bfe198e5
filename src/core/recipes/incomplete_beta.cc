// The regularized incomplete beta function I_x(a, b) (SciPy's betainc) in
// float64 from standard ONNX ops.
//
// The region split is Cephes' incbet (which SciPy used before Boost), with
// one more branch for a tiny parameter:
//   - b x <= 1 and x <= 0.95: the power series
//       I = x^a / (a B(a, b)) (1 + a sum_{n>=1} (1-b)_n x^n / (n! (a + n)))
//     (DLMF 8.17.7 expanded; Cephes' pseries).
//   - else a y <= 1 and y <= 0.95 (y = 1 - x): the same series for
//     I_y(b, a), and I = 1 - I_y(b, a) as -expm1(log I_y(b, a)): a tiny b
//     makes I_y(b, a) = 1 - O(b), and 1 - I_y(b, a) would keep no digit.
//     This also takes x close to 1 below the mean, where the continued
//     fraction needs ~1 / sqrt(1 - x) steps.
//   - elsewhere the continued fraction BFRAC of DiDonato and Morris (see
//     continued_fraction), on I_x(a, b) for x <= a / (a + b) and on
//     1 - I_y(b, a) above.
//
// The prefactor x^a y^b / (a B(a, b)) is formed in log space without
// cancellation. For a parameter p >= 8, lgamma(p) is Stirling's formula with
// its correction mu(p); then with d = b x - a y (so x (a + b) / a = 1 + d / a
// and y (a + b) / b = 1 - d / b):
//   a, b >= 8: a log1pmx(d / a) + b log1pmx(-d / b) + log(b / (a (a + b))) / 2
//              - log(2 pi) / 2 - mu(a) - mu(b) + mu(a + b)
// (the terms linear in d cancel exactly; a log x + b log y - log B(a, b) is a
// difference of numbers near (a + b) log(a + b), 1e-8 relative error at
// a = b = 1e7). The series' factor x^a / (a B(a, b)) for a tiny a is
// a log x + lgamma(a + b) - lgamma(b) - lgamma(1 + a) with the lgamma
// difference as its Taylor series in a (polygamma values at b or b + 1), so
// that -expm1 of it keeps its relative accuracy.
//
// Special values follow SciPy 1.18 (Boost's ibeta): NaN for NaN inputs,
// a < 0, b < 0, x outside [0, 1], a = b = 0 and a = b = inf; then
// I_0 = 0, I_1 = 1; then I = 1 for a = 0 or b = inf, I = 0 for b = 0 or
// a = inf.
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
constexpr double kEpsilon = 0x1p-53;  // a series stops when its term is below this fraction of the sum
// The fraction stops when its last factor is within this of 1 (the product
// of two rounded factors may stay an ulp away from 1).
constexpr double kFractionTolerance = 0x1p-51;
constexpr double kHalfLog2Pi = 0.91893853320467274178;  // log(2 pi) / 2
constexpr double kEulerGamma = 0.57721566490153286061;
constexpr double kZeta2 = 1.6449340668482264365;  // pi^2 / 6
constexpr double kZeta3 = 1.2020569031595942854;
// Where the Taylor series of lgamma(a + b) - lgamma(b) - lgamma(1 + a) in
// a is used: its first omitted term is a^4 / 24 (psi'''(b) - 6 zeta(4)), at
// most a^3 relative to the sum (b >= 1).
constexpr double kTaylorLimit = 1e-5;
constexpr double kStirlingFrom = 8.0;  // where mu(p) (nine terms) reaches double precision
// Steps of each Loop. Elements not converged by then are NaN (never a
// silently truncated sum).
constexpr int64_t kMaxSteps = 100000;

Value* recipe1(const Ew& f, const char* name, Value* x) { return build_recipe_named(f.g(), name, {x}, {})[0]; }
Value* lgamma(const Ew& f, Value* x) { return recipe1(f, "gammaln", x); }
Value* log1p(const Ew& f, Value* x) { return recipe1(f, "log1p", x); }

// lgamma of the parameters, computed once per element (each gammaln is a
// table lookup over the whole tensor: the costliest part of the recipe).
struct LogGammas {
  Value* a;
  Value* b;
  Value* sum;     // lgamma(a + b)
  Value* a_plus;  // lgamma(1 + a), accurate for tiny a
};

LogGammas log_gammas(const Ew& f, Value* a, Value* b) {
  LogGammas l{lgamma(f, a), lgamma(f, b), lgamma(f, f.add(a, b)), nullptr};
  // For a >= 7, lgamma(a) and log a are both positive: no cancellation.
  l.a_plus = f.where(f.lt(a, 7.0), lgamma1p_small(f, f.min(a, f.c(7.0))), f.add(l.a, f.log(a)));
  return l;
}

// mu(p) for p >= 8 (elements below get mu(8): their branch is not taken).
Value* mu(const Ew& f, Value* p) { return stirling_correction(f, f.max(p, f.c(kStirlingFrom))); }

// lgamma(a + b) - lgamma(b) - lgamma(1 + a) = -log(a B(a, b)) for a <= 1e-5:
// a (psi(b) + gamma) + a^2/2 (psi'(b) - zeta(2)) + a^3/6 (psi''(b) + 2 zeta(3))
// (the Taylor series of lgamma(b + a) - lgamma(b) and of lgamma(1 + a),
// DLMF 5.7.3). For b < 1 it is taken at b + 1, with
// lgamma(b + a) - lgamma(b) = lgamma(b + 1 + a) - lgamma(b + 1) - log1p(a / b):
// the polygammas stay bounded.
Value* neg_log_a_beta_taylor(const Ew& f, Value* a, Value* b) {
  Value* below_one = f.lt(b, 1.0);
  Value* at = f.where(below_one, f.add(b, 1.0), b);
  Value* psi0 = f.add(recipe1(f, "digamma", at), kEulerGamma);
  Value* psi1 = f.sub(recipe1(f, "trigamma", at), kZeta2);
  Value* psi2 = f.add(build_recipe_named(f.g(), "polygamma", {f.c(2.0), at}, {})[0], 2.0 * kZeta3);
  // a (psi0 + a (psi1 / 2 + a psi2 / 6))
  Value* series = f.mul(a, f.add(psi0, f.mul(a, f.add(f.mul(psi1, 0.5), f.mul(a, f.mul(psi2, 1.0 / 6.0))))));
  return f.where(below_one, f.sub(series, log1p(f, f.div(a, b))), series);
}

// -log(a B(a, b)) = lgamma(a + b) - lgamma(a) - lgamma(b) - log a, for the
// series (where the factor is x^a, not x^a y^b: a log x is not there to
// cancel anything). lgamma(a + b) - lgamma(m), m = max(a, b), s = min(a, b),
// by Stirling for m >= 8: (m - 1/2) log1p(s / m) + s log(a + b) - s + mu(a + b) - mu(m).
Value* neg_log_a_beta(const Ew& f, Value* a, Value* b, const LogGammas& lg) {
  Value* c = f.add(a, b);
  Value* m = f.max(a, b);
  Value* s = f.min(a, b);
  Value* stirling = f.add(f.sub(f.add(f.mul(f.sub(m, 0.5), log1p(f, f.div(s, m))), f.mul(s, f.log(c))), s),
                          f.sub(mu(f, c), mu(f, m)));
  Value* lgamma_m = f.where(f.le(a, b), lg.b, lg.a);
  Value* difference = f.where(f.ge(m, kStirlingFrom), stirling, f.sub(lg.sum, lgamma_m));
  // a = s: lgamma(a) + log a = lgamma(1 + a); a = m: the other is b.
  Value* direct = f.where(f.le(a, b), f.sub(difference, lg.a_plus), f.sub(f.sub(difference, f.log(a)), lg.b));
  return f.where(f.le(a, kTaylorLimit), neg_log_a_beta_taylor(f, a, b), direct);
}

// log(x^a y^b / (a B(a, b))), y = 1 - x given separately (exact where x is
// not), for the continued fraction. See the file comment.
Value* log_fraction_prefactor(const Ew& f, Value* a, Value* b, Value* x, Value* y, const LogGammas& lg) {
  Value* c = f.add(a, b);
  Value* d = f.sub(f.mul(b, x), f.mul(a, y));
  Value* a_large = f.ge(a, kStirlingFrom);
  Value* b_large = f.ge(b, kStirlingFrom);
  Value* a_term = f.mul(a, log1pmx(f, f.div(d, a), x, f.div(a, c)));  // a log(x c / a) - d
  Value* b_term = f.mul(b, log1pmx(f, f.div(f.neg(d), b), y, f.div(b, c)));  // b log(y c / b) + d
  // a, b >= 8.
  Value* both = f.sub(f.add(f.add(a_term, b_term), f.mul(f.log(f.div(b, f.mul(a, c))), 0.5)),
                      f.add(f.sub(f.add(mu(f, a), mu(f, b)), mu(f, c)), kHalfLog2Pi));
  // a >= 8 > b: a log(x c / a) - log(c / a) / 2 + b log(y c) - b - lgamma(b)
  //             + mu(c) - mu(a) - log a.
  Value* only_a = f.add(f.add(a_term, d), f.sub(f.mul(b, f.log(f.mul(y, c))), b));
  only_a = f.sub(only_a, f.add(f.add(f.mul(f.log(f.div(c, a)), 0.5), lg.b), f.log(a)));
  only_a = f.add(only_a, f.sub(mu(f, c), mu(f, a)));
  // b >= 8 > a: b log(y c / b) - log(c / b) / 2 + a log(x c) - a - lgamma(1 + a)
  //             + mu(c) - mu(b).
  Value* only_b = f.add(f.sub(b_term, d), f.sub(f.mul(a, f.log(f.mul(x, c))), a));
  only_b = f.sub(only_b, f.add(f.mul(f.log(f.div(c, b)), 0.5), lg.a_plus));
  only_b = f.add(only_b, f.sub(mu(f, c), mu(f, b)));
  // a, b < 8.
  Value* small = f.add(f.add(f.mul(a, f.log(x)), f.mul(b, f.log(y))),
                       f.sub(f.sub(lg.sum, lg.a_plus), lg.b));
  return f.where(a_large, f.where(b_large, both, only_a), f.where(b_large, only_b, small));
}

// Per element: whether |change| <= tolerance |reference| (NaN counts as converged).
Value* converged(const Ew& b, Value* change, Value* reference, double tolerance = kEpsilon) {
  return b.not_(b.gt(b.abs(change), b.mul(b.abs(reference), tolerance)));
}

// sum_{n>=1} (1-b)_n x^n / (n! (a + n)) (NaN where it did not converge).
Value* power_series(const Ew& f, Value* a, Value* b, Value* x) {
  Value* zero = f.mul(x, 0.0);
  LoopResult r = elementwise_loop(
      f.g(), {zero, f.add(zero, 1.0), zero, a, b, x}, kMaxSteps,
      [](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        const Ew e(body, DType::Float64);
        Value *sum = s[0], *t = s[1], *n = s[2], *a_ = s[3], *b_ = s[4], *x_ = s[5];
        Value* next_n = e.add(n, 1.0);
        Value* next_t = e.mul(t, e.div(e.mul(e.sub(next_n, b_), x_), next_n));
        Value* term = e.div(next_t, e.add(a_, next_n));
        Value* next_sum = e.add(sum, term);
        return LoopStep{{next_sum, next_t, next_n, a_, b_, x_}, converged(e, term, next_sum)};
      },
      "incbet_series");
  return f.where(r.converged, r.state[0], kNaN);
}

// I_x(a, b) B(a, b) / (x^a y^b) by the continued fraction BFRAC of DiDonato
// and Morris (ACM TOMS 18 (1992) 360, algorithm 708), evaluated as they do:
// the convergents A_n / B_n by the three-term recurrence, rescaled every
// step (the state keeps A_{n-1} / B_n, B_{n-1} / B_n and r = A_n / B_n).
// Unlike the classical fraction (DLMF 8.17.22), whose coefficients are
// polynomials in x alone and lose a x (1 - x) relative accuracy as x -> 1
// (2e-10 at a = 1e7), BFRAC's use lambda = a y - b x and y directly.
Value* continued_fraction(const Ew& f, Value* a, Value* b, Value* x, Value* y) {
  Value* c = f.add(f.sub(f.mul(a, y), f.mul(b, x)), 1.0);  // 1 + lambda
  Value* c1 = f.add(f.div(1.0, a), 1.0);
  Value* r0 = f.div(c1, c);
  Value* zero = f.mul(r0, 0.0);
  LoopResult r = elementwise_loop(
      f.g(), {zero, r0, r0, zero, a, b, x, y, c}, kMaxSteps,
      [](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        const Ew e(body, DType::Float64);
        Value *an = s[0], *bn = s[1], *ratio = s[2], *n = s[3];
        Value *a_ = s[4], *b_ = s[5], *x_ = s[6], *y_ = s[7], *c_ = s[8];
        Value* next_n = e.add(n, 1.0);
        Value* t = e.div(next_n, a_);
        Value* w = e.mul(e.mul(next_n, e.sub(b_, next_n)), x_);
        Value* s_ = e.add(a_, e.sub(e.mul(next_n, 2.0), 1.0));  // a + 2n - 1
        Value* p = e.add(e.div(n, a_), 1.0);                      // 1 + (n - 1) / a
        Value* e1 = e.div(a_, s_);
        Value* alpha = e.mul(e.mul(e.mul(p, e.add(p, e.div(b_, a_))), e.sqr(e1)), e.mul(w, x_));
        Value* e2 = e.div(e.add(t, 1.0), e.add(e.add(e.div(1.0, a_), 1.0), e.mul(t, 2.0)));
        Value* beta = e.add(e.add(next_n, e.div(w, s_)), e.mul(e2, e.add(c_, e.mul(next_n, e.add(y_, 1.0)))));
        Value* next_a = e.add(e.mul(alpha, an), e.mul(beta, ratio));
        Value* next_b = e.add(e.mul(alpha, bn), beta);
        Value* next_ratio = e.div(next_a, next_b);
        return LoopStep{{e.div(ratio, next_b), e.div(1.0, next_b), next_ratio, next_n, a_, b_, x_, y_, c_},
                        converged(e, e.sub(next_ratio, ratio), next_ratio, kFractionTolerance)};
      },
      "incbet_fraction");
  return f.where(r.converged, r.state[2], kNaN);
}

// `complement` is 1 - x given exactly (betainc_xy), or null: then 1 - x is
// formed here (exact for x >= 1/2, rounded below).
Value* incomplete_beta(const Ew& f, Value* a, Value* b, Value* x, Value* complement = nullptr) {
  Value* nan_result = f.or_(f.or_(f.isnan(a), f.isnan(b)), f.isnan(x));
  nan_result = f.or_(nan_result, f.or_(f.lt(a, 0.0), f.lt(b, 0.0)));
  nan_result = f.or_(nan_result, f.or_(f.lt(x, 0.0), f.gt(x, 1.0)));
  nan_result = f.or_(nan_result, f.and_(f.eq(a, 0.0), f.eq(b, 0.0)));
  nan_result = f.or_(nan_result, f.and_(f.isinf(a), f.isinf(b)));
  Value* zero = f.or_(f.eq(x, 0.0), f.or_(f.eq(b, 0.0), f.isinf(a)));
  Value* one = f.or_(f.eq(x, 1.0), f.or_(f.eq(a, 0.0), f.isinf(b)));
  // x = 0 and x = 1 take precedence over the parameters.
  Value* special_value = f.where(f.eq(x, 0.0), 0.0, f.where(f.eq(x, 1.0), 1.0, f.where(one, 1.0, 0.0)));
  Value* special = f.or_(nan_result, f.or_(zero, one));
  // The iterations see only ordinary elements (others get a = b = 1, x = 1/2).
  a = f.where(special, 1.0, a);
  b = f.where(special, 1.0, b);
  x = f.where(special, 0.5, x);
  Value* y = complement ? f.where(special, 0.5, complement) : f.sub(1.0, x);

  Value* direct_series = f.and_(f.le(f.mul(b, x), 1.0), f.le(x, 0.95));
  Value* complement_series =
      f.and_(f.not_(direct_series), f.and_(f.le(f.mul(a, y), 1.0), f.le(y, 0.95)));
  Value* use_series = f.or_(direct_series, complement_series);
  Value* swap = f.or_(complement_series, f.and_(f.not_(use_series), f.gt(x, f.div(a, f.add(a, b)))));
  Value* sa = f.where(swap, b, a);
  Value* sb = f.where(swap, a, b);
  Value* sx = f.where(swap, y, x);
  Value* sy = f.where(swap, x, y);

  // Each iteration runs on its own elements; the others get x = 0, where
  // both converge at once.
  const LogGammas lg = log_gammas(f, sa, sb);
  Value* sum = power_series(f, sa, sb, f.where(use_series, sx, 0.0));
  Value* log_series = f.add(f.add(f.mul(sa, f.log(sx)), neg_log_a_beta(f, sa, sb, lg)), log1p(f, f.mul(sa, sum)));
  Value* series = f.where(swap, f.neg(recipe1(f, "expm1", log_series)), f.exp(log_series));

  // (The fraction's factor is x^a y^b / B(a, b): a times the prefactor.)
  Value* fraction_value =
      f.mul(f.mul(f.exp(log_fraction_prefactor(f, sa, sb, sx, sy, lg)), sa),
            continued_fraction(f, sa, sb, f.where(use_series, 0.0, sx), f.where(use_series, 1.0, sy)));
  Value* fraction = f.where(swap, f.sub(1.0, fraction_value), fraction_value);

  Value* result = f.where(use_series, series, fraction);
  return f.where(nan_result, kNaN, f.where(special, special_value, result));
}

std::vector<Value*> betainc_core(const Ew& f, const std::vector<Value*>& in, const Attributes&) {
  return {incomplete_beta(f, in[0], in[1], in[2])};
}

std::vector<Value*> betainc_xy_core(const Ew& f, const std::vector<Value*>& in, const Attributes&) {
  return {incomplete_beta(f, in[0], in[1], in[2], in[3])};
}

}  // namespace

void add_incomplete_beta_recipes(std::vector<RecipeInfo>& table) {
  table.push_back(float64_recipe("betainc", betainc_core, 3, "the regularized incomplete beta function I_x(a, b)"));
  // For callers that know 1 - x more exactly than x (the inverse, whose
  // iterate is a log-odds): x close to 1 keeps the digits of 1 - x.
  table.push_back(float64_recipe("betainc_xy", betainc_xy_core, 4,
                                 "I_x(a, b) with x and 1 - x given separately", "inputs a, b, x, 1 - x"));
}

}  // namespace pytensor_onnx::recipes
