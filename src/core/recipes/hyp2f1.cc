// The Gauss hypergeometric function 2F1(a, b; c; z) for real arguments
// (SciPy's hyp2f1), in float64 from standard ONNX ops.
//
// Method (DLMF 15.2, 15.8; Abramowitz & Stegun 15.3):
//   - Every z < 1 is mapped to x in [0, 1) by one of two transformations,
//     and both are evaluated (stacked along one axis, so the graph is built
//     once): for z < 0 Pfaff's (1 - z)^-a F(a, c - b; c; w) and
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
//   - The evaluation with the smallest estimated error wins; where even
//     that estimate exceeds kTolerance (cancellation in the series for large
//     parameters, c - a - b close to but not an integer, overflow) the result
//     is NaN, never a number of unknown accuracy.
// Every series is one element-wise ONNX Loop (loops.h); an element stops
// when the rest of its series is bounded below 2^-53 of its sum (a geometric
// bound from the term ratio, so a series whose terms first shrink and then
// grow does not stop early) or when it terminates (a term is exactly 0).
// The error estimate is Cephes' (2^-53 times the largest term over the sum,
// plus 2^-53 per term) plus the error of the prefactors (2^-53 times the
// size of the logarithms that are exponentiated).
//
// Special values follow SciPy (scipy.special.hyp2f1, Cephes' hyp2f1):
// 1 at z = 0 (whatever the other arguments, NaN too) and for a = 0 or b = 0
// with c != 0; inf for c a non-positive integer unless a or b is a
// non-positive integer whose series ends before the pole of c; inf for z > 1
// unless the function is a polynomial (a or b a non-positive integer, or
// (1 - z)^(c - a - b) times one, c - a - b an integer <= -1); at z = 1 Gauss's
// sum Gamma(c) Gamma(c - a - b) / (Gamma(c - a) Gamma(c - b)) for
// c - a - b > 0, else an infinity with the sign of the divergent term; for
// |z| < 1 or z = -1, (1 - z)^-b when a = c and (1 - z)^-a when b = c, except that b = c a non-positive integer -n gives
// SciPy's sum_{k<=n} (a)_k z^k / k!. Where SciPy is wrong the recipe gives
// the value (z -> -inf: 0 for a, b > 0; very negative z with b - a an
// integer, where SciPy returns inf); see docs/semantics.md.
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
constexpr double kEpsilon = 0x1p-53;
constexpr double kEulerGamma = 0.57721566490153286061;
// The tolerance (attribute "tolerance" for narrower dtypes), the Gauss
// series' limit and the steps of each Loop.
using namespace hyp2f1_method;

Value* call(const Ew& f, const char* recipe, Value* x) { return build_recipe_named(f.g(), recipe, {x}, {})[0]; }

// The unary recipe on each of several flat vectors of one length, built
// once on their concatenation: gammaln is ~300 nodes once inlined, and this
// file needs it at 14 arguments.
std::vector<Value*> batched(const Ew& f, const char* recipe, const std::vector<Value*>& xs) {
  GraphBuilder& g = f.g();
  Value* length = g.op1("Shape", {xs[0]});
  std::vector<Value*> parts;
  for (Value* x : xs) parts.push_back(g.op1("Expand", {x, length}));
  Value* all = call(f, recipe, g.op1("Concat", parts, {{"axis", int64_t{0}}}));
  std::vector<Value*> out;
  for (size_t i = 0; i < xs.size(); ++i) {
    Value* start = g.op1("Mul", {length, g.int64s({static_cast<int64_t>(i)})});
    out.push_back(g.op1("Slice", {all, start, g.op1("Add", {start, length})}));
  }
  return out;
}

// Whether x is an integer <= 0 (a pole of Gamma; a terminating series).
Value* nonpositive_integer(const Ew& f, Value* x) { return f.and_(f.le(x, 0.0), f.is_integer(x)); }

