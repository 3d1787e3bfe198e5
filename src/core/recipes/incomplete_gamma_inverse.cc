// The inverses of the regularized incomplete gamma functions in x: SciPy's
// gammaincinv(a, y) (x with P(a, x) = y) and gammainccinv(a, y) (x with
// Q(a, x) = y), in float64 from standard ONNX ops.
//
// Method (the scheme of Cephes' igami, which SciPy uses: an initial guess,
// then Halley steps on the forward functions of incomplete_gamma.cc):
//   - The equation is solved for whichever of P = p or Q = q has the target
//     below 1/2 (the other is 1 - y, exact by Sterbenz's lemma for y >= 1/2),
//     so the target keeps its relative accuracy in both tails.
//   - It is solved for u = log x as log P(a, e^u) = log p (or log Q = log q).
//     log x ~ Gamma(a) has a log-concave density (a u - e^u) for every
//     a > 0, so its CDF and survival function are log-concave in u: Newton
//     (and Halley) iterates on these concave equations never oscillate; after
//     at most one overshoot they approach the root monotonically. The log
//     also makes the tails nearly linear (log P ~ a u - lgamma(a + 1) as
//     x -> 0, log Q ~ -x + (a - 1) u - lgamma(a) as x -> inf).
//   - Initial guess: the candidate with the smallest residual |log P - log p|
//     (or |log Q - log q|) among three: the small-x power law
//     (p Gamma(a + 1))^(1/a) refined by the first series terms
//     x^a e^-x / (Gamma(a + 1) (1 - x / (a + 1))); the Wilson–Hilferty
//     cube-root normal approximation a (1 - 1/(9a) + z / (3 sqrt a))^3
//     (z the normal quantile, via erfcinv); and the large-x asymptotic
//     x = -log q - lgamma(a) + (a - 1) log x - log(1 - (a - 1) / x) iterated.
//   - Four Halley steps in u: with g = log P - log p, g' = x f(x) / P (f the
//     gamma density) and g'' = g' (a - x - g'); a step falls back to Newton
//     where Halley's denominator is below 1/2 and is bounded by 3 in u.
//     Tested: three steps reach the root to SciPy's accuracy over a in
//     [1e-3, 1e6] and y down to 1e-300. (Each step and each candidate costs
//     one P and one Q: 12 forward evaluations in all, which matters for the
//     size of the inlined export.)
// x is updated as x exp(-step) so that it never carries the rounding of
// exp(u). The accuracy is that of P and Q (about 1e-15) times the condition
// number of the inverse, P / (x P'(x)) ~ 1 / a for small a.
//
// Special values follow SciPy: NaN for NaN inputs, a < 0, y outside [0, 1],
// and for a = 0 or a = inf with 0 < y < 1; gammaincinv(a, 0) = 0 and
// gammaincinv(a, 1) = inf (gammainccinv the other way round) for any a >= 0.
#include <cmath>
#include <limits>

#include "elementwise.h"
#include "recipes.h"
#include "registry.h"

