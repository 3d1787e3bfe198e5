// The modified Bessel functions of real order (SciPy's ive and kve):
// ive(v, x) = exp(-|x|) I_v(x) and kve(v, x) = exp(x) K_v(x), in float64
// from standard ONNX ops; and I0, I1 and their scaled forms i0e, i1e, from
// tables without iterations (what orders 0 and 1 given as constants use).
//
// Method, for nu = |v| and x > 0 (Temme's method as Numerical Recipes'
// bessik arranges it, with the power series and the large-x expansion
// where they are cheaper or more accurate):
//   - nu = mu + n with n = round(nu) and |mu| <= 1/2.
//   - K_mu and K_mu+1: for x <= 2 Temme's series (its gamma-function
//     factors from the Taylor series of 1/Gamma(1 + z) at 0, so nothing
//     cancels as mu -> 0); for x > 2 Steed's continued fraction CF2, which
//     gives exp(x) K directly. K_nu by the upward recurrence
//     K_k+1 = 2k/x K_k + K_k-1 (stable: K grows with the order), stopped
//     once it overflows.
//   - I_nu (v >= 0): the power series (x/2)^nu / Gamma(nu + 1)
//     sum (x^2/4)^k / (k! (nu + 1)_k) where x <= 2 or x^2 <= 4 (nu + 1)
//     (positive terms, no cancellation); Hankel's expansion
//     sum (-1)^k a_k(nu) / x^k / sqrt(2 pi x) for x >= max(20, nu^2 / 2);
//     between them the continued fraction CF1 for I'_nu / I_nu, the
//     downward recurrence to order mu (rescaled by 2^-500 when it grows),
//     and the Wronskian I_mu K'_mu - I'_mu K_mu = -1/x with K from CF2.
//   - v < 0: I_-nu = I_nu + (2/pi) sin(nu pi) K_nu; K_-nu = K_nu.
//   - x < 0: ive(v, x) = (-1)^v ive(v, |x|) for integer v, else NaN; kve NaN.
// Every iteration is an element-wise ONNX Loop (loops.h); an element that
// needs more than kMaxSteps steps (orders above ~10^4 with large x) is NaN.
#include <cmath>
#include <limits>

#include "bessel_common.h"
#include "bessel_ik_coefficients.h"
#include "build_helpers.h"
#include "elementwise.h"
#include "loops.h"
#include "recipes.h"
#include "registry.h"
#include "special_tables.h"

