// The Bessel function of the first kind of real order, J_v(x) (SciPy's jv),
// in float64 from standard ONNX ops; and J0, J1 (SciPy's j0, j1) from tables
// without iterations (what orders 0 and 1 given as constants use).
//
// Method, for x > 0 (negative x: (-1)^v J_v(|x|) for integer v, else NaN):
//   - Integer orders are taken as |v| with the sign (-1)^v.
//   - The power series (x/2)^v / Gamma(v + 1) sum (-x^2/4)^k / (k! (v + 1)_k)
//     where x <= 2 or x^2 <= 4 (v + 1): below the first zero of J_v, so the
//     alternating terms cancel by at most a factor e. Negative non-integer
//     orders use it as is (1 / Gamma(v + 1) of either sign).
//   - Hankel's expansion sqrt(2 / (pi x)) (P cos chi - Q sin chi),
//     chi = x - (v/2 + 1/4) pi, where x >= max(20, v^2 / 2), with cos chi and
//     sin chi from cos x, sin x (accurate for large x: trig.cc) and the exact
//     reduction of (v/2 + 1/4) mod 2 (sinpi/cospi).
//   - Between them, where x >= max(20, |v|) (below the turning point):
//     Hankel's expansion for J and Y at the orders mu = |v| - floor(|v|)
//     and mu + 1, then the recurrence upward to |v| (stable for both there).
//   - Elsewhere (2 < x < max(20, |v|)) the method of Numerical Recipes'
//     bessjy: the continued fraction CF1 for J'_nu / J_nu (it converges in
//     O(max(x, 1)) steps, hence only below 20 or the order), the downward
//     recurrence to an order mu below x + 1/2 (rescaled by 2^-500 when it
//     grows), Steed's complex continued fraction CF2 for
//     (J'_mu + i Y'_mu) / (J_mu + i Y_mu) and the Wronskian; Y by the upward
//     recurrence.
//   - Negative non-integer orders in the last two regions:
//     J_-nu = cos(nu pi) J_nu - sin(nu pi) Y_nu.
// Near the zeros of J_v the result has absolute accuracy (a few ulp of the
// amplitude sqrt(2 / (pi x))), as every evaluation from a phase has.
// Every iteration is an element-wise Loop; an element that needs more than
// kMaxSteps steps (orders above ~3 10^4) is NaN.
#include <cmath>
#include <limits>

#include "bessel_common.h"
#include "bessel_j01_tables.h"
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
constexpr double kTiny = 1e-300;
using bessel::kEpsilon;
using bessel::kMaxSteps;
using bessel::kRescale;
using bessel::small;
using bessel::zeros_like;

Value* call(const Ew& f, const char* recipe, Value* x) { return build_recipe_named(f.g(), recipe, {x}, {})[0]; }

// Whether the integer k is odd.
Value* odd(const Ew& f, Value* k) { return f.not_(f.is_integer(f.mul(k, 0.5))); }

// The sign of Gamma(w) away from its poles: negative for w in (-1, 0),
// (-3, -2), ...
Value* gamma_sign(const Ew& f, Value* w) {
  return f.where(f.and_(f.lt(w, 0.0), odd(f, f.floor(w))), -1.0, 1.0);
}

// J_w(x) by the power series (w > -1 or w a negative non-integer; x > 0).
Value* j_series(const Ew& f, Value* w, Value* x, Value* use) {
  Value* ws = f.where(use, w, 0.0);
  Value* y = f.where(use, f.mul(f.sqr(x), 0.25), 0.0);
  Value* one = f.add(zeros_like(f, f.add(ws, y)), 1.0);
  LoopResult r = bessel::power_series(f, ws, y, one, true, "bessel_j_series");
  // (x/2)^w / Gamma(w + 1), w log(x/2) taken as 0 at w = 0.
  Value* w_log = f.where(f.eq(ws, 0.0), 0.0, f.mul(ws, f.sub(f.log(x), std::log(2.0))));
  Value* prefactor = f.mul(gamma_sign(f, f.add(ws, 1.0)), f.exp(f.sub(w_log, call(f, "gammaln", f.add(ws, 1.0)))));
  return f.where(r.converged, f.mul(prefactor, r.state[0]), kNaN);
}