namespace pytensor_onnx::recipes {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSqrt2 = 0x1.6a09e667f3bcdp+0;
constexpr int kHalleySteps = 4;
constexpr int kGuessRefinements = 3;
constexpr double kMaxLogStep = 3.0;

Value* call(const Ew& f, const char* recipe, std::vector<Value*> inputs) {
  return build_recipe_named(f.g(), recipe, inputs, {})[0];
}

Value* is_finite(const Ew& f, Value* v) { return f.not_(f.or_(f.isnan(v), f.isinf(v))); }

// The residual log P(a, x) - log p (lower) or log Q(a, x) - log q.
Value* residual(const Ew& f, Value* a, Value* x, Value* lower, Value* log_p, Value* log_q) {
  return f.where(lower, f.sub(f.log(call(f, "gammainc", {a, x})), log_p),
                 f.sub(f.log(call(f, "gammaincc", {a, x})), log_q));
}

// The small-x power law (p Gamma(a + 1))^(1/a), a lower bound of the root of
// P = p (P <= x^a / Gamma(a + 1)).
Value* power_law(const Ew& f, Value* a, Value* log_p) {
  return f.exp(f.div(f.add(log_p, call(f, "gammaln", {f.add(a, 1.0)})), a));
}

Value* initial_guess(const Ew& f, Value* a, Value* lower, Value* p, Value* q, Value* log_p, Value* log_q,
                     Value* lgamma_a, Value* power_law) {
  Value* lgamma_a1 = call(f, "gammaln", {f.add(a, 1.0)});
  Value* series = power_law;
  for (int i = 0; i < kGuessRefinements; ++i) {
    Value* ratio = f.min(f.div(series, f.add(a, 1.0)), f.c(0.9));
    series = f.exp(f.div(f.add(f.add(f.add(log_p, lgamma_a1), series), f.log(f.sub(1.0, ratio))), a));
  }
  // z = ndtri(p) = -sqrt 2 erfcinv(2 p), or -ndtri(q) in the upper branch.
  Value* z = f.where(lower, f.mul(call(f, "erfcinv", {f.mul(p, 2.0)}), -kSqrt2),
                     f.mul(call(f, "erfcinv", {f.mul(q, 2.0)}), kSqrt2));
  Value* cube_root = f.add(f.sub(1.0, f.div(f.c(1.0 / 9.0), a)), f.div(z, f.mul(f.sqrt(a), 3.0)));
  cube_root = f.max(cube_root, f.c(0.01));
  Value* wilson_hilferty = f.mul(a, f.mul(cube_root, f.sqr(cube_root)));
  Value* t = f.sub(f.neg(log_q), lgamma_a);
  Value* asymptotic = f.max(t, f.c(1e-3));
  for (int i = 0; i < kGuessRefinements; ++i) {
    Value* ratio = f.min(f.div(f.sub(a, 1.0), asymptotic), f.c(0.9));
    asymptotic = f.sub(f.add(t, f.mul(f.sub(a, 1.0), f.log(asymptotic))), f.log(f.sub(1.0, ratio)));
    asymptotic = f.max(asymptotic, f.c(1e-3));
  }
  Value* best = nullptr;
  Value* best_error = nullptr;
  for (Value* candidate : {series, wilson_hilferty, asymptotic}) {
    Value* r = f.abs(residual(f, a, candidate, lower, log_p, log_q));
    Value* error = f.where(is_finite(f, r), r, kInf);
    if (!best) {
      best = candidate;
      best_error = error;
      continue;
    }
    Value* better = f.lt(error, best_error);
    best = f.where(better, candidate, best);
    best_error = f.min(error, best_error);
  }
  return best;
}

Value* halley_step(const Ew& f, Value* a, Value* x, Value* lower, Value* log_p, Value* log_q, Value* lgamma_a) {
  Value* p_x = call(f, "gammainc", {a, x});
  Value* q_x = call(f, "gammaincc", {a, x});
  Value* g = f.where(lower, f.sub(f.log(p_x), log_p), f.sub(f.log(q_x), log_q));
  // x f(x) = x^a e^-x / Gamma(a).
  Value* x_density = f.exp(f.sub(f.sub(f.mul(a, f.log(x)), x), lgamma_a));
  Value* slope = f.where(lower, f.div(x_density, p_x), f.neg(f.div(x_density, q_x)));
  Value* curvature = f.mul(slope, f.sub(f.sub(a, x), slope));
  Value* newton = f.div(g, slope);
  Value* denominator = f.sub(1.0, f.div(f.mul(newton, curvature), f.mul(slope, 2.0)));
  Value* step = f.where(f.gt(denominator, 0.5), f.div(newton, denominator), newton);
  step = f.where(is_finite(f, step), f.max(f.min(step, f.c(kMaxLogStep)), f.c(-kMaxLogStep)), 0.0);
  return f.mul(x, f.exp(f.neg(step)));
}

Value* inverse_incomplete_gamma(const Ew& f, Value* a, Value* y, bool upper) {
  Value* nan_result = f.or_(f.or_(f.isnan(a), f.isnan(y)), f.or_(f.lt(a, 0.0), f.or_(f.lt(y, 0.0), f.gt(y, 1.0))));
  Value* y_zero = f.eq(y, 0.0);
  Value* y_one = f.eq(y, 1.0);
  Value* degenerate_a = f.or_(f.eq(a, 0.0), f.isinf(a));
  Value* special = f.or_(f.or_(nan_result, degenerate_a), f.or_(y_zero, y_one));
  // The iterations see only ordinary elements (others get a = 1, y = 1/2).
  a = f.where(special, 1.0, a);
  y = f.where(special, 0.5, y);

  Value* lower = upper ? f.gt(y, 0.5) : f.lt(y, 0.5);
  Value* p = upper ? f.sub(1.0, y) : y;
  Value* q = upper ? y : f.sub(1.0, y);
  // log(1 - y) by log1p: exact enough where 1 - y is not (the power law
  // below uses log p in both branches).
  Value* log_p = upper ? call(f, "log1p", {f.neg(y)}) : f.log(y);
  Value* log_q = upper ? f.log(y) : call(f, "log1p", {f.neg(y)});
  Value* lgamma_a = call(f, "gammaln", {a});

  Value* smallest = power_law(f, a, log_p);
  Value* x = initial_guess(f, a, lower, p, q, log_p, log_q, lgamma_a, smallest);
  for (int i = 0; i < kHalleySteps; ++i) x = halley_step(f, a, x, lower, log_p, log_q, lgamma_a);
  // Below 1e-30 the power law is the root to double precision (P = x^a /
  // Gamma(a + 1) (1 - a x / (a + 1) + ...)); it also gives the roots that
  // underflow (p = 1e-300 at a = 1/2 is x = 8e-601), which the bounded steps
  // could not reach.
  x = f.where(f.lt(smallest, 1e-30), smallest, x);

  // y = 0 is x = 0 for P (x = inf for Q), y = 1 the other way round.
  Value* result = f.where(y_zero, upper ? kInf : 0.0, f.where(y_one, upper ? 0.0 : kInf, x));
  Value* nan_here = f.or_(nan_result, f.and_(degenerate_a, f.not_(f.or_(y_zero, y_one))));
  return f.where(nan_here, kNaN, result);
}

std::vector<Value*> gammaincinv_core(const Ew& f, const std::vector<Value*>& in, const Attributes&) {
  return {inverse_incomplete_gamma(f, in[0], in[1], false)};
}

std::vector<Value*> gammainccinv_core(const Ew& f, const std::vector<Value*>& in, const Attributes&) {
  return {inverse_incomplete_gamma(f, in[0], in[1], true)};
}

}  // namespace

void add_incomplete_gamma_inverse_recipes(std::vector<RecipeInfo>& table) {
  table.push_back(float64_recipe("gammaincinv", gammaincinv_core, 2, "x with P(a, x) = y, the inverse of gammainc in x"));
  table.push_back(
      float64_recipe("gammainccinv", gammainccinv_core, 2, "x with Q(a, x) = y, the inverse of gammaincc in x"));
}

}  // namespace pytensor_onnx::recipes