// The sign of Gamma(x) away from its poles: negative for x in (-1, 0),
// (-3, -2), ... (floor(x) odd and negative).
Value* gamma_sign(const Ew& f, Value* x) {
  Value* fl = f.floor(x);
  Value* odd = f.not_(f.eq(f.mul(f.floor(f.mul(fl, 0.5)), 2.0), fl));
  return f.where(f.and_(f.lt(x, 0.0), odd), -1.0, 1.0);
}

// Zeros in the shape of v (v * 0 would be NaN where v is infinite).
Value* zeros_like(const Ew& f, Value* v) { return f.where(f.isnan(v), 0.0, 0.0); }

// A value with its estimated relative error (inf where it is unusable).
struct Estimate {
  Value* value;
  Value* error;
};

// NaN errors count as unusable.
Value* clean_error(const Ew& f, Value* e) { return f.where(f.isnan(e), kInf, e); }

// |v| e, 0 where v is 0 (so that an unusable part multiplied by an exact 0
// costs nothing).
Value* weighted(const Ew& f, Value* v, Value* e) { return f.where(f.eq(v, 0.0), 0.0, f.mul(f.abs(v), e)); }

// The Gauss series sum_{k=0}^{last} (a)_k (b)_k / ((c)_k k!) x^k, on the
// elements where `use` holds (others: x = 0, error inf). `last` bounds the
// terms (inf for the whole series).
Estimate gauss_series(const Ew& f, Value* a, Value* b, Value* c, Value* x, Value* last, Value* use) {
  a = f.where(use, a, 1.0);
  b = f.where(use, b, 1.0);
  c = f.where(use, c, 1.0);
  x = f.where(use, x, 0.0);
  last = f.where(use, last, 0.0);
  Value* zero = zeros_like(f, f.add(f.add(a, b), f.add(c, f.add(x, last))));
  Value* one = f.add(zero, 1.0);
  LoopResult r = elementwise_loop(
      f.g(), {one, one, zero, one}, kMaxSteps,
      [a, b, c, x, last](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        const Ew e(body, DType::Float64);
        Value *sum = s[0], *term = s[1], *k = s[2], *largest = s[3];
        Value* k1 = e.add(k, 1.0);
        Value* ratio = e.div(e.mul(e.mul(e.add(a, k), e.add(b, k)), x), e.mul(e.add(c, k), k1));
        Value* next_term = e.where(e.gt(k1, last), 0.0, e.mul(term, ratio));
        Value* next_sum = e.add(sum, next_term);
        Value* next_largest = e.max(largest, e.abs(next_term));
        // Every later ratio is at most q in magnitude when c + k1 > 0:
        // (|a| + j) / (j + 1) and (|b| + j) / (c + j) move monotonically to 1.
        Value* q = e.mul(e.mul(e.abs(x), e.max(e.c(1.0), e.div(e.add(e.abs(a), k1), e.add(k1, 1.0)))),
                         e.max(e.c(1.0), e.div(e.add(e.abs(b), k1), e.add(c, k1))));
        q = e.where(e.gt(e.add(c, k1), 0.0), q, kInf);
        Value* tail_small = e.and_(e.lt(q, 1.0), e.le(e.mul(e.abs(next_term), e.div(q, e.sub(1.0, q))),
                                                      e.mul(e.abs(next_sum), kEpsilon)));
        Value* done = e.or_(e.or_(e.eq(next_term, 0.0), e.ge(k1, last)), tail_small);
        done = e.or_(done, e.or_(e.isnan(next_sum), e.isinf(next_sum)));
        return LoopStep{{next_sum, next_term, k1, next_largest}, done};
      },
      "hyp2f1_series");
  Value* sum = r.state[0];
  Value* error = f.add(f.div(f.mul(r.state[3], 2.0 * kEpsilon), f.abs(sum)), f.mul(r.state[2], kEpsilon));
  // A sum that is exactly 0 has converged only by terminating (the tail
  // test needs |sum| > 0): a polynomial with an exact zero (F(1, -1; 1; 1)),
  // returned as 0 as SciPy does.
  error = f.where(f.eq(sum, 0.0), 0.0, error);
  error = f.where(f.and_(use, r.converged), clean_error(f, error), kInf);
  return {sum, error};
}