// cos(x - phi pi) and sin(x - phi pi) with phi = v/2 + 1/4.
std::pair<Value*, Value*> shifted_cos_sin(const Ew& f, Value* v, Value* x) {
  Value* phi = f.add(f.mul(v, 0.5), 0.25);
  phi = f.sub(phi, f.mul(f.round(f.mul(phi, 0.5)), 2.0));  // mod 2, exact
  Value* cp = call(f, "cospi_float64", phi);
  Value* sp = call(f, "sinpi_float64", phi);
  Value* cx = f.op("Cos", {x});
  Value* sx = f.op("Sin", {x});
  return {f.add(f.mul(cx, cp), f.mul(sx, sp)), f.sub(f.mul(sx, cp), f.mul(cx, sp))};
}

struct JY {
  Value* j;
  Value* y;
};

// J_v(x) and Y_v(x) by Hankel's expansion (x >= max(20, v^2 / 2)):
// sqrt(2 / (pi x)) (P cos chi - Q sin chi) and (P sin chi + Q cos chi).
JY jy_hankel(const Ew& f, Value* v, Value* x, Value* use) {
  Value* xs = f.where(use, x, 1e300);
  Value* vs = f.where(use, v, 0.0);
  Value* m = f.mul(f.sqr(vs), 4.0);
  Value* zero = zeros_like(f, f.add(xs, m));
  Value* one = f.add(zero, 1.0);
  // State: P, Q, the term t_k = a_k(v) / x^k, k.
  LoopResult r = elementwise_loop(
      f.g(), {one, zero, one, zero}, bessel::kHankelJYTerms,
      [m, xs](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        const Ew e(body, DType::Float64);
        Value *p = s[0], *q = s[1], *term = s[2], *k = s[3];
        Value* k1 = e.add(k, 1.0);
        Value* odd_factor = e.sub(e.mul(k1, 2.0), 1.0);
        Value* next_term = e.div(e.mul(term, e.sub(m, e.sqr(odd_factor))), e.mul(e.mul(k1, 8.0), xs));
        // k1 mod 4: 1 -> +Q, 2 -> -P, 3 -> -Q, 0 -> +P.
        Value* quarter = e.sub(k1, e.mul(e.floor(e.mul(k1, 0.25)), 4.0));
        Value* to_q = odd(e, k1);
        Value* negative = e.or_(e.eq(quarter, 2.0), e.eq(quarter, 3.0));
        Value* signed_term = e.where(negative, e.neg(next_term), next_term);
        Value* next_p = e.where(to_q, p, e.add(p, signed_term));
        Value* next_q = e.where(to_q, e.add(q, signed_term), q);
        Value* size = e.add(e.abs(next_p), e.abs(next_q));
        return LoopStep{{next_p, next_q, next_term, k1}, small(e, e.abs(next_term), e.mul(size, kEpsilon))};
      },
      "bessel_j_hankel");
  auto [c, s] = shifted_cos_sin(f, vs, xs);
  Value* amplitude = f.sqrt(f.div(2.0 / kPi, xs));
  Value* p = r.state[0];
  Value* q = r.state[1];
  Value* j = f.mul(amplitude, f.sub(f.mul(p, c), f.mul(q, s)));
  Value* y = f.mul(amplitude, f.add(f.mul(p, s), f.mul(q, c)));
  return {f.where(r.converged, j, kNaN), f.where(r.converged, y, kNaN)};
}

