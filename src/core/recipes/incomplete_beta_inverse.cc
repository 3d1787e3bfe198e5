// The inverse of the regularized incomplete beta function in x: SciPy's
// betaincinv(a, b, y), the x in [0, 1] with I_x(a, b) = y, in float64 from
// standard ONNX ops.
//
// Method (an initial guess, then Halley steps on the forward recipe of
// incomplete_beta.cc, as incomplete_gamma_inverse.cc does for P and Q):
//   - The equation is solved on the side whose target is below 1/2, so the
//     target keeps its relative accuracy: I_t(A, B) = y with t = x,
//     (A, B) = (a, b) for y <= 1/2; else I_t(b, a) = 1 - y with t = 1 - x
//     (1 - y exact by Sterbenz's lemma, its log by log1p).
//   - It is solved for the log-odds u = log(t / (1 - t)), as
//     log I_t(A, B) = log target. The log-odds of a beta variable has the
//     log-concave density e^(A u) / (1 + e^u)^(A + B) for every A, B > 0, so
//     its CDF is log-concave in u: Newton (and Halley) iterates approach the
//     root monotonically after at most one overshoot, and t and 1 - t are
//     both formed from u without rounding the small one away (x = 1 - 1e-30
//     and x = 1e-300 are ordinary values of u).
//   - I_t(A, B) is evaluated on its small side: I_t(A, B) where t is
//     below the mean A / (A + B) (betainc's own switch), else
//     1 - I_1-t(B, A) through log1p; so a target of 1e-300 with the root
//     above 1/2 (A large) is resolved, and so is a root of 1e-62 when the
//     target is the upper 0.44. t and 1 - t go to betainc separately
//     (betainc_xy), both exact from u.
//   - Initial guess: of four candidates, the one with the smallest residual
//     (all four evaluated by one betainc call on their concatenation): the
//     small-x power law x = (y a B(a, b))^(1/a), its mirror
//     1 - x = ((1 - y) b B(a, b))^(1/b), the log-odds of the mean, log(a / b),
//     and the normal approximation of the log-odds (mean
//     psi(a) - psi(b), variance psi'(a) + psi'(b)).
//   - Six Halley steps in u with g = log I - log target,
//     g' = D / I (D = e^(A u) / (1 + e^u)^(A + B) / B(A, B), the density of u)
//     and g'' = g' (A - (A + B) t - g'); a step falls back to Newton where
//     Halley's denominator is below 1/2 and is bounded by 20 in u.
//   - Roots below e^-740 (subnormal or underflowing) are the power law's;
//     b = 1 and a = 1 have the closed forms y^(1/a) and 1 - (1 - y)^(1/b).
//   - Parameters above 1e10 (other than those closed forms) give NaN: the
//     forward function loses its accuracy there (betainc is tested to 1e7;
//     the inverse stays within 1e-11 of SciPy up to 1e10).
//
// Special values follow SciPy: NaN for NaN inputs, a <= 0, b <= 0 and y
// outside [0, 1]; then 0 for y = 0 and 1 for y = 1 (infinite parameters
// too); for 0 < y < 1 an infinite parameter gives NaN, except a = inf with
// b = 1 (1) and b = inf with a = 1 (0).
#include <cmath>
#include <limits>

#include "build_helpers.h"
#include "elementwise.h"
#include "loops.h"
#include "method_constants.h"
#include "recipes.h"
#include "registry.h"