// |lgamma(x)| where finite (an infinite one is a pole giving an exact 0 or
// is excluded), for error estimates.
Value* log_size(const Ew& f, Value* lg) { return f.where(f.isinf(lg), 0.0, f.abs(lg)); }

// F(a, b; c; x) for 1/2 <= x < 1 by the connection formula in s = 1 - x
// (c - a - b not an integer).
Estimate connection(const Ew& f, Value* a, Value* b, Value* c, Value* s, Value* use) {
  Value* safe = f.c(0.25);
  a = f.where(use, a, safe);
  b = f.where(use, b, safe);
  c = f.where(use, c, f.c(1.0));
  s = f.where(use, s, f.c(0.5));
  Value* d = f.sub(f.sub(c, a), b);
  Value* inf_last = f.add(zeros_like(f, s), kInf);
  Estimate s1 = gauss_series(f, a, b, f.sub(1.0, d), s, inf_last, use);
  Estimate s2 = gauss_series(f, f.sub(c, a), f.sub(c, b), f.add(d, 1.0), s, inf_last, use);
  const std::vector<Value*> lg = batched(f, "gammaln", {c, d, f.neg(d), f.sub(c, a), f.sub(c, b), a, b});
  Value *lc = lg[0], *ld = lg[1], *lnd = lg[2], *lca = lg[3], *lcb = lg[4], *la = lg[5], *lb = lg[6];
  Value* sign1 = f.mul(f.mul(gamma_sign(f, c), gamma_sign(f, d)), f.mul(gamma_sign(f, f.sub(c, a)), gamma_sign(f, f.sub(c, b))));
  Value* sign2 = f.mul(f.mul(gamma_sign(f, c), gamma_sign(f, f.neg(d))), f.mul(gamma_sign(f, a), gamma_sign(f, b)));
  Value* log_s = f.log(s);
  Value* log1 = f.sub(f.add(lc, ld), f.add(lca, lcb));
  Value* log2 = f.add(f.sub(f.add(lc, lnd), f.add(la, lb)), f.mul(d, log_s));
  Value* t1 = f.mul(f.mul(sign1, f.exp(log1)), s1.value);
  Value* t2 = f.mul(f.mul(sign2, f.exp(log2)), s2.value);
  Value* size1 = f.add(f.add(log_size(f, lc), log_size(f, ld)), f.add(log_size(f, lca), log_size(f, lcb)));
  Value* size2 = f.add(f.add(f.add(log_size(f, lc), log_size(f, lnd)), f.add(log_size(f, la), log_size(f, lb))),
                       f.abs(f.mul(d, log_s)));
  Value* e1 = f.add(s1.error, f.mul(f.add(size1, 4.0), 2.0 * kEpsilon));
  Value* e2 = f.add(s2.error, f.mul(f.add(size2, 4.0), 2.0 * kEpsilon));
  Value* y = f.add(t1, t2);
  Value* numerator = f.add(weighted(f, t1, e1), weighted(f, t2, e2));
  // Both parts exactly 0 (1 / Gamma at poles, s^d at s = 0): an exact 0.
  Value* error = f.where(f.eq(numerator, 0.0), 0.0, f.div(numerator, f.abs(y)));
  return {y, f.where(use, clean_error(f, error), kInf)};
}