// J_nu(x) and Y_nu(x) for nu >= 0 and x >= max(20, nu): Hankel's expansion
// at the orders mu = nu - floor(nu) and mu + 1, then the three-term
// recurrence upward to nu. Below the turning point (order <= x) J and Y
// oscillate with the same amplitude, so the recurrence is stable for both;
// it takes floor(nu) steps where the continued fraction CF1 of Steed's
// method would take about x (and lose ~1e-9 over 10^4 steps).
JY jy_upward(const Ew& f, Value* nu, Value* x, Value* use) {
  Value* xs = f.where(use, x, 20.0);
  Value* nus = f.where(use, nu, 0.0);
  Value* n = f.floor(nus);
  Value* mu = f.sub(nus, n);
  JY first = jy_hankel(f, mu, xs, use);
  JY second = jy_hankel(f, f.add(mu, 1.0), xs, use);
  Value* xi2 = f.div(2.0, xs);
  Value* one = f.add(zeros_like(f, f.add(n, xs)), 1.0);
  // State: J_k, J_k+1, Y_k, Y_k+1, i with k = mu + i; n - 1 steps take
  // J_mu+1 to J_nu in the second slot.
  Value* steps = f.sub(n, 1.0);
  LoopResult up = elementwise_loop(
      f.g(), {first.j, second.j, first.y, second.y, f.sub(one, 1.0)}, kMaxSteps,
      [mu, steps, xi2](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        const Ew e(body, DType::Float64);
        Value *j0 = s[0], *j1 = s[1], *y0 = s[2], *y1 = s[3], *i = s[4];
        Value* i1 = e.add(i, 1.0);
        Value* factor = e.mul(e.add(mu, i1), xi2);
        Value* step = e.lt(i, steps);
        Value* j2 = e.sub(e.mul(factor, j1), j0);
        Value* y2 = e.sub(e.mul(factor, y1), y0);
        return LoopStep{{e.where(step, j1, j0), e.where(step, j2, j1), e.where(step, y1, y0), e.where(step, y2, y1), i1},
                        e.ge(i1, steps)};
      },
      "bessel_jy_upward");
  Value* at_zero = f.eq(n, 0.0);
  Value* j = f.where(at_zero, first.j, up.state[1]);
  Value* y = f.where(at_zero, first.y, up.state[3]);
  return {f.where(up.converged, j, kNaN), f.where(up.converged, y, kNaN)};
}