namespace pytensor_onnx::recipes {
namespace {

using namespace tables;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 0x1.921fb54442d18p+1;
using bessel::kEpsilon;
using bessel::kMaxSteps;
using bessel::kRecipGammaEven;
using bessel::kRecipGammaOdd;
using bessel::kRescale;
using bessel::kSinhOverX;
using bessel::small;
using bessel::zeros_like;

// exp(x) K_mu(x) and exp(x) K_mu+1(x), |mu| <= 1/2.
struct KPair {
  Value* k_mu;
  Value* k_mu1;
};

// Temme's series, for 0 < x <= 2 (other elements get x = 1: their values
// are discarded).
KPair k_temme(const Ew& f, Value* mu, Value* x, Value* use) {
  x = f.where(use, x, 1.0);
  Value* x2 = f.mul(x, 0.5);
  Value* pimu = f.mul(mu, kPi);
  Value* mu_is_0 = f.eq(mu, 0.0);
  Value* fact = f.where(mu_is_0, 1.0, f.div(pimu, f.op("Sin", {f.where(mu_is_0, 1.0, pimu)})));
  // -log(x / 2), with x / 2 not formed: it underflows for the smallest
  // subnormal x, where K_0 is still finite (744.4).
  Value* d = f.sub(std::log(2.0), f.log(x));
  Value* e = f.mul(mu, d);
  Value* ep = f.exp(e);
  Value* em = f.exp(f.neg(e));
  Value* small_e = f.lt(f.abs(e), 0.5);
  Value* sinh_over_e = f.where(small_e, f.poly(f.sqr(e), kSinhOverX.data(), kSinhOverX.size()),
                               f.div(f.sub(ep, em), f.mul(f.where(small_e, 1.0, e), 2.0)));
  Value* cosh_e = f.mul(f.add(ep, em), 0.5);
  Value* mu2 = f.sqr(mu);
  // gam1 = (1/Gamma(1 - mu) - 1/Gamma(1 + mu)) / (2 mu), gam2 their mean.
  Value* gam1 = f.neg(f.poly(mu2, kRecipGammaOdd.data(), kRecipGammaOdd.size()));
  Value* gam2 = f.poly(mu2, kRecipGammaEven.data(), kRecipGammaEven.size());
  Value* gampl = f.sub(gam2, f.mul(mu, gam1));  // 1 / Gamma(1 + mu)
  Value* gammi = f.add(gam2, f.mul(mu, gam1));  // 1 / Gamma(1 - mu)
  Value* ff = f.mul(fact, f.add(f.mul(gam1, cosh_e), f.mul(f.mul(gam2, sinh_over_e), d)));
  Value* p = f.div(f.mul(ep, 0.5), gampl);
  Value* q = f.div(f.mul(em, 0.5), gammi);
  Value* dd = f.sqr(x2);
  Value* zero = zeros_like(f, f.add(mu, x));
  Value* one = f.add(zero, 1.0);
  LoopResult r = elementwise_loop(
      f.g(), {ff, p, q, one, ff, p, zero}, kMaxSteps,
      [mu, mu2, dd](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        const Ew e(body, DType::Float64);
        Value *ff = s[0], *p = s[1], *q = s[2], *c = s[3], *sum = s[4], *sum1 = s[5], *i = s[6];
        Value* i1 = e.add(i, 1.0);
        Value* next_ff = e.div(e.add(e.mul(i1, ff), e.add(p, q)), e.sub(e.sqr(i1), mu2));
        Value* next_c = e.div(e.mul(c, dd), i1);
        Value* next_p = e.div(p, e.sub(i1, mu));
        Value* next_q = e.div(q, e.add(i1, mu));
        Value* term = e.mul(next_c, next_ff);
        Value* next_sum = e.add(sum, term);
        Value* next_sum1 = e.add(sum1, e.mul(next_c, e.sub(next_p, e.mul(i1, next_ff))));
        Value* done = small(e, e.abs(term), e.mul(e.abs(next_sum), kEpsilon));
        return LoopStep{{next_ff, next_p, next_q, next_c, next_sum, next_sum1, i1}, done};
      },
      "bessel_k_temme");
  Value* scale = f.exp(x);
  return {f.mul(r.state[4], scale), f.mul(f.mul(r.state[5], f.div(2.0, x)), scale)};
}

// Steed's continued fraction CF2, for x > 2 (other elements get x = 3).
KPair k_steed(const Ew& f, Value* mu, Value* x, Value* use) {
  x = f.where(use, x, 3.0);
  Value* b = f.mul(f.add(x, 1.0), 2.0);
  Value* d = f.div(1.0, b);
  Value* a1 = f.sub(0.25, f.sqr(mu));
  Value* zero = zeros_like(f, f.add(mu, x));
  Value* one = f.add(zero, 1.0);
  Value* s0 = f.add(f.mul(a1, d), 1.0);
  LoopResult r = elementwise_loop(
      f.g(), {f.neg(a1), a1, zero, one, a1, b, d, d, d, s0, one}, kMaxSteps,
      [](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        const Ew e(body, DType::Float64);
        Value *a = s[0], *c = s[1], *q1 = s[2], *q2 = s[3], *q = s[4], *b = s[5], *d = s[6], *delh = s[7],
              *h = s[8], *sum = s[9], *i = s[10];
        Value* i1 = e.add(i, 1.0);
        Value* next_a = e.sub(a, e.mul(i, 2.0));  // a - 2 (i1 - 1)
        Value* next_c = e.div(e.neg(e.mul(next_a, c)), i1);
        Value* q_new = e.div(e.sub(q1, e.mul(b, q2)), next_a);
        Value* next_q = e.add(q, e.mul(next_c, q_new));
        Value* next_b = e.add(b, 2.0);
        Value* next_d = e.div(1.0, e.add(next_b, e.mul(next_a, d)));
        Value* next_delh = e.mul(e.sub(e.mul(next_b, next_d), 1.0), delh);
        Value* next_h = e.add(h, next_delh);
        Value* dels = e.mul(next_q, next_delh);
        Value* next_sum = e.add(sum, dels);
        Value* done = small(e, e.abs(dels), e.mul(e.abs(next_sum), kEpsilon));
        return LoopStep{{next_a, next_c, q2, q_new, next_q, next_b, next_d, next_delh, next_h, next_sum, i1}, done};
      },
      "bessel_k_steed");
  Value* h = f.mul(a1, r.state[8]);
  Value* k_mu = f.div(f.sqrt(f.div(kPi / 2, x)), r.state[9]);
  Value* k_mu1 = f.div(f.mul(k_mu, f.sub(f.add(f.add(mu, x), 0.5), h)), x);
  return {k_mu, k_mu1};
}

KPair k_at_mu(const Ew& f, Value* mu, Value* x, Value* use) {
  Value* below = f.le(x, 2.0);
  KPair t = k_temme(f, mu, x, f.and_(use, below));
  KPair s = k_steed(f, mu, x, f.and_(use, f.not_(below)));
  return {f.where(below, t.k_mu, s.k_mu), f.where(below, t.k_mu1, s.k_mu1)};
}

// exp(x) K_nu(x) from K_mu, K_mu+1 by n upward steps (n = 0: K_mu).
Value* k_upward(const Ew& f, Value* mu, Value* n, Value* x, const KPair& start) {
  Value* zero = zeros_like(f, f.add(n, x));
  LoopResult r = elementwise_loop(
      f.g(), {start.k_mu, start.k_mu1, zero}, kMaxSteps,
      [mu, n, x](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        const Ew e(body, DType::Float64);
        Value *k = s[0], *k1 = s[1], *i = s[2];
        Value* i1 = e.add(i, 1.0);
        Value* next = e.add(e.mul(e.div(e.mul(e.add(mu, i1), 2.0), x), k1), k);
        Value* step = e.lt(i, n);
        Value* next_k = e.where(step, k1, k);
        Value* next_k1 = e.where(step, next, k1);
        Value* done = e.or_(e.ge(i1, n), e.isinf(next_k));
        return LoopStep{{next_k, next_k1, i1}, done};
      },
      "bessel_k_upward");
  // Stopped by overflow: K_nu is larger still.
  Value* overflowed = f.isinf(r.state[0]);
  return f.where(r.converged, f.where(overflowed, kInf, r.state[0]), kNaN);
}

// exp(x) K_nu(x) for nu >= 0, x > 0 (flat vectors).
Value* kve_positive(const Ew& f, Value* nu, Value* x, Value* use) {
  Value* n = f.round(nu);
  Value* mu = f.sub(nu, n);
  n = f.where(use, n, 0.0);
  KPair start = k_at_mu(f, mu, x, use);
  return k_upward(f, mu, n, x, start);
}

// exp(-x) I_nu(x) by the power series (x <= 2 or x^2 <= 4 (nu + 1)).
Value* ive_series(const Ew& f, Value* nu, Value* x, Value* lgamma_nu1, Value* use) {
  Value* y = f.where(use, f.mul(f.sqr(x), 0.25), 0.0);
  Value* nu_safe = f.where(use, nu, 0.0);
  Value* one = f.add(zeros_like(f, f.add(y, nu_safe)), 1.0);
  LoopResult r = bessel::power_series(f, nu_safe, y, one, false, "bessel_i_series");
  // (x/2)^nu / Gamma(nu + 1) exp(-x); nu log(x/2) is 0 for nu = 0.
  Value* nu_log = f.where(f.eq(nu, 0.0), 0.0, f.mul(nu, f.sub(f.log(x), std::log(2.0))));
  Value* prefactor = f.exp(f.sub(f.sub(nu_log, lgamma_nu1), x));
  return f.where(r.converged, f.mul(prefactor, r.state[0]), kNaN);
}

// exp(-x) I_nu(x) by Hankel's expansion (x >= max(20, nu^2 / 2)).
Value* ive_hankel(const Ew& f, Value* nu, Value* x, Value* use) {
  Value* xs = f.where(use, x, 1e300);
  Value* m = f.mul(f.sqr(f.where(use, nu, 0.0)), 4.0);
  Value* one = f.add(zeros_like(f, f.add(xs, m)), 1.0);
  LoopResult r = elementwise_loop(
      f.g(), {one, one, f.sub(one, 1.0)}, bessel::kHankelITerms,
      [m, xs](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        const Ew e(body, DType::Float64);
        Value *sum = s[0], *term = s[1], *k = s[2];
        Value* k1 = e.add(k, 1.0);
        Value* odd = e.sub(e.mul(k1, 2.0), 1.0);
        Value* next_term = e.neg(e.div(e.mul(term, e.sub(m, e.sqr(odd))), e.mul(e.mul(k1, 8.0), xs)));
        Value* next_sum = e.add(sum, next_term);
        return LoopStep{{next_sum, next_term, k1}, small(e, e.abs(next_term), e.mul(e.abs(next_sum), kEpsilon))};
      },
      "bessel_i_hankel");
  Value* value = f.div(r.state[0], f.sqrt(f.mul(xs, 2.0 * kPi)));
  return f.where(r.converged, value, kNaN);
}

// exp(-x) I_nu(x) by CF1, the downward recurrence and the Wronskian with
// K from CF2 (2 < x < max(20, nu^2 / 2)).
Value* ive_temme(const Ew& f, Value* nu, Value* x, Value* use) {
  Value* xs = f.where(use, x, 3.0);
  Value* nus = f.where(use, nu, 0.0);
  Value* n = f.round(nus);
  Value* mu = f.sub(nus, n);
  Value* xi = f.div(1.0, xs);
  Value* xi2 = f.mul(xi, 2.0);
  // CF1: h = I'_nu / I_nu (modified Lentz).
  Value* h0 = f.max(f.mul(nus, xi), f.c(1e-300));
  Value* zero = zeros_like(f, f.add(nus, xs));
  LoopResult cf1 = elementwise_loop(
      f.g(), {h0, f.mul(xi2, nus), zero, h0}, kMaxSteps,
      [xi2](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        const Ew e(body, DType::Float64);
        Value *h = s[0], *b = s[1], *d = s[2], *c = s[3];
        Value* next_b = e.add(b, xi2);
        Value* next_d = e.div(1.0, e.add(next_b, d));
        Value* next_c = e.add(next_b, e.div(1.0, c));
        Value* del = e.mul(next_c, next_d);
        return LoopStep{{e.mul(h, del), next_b, next_d, next_c}, small(e, e.abs(e.sub(del, 1.0)), e.c(kEpsilon))};
      },
      "bessel_i_cf1");
  // Downward recurrence from (I_nu, I'_nu) = (1, h) to order mu, rescaled.
  Value* one = f.add(zero, 1.0);
  bessel::Downward down = bessel::downward_recurrence(f, one, cf1.state[0], nus, xi, n, +1.0, "bessel_i_downward");
  Value* ril = down.value;
  Value* f_mu = f.div(down.derivative, ril);
  Value* count = down.rescales;
  KPair k = k_steed(f, mu, xs, use);
  Value* k_prime = f.sub(f.mul(f.mul(mu, xi), k.k_mu), k.k_mu1);
  Value* i_mu = f.div(xi, f.sub(f.mul(f_mu, k.k_mu), k_prime));
  Value* value = f.div(i_mu, ril);  // times I_nu / I_mu of the recurrence (I_nu = 1 there)
  value = f.where(f.ge(count, 1.0), f.mul(value, kRescale), value);
  value = f.where(f.ge(count, 2.0), f.mul(value, kRescale), value);
  value = f.where(f.ge(count, 3.0), 0.0, value);
  Value* ok = f.and_(f.and_(cf1.converged, down.converged), f.not_(f.isnan(value)));
  return f.where(ok, value, kNaN);
}

// Flat copies of v and x broadcast together, and the broadcast shape.
struct FlatPair {
  Value* v;
  Value* x;
  Value* shape;
};

FlatPair flatten(const Ew& f, Value* v, Value* x) {
  GraphBuilder& g = f.g();
  Value* shape = g.op1("Shape", {f.add(v, x)});
  Value* flat = g.int64s({-1});
  return {g.op1("Reshape", {g.op1("Expand", {v, shape}), flat}), g.op1("Reshape", {g.op1("Expand", {x, shape}), flat}),
          shape};
}

// sin(nu pi) = (-1)^k sin((nu - k) pi) with k = round(nu): the reduced
// argument is exact and in [-1/2, 1/2], so the result keeps its relative
// accuracy next to the integers (where it is exactly 0).
Value* sin_pi(const Ew& f, Value* nu) {
  Value* k = f.round(nu);
  Value* odd = f.not_(f.is_integer(f.mul(k, 0.5)));
  Value* s = f.op("Sin", {f.mul(f.sub(nu, k), kPi)});
  return f.where(odd, f.neg(s), s);
}

Value* kve(const Ew& f, Value* v_in, Value* x_in) {
  FlatPair p = flatten(f, v_in, x_in);
  Value *v = p.v, *x = p.x;
  Value* nu = f.abs(v);
  Value* finite = f.and_(f.not_(f.or_(f.isnan(nu), f.isinf(nu))), f.not_(f.or_(f.isnan(x), f.isinf(x))));
  Value* use = f.and_(finite, f.gt(x, 0.0));
  Value* value = kve_positive(f, f.where(use, nu, 0.0), f.where(use, x, 1.0), use);
  value = f.where(use, value, kNaN);
  // SciPy: inf at x = 0 whatever the order (NaN too), NaN for x < 0.
  value = f.where(f.eq(x, 0.0), kInf, value);
  return unflatten(f.g(), value, p.shape);
}

Value* ive(const Ew& f, Value* v_in, Value* x_in) {
  FlatPair p = flatten(f, v_in, x_in);
  Value *v = p.v, *x = p.x;
  Value* nu = f.abs(v);
  Value* ax = f.abs(x);
  Value* integer_v = f.is_integer(v);
  Value* finite = f.and_(f.not_(f.or_(f.isnan(nu), f.isinf(nu))), f.not_(f.or_(f.isnan(x), f.isinf(x))));
  // Negative x: real only for integer orders.
  Value* use = f.and_(f.and_(finite, f.gt(ax, 0.0)), f.or_(f.ge(x, 0.0), integer_v));
  Value* nus = f.where(use, nu, 0.0);
  Value* xs = f.where(use, ax, 1.0);

  Value* series_use = f.and_(use, f.or_(f.le(xs, 2.0), f.le(f.sqr(xs), f.mul(f.add(nus, 1.0), 16.0))));
  Value* hankel_use =
      f.and_(f.and_(use, f.not_(series_use)), f.ge(xs, f.max(f.c(20.0), f.mul(f.sqr(nus), 0.5))));
  Value* temme_use = f.and_(f.and_(use, f.not_(series_use)), f.not_(hankel_use));
  Value* lgamma_nu1 = build_recipe_named(f.g(), "gammaln", {f.add(nus, 1.0)}, {})[0];
  // ive <= (x/2)^nu / Gamma(nu + 1): where that underflows, the value is 0
  // (and the series, which would need many terms, is not summed).
  Value* log_bound = f.sub(f.where(f.eq(nus, 0.0), 0.0, f.mul(nus, f.sub(f.log(xs), std::log(2.0)))), lgamma_nu1);
  Value* underflow = f.lt(log_bound, -760.0);
  series_use = f.and_(series_use, f.not_(underflow));
  temme_use = f.and_(temme_use, f.not_(underflow));
  Value* value = ive_series(f, nus, xs, lgamma_nu1, series_use);
  value = f.where(hankel_use, ive_hankel(f, nus, xs, hankel_use), value);
  value = f.where(temme_use, ive_temme(f, nus, xs, temme_use), value);
  value = f.where(underflow, 0.0, value);

  // Negative non-integer orders: + (2/pi) sin(nu pi) K_nu(x) exp(-x), as
  // exp(x) K_nu times exp(-2x).
  Value* reflect = f.and_(use, f.and_(f.lt(v, 0.0), f.not_(integer_v)));
  Value* k = kve_positive(f, f.where(reflect, nus, 0.5), f.where(reflect, xs, 1.0), reflect);
  Value* k_part = f.mul(f.mul(sin_pi(f, nus), 2.0 / kPi), f.mul(k, f.exp(f.mul(xs, -2.0))));
  // (0 * inf where K overflows and exp(-2x) underflows cannot happen: K
  // overflows only for small x.)
  value = f.where(reflect, f.add(value, k_part), value);
  // x < 0 (integer orders): (-1)^v.
  Value* odd = f.not_(f.is_integer(f.mul(nus, 0.5)));
  value = f.where(f.and_(f.lt(x, 0.0), odd), f.neg(value), value);
  value = f.where(use, value, kNaN);
  // x = 0: 1 for v = 0, 0 for other integer and for positive orders; NaN
  // for negative non-integer orders (SciPy; I_v itself is infinite there).
  Value* at_zero = f.where(f.eq(v, 0.0), 1.0, f.where(f.or_(f.gt(v, 0.0), integer_v), 0.0, kNaN));
  value = f.where(f.and_(f.eq(x, 0.0), f.not_(f.or_(f.isnan(v), f.isinf(v)))), at_zero, value);
  return unflatten(f.g(), value, p.shape);
}

// iv = exp(|x|) ive, the exponential applied as two halves (finite up to
// where I_v itself overflows); inf at x = 0 for negative non-integer orders.
Value* iv(const Ew& f, Value* v, Value* x) {
  Value* scaled = ive(f, v, x);
  Value* half = f.exp(f.mul(f.abs(x), 0.5));
  Value* value = f.mul(f.mul(scaled, half), half);
  Value* pole = f.and_(f.eq(x, 0.0), f.and_(f.lt(v, 0.0), f.not_(f.or_(f.is_integer(v), f.isinf(v)))));
  return f.where(pole, kInf, value);
}

// --- orders 0 and 1 -------------------------------------------------------

// exp(-|x|) I0(x), exp(-|x|) I1(x): tables in |x| up to 8 (I1 / x there, so
// I1 keeps its sign and relative accuracy at tiny x), and beyond in
// w = 8 / |x| of sqrt(|x|) exp(-|x|) I_v (smooth, tending to 1/sqrt(2 pi)).
// The one look-up of both tables at a = |x|: small's value in a where
// a <= 8, large's in w = 8 / a elsewhere.
Value* bessel_table(const Ew& f, Value* a, Value* small_a, const PiecewiseTable& small, const PiecewiseTable& large) {
  return f.tables({{a, &small, small_a}, {f.div(8.0, a), &large, nullptr}});
}

Value* i0e_core(const Ew& f, Value* x) {
  Value* a = f.abs(x);
  Value* small = f.le(a, 8.0);
  Value* table = bessel_table(f, a, small, kI0eSmall, kI0eLarge);
  return f.where(small, table, f.div(table, f.sqrt(a)));
}

Value* i1e_core(const Ew& f, Value* x) {
  Value* a = f.abs(x);
  Value* small = f.le(a, 8.0);
  Value* table = bessel_table(f, a, small, kI1eSmallOverX, kI1eLarge);
  Value* large = f.mul(f.sign(x), f.div(table, f.sqrt(a)));
  return f.where(small, f.mul(x, table), large);
}

// I_v(x) = exp(|x|) ive(x), with exp(|x|) applied as two halves so the
// result is finite up to where I_v itself overflows (|x| ~ 713.9).
Value* unscale_bessel(const Ew& f, Value* x, Value* scaled) {
  Value* a = f.abs(x);
  Value* half = f.exp(f.mul(a, 0.5));
  return f.mul(f.mul(scaled, half), half);
}

// At +-inf this is 0 * inf = NaN, as in SciPy (cephes' i0 and i1).
Value* i0_core(const Ew& f, Value* x) { return unscale_bessel(f, x, i0e_core(f, x)); }
Value* i1_core(const Ew& f, Value* x) { return unscale_bessel(f, x, i1e_core(f, x)); }

}  // namespace

void add_bessel_ik_recipes(std::vector<RecipeInfo>& table) {
  table.push_back(float64_recipe("ive", ive, "exp(-|x|) I_v(x), real order v (SciPy's ive)"));
  table.push_back(float64_recipe("iv", iv, "I_v(x), real order v (SciPy's iv)"));
  table.push_back(float64_recipe("kve", kve, "exp(x) K_v(x), real order v (SciPy's kve)"));
  table.push_back(float64_recipe("i0", i0_core, "the modified Bessel function of the first kind of order 0"));
  table.push_back(float64_recipe("i1", i1_core, "the modified Bessel function of the first kind of order 1"));
  table.push_back(float64_recipe("i0e", i0e_core, "exp(-|x|) I0(x)"));
  table.push_back(float64_recipe("i1e", i1e_core, "exp(-|x|) I1(x)"));
}

}  // namespace pytensor_onnx::recipes
