// Special functions in float64 from standard ONNX ops: the error function
// family (erf, erfc, erfcx and the inverses erfinv, erfcinv, ndtri_exp) and
// the gamma family (lgamma, gamma, digamma, trigamma, polygamma through the
// Hurwitz zeta function). The Bessel functions are in bessel_ik.cc and
// bessel_jy.cc, the incomplete gamma and beta functions in files of their own.
//
// Approach: smooth pieces are piecewise polynomial tables looked up per
// element (special_tables.h, generated with mpmath by
// tools/special_coefficients.py), with the zeros of each function factored
// out so results keep their relative accuracy near them; tails use
// asymptotic series (Stirling, de Moivre, Euler-Maclaurin) whose
// coefficients are exact Bernoulli numbers; negative arguments use the
// reflection formulas with sin(pi x) reduced exactly (trig.cc). Special
// values (poles, infinities, NaN) follow SciPy, which PyTensor calls.
#include <array>
#include <cmath>
#include <limits>

#include "elementwise.h"
#include "errors.h"
#include "loops.h"
#include "recipes.h"
#include "registry.h"
#include "special_tables.h"

namespace pytensor_onnx::recipes {
namespace {

using namespace tables;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kSqrtPiInv = 0x1.20dd750429b6dp-1;     // 1 / sqrt(pi)
constexpr double kHalfLog2Pi = 0x1.d67f1c864beb5p-1;     // log(2 pi) / 2
constexpr double kLogPi = 0x1.250d048e7a1bdp+0;          // log(pi)
constexpr double kPiSquared = 0x1.3bd3cc9be45dep+3;      // pi^2
constexpr double kPiValue = 0x1.921fb54442d18p+1;

// --- error function family ---------------------------------------------

// The one table look-up of erf, erfc and erfcx at x (a = |x|): erf(x) / x
// in x^2 where `small` holds (|x| <= 1/2), erfcx(a) in w = 4 / (4 + a)
// elsewhere.
Value* erf_family_table(const Ew& f, Value* x, Value* a, Value* small) {
  return f.tables({{f.sqr(x), &kErfSmall, small}, {f.div(4.0, f.add(a, 4.0)), &kErfcxMid, nullptr}});
}

// erfcx(x) for x >= 1/2 (other x give values the callers discard), given
// `table`, erf_family_table's value there: the table up to 50, the
// asymptotic series erfcx(x) = 1 / (x sqrt(pi)) sum_k (-1)^k (2k - 1)!! / (2x^2)^k
// above (at x = 50 the first omitted term is below 1e-18).
Value* erfcx_positive(const Ew& f, Value* x, Value* table) {
  Value* inv = f.div(1.0, x);
  Value* y = f.sqr(inv);
  Value* series = f.poly(y, {1.0, -0.5, 0.75, -1.875, 6.5625, -29.53125, 162.421875});
  Value* asymptotic = f.mul(f.mul(inv, kSqrtPiInv), series);
  return f.where(f.lt(x, 50.0), table, asymptotic);
}

Value* erf_core(const Ew& f, Value* x) {
  Value* a = f.abs(x);
  Value* small = f.le(a, 0.5);
  Value* table = erf_family_table(f, x, a, small);
  Value* tail = f.sub(1.0, f.mul(f.exp_neg_square(a), erfcx_positive(f, a, table)));
  return f.where(small, f.mul(x, table), f.mul(f.sign(x), tail));
}

Value* erfc_core(const Ew& f, Value* x) {
  Value* a = f.abs(x);
  Value* small = f.lt(a, 0.5);
  Value* table = erf_family_table(f, x, a, small);
  Value* upper = f.mul(f.exp_neg_square(a), erfcx_positive(f, a, table));  // erfc(|x|)
  Value* outer = f.where(f.lt(x, 0.0), f.sub(2.0, upper), upper);
  return f.where(small, f.sub(1.0, f.mul(x, table)), outer);
}

Value* erfcx_core(const Ew& f, Value* x) {
  Value* a = f.abs(x);
  Value* small = f.lt(a, 0.5);
  Value* table = erf_family_table(f, x, a, small);
  Value* positive = erfcx_positive(f, a, table);
  Value* near_zero = f.mul(f.exp_square(x), f.sub(1.0, f.mul(x, table)));
  // erfcx(-a) = 2 exp(a^2) - erfcx(a): no cancellation for a >= 1/2.
  Value* negative = f.sub(f.mul(f.exp_square(a), 2.0), positive);
  return f.where(small, near_zero, f.where(f.lt(x, 0.0), negative, positive));
}

// Inverses: erfinv(y) = y T(y^2) for |y| <= 1/2; otherwise through
// erfcinv(q) of q = 1 - |y| (exact for |y| >= 1/2) as t T(t) with
// t = sqrt(-log q), in two tables (q down to 1e-16, and below, to the
// smallest subnormal). The three tables are looked up at once
// (erfinv_family_table).

// erfcinv(q) for 0 < q <= 1/2 is t T(t) with t = sqrt(-log q): the table
// parts of T, and the result from T's value.
std::vector<Ew::TablePart> erfcinv_table_parts(const Ew& f, Value* t) {
  return {{t, &kErfcinvMid, f.lt(t, 6.0)}, {t, &kErfcinvTail, nullptr}};
}
Value* erfcinv_from_table(const Ew& f, Value* minus_log_q, Value* t, Value* table) {
  return f.where(f.eq(minus_log_q, kInf), kInf, f.mul(t, table));
}

// The table look-up of erfinv and erfcinv: erfinv(y) / y in y^2 where
// `small` holds, else erfcinv's parts at t.
Value* erfinv_family_table(const Ew& f, Value* y, Value* small, Value* t) {
  std::vector<Ew::TablePart> parts{{f.sqr(y), &kErfinvSmall, small}};
  for (const Ew::TablePart& part : erfcinv_table_parts(f, t)) parts.push_back(part);
  return f.tables(parts);
}

Value* erfinv_core(const Ew& f, Value* y) {
  Value* a = f.abs(y);
  Value* small = f.le(a, 0.5);
  Value* minus_log_q = f.neg(f.log(f.sub(1.0, a)));
  Value* t = f.sqrt(minus_log_q);
  Value* table = erfinv_family_table(f, y, small, t);
  Value* tail = f.mul(f.sign(y), erfcinv_from_table(f, minus_log_q, t, table));
  Value* r = f.where(small, f.mul(y, table), tail);
  return f.where(f.gt(a, 1.0), kNaN, r);
}

Value* erfcinv_core(const Ew& f, Value* q) {
  // Around q = 1: -erfinv(q - 1) (= erfinv(1 - q)), exact for 1/2 <= q <= 3/2;
  // below: erfcinv from -log q; above: erfcinv(q) = -erfcinv(2 - q).
  Value* lower = f.lt(q, 0.5);
  Value* upper = f.gt(q, 1.5);
  Value* minus_log_q = f.neg(f.log(f.where(lower, q, f.sub(2.0, q))));
  Value* t = f.sqrt(minus_log_q);
  Value* y = f.sub(1.0, q);
  Value* table = erfinv_family_table(f, y, f.not_(f.or_(lower, upper)), t);
  Value* tail = erfcinv_from_table(f, minus_log_q, t, table);
  Value* r = f.where(lower, tail, f.where(upper, f.neg(tail), f.mul(y, table)));
  return f.where(f.or_(f.lt(q, 0.0), f.gt(q, 2.0)), kNaN, r);
}

// erfcinv(q) from minus_log_q = -log(q) beyond the tables (q below the
// smallest double, reachable only through a logarithm): the fixed point of
// x^2 = t^2 - log(x sqrt(pi)) + log(sum_k (-1)^k (2k - 1)!! / (2x^2)^k), k <= 7,
// from erfc's asymptotic series; each step gains a factor 1/(2x^2) < 1e-3.
Value* erfcinv_asymptotic(const Ew& f, Value* minus_log_q) {
  constexpr double kLogSqrtPi = 0x1.250d048e7a1bdp-1;
  Value* x = f.sqrt(minus_log_q);
  for (int i = 0; i < 6; ++i) {
    Value* y = f.div(1.0, f.sqr(x));
    Value* series = f.poly(y, {1.0, -0.5, 0.75, -1.875, 6.5625, -29.53125, 162.421875, -1055.7421875});
    x = f.sqrt(f.add(f.sub(f.sub(minus_log_q, f.log(x)), kLogSqrtPi), f.log(series)));
  }
  return x;
}

// ndtri(exp(x)), the standard normal quantile of p = exp(x), x <= 0:
// -sqrt(2) erfcinv(2p) for p < 1/4, with log(2p) = x + log 2 (no underflow
// for any x); sqrt(2) erfinv(2p - 1) for 1/4 <= p <= 3/4, with
// 2p - 1 = expm1(x + log 2) (exact near the zero at p = 1/2);
// sqrt(2) erfcinv(2(1 - p)) above, with 1 - p = -expm1(x).
Value* ndtri_exp_core(const Ew& f, Value* x) {
  constexpr double kSqrt2 = 0x1.6a09e667f3bcdp+0;
  constexpr double kLn2Hi = 0x1.62e42fefa39efp-1;
  constexpr double kLn2Lo = 0x1.abc9e3b39803fp-56;
  Value* shifted = f.add(f.add(x, kLn2Hi), kLn2Lo);  // x + log 2
  constexpr double kLogQuarter = -0x1.62e42fefa39efp+0;         // log(1/4)
  constexpr double kLogThreeQuarters = -0x1.269621134db92p-2;   // log(3/4)
  Value* low = f.lt(x, kLogQuarter);
  Value* not_high = f.le(x, kLogThreeQuarters);
  // -log q of the erfcinv argument q of each tail (one table look-up serves
  // the three regions).
  Value* minus_log_q = f.where(low, f.neg(shifted), f.neg(f.log(f.mul(expm1_float64(f.g(), x), -2.0))));
  Value* t = f.sqrt(minus_log_q);
  Value* two_p_minus_1 = expm1_float64(f.g(), shifted);
  Value* table = erfinv_family_table(f, two_p_minus_1, f.and_(f.not_(low), not_high), t);
  Value* tail = erfcinv_from_table(f, minus_log_q, t, table);
  Value* low_tail = f.where(f.gt(minus_log_q, 27.0 * 27.0), erfcinv_asymptotic(f, minus_log_q), tail);
  Value* middle = f.mul(two_p_minus_1, table);
  Value* r = f.where(low, f.mul(low_tail, -kSqrt2),
                     f.where(not_high, f.mul(middle, kSqrt2), f.mul(tail, kSqrt2)));
  r = f.where(f.eq(x, -kInf), -kInf, r);
  return f.where(f.gt(x, 0.0), kNaN, r);
}

// --- gamma family ----------------------------------------------------------

// B_2k / (2k (2k - 1)), k = 1..n: the Stirling series of lgamma.
std::vector<double> stirling_coefficients(size_t n) {
  std::vector<double> c;
  for (size_t k = 1; k <= n; ++k) c.push_back(kBernoulli2k[k - 1] / (2.0 * k * (2.0 * k - 1)));
  return c;
}

// lgamma(x) for x >= 8: (x - 1/2) log x - x + log(2 pi) / 2 + sum of
// B_2k / (2k (2k-1) x^(2k-1)); nine terms reach 1e-18 at x = 8.
Value* lgamma_stirling(const Ew& f, Value* x) {
  Value* log_x = f.log(x);
  Value* inv = f.div(1.0, x);
  Value* correction = f.mul(inv, f.poly(f.sqr(inv), stirling_coefficients(9)));
  // x (log x - 1) first: finite up to the true overflow of lgamma.
  Value* main = f.sub(f.mul(x, f.sub(log_x, 1.0)), f.mul(log_x, 0.5));
  return f.where(f.eq(x, kInf), kInf, f.add(main, f.add(correction, kHalfLog2Pi)));
}

// The table argument of the gamma family below 8: x on [1, 8), 1 + x below
// 1 (those functions are shifted by one there). One table evaluation serves
// both ranges: ONNX Runtime runs every node over every element, so each
// evaluation avoided saves ~3 nodes per coefficient.
Value* shifted_below_one(const Ew& f, Value* x, Value* below_one) { return f.where(below_one, f.add(x, 1.0), x); }

// (w - 1)(w - 2) for the table argument w of shifted_below_one, from the
// exact x and x - 1 (or x - 1 and x - 2) rather than the rounded 1 + x:
// exact factors at the zeros 1 and 2 of lgamma.
Value* lgamma_zero_factors(const Ew& f, Value* x, Value* below_one) {
  Value* x_minus_1 = f.sub(x, 1.0);
  return f.mul(f.where(below_one, x, x_minus_1), f.where(below_one, x_minus_1, f.sub(x, 2.0)));
}

// lgamma(x) for x > 0.
Value* lgamma_positive(const Ew& f, Value* x) {
  // 1 <= x < 8: (x - 1)(x - 2) T(x). 0 < x < 1: lgamma(1 + x) - log x, with
  // lgamma(1 + x) = x (x - 1) T(1 + x).
  Value* below_one = f.lt(x, 1.0);
  Value* table = f.mul(lgamma_zero_factors(f, x, below_one), f.table(shifted_below_one(f, x, below_one), kLgammaOverZeros));
  Value* small = f.where(below_one, f.sub(table, f.log(x)), table);
  return f.where(f.lt(x, 8.0), small, lgamma_stirling(f, x));
}

Value* sinpi(const Ew& f, Value* x) { return build_recipe_named(f.g(), "sinpi_float64", {x}, {})[0]; }
Value* cospi(const Ew& f, Value* x) { return build_recipe_named(f.g(), "cospi_float64", {x}, {})[0]; }

// Whether x is a pole of the gamma family: an integer <= 0 (-inf too).
Value* nonpositive_integer(const Ew& f, Value* x) { return f.and_(f.le(x, 0.0), f.is_integer(x)); }

// The argument of the positive-x part: x where x > 0, 1 - x elsewhere (the
// reflection formulas' argument), so that part is built once.
Value* reflected_argument(const Ew& f, Value* x, Value* positive) { return f.where(positive, x, f.sub(1.0, x)); }

Value* lgamma_core(const Ew& f, Value* x) {
  // Reflection for x < 0: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x).
  Value* positive = f.gt(x, 0.0);
  Value* lgamma_y = lgamma_positive(f, reflected_argument(f, x, positive));
  Value* reflected = f.sub(f.sub(kLogPi, f.log(f.abs(sinpi(f, x)))), lgamma_y);
  Value* r = f.where(positive, lgamma_y, reflected);
  r = f.where(nonpositive_integer(f, x), kInf, r);
  return f.where(f.eq(x, -kInf), -kInf, r);  // SciPy's gammaln(-inf)
}

// Gamma(x) for x > 0 as three factors whose product is Gamma(x) (so that
// 1 / Gamma can be formed without overflow): below 8, exp(lgamma) (|lgamma|
// < 9 there, so exp adds no error worth counting; below 1 from
// Gamma(1 + x) / x); from 8, Stirling's formula
// sqrt(2 pi) exp(mu(x)) * v * (v exp(-x)) with v = x^(x/2 - 1/4), which
// ONNX Runtime's Pow gives correctly rounded (exp of a 700-sized lgamma
// would cost ~700 ulp).
std::array<Value*, 3> gamma_positive_factors(const Ew& f, Value* x) {
  Value* below = f.lt(x, 1.0);
  Value* small = f.exp(f.mul(lgamma_zero_factors(f, x, below), f.table(shifted_below_one(f, x, below), kLgammaOverZeros)));
  small = f.where(below, f.div(small, x), small);
  Value* inv = f.div(1.0, x);
  Value* mu = f.mul(inv, f.poly(f.sqr(inv), stirling_coefficients(9)));
  Value* front = f.mul(f.exp(mu), 0x1.40d931ff62705p+1);  // sqrt(2 pi) exp(mu)
  Value* v = f.op("Pow", {x, f.sub(f.mul(x, 0.5), 0.25)});
  Value* back = f.mul(v, f.exp(f.neg(x)));
  Value* large = f.ge(x, 8.0);
  Value* one = f.c(1.0);
  return {f.where(large, front, small), f.where(large, v, one),
          f.where(large, back, one)};
}

Value* gamma_core(const Ew& f, Value* x) {
  // Reflection: Gamma(x) = pi / (sin(pi x) Gamma(1 - x)), divided factor by
  // factor; beyond 1 - x = 200 it underflows to a signed zero.
  Value* is_positive = f.gt(x, 0.0);
  auto [a, b, c] = gamma_positive_factors(f, reflected_argument(f, x, is_positive));
  Value* positive = f.mul(f.mul(a, b), c);
  Value* s = sinpi(f, x);
  Value* reflected = f.div(f.div(f.div(f.div(kPiValue, f.mul(s, a)), b), c), 1.0);
  reflected = f.where(f.lt(x, -200.0), f.mul(s, 0.0), reflected);
  Value* r = f.where(is_positive, positive, reflected);
  r = f.where(f.gt(x, 172.0), kInf, r);  // Gamma overflows from 171.62
  // SciPy: Gamma(+-0) = +-inf, NaN at negative integers and -inf.
  Value* zero = f.eq(x, 0.0);
  Value* signed_inf = f.where(f.lt(f.div(1.0, x), 0.0), -kInf, kInf);
  r = f.where(f.and_(nonpositive_integer(f, x), f.not_(zero)), kNaN, r);
  return f.where(zero, signed_inf, r);
}

// sum_{k=1..n} B_2k y^k / (2k): the asymptotic tail of digamma.
std::vector<double> digamma_coefficients(size_t n) {
  std::vector<double> c{0.0};
  for (size_t k = 1; k <= n; ++k) c.push_back(kBernoulli2k[k - 1] / (2.0 * k));
  return c;
}

// digamma(x) for x > 0.
Value* digamma_positive(const Ew& f, Value* x) {
  // 1 <= x < 8: (x - x0) T(x) with the positive root x0 = hi + lo.
  // 0 < x < 1: digamma(1 + x) - 1 / x, with 1 + x - x0 = x - (x0 - 1) exactly.
  Value* below = f.lt(x, 1.0);
  Value* root_hi = f.where(below, f.c(kDigammaRootHi - 1.0), f.c(kDigammaRootHi));
  Value* table = f.mul(f.sub(f.sub(x, root_hi), kDigammaRootLo), f.table(shifted_below_one(f, x, below), kDigammaOverRoot));
  // x >= 8: log x - 1 / (2x) - sum B_2k / (2k x^2k); ten terms reach 1e-17.
  Value* inv = f.div(1.0, x);
  Value* large = f.sub(f.sub(f.log(x), f.mul(inv, 0.5)), f.poly(f.sqr(inv), digamma_coefficients(10)));
  return f.where(f.lt(x, 8.0), f.where(below, f.sub(table, f.div(1.0, x)), table), large);
}

Value* digamma_core(const Ew& f, Value* x) {
  // Reflection: digamma(x) = digamma(1 - x) - pi cos(pi x) / sin(pi x).
  Value* cot = f.div(cospi(f, x), sinpi(f, x));
  Value* positive = f.gt(x, 0.0);
  Value* digamma_y = digamma_positive(f, reflected_argument(f, x, positive));
  Value* reflected = f.sub(digamma_y, f.mul(cot, kPiValue));
  Value* r = f.where(positive, digamma_y, reflected);
  // SciPy: psi(+-0) = -+inf, NaN at negative integers and -inf.
  Value* zero = f.eq(x, 0.0);
  Value* signed_inf = f.where(f.lt(f.div(1.0, x), 0.0), kInf, -kInf);
  r = f.where(nonpositive_integer(f, x), kNaN, r);
  return f.where(zero, signed_inf, r);
}

// trigamma(x) for x > 0.
Value* trigamma_positive(const Ew& f, Value* x) {
  Value* below = f.lt(x, 1.0);
  Value* table = f.table(shifted_below_one(f, x, below), kTrigamma);
  // x >= 8: (1 + 1/(2x) + sum B_2k / x^2k) / x; twelve terms reach 1e-17.
  Value* inv = f.div(1.0, x);
  std::vector<double> c{1.0};
  for (size_t k = 1; k <= 12; ++k) c.push_back(kBernoulli2k[k - 1]);
  Value* large = f.mul(inv, f.add(f.poly(f.sqr(inv), c), f.mul(inv, 0.5)));
  return f.where(f.lt(x, 8.0), f.where(below, f.add(table, f.div(1.0, f.sqr(x))), table), large);
}

Value* trigamma_core(const Ew& f, Value* x) {
  // Reflection: trigamma(x) = pi^2 / sin^2(pi x) - trigamma(1 - x).
  Value* positive = f.gt(x, 0.0);
  Value* trigamma_y = trigamma_positive(f, reflected_argument(f, x, positive));
  Value* reflected = f.sub(f.div(kPiSquared, f.sqr(sinpi(f, x))), trigamma_y);
  Value* r = f.where(positive, trigamma_y, reflected);
  // SciPy's polygamma(1, x): inf at the poles and at -inf.
  return f.where(nonpositive_integer(f, x), kInf, r);
}

// Hurwitz zeta(s, q) for s > 1 and real q (SciPy's zeta): the terms
// (q + k)^-s up to a = q + k >= s + 10 are summed (one Loop step each;
// negative non-integer q takes ceil(s + 10 - q) steps, capped at 2^22), then
// the Euler-Maclaurin tail at a with twelve Bernoulli terms (their ratio
// (s + 2j)^2 / (2 pi a)^2 stays below 1/30 for a >= s + 10).
Value* hurwitz_zeta(const Ew& f, Value* s, Value* q) {
  constexpr int64_t kMaxSteps = int64_t{1} << 22;
  LoopResult shifted = elementwise_loop(
      f.g(), {f.mul(q, 0.0), q, s}, kMaxSteps,
      [](GraphBuilder& body, Value*, const std::vector<Value*>& state) {
        const Ew b(body, DType::Float64);
        Value *sum = state[0], *a = state[1], *s_ = state[2];
        Value* limit = b.add(s_, 10.0);
        Value* below = b.lt(a, limit);
        Value* term = b.where(below, b.op("Pow", {a, b.neg(s_)}), 0.0);
        Value* next_a = b.add(a, b.where(below, 1.0, 0.0));
        Value* done = b.or_(b.not_(b.lt(next_a, limit)), b.isinf(next_a));
        return LoopStep{{b.add(sum, term), next_a, s_}, done};
      },
      "zeta_shift");
  Value* sum = shifted.state[0];
  Value* a = shifted.state[1];
  Value* a_s = f.op("Pow", {a, f.neg(s)});  // a^-s
  Value* tail = f.add(f.div(f.mul(a_s, a), f.sub(s, 1.0)), f.mul(a_s, 0.5));
  // sum_j B_2j / (2j)! * s (s + 1) ... (s + 2j - 2) / a^(2j - 1), times a^-s.
  Value* factor = f.div(s, a);
  Value* inv_a2 = f.div(1.0, f.sqr(a));
  Value* series = nullptr;
  double factorial = 2.0;  // (2j)!
  for (int j = 1; j <= 12; ++j) {
    Value* term = f.mul(factor, kBernoulli2k[j - 1] / factorial);
    series = series ? f.add(series, term) : term;
    factor = f.mul(f.mul(factor, f.mul(f.add(s, 2.0 * j - 1), f.add(s, 2.0 * j))), inv_a2);
    factorial *= (2.0 * j + 1) * (2.0 * j + 2);
  }
  Value* zeta = f.add(sum, f.add(tail, f.mul(a_s, series)));
  zeta = f.where(f.not_(shifted.converged), kNaN, zeta);
  return f.where(f.eq(q, -kInf), kInf, zeta);
}

// SciPy's polygamma(n, x): digamma for n = 0, (-1)^(n+1) n! zeta(n + 1, x)
// for n >= 1, NaN for n < 0.
Value* polygamma_core(const Ew& f, Value* n, Value* x) {
  Value* s = f.add(n, 1.0);
  auto [ga, gb, gc] = gamma_positive_factors(f, s);
  Value* magnitude = f.mul(f.mul(f.mul(ga, gb), gc), hurwitz_zeta(f, s, x));
  Value* odd = f.eq(f.sub(n, f.mul(f.floor(f.mul(n, 0.5)), 2.0)), 1.0);
  Value* r = f.where(odd, magnitude, f.neg(magnitude));
  r = f.where(f.eq(n, 0.0), digamma_core(f, x), r);
  return f.where(f.or_(f.lt(n, 0.0), f.not_(f.is_integer(n))), kNaN, r);
}

}  // namespace

void add_special_recipes(std::vector<RecipeInfo>& table) {
  table.push_back(float64_recipe("erf", erf_core, "the error function"));
  table.push_back(float64_recipe("erfc", erfc_core, "1 - erf(x), accurate in the tails"));
  table.push_back(float64_recipe("erfcx", erfcx_core, "exp(x^2) erfc(x)"));
  table.push_back(float64_recipe("erfinv", erfinv_core, "the inverse of erf"));
  table.push_back(float64_recipe("erfcinv", erfcinv_core, "the inverse of erfc"));
  table.push_back(float64_recipe("ndtri_exp", ndtri_exp_core, "ndtri(exp(x)), the normal quantile of exp(x)"));
  table.push_back(float64_recipe("gammaln", lgamma_core, "log |Gamma(x)| (SciPy's gammaln)"));
  table.push_back(float64_recipe("gamma", gamma_core, "Gamma(x)"));
  table.push_back(float64_recipe("digamma", digamma_core, "digamma (psi), the derivative of log Gamma"));
  table.push_back(float64_recipe("trigamma", trigamma_core, "trigamma, the derivative of digamma"));
  table.push_back(float64_recipe("polygamma", polygamma_core,
                                 "polygamma(n, x), the n-th derivative of digamma (n integer-valued)"));
}

}  // namespace pytensor_onnx::recipes