// J_nu(x) and Y_nu(x) for nu >= 0 and x > 2 (NR's bessjy, x >= 2 branch).
JY jy_steed(const Ew& f, Value* nu, Value* x, Value* use) {
  Value* xs = f.where(use, x, 3.0);
  Value* nus = f.where(use, nu, 0.0);
  Value* n = f.max(f.c(0.0), f.floor(f.add(f.sub(nus, xs), 1.5)));
  Value* mu = f.sub(nus, n);
  Value* xi = f.div(1.0, xs);
  Value* xi2 = f.mul(xi, 2.0);
  Value* zero = zeros_like(f, f.add(nus, xs));
  Value* one = f.add(zero, 1.0);
  // CF1: h = J'_nu / J_nu (modified Lentz), sign = sign of J_nu relative to
  // the recurrence's start.
  Value* h0 = f.max(f.mul(nus, xi), f.c(kTiny));
  LoopResult cf1 = elementwise_loop(
      f.g(), {h0, f.mul(xi2, nus), zero, h0, one}, kMaxSteps,
      [xi2](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        const Ew e(body, DType::Float64);
        Value *h = s[0], *b = s[1], *d = s[2], *c = s[3], *sign = s[4];
        auto away_from_0 = [&](Value* v) { return e.where(e.lt(e.abs(v), kTiny), kTiny, v); };
        Value* next_b = e.add(b, xi2);
        Value* next_d = e.div(1.0, away_from_0(e.sub(next_b, d)));
        Value* next_c = away_from_0(e.sub(next_b, e.div(1.0, c)));
        Value* del = e.mul(next_c, next_d);
        Value* next_sign = e.where(e.lt(next_d, 0.0), e.neg(sign), sign);
        return LoopStep{{e.mul(h, del), next_b, next_d, next_c, next_sign},
                        small(e, e.abs(e.sub(del, 1.0)), e.c(kEpsilon))};
      },
      "bessel_j_cf1");
  Value* start = cf1.state[4];
  // Downward recurrence from (J_nu, J'_nu) = (sign, sign h) to order mu.
  bessel::Downward down =
      bessel::downward_recurrence(f, start, f.mul(start, cf1.state[0]), nus, xi, n, -1.0, "bessel_j_downward");
  Value* rjl = f.where(f.eq(down.value, 0.0), kEpsilon, down.value);
  Value* f_mu = f.div(down.derivative, rjl);
  Value* count = down.rescales;
  // CF2 (Steed, complex): p + i q = (J'_mu + i Y'_mu) / (J_mu + i Y_mu).
  Value* a0 = f.sub(0.25, f.sqr(mu));
  Value* p0 = f.mul(xi, -0.5);
  Value* br = f.mul(xs, 2.0);
  Value* fact0 = f.div(f.mul(a0, xi), f.add(f.sqr(p0), 1.0));
  Value* cr0 = f.add(br, fact0);        // br + q fact, q = 1
  Value* ci0 = f.add(f.mul(p0, fact0), 2.0);  // bi + p fact, bi = 2
  Value* den0 = f.add(f.sqr(br), 4.0);
  Value* dr0 = f.div(br, den0);
  Value* di0 = f.div(-2.0, den0);
  Value* dlr0 = f.sub(f.mul(cr0, dr0), f.mul(ci0, di0));
  Value* dli0 = f.add(f.mul(cr0, di0), f.mul(ci0, dr0));
  Value* p1 = f.sub(f.mul(p0, dlr0), dli0);  // p dlr - q dli, q = 1
  Value* q1 = f.add(f.mul(p0, dli0), dlr0);  // p dli + q dlr
  LoopResult cf2 = elementwise_loop(
      f.g(), {a0, f.add(zero, 2.0), dr0, di0, cr0, ci0, p1, q1, one}, kMaxSteps,
      [br](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        const Ew e(body, DType::Float64);
        Value *a = s[0], *bi = s[1], *dr = s[2], *di = s[3], *cr = s[4], *ci = s[5], *p = s[6], *q = s[7], *i = s[8];
        Value* i1 = e.add(i, 1.0);
        Value* next_a = e.add(a, e.mul(i, 2.0));  // a + 2 (i1 - 1)
        Value* next_bi = e.add(bi, 2.0);
        Value* ndr = e.add(e.mul(next_a, dr), br);
        Value* ndi = e.add(e.mul(next_a, di), next_bi);
        ndr = e.where(e.lt(e.add(e.abs(ndr), e.abs(ndi)), kTiny), kTiny, ndr);
        Value* fact = e.div(next_a, e.add(e.sqr(cr), e.sqr(ci)));
        Value* ncr = e.add(br, e.mul(cr, fact));
        Value* nci = e.sub(next_bi, e.mul(ci, fact));
        ncr = e.where(e.lt(e.add(e.abs(ncr), e.abs(nci)), kTiny), kTiny, ncr);
        Value* den = e.add(e.sqr(ndr), e.sqr(ndi));
        ndr = e.div(ndr, den);
        ndi = e.neg(e.div(ndi, den));
        Value* dlr = e.sub(e.mul(ncr, ndr), e.mul(nci, ndi));
        Value* dli = e.add(e.mul(ncr, ndi), e.mul(nci, ndr));
        Value* np = e.sub(e.mul(p, dlr), e.mul(q, dli));
        Value* nq = e.add(e.mul(p, dli), e.mul(q, dlr));
        Value* done = small(e, e.add(e.abs(e.sub(dlr, 1.0)), e.abs(dli)), e.c(kEpsilon));
        return LoopStep{{next_a, next_bi, ndr, ndi, ncr, nci, np, nq, i1}, done};
      },
      "bessel_jy_cf2");
  Value* p = cf2.state[6];
  Value* q = cf2.state[7];
  Value* w = f.div(2.0 / kPi, xs);
  Value* gam = f.div(f.sub(p, f_mu), q);
  Value* j_mu = f.sqrt(f.div(w, f.add(f.mul(f.sub(p, f_mu), gam), q)));
  j_mu = f.where(f.lt(rjl, 0.0), f.neg(j_mu), j_mu);
  Value* y_mu = f.mul(j_mu, gam);
  Value* y_mu_prime = f.mul(y_mu, f.add(p, f.div(q, gam)));
  Value* y_mu1 = f.sub(f.mul(f.mul(mu, xi), y_mu), y_mu_prime);
  // J_nu = start J_mu / rjl, with the rescaling undone.
  Value* j = f.mul(start, f.div(j_mu, rjl));
  j = f.where(f.ge(count, 1.0), f.mul(j, kRescale), j);
  j = f.where(f.ge(count, 2.0), f.mul(j, kRescale), j);
  j = f.where(f.ge(count, 3.0), 0.0, j);
  // Y upward from mu to nu (stable: Y grows with the order).
  LoopResult up = elementwise_loop(
      f.g(), {y_mu, y_mu1, zero}, kMaxSteps,
      [mu, n, xi2](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        const Ew e(body, DType::Float64);
        Value *ym = s[0], *y1 = s[1], *i = s[2];
        Value* i1 = e.add(i, 1.0);
        Value* next = e.sub(e.mul(e.mul(e.add(mu, i1), xi2), y1), ym);
        Value* step = e.lt(i, n);
        return LoopStep{{e.where(step, y1, ym), e.where(step, next, y1), i1}, e.or_(e.ge(i1, n), e.isinf(y1))};
      },
      "bessel_y_upward");
  Value* ok = f.and_(f.and_(cf1.converged, down.converged), cf2.converged);
  return {f.where(ok, j, kNaN), f.where(f.and_(ok, up.converged), up.state[0], kNaN)};
}