// F(a, b; c; x) for 1/2 <= x < 1 when c - a - b = d is an integer (AS
// 15.3.10-12 in Cephes' unified form, m = |d|, s = 1 - x):
//   F = Gamma(c) Gamma(m) / (Gamma(a + d1) Gamma(b + d1)) s^min(d, 0)
//         sum_{n<m} (a + d2)_n (b + d2)_n / (n! (1 - m)_n) s^n
//     + (-1)^m Gamma(c) / (Gamma(a + d2) Gamma(b + d2) m!) s^max(d, 0)
//         sum_{t>=0} (a + d1)_t (b + d1)_t / (t! (m + 1)_t) s^t
//         [psi(1 + t) + psi(1 + m + t) - psi(a + d1 + t) - psi(b + d1 + t) - log s]
// with d1 = max(d, 0), d2 = min(d, 0).
Estimate integer_difference(const Ew& f, Value* a, Value* b, Value* c, Value* s, Value* use) {
  Value* safe = f.c(0.25);
  a = f.where(use, a, safe);
  b = f.where(use, b, safe);
  c = f.where(use, c, f.c(1.5));  // d = 1
  s = f.where(use, s, f.c(0.5));
  Value* d = f.sub(f.sub(c, a), b);
  Value* m = f.abs(d);
  Value* positive = f.ge(d, 0.0);
  Value* d1 = f.where(positive, d, 0.0);
  Value* d2 = f.where(positive, 0.0, d);
  Value* ad1 = f.add(a, d1);
  Value* bd1 = f.add(b, d1);
  Value* ad2 = f.add(a, d2);
  Value* bd2 = f.add(b, d2);
  Value* log_s = f.log(s);
  // d2 log s and d1 log s, 0 where the power is 1 (also at s = 0).
  Value* d2_log_s = f.where(f.eq(d2, 0.0), 0.0, f.mul(d2, log_s));
  Value* d1_log_s = f.where(f.eq(d1, 0.0), 0.0, f.mul(d1, log_s));

  // The finite sum (empty for m = 0): a Gauss series with c = 1 - m cut
  // after the term n = m - 1.
  Value* finite_use = f.and_(use, f.gt(m, 0.0));
  Estimate finite = gauss_series(f, ad2, bd2, f.sub(1.0, m), s, f.sub(m, 1.0), finite_use);
  const std::vector<Value*> lg = batched(f, "gammaln", {c, f.max(m, f.c(1.0)), ad1, bd1, ad2, bd2, f.add(m, 1.0)});
  Value *lc = lg[0], *lm = lg[1], *lad1 = lg[2], *lbd1 = lg[3], *lad2 = lg[4], *lbd2 = lg[5], *lm1 = lg[6];
  Value* sign_c = gamma_sign(f, c);
  Value* log_finite = f.add(f.sub(f.add(lm, lc), f.add(lad1, lbd1)), d2_log_s);
  Value* y1 = f.mul(f.mul(f.mul(sign_c, f.mul(gamma_sign(f, ad1), gamma_sign(f, bd1))), f.exp(log_finite)),
                    finite.value);
  y1 = f.where(finite_use, y1, 0.0);
  Value* size1 = f.add(f.add(f.add(log_size(f, lm), log_size(f, lc)), f.add(log_size(f, lad1), log_size(f, lbd1))),
                       f.abs(d2_log_s));
  Value* e1 = f.where(finite_use, f.add(finite.error, f.mul(f.add(size1, 4.0), 2.0 * kEpsilon)), 0.0);

  // The digamma series.
  Value* zero = zeros_like(f, f.add(f.add(ad1, bd1), f.add(m, s)));
  Value* one = f.add(zero, 1.0);
  Value* psi1 = f.add(zero, -kEulerGamma);
  const std::vector<Value*> psi = batched(f, "digamma", {f.add(m, 1.0), ad1, bd1});
  Value *psi2 = psi[0], *psi3 = psi[1], *psi4 = psi[2];
  Value* r0 = f.sub(f.sub(f.add(psi1, psi2), f.add(psi3, psi4)), log_s);
  Value* size0 = f.add(f.add(f.add(f.abs(psi1), f.abs(psi2)), f.add(f.abs(psi3), f.abs(psi4))), f.abs(log_s));
  LoopResult r = elementwise_loop(
      f.g(), {r0, one, zero, psi1, psi2, psi3, psi4, size0}, kMaxSteps,
      [ad1, bd1, m, s, log_s](GraphBuilder& body, Value*, const std::vector<Value*>& st) {
        const Ew e(body, DType::Float64);
        Value *sum = st[0], *p = st[1], *t = st[2];
        Value *p1 = st[3], *p2 = st[4], *p3 = st[5], *p4 = st[6], *size = st[7];
        Value* t1 = e.add(t, 1.0);
        Value* next_p = e.div(e.mul(e.mul(p, s), e.mul(e.add(ad1, t), e.add(bd1, t))), e.mul(t1, e.add(t1, m)));
        Value* n1 = e.add(p1, e.div(1.0, t1));
        Value* n2 = e.add(p2, e.div(1.0, e.add(t1, m)));
        Value* n3 = e.add(p3, e.div(1.0, e.add(ad1, t)));
        Value* n4 = e.add(p4, e.div(1.0, e.add(bd1, t)));
        Value* bracket = e.sub(e.sub(e.add(n1, n2), e.add(n3, n4)), log_s);
        Value* next_sum = e.add(sum, e.mul(next_p, bracket));
        Value* part = e.add(e.add(e.add(e.abs(n1), e.abs(n2)), e.add(e.abs(n3), e.abs(n4))), e.abs(log_s));
        Value* next_size = e.add(size, e.mul(e.abs(next_p), part));
        // Later ratios of p are at most q; the bracket grows by at most
        // 4 / (t + 1) per step.
        Value* q = e.mul(e.mul(s, e.max(e.c(1.0), e.div(e.add(e.abs(ad1), t1), e.add(t1, 1.0)))),
                         e.max(e.c(1.0), e.div(e.add(e.abs(bd1), t1), e.add(e.add(t1, m), 1.0))));
        Value* one_minus_q = e.sub(1.0, q);
        Value* tail = e.mul(e.mul(e.abs(next_p), e.div(q, one_minus_q)),
                            e.add(e.abs(bracket), e.div(4.0, e.mul(one_minus_q, t1))));
        Value* done = e.and_(e.lt(q, 1.0), e.le(tail, e.mul(e.abs(next_sum), kEpsilon)));
        done = e.or_(done, e.or_(e.eq(next_p, 0.0), e.or_(e.isnan(next_sum), e.isinf(next_sum))));
        return LoopStep{{next_sum, next_p, t1, n1, n2, n3, n4, next_size}, done};
      },
      "hyp2f1_digamma_series");
  Value* series = r.state[0];
  Value* series_error = f.add(f.div(f.mul(r.state[7], 4.0 * kEpsilon), f.abs(series)), f.mul(r.state[2], kEpsilon));
  series_error = f.where(r.converged, series_error, kInf);
  // (-1)^m
  Value* parity = f.where(f.eq(f.mul(f.floor(f.mul(m, 0.5)), 2.0), m), 1.0, -1.0);
  Value* log_inf = f.add(f.sub(lc, f.add(f.add(lad2, lbd2), lm1)), d1_log_s);
  Value* sign_inf = f.mul(f.mul(parity, sign_c), f.mul(gamma_sign(f, ad2), gamma_sign(f, bd2)));
  // At s = 0 (x = 1, Gauss's sum, d > 0) this part vanishes (s^d times a
  // series whose bracket holds log s).
  Value* y2 = f.where(f.eq(s, 0.0), 0.0, f.mul(f.mul(sign_inf, f.exp(log_inf)), series));
  Value* size2 = f.add(f.add(f.add(log_size(f, lc), log_size(f, lm1)), f.add(log_size(f, lad2), log_size(f, lbd2))),
                       f.abs(d1_log_s));
  Value* e2 = f.add(clean_error(f, series_error), f.mul(f.add(size2, 4.0), 2.0 * kEpsilon));
  Value* y = f.add(y1, y2);
  Value* numerator = f.add(weighted(f, y1, e1), weighted(f, y2, e2));
  // Both parts exactly 0 (1 / Gamma at poles, s^d at s = 0): an exact 0.
  Value* error = f.where(f.eq(numerator, 0.0), 0.0, f.div(numerator, f.abs(y)));
  return {y, f.where(use, clean_error(f, error), kInf)};
}