namespace pytensor_onnx::recipes {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSqrt2 = 0x1.6a09e667f3bcdp+0;
using namespace betaincinv_method;

Value* call(const Ew& f, const char* recipe, std::vector<Value*> inputs) {
  return build_recipe_named(f.g(), recipe, std::move(inputs), {})[0];
}

Value* is_finite(const Ew& f, Value* v) { return f.not_(f.or_(f.isnan(v), f.isinf(v))); }

// 1 / (1 + e^-u), without overflow for either sign of u.
Value* sigmoid(const Ew& f, Value* u) {
  Value* e = f.exp(f.neg(f.abs(u)));
  Value* one_plus = f.add(e, 1.0);
  return f.where(f.ge(u, 0.0), f.div(1.0, one_plus), f.div(e, one_plus));
}

// log(1 + e^v), without overflow.
Value* softplus(const Ew& f, Value* v) { return f.add(f.max(v, f.c(0.0)), f.log(f.add(f.exp(f.neg(f.abs(v))), 1.0))); }

// The problem on its side: I_t(A, B) = exp(log_target), t = sigmoid(u).
struct Side {
  Value* a;
  Value* b;
  Value* log_target;
};

// log I_t(A, B) at t = sigmoid(u), from the small side of the function,
// with t and 1 - t both exact from u (betainc_xy): 1 - t of 1e-7 would
// otherwise carry t's rounding, 1e-9 relative.
Value* log_incomplete_beta(const Ew& f, const Side& s, Value* u) {
  Value* t = sigmoid(f, u);
  Value* one_minus_t = sigmoid(f, f.neg(u));
  Value* below_mean = f.le(t, f.div(s.a, f.add(s.a, s.b)));
  Value* value = call(f, "betainc_xy", {f.where(below_mean, s.a, s.b), f.where(below_mean, s.b, s.a),
                                        f.where(below_mean, t, one_minus_t), f.where(below_mean, one_minus_t, t)});
  return f.where(below_mean, f.log(value), call(f, "log1p", {f.neg(value)}));
}

// |log I - log target| at each of several candidate u (flat vectors of
// one length), by one betainc call on their concatenation.
std::vector<Value*> residuals(const Ew& f, const Side& s, const std::vector<Value*>& candidates) {
  GraphBuilder& g = f.g();
  auto concat = [&](const std::vector<Value*>& parts) {
    return g.op1("Concat", parts, {{"axis", int64_t{0}}});
  };
  const std::vector<Value*> a(candidates.size(), s.a), b(candidates.size(), s.b),
      target(candidates.size(), s.log_target);
  const Side all{concat(a), concat(b), concat(target)};
  Value* r = f.abs(f.sub(log_incomplete_beta(f, all, concat(candidates)), all.log_target));
  r = f.where(is_finite(f, r), r, kInf);
  Value* length = g.op1("Shape", {candidates[0]});
  std::vector<Value*> out;
  for (size_t i = 0; i < candidates.size(); ++i) {
    Value* start = g.op1("Mul", {length, g.int64s({static_cast<int64_t>(i)})});
    out.push_back(g.op1("Slice", {r, start, g.op1("Add", {start, length})}));
  }
  return out;
}

// log(e^l / (1 - e^l)) for l = log t < 0.
Value* logit_of_log(const Ew& f, Value* l) {
  l = f.min(l, f.c(std::log(0.5)));  // a power law past t = 1/2 is only a start
  return f.sub(l, call(f, "log1p", {f.neg(f.exp(l))}));
}

Value* halley_step(const Ew& f, const Side& s, Value* lbeta, Value* u) {
  Value* log_i = log_incomplete_beta(f, s, u);
  Value* g = f.sub(log_i, s.log_target);
  // log D = A log t + B log(1 - t) - log B(A, B) = -A softplus(-u) - B softplus(u) - lbeta.
  Value* log_density = f.sub(f.neg(f.add(f.mul(s.a, softplus(f, f.neg(u))), f.mul(s.b, softplus(f, u)))), lbeta);
  Value* slope = f.exp(f.sub(log_density, log_i));
  Value* t = sigmoid(f, u);
  Value* curvature = f.mul(slope, f.sub(f.sub(s.a, f.mul(f.add(s.a, s.b), t)), slope));
  Value* newton = f.div(g, slope);
  Value* denominator = f.sub(1.0, f.div(f.mul(newton, curvature), f.mul(slope, 2.0)));
  Value* step = f.where(f.gt(denominator, 0.5), f.div(newton, denominator), newton);
  step = f.where(is_finite(f, step), f.max(f.min(step, f.c(kMaxStep)), f.c(-kMaxStep)), 0.0);
  return f.sub(u, step);
}

Value* betaincinv(const Ew& f, Value* a_in, Value* b_in, Value* y_in) {
  GraphBuilder& g = f.g();
  // Flat vectors of the broadcast shape (the candidates are concatenated).
  Value* shape = g.op1("Shape", {f.add(f.add(a_in, b_in), y_in)});
  Value* flat = g.int64s({-1});
  auto flatten = [&](Value* v) { return g.op1("Reshape", {g.op1("Expand", {v, shape}), flat}); };
  Value* a_in_flat = flatten(a_in);
  Value* b_in_flat = flatten(b_in);
  Value* a = a_in_flat;
  Value* b = b_in_flat;
  Value* y = flatten(y_in);

  Value* nan_result = f.or_(f.or_(f.or_(f.isnan(a), f.isnan(b)), f.isnan(y)),
                            f.or_(f.or_(f.le(a, 0.0), f.le(b, 0.0)), f.or_(f.lt(y, 0.0), f.gt(y, 1.0))));
  Value* y_zero = f.eq(y, 0.0);
  Value* y_one = f.eq(y, 1.0);
  Value* a_inf = f.isinf(a);
  Value* b_inf = f.isinf(b);
  Value* special = f.or_(f.or_(nan_result, f.or_(y_zero, y_one)), f.or_(a_inf, b_inf));
  // The iterations see only ordinary elements (others get a = b = 2, y = 1/2).
  a = f.where(special, 2.0, a);
  b = f.where(special, 2.0, b);
  y = f.where(special, 0.5, y);

  Value* lower = f.le(y, 0.5);
  Value* log_y = f.log(y);
  Value* log_1my = call(f, "log1p", {f.neg(y)});
  Value* lgamma_a = call(f, "gammaln", {a});
  Value* lgamma_b = call(f, "gammaln", {b});
  Value* lbeta = f.sub(f.add(lgamma_a, lgamma_b), call(f, "gammaln", {f.add(a, b)}));
  const Side side{f.where(lower, a, b), f.where(lower, b, a), f.where(lower, log_y, log_1my)};

  // Candidates, as log-odds of x.
  Value* log_x_power = f.div(f.add(f.add(log_y, f.log(a)), lbeta), a);
  Value* log_1mx_power = f.div(f.add(f.add(log_1my, f.log(b)), lbeta), b);
  Value* from_below = logit_of_log(f, log_x_power);
  Value* from_above = f.neg(logit_of_log(f, log_1mx_power));
  Value* of_mean = f.sub(f.log(a), f.log(b));
  // z = ndtri(y) = -sqrt 2 erfcinv(2 y).
  Value* z = f.mul(call(f, "erfcinv", {f.mul(y, 2.0)}), -kSqrt2);
  Value* spread = f.sqrt(f.add(call(f, "trigamma", {a}), call(f, "trigamma", {b})));
  Value* normal = f.add(f.sub(call(f, "digamma", {a}), call(f, "digamma", {b})), f.mul(z, spread));
  normal = f.where(is_finite(f, normal), normal, of_mean);
  // On the side's variable t: u_t = u_x below, -u_x above.
  std::vector<Value*> candidates;
  for (Value* c : {from_below, from_above, of_mean, normal}) candidates.push_back(f.where(lower, c, f.neg(c)));
  const std::vector<Value*> r = residuals(f, side, candidates);
  Value* u = candidates[0];
  Value* best = r[0];
  for (size_t i = 1; i < candidates.size(); ++i) {
    Value* better = f.lt(r[i], best);
    u = f.where(better, candidates[i], u);
    best = f.min(r[i], best);
  }

  // The steps as one Loop (betainc is built once, in its body): an element
  // stops when its step no longer moves u.
  LoopResult steps = elementwise_loop(
      g, {u}, kHalleySteps,
      [&side, lbeta](GraphBuilder& body, Value*, const std::vector<Value*>& state) {
        const Ew e(body, DType::Float64);
        Value* next = halley_step(e, side, lbeta, state[0]);
        Value* moved = e.abs(e.sub(next, state[0]));
        return LoopStep{{next}, e.not_(e.gt(moved, e.mul(e.abs(next), 2 * kEpsilon)))};
      },
      "betaincinv_halley");
  u = steps.state[0];
  // x = t below, 1 - t = sigmoid(-u) above.
  Value* x = f.where(lower, sigmoid(f, u), sigmoid(f, f.neg(u)));
  // Roots the iteration cannot represent: the power laws (their
  // corrections are of the order of the root itself).
  // (On either side of y = 1/2: a tiny a puts the root of y = 0.99 at
  // 0.99^(1/a) = e^-1005 for a = 1e-5, where no log-odds iterate can go.)
  x = f.where(f.lt(log_x_power, kLogUnderflow), f.exp(log_x_power), x);
  x = f.where(f.lt(log_1mx_power, kLogUnderflow), 1.0, x);

  // b = 1 or a = 1: the closed forms x = y^(1/a) and
  // x = 1 - (1 - y)^(1/b) (exact for any size of the other parameter).
  x = f.where(f.eq(b, 1.0), f.exp(f.div(log_y, a)), x);
  x = f.where(f.eq(a, 1.0), f.neg(call(f, "expm1", {f.div(log_1my, b)})), x);
  // Beyond 1e10 the forward function (and so the root) is not accurate:
  // NaN rather than a number of unknown accuracy.
  Value* too_large = f.and_(f.gt(f.max(a, b), f.c(kLargestParameter)), f.not_(f.or_(f.eq(a, 1.0), f.eq(b, 1.0))));
  x = f.where(too_large, kNaN, x);
  // An infinite parameter (0 < y < 1): SciPy's closed forms of
  // I_x(a, 1) = x^a and I_x(1, b) = 1 - (1 - x)^b (1 at a = inf, 0 at
  // b = inf), NaN otherwise.
  Value* infinite = f.where(f.and_(a_inf, f.eq(b_in_flat, 1.0)), 1.0,
                            f.where(f.and_(b_inf, f.eq(a_in_flat, 1.0)), 0.0, kNaN));
  Value* result = f.where(f.or_(a_inf, b_inf), infinite, x);
  result = f.where(y_zero, 0.0, f.where(y_one, 1.0, result));
  result = f.where(nan_result, kNaN, result);
  return unflatten(g, result, shape);
}

std::vector<Value*> betaincinv_core(const Ew& f, const std::vector<Value*>& in, const Attributes&) {
  return {betaincinv(f, in[0], in[1], in[2])};
}

}  // namespace

void add_incomplete_beta_inverse_recipes(std::vector<RecipeInfo>& table) {
  table.push_back(float64_recipe("betaincinv", betaincinv_core, 3, "x with I_x(a, b) = y, the inverse of betainc in x"));
}

}  // namespace pytensor_onnx::recipes