Value* jv(const Ew& f, Value* v_in, Value* x_in) {
  GraphBuilder& g = f.g();
  Value* shape = g.op1("Shape", {f.add(v_in, x_in)});
  Value* flat = g.int64s({-1});
  Value* v = g.op1("Reshape", {g.op1("Expand", {v_in, shape}), flat});
  Value* x = g.op1("Reshape", {g.op1("Expand", {x_in, shape}), flat});

  Value* nu = f.abs(v);
  Value* ax = f.abs(x);
  Value* integer_v = f.is_integer(v);
  Value* finite = f.and_(f.not_(f.or_(f.isnan(v), f.isinf(v))), f.not_(f.or_(f.isnan(x), f.isinf(x))));
  Value* use = f.and_(f.and_(finite, f.gt(ax, 0.0)), f.or_(f.ge(x, 0.0), integer_v));
  // Integer orders as |v| with the sign (-1)^v (and (-1)^v again for x < 0).
  Value* w = f.where(use, f.where(integer_v, nu, v), 0.0);
  Value* xs = f.where(use, ax, 1.0);
  Value* negative_order = f.lt(w, 0.0);  // negative non-integer orders
  Value* wa = f.abs(w);

  Value* series_use = f.and_(use, f.or_(f.le(xs, 2.0), f.and_(f.not_(negative_order),
                                                              f.le(f.sqr(xs), f.mul(f.add(wa, 1.0), 4.0)))));
  Value* hankel_use = f.and_(f.and_(use, f.not_(series_use)), f.ge(xs, f.max(f.c(20.0), f.mul(f.sqr(wa), 0.5))));
  Value* rest = f.and_(f.and_(use, f.not_(series_use)), f.not_(hankel_use));
  Value* upward_use = f.and_(rest, f.ge(xs, f.max(f.c(20.0), wa)));
  Value* steed_use = f.and_(rest, f.not_(upward_use));
  Value* value = j_series(f, w, xs, series_use);
  value = f.where(hankel_use, jy_hankel(f, w, xs, hankel_use).j, value);
  JY up = jy_upward(f, wa, xs, upward_use);
  JY steed = jy_steed(f, wa, xs, steed_use);
  Value* j = f.where(upward_use, up.j, steed.j);
  Value* y = f.where(upward_use, up.y, steed.y);
  // Negative non-integer orders: J_-nu = cos(nu pi) J_nu - sin(nu pi) Y_nu.
  Value* reflected = f.sub(f.mul(call(f, "cospi_float64", wa), j), f.mul(call(f, "sinpi_float64", wa), y));
  value = f.where(rest, f.where(negative_order, reflected, j), value);
  // (-1)^v for negative integer orders (J_-n = (-1)^n J_n), and again for
  // negative x (J_n(-x) = (-1)^n J_n(x)).
  Value* sign_order = f.and_(f.and_(integer_v, f.lt(v, 0.0)), odd(f, nu));
  Value* sign_x = f.and_(f.lt(x, 0.0), odd(f, nu));
  Value* negate = f.not_(f.eq(sign_order, sign_x));  // xor
  value = f.where(negate, f.neg(value), value);
  value = f.where(use, value, kNaN);
  // x = 0: 1 for v = 0, 0 for positive and integer orders, +-inf for
  // negative non-integer ones (the sign of 1 / Gamma(v + 1)); an infinite
  // order gives 0 for x >= 0 (SciPy).
  Value* pole = f.mul(gamma_sign(f, f.add(v, 1.0)), kInf);
  Value* at_zero = f.where(f.eq(v, 0.0), 1.0, f.where(f.or_(f.gt(v, 0.0), integer_v), 0.0, pole));
  value = f.where(f.and_(f.eq(x, 0.0), f.not_(f.isnan(v))), at_zero, value);
  value = f.where(f.and_(f.eq(v, kInf), f.and_(f.ge(x, 0.0), f.not_(f.isinf(x)))), 0.0, value);
  return unflatten(g, value, shape);
}