// The better of two estimates.
Estimate better(const Ew& f, const Estimate& p, const Estimate& q) {
  Value* pick_q = f.lt(q.error, p.error);
  return {f.where(pick_q, q.value, p.value), f.min(p.error, q.error)};
}

// F(a, b; c; x) with s = 1 - x given separately (x >= 0; x < 1 unless the
// series terminates).
Estimate hyp2f1_unit(const Ew& f, Value* a, Value* b, Value* c, Value* x, Value* s) {
  Value* polynomial = f.or_(nonpositive_integer(f, a), nonpositive_integer(f, b));
  // x <= 1 is tested on s: x = z / (z - 1) rounds to 1 for z < -2^53. At
  // x = 1 (s = 0) the connection formulas give Gauss's sum (for d > 0).
  Value* inside = f.and_(f.ge(x, 0.0), f.ge(s, 0.0));
  Value* series_use = f.or_(polynomial, f.and_(inside, f.le(x, kSeriesLimit)));
  Value* inf_last = f.add(zeros_like(f, x), kInf);
  Estimate best = gauss_series(f, a, b, c, x, inf_last, series_use);
  Value* near_one = f.and_(f.and_(f.le(s, 0.5), inside), f.not_(polynomial));
  Value* d = f.sub(f.sub(c, a), b);
  Value* integer_d = f.is_integer(d);
  best = better(f, best, connection(f, a, b, c, s, f.and_(near_one, f.not_(integer_d))));
  // m beyond the Loop's cap cannot be summed.
  Value* psi_use = f.and_(f.and_(near_one, integer_d), f.le(f.abs(d), static_cast<double>(kMaxSteps - 1)));
  best = better(f, best, integer_difference(f, a, b, c, s, psi_use));
  return best;
}