// --- orders 0 and 1 -------------------------------------------------------

// J0 and J1 (SciPy's j0, j1) without iterations. For |x| <= 8: a table in
// z = x^2 of J with its two zeros below 8 divided out (J1 also divided by
// x), multiplied back as (a - j)(a + j) with j = hi + lo, so the result
// keeps its relative accuracy next to them. Beyond 8: tables of Hankel's P
// and Q / w in w = 8 / |x|, and J = sqrt(2 / (pi a)) (P cos chi - Q sin chi)
// with chi = a - pi/4 (J0) or a - 3 pi/4 (J1), from the accurate cos a and
// sin a (trig.cc); there, next to a zero, the result is accurate to an ulp
// of the amplitude sqrt(2 / (pi a)), as SciPy's is.
Value* bessel_j(const Ew& f, Value* x, const BesselJTables& t) {
  Value* a = f.abs(x);
  Value* small = f.le(a, 8.0);
  Value* w = f.div(8.0, a);
  Value* g_or_p = f.tables({{f.sqr(a), &t.small, small}, {w, &t.p, nullptr}});
  Value* near = g_or_p;
  for (const auto& zero : t.zeros) {
    near = f.mul(near, f.mul(f.sub(f.sub(a, zero[0]), zero[1]), f.add(f.add(a, zero[0]), zero[1])));
  }
  if (t.odd) near = f.mul(near, x);  // J1 is odd (J1(-0) = -0)
  Value* q = f.mul(f.table(w, t.q_over_w), w);
  Value* c = f.op("Cos", {a});
  Value* s = f.op("Sin", {a});
  // sqrt(2) cos chi and sqrt(2) sin chi. (cos(+-inf) is NaN, and so is the
  // result there, as SciPy's j0 and j1 give.)
  Value* cos_chi = t.odd ? f.sub(s, c) : f.add(c, s);
  Value* sin_chi = t.odd ? f.neg(f.add(s, c)) : f.sub(s, c);
  Value* far = f.div(f.sub(f.mul(g_or_p, cos_chi), f.mul(q, sin_chi)), f.sqrt(f.mul(a, kPiHi)));
  if (t.odd) far = f.where(f.lt(x, 0.0), f.neg(far), far);
  return f.where(small, near, far);
}

Value* j0_core(const Ew& f, Value* x) {
  return bessel_j(f, x, kJ0Tables);
}

Value* j1_core(const Ew& f, Value* x) {
  return bessel_j(f, x, kJ1Tables);
}

}  // namespace

void add_bessel_jy_recipes(std::vector<RecipeInfo>& table) {
  table.push_back(float64_recipe("jv", jv, "the Bessel function of the first kind J_v(x), real order v", "SciPy's jv"));
  table.push_back(float64_recipe("j0", j0_core, "the Bessel function of the first kind of order 0"));
  table.push_back(float64_recipe("j1", j1_core, "the Bessel function of the first kind of order 1"));
}

}  // namespace pytensor_onnx::recipes