// Flattened copies of `parts` (all of one shape) joined end to end.
Value* join(const Ew& f, Value* p, Value* q) {
  GraphBuilder& g = f.g();
  Value* flat = g.int64s({-1});
  return g.op1("Concat", {g.op1("Reshape", {p, flat}), g.op1("Reshape", {q, flat})}, {{"axis", int64_t{0}}});
}

// The first or second half of a joined tensor, in `shape`.
Value* half(const Ew& f, Value* joined, Value* count, Value* shape, bool second) {
  GraphBuilder& g = f.g();
  Value* part = second ? g.op1("Slice", {joined, count, g.int64s({std::numeric_limits<int64_t>::max()})})
                       : g.op1("Slice", {joined, g.int64s({0}), count});
  return unflatten(g, part, shape);
}

Value* hyp2f1(const Ew& f, Value* a, Value* b, Value* c, Value* z, double tolerance) {
  GraphBuilder& g = f.g();
  // Every input in the broadcast shape (the transformations are joined
  // along one flat axis).
  Value* shape = g.op1("Shape", {f.add(f.add(a, b), f.add(c, z))});
  a = g.op1("Expand", {a, shape});
  b = g.op1("Expand", {b, shape});
  c = g.op1("Expand", {c, shape});
  z = g.op1("Expand", {z, shape});
  Value* count = g.op1("Shape", {g.op1("Reshape", {z, g.int64s({-1})})});

  // The transformations need c not a pole (there only a terminating series
  // in z itself is defined).
  Value* c_pole = nonpositive_integer(f, c);
  Value* negative = f.and_(f.lt(z, 0.0), f.not_(c_pole));
  Value* one_minus_z = f.sub(1.0, z);
  Value* d = f.sub(f.sub(c, a), b);
  // z < 0: w = z / (z - 1) and 1 - w = 1 / (1 - z); z = -inf is w = 1.
  Value* x = f.where(negative, f.where(f.isinf(z), 1.0, f.div(z, f.sub(z, 1.0))), z);
  Value* s = f.where(negative, f.div(1.0, one_minus_z), one_minus_z);
  Value* a1 = a;
  Value* b1 = f.where(negative, f.sub(c, b), b);
  Value* a2 = f.where(negative, b, f.sub(c, a));
  Value* b2 = f.where(negative, f.sub(c, a), f.sub(c, b));
  Value* exponent1 = f.where(negative, f.neg(a), 0.0);
  Value* exponent2 = f.where(negative, f.neg(b), d);

  Value* joined_x = join(f, x, x);
  Value* joined_s = join(f, s, s);
  Estimate both = hyp2f1_unit(f, join(f, a1, a2), join(f, b1, b2), join(f, c, c), joined_x, joined_s);
  Value* exponent = join(f, exponent1, exponent2);
  // (1 - z)^exponent by Pow (exact sign for the integer exponents of z > 1).
  Value* joined_base = join(f, one_minus_z, one_minus_z);
  Value* power = f.where(f.eq(exponent, 0.0), 1.0, f.op("Pow", {joined_base, exponent}));
  Value* power_error =
      f.mul(f.add(f.mul(f.abs(exponent), f.add(f.abs(f.log(f.abs(joined_base))), 1.0)), 2.0), 2.0 * kEpsilon);
  Value* value = f.mul(power, both.value);
  Value* error = clean_error(f, f.add(both.error, f.where(f.eq(exponent, 0.0), 0.0, power_error)));
  // Euler's transformation does not hold for c a pole.
  error = f.add(error, join(f, f.where(c_pole, 0.0, 0.0), f.where(c_pole, kInf, 0.0)));
  Estimate first{half(f, value, count, shape, false), half(f, error, count, shape, false)};
  Estimate second{half(f, value, count, shape, true), half(f, error, count, shape, true)};
  Estimate best = better(f, first, second);
  Value* result = f.where(f.le(best.error, tolerance), best.value, kNaN);

  // Special cases, in the reverse of SciPy's order (the last where wins).
  Value* int_a = nonpositive_integer(f, a);
  Value* int_b = nonpositive_integer(f, b);
  Value* polynomial = f.or_(int_a, int_b);
  Value* integer_d = f.is_integer(d);
  // z > 1: real only for polynomials, and (1 - z)^d times a polynomial when
  // d is an integer <= -1 (SciPy's Euler step at the top of hyp2f1).
  Value* euler_polynomial = f.and_(f.and_(integer_d, f.le(d, -1.0)),
                                   f.or_(nonpositive_integer(f, f.sub(c, a)), nonpositive_integer(f, f.sub(c, b))));
  result = f.where(f.and_(f.gt(z, 1.0), f.not_(f.or_(polynomial, euler_polynomial))), kInf, result);
  // z = 1: Gauss's sum (computed above as the s = 0 end of the connection
  // formulas) for d > 0, else infinite with the sign of the leading term
  // as z -> 1: Gamma(c) Gamma(-d) / (Gamma(a) Gamma(b)) (1 - z)^d for d < 0,
  // Gamma(c) / (Gamma(a) Gamma(b)) (-log(1 - z)) for d = 0.
  Value* divergence_sign =
      f.mul(f.mul(gamma_sign(f, c), gamma_sign(f, f.neg(d))), f.mul(gamma_sign(f, a), gamma_sign(f, b)));
  result = f.where(f.and_(f.and_(f.eq(z, 1.0), f.not_(polynomial)), f.le(d, 0.0)), f.mul(divergence_sign, kInf),
                   result);
  // z = -inf: F ~ (-z)^-a and (-z)^-b: 0 when a, b > 0.
  result = f.where(f.eq(z, -kInf), f.where(f.and_(f.gt(a, 0.0), f.gt(b, 0.0)), 0.0, kNaN), result);
  // c a pole of the series, unless a or b ends it first.
  Value* ends_first = f.or_(f.and_(int_a, f.gt(a, c)), f.and_(int_b, f.gt(b, c)));
  result = f.where(f.and_(nonpositive_integer(f, c), f.not_(ends_first)), kInf, result);
  // a = c = -1: SciPy gives the series cut at its zero term, 1 + b z, for
  // every z (its a = c shortcut below fires only for a = c <= -2).
  result = f.where(f.and_(f.eq(a, -1.0), f.eq(c, -1.0)), f.add(f.mul(b, z), 1.0), result);
  // a = c, b = c (|z| < 1 or z = -1).
  Value* inside = f.or_(f.lt(f.abs(z), 1.0), f.eq(z, -1.0));
  Value* a_is_c = f.and_(f.and_(inside, f.eq(a, c)), f.not_(f.eq(c, -1.0)));
  result = f.where(a_is_c, f.op("Pow", {one_minus_z, f.neg(b)}), result);
  Value* b_is_c = f.and_(inside, f.eq(b, c));
  Value* truncated_use = f.and_(b_is_c, int_b);
  // (On flat vectors: the Loop body reads these values next to its flat state.)
  auto flat = [&](Value* v) { return g.op1("Reshape", {v, g.int64s({-1})}); };
  Value* ones = f.add(zeros_like(f, a), 1.0);
  Estimate truncated =
      gauss_series(f, flat(a), flat(ones), flat(ones), flat(z), flat(f.neg(b)), flat(truncated_use));
  Value* truncated_value = unflatten(g, truncated.value, shape);
  // SciPy gives NaN where this sum cancels to 0 (its loss test).
  Value* truncated_ok = f.and_(f.le(unflatten(g, truncated.error, shape), tolerance),
                               f.not_(f.eq(truncated_value, 0.0)));
  truncated_value = f.where(truncated_ok, truncated_value, kNaN);
  result = f.where(b_is_c, f.where(int_b, truncated_value, f.op("Pow", {one_minus_z, f.neg(a)})), result);
  // NaN anywhere, infinite a, b or c: NaN (SciPy's answer there depends
  // on which of its branches fires first: inf, 1 or NaN).
  Value* invalid = f.or_(f.or_(f.isnan(a), f.isnan(b)), f.or_(f.isnan(c), f.isnan(z)));
  invalid = f.or_(invalid, f.or_(f.isinf(a), f.or_(f.isinf(b), f.isinf(c))));
  result = f.where(invalid, kNaN, result);
  // 1 for a = 0 or b = 0 (c != 0) and for z = 0, whatever the rest (NaN
  // too), as SciPy.
  result = f.where(f.and_(f.or_(f.eq(a, 0.0), f.eq(b, 0.0)), f.not_(f.eq(c, 0.0))), 1.0, result);
  return f.where(f.eq(z, 0.0), 1.0, result);
}

std::vector<Value*> hyp2f1_core(const Ew& f, const std::vector<Value*>& in, const Attributes& attrs) {
  const AttrValue* tolerance = attrs.find("tolerance");
  return {hyp2f1(f, in[0], in[1], in[2], in[3], tolerance ? std::get<double>(*tolerance) : kTolerance)};
}

// The tolerance for a result rounded to `dtype`: below its unit roundoff
// (float32 2^-24 = 6e-8), so the rounded result stays within 1e-6.
double tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return kFloat32Tolerance;
    case DType::Float16:
    case DType::BFloat16:
      return kFloat16Tolerance;
    default:  // float64
      return kTolerance;
  }
}

std::vector<Value*> build_hyp2f1(GraphBuilder& g, const std::vector<Value*>& in, const Attributes& attrs) {
  Attributes with_tolerance = attrs;
  if (!attrs.has("tolerance") && in[0]->dtype != DType::Float64) {
    with_tolerance.set("tolerance", tolerance_for(in[0]->dtype));
  }
  return in_float64(g, "hyp2f1", in, with_tolerance, hyp2f1_core);
}

}  // namespace

void add_hyp2f1_recipes(std::vector<RecipeInfo>& table) {
  table.push_back({"hyp2f1", build_hyp2f1, 4, 4,
                   "the Gauss hypergeometric function 2F1(a, b; c; z) for real arguments (SciPy's hyp2f1; float "
                   "inputs, computed in float64)",
                   FunctionUse::kElementwise});
}

}  // namespace pytensor_onnx::recipes
