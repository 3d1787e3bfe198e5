// Elementary functions ONNX lacks or ONNX Runtime has no float64 kernel for
// (the missing kernels are listed in ../kernels.cc): log1p, expm1, softplus, log1mexp, the hyperbolic functions
// and their inverses, atan, atan2, asin, acos.
//
// Each is computed in float64 from Exp, Log, Sqrt and arithmetic, whose
// float64 kernels are correctly rounded or nearly so (measured: Exp and Log
// within 0.5 ulp, Sqrt exact), with the classic cancellation-free forms
// (Kahan's log1p and expm1, fdlibm's argument reductions). float32 and
// float16 inputs are computed in float64 and rounded back.
#include <cmath>
#include <limits>

#include "elementwise.h"
#include "errors.h"
#include "recipes.h"
#include "registry.h"
#include "special_tables.h"

namespace pytensor_onnx::recipes {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0x1.62e42fefa39efp-1;
// Above 2^28, sqrt(x^2 + 1) == |x| in float64.
constexpr double kTwoTo28 = 0x1p28;

// log(1 + x) = log(u) * x / (u - 1) with u = fl(1 + x): the rounding error of
// u cancels (Goldberg, "What every computer scientist should know about
// floating-point arithmetic", Theorem 4).
Value* log1p_core(const Ew& f, Value* x) {
  Value* u = f.add(x, 1.0);
  Value* d = f.sub(u, 1.0);
  Value* r = f.mul(f.log(u), f.div(x, d));
  r = f.where(f.eq(d, 0.0), x, r);
  return f.where(f.eq(x, kInf), kInf, r);
}

// exp(x) - 1 = (u - 1) * x / log(u) with u = fl(exp(x)) (Kahan).
Value* expm1_core(const Ew& f, Value* x) {
  Value* u = f.exp(x);
  Value* um1 = f.sub(u, 1.0);
  Value* r = f.mul(um1, f.div(x, f.log(u)));  // x / log(u) is near 1: no overflow
  r = f.where(f.eq(um1, -1.0), -1.0, r);
  r = f.where(f.eq(u, 1.0), x, r);
  return f.where(f.eq(u, kInf), kInf, r);
}

// log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)): both terms are positive.
Value* softplus_core(const Ew& f, Value* x) {
  Value* tail = log1p_core(f, f.exp(f.neg(f.abs(x))));
  return f.add(f.max(x, f.c(0.0)), tail);
}

// log(1 - exp(x)), x <= 0: log1p(-exp(x)) below -log 2, log(-expm1(x)) above
// (Maechler, "Accurately computing log(1 - exp(-|a|))"), as PyTensor does.
Value* log1mexp_core(const Ew& f, Value* x) {
  Value* low = log1p_core(f, f.neg(f.exp(x)));
  Value* high = f.log(f.neg(expm1_core(f, x)));
  return f.where(f.lt(x, -kLn2), low, high);
}

// sinh and cosh: from t = expm1(|x|) below 22 (no cancellation), from
// exp(|x|/2)^2 / 2 above (finite up to the true overflow at 710.47).
Value* half_exp_abs(const Ew& f, Value* a) {
  Value* w = f.exp(f.mul(a, 0.5));
  return f.mul(f.mul(w, 0.5), w);
}

Value* sinh_core(const Ew& f, Value* x) {
  Value* a = f.abs(x);
  Value* t = expm1_core(f, a);
  Value* small = f.mul(f.add(t, f.div(t, f.add(t, 1.0))), 0.5);
  Value* h = f.where(f.lt(a, 22.0), small, half_exp_abs(f, a));
  return f.mul(f.sign(x), h);
}

Value* cosh_core(const Ew& f, Value* x) {
  Value* a = f.abs(x);
  Value* e = f.exp(a);
  Value* small = f.mul(f.add(e, f.div(1.0, e)), 0.5);
  return f.where(f.lt(a, 22.0), small, half_exp_abs(f, a));
}

Value* asinh_core(const Ew& f, Value* x) {
  Value* a = f.abs(x);
  Value* a2 = f.sqr(a);
  // a + a^2 / (1 + sqrt(1 + a^2)) = a + sqrt(1 + a^2) - 1 without cancellation.
  Value* moderate = log1p_core(f, f.add(a, f.div(a2, f.add(f.sqrt(f.add(a2, 1.0)), 1.0))));
  Value* huge = f.add(f.log(a), kLn2);
  return f.mul(f.sign(x), f.where(f.gt(a, kTwoTo28), huge, moderate));
}

Value* acosh_core(const Ew& f, Value* x) {
  Value* t = f.sub(x, 1.0);  // exact near 1
  Value* near_one = log1p_core(f, f.add(t, f.sqrt(f.add(f.mul(t, 2.0), f.sqr(t)))));
  Value* moderate = f.log(f.sub(f.mul(x, 2.0), f.div(1.0, f.add(x, f.sqrt(f.sub(f.sqr(x), 1.0))))));
  Value* huge = f.add(f.log(x), kLn2);
  Value* r = f.where(f.lt(x, 2.0), near_one, f.where(f.gt(x, kTwoTo28), huge, moderate));
  return f.where(f.lt(x, 1.0), std::numeric_limits<double>::quiet_NaN(), r);
}

Value* atanh_core(const Ew& f, Value* x) {
  Value* a = f.abs(x);
  Value* two_a = f.mul(a, 2.0);
  Value* one_minus = f.sub(1.0, a);
  // 0.5 log((1 + a) / (1 - a)) = 0.5 log1p(2a / (1 - a)); below 1/2 split as
  // 2a + 2a^2 / (1 - a) so that the argument of log1p keeps a's low bits.
  Value* small = log1p_core(f, f.add(two_a, f.div(f.mul(two_a, a), one_minus)));
  Value* large = log1p_core(f, f.div(two_a, one_minus));
  return f.mul(f.mul(f.sign(x), f.where(f.lt(a, 0.5), small, large)), 0.5);
}

// atan of |x| by fdlibm's reduction: t with |t| <= 7/16 and a base angle
// (hi + lo) with atan(|x|) = base + atan(t); atan(t) = t + t^3 q(t^2).
Value* atan_abs(const Ew& f, Value* a) {
  using namespace tables;
  // Breakpoints 7/16, 11/16, 19/16, 39/16 (fdlibm s_atan.c).
  Value* b1 = f.ge(a, 7.0 / 16);
  Value* b2 = f.ge(a, 11.0 / 16);
  Value* b3 = f.ge(a, 19.0 / 16);
  Value* b4 = f.ge(a, 39.0 / 16);
  Value* t_half = f.div(f.sub(f.mul(a, 2.0), 1.0), f.add(a, 2.0));        // atan(1/2) + atan(t)
  Value* t_one = f.div(f.sub(a, 1.0), f.add(a, 1.0));                     // pi/4 + atan(t)
  Value* t_three_halves = f.div(f.sub(a, 1.5), f.add(f.mul(a, 1.5), 1.0));  // atan(3/2) + atan(t)
  Value* t_inf = f.div(-1.0, a);                                           // pi/2 + atan(t)
  Value* t = f.where(b4, t_inf, f.where(b3, t_three_halves, f.where(b2, t_one, f.where(b1, t_half, a))));
  auto pick = [&](double v0, double v1, double v2, double v3, double v4) {
    return f.where(b4, f.c(v4), f.where(b3, f.c(v3), f.where(b2, f.c(v2), f.where(b1, f.c(v1), f.c(v0)))));
  };
  Value* hi = pick(0.0, kAtanHalfHi, kPiOver4Hi, kAtanOneAndHalfHi, kPiOver2Hi);
  Value* lo = pick(0.0, kAtanHalfLo, kPiOver4Lo, kAtanOneAndHalfLo, kPiOver2Lo);
  Value* z = f.sqr(t);
  Value* correction = f.mul(f.mul(t, z), f.table(z, kAtanCorrection));
  return f.add(hi, f.add(f.add(correction, lo), t));
}

Value* atan_core(const Ew& f, Value* x) { return f.mul(f.sign(x), atan_abs(f, f.abs(x))); }

// Whether x carries a negative sign (-0.0 included).
Value* sign_bit(const Ew& f, Value* x) {
  return f.or_(f.lt(x, 0.0), f.and_(f.eq(x, 0.0), f.lt(f.div(1.0, x), 0.0)));
}

// NumPy's arctan2, signed zeros and infinities included.
Value* atan2_core(const Ew& f, Value* y, Value* x) {
  using namespace tables;
  Value* ay = f.abs(y);
  Value* ax = f.abs(x);
  Value* theta = atan_abs(f, f.div(ay, ax));
  theta = f.where(f.eq(ay, 0.0), 0.0, theta);                                 // 0/0 and 0/inf
  theta = f.where(f.and_(f.isinf(ay), f.isinf(ax)), kPiOver4Hi, theta);     // inf/inf
  Value* flipped = f.add(f.sub(kPiHi, theta), kPiLo);                          // pi - theta
  Value* r = f.where(sign_bit(f, x), flipped, theta);
  // A product, not Where(.., -r, r): ONNX Runtime's Where drops the sign of
  // a -0.0 it picks from its first input.
  r = f.mul(r, f.where(sign_bit(f, y), -1.0, 1.0));
  return f.where(f.or_(f.isnan(x), f.isnan(y)), f.add(x, y), r);
}

Value* asin_core(const Ew& f, Value* x) {
  // (1 - x)(1 + x) keeps its accuracy near |x| = 1, where 1 - x is exact.
  Value* c = f.sqrt(f.mul(f.sub(1.0, x), f.add(x, 1.0)));
  return f.mul(f.sign(x), atan_abs(f, f.div(f.abs(x), c)));
}

Value* acos_core(const Ew& f, Value* x) {
  // acos x = 2 atan(sqrt((1 - x) / (1 + x))): 1 - x and 1 + x are exact
  // near the ends, where acos is near 0 or pi.
  Value* ratio = f.sqrt(f.div(f.sub(1.0, x), f.add(x, 1.0)));
  return f.mul(atan_abs(f, ratio), 2.0);
}

Value* tan_core(const Ew& f, Value* x) { return build_recipe_named(f.g(), "tan_float64", {x}, {})[0]; }

}  // namespace

Value* log1p_float64(GraphBuilder& g, Value* x) { return log1p_core(Ew(g, DType::Float64), x); }
Value* expm1_float64(GraphBuilder& g, Value* x) { return expm1_core(Ew(g, DType::Float64), x); }

void add_elementary_recipes(std::vector<RecipeInfo>& table) {
  table.push_back(float64_recipe("log1p", log1p_core, "log(1 + x), accurate for tiny x"));
  table.push_back(float64_recipe("expm1", expm1_core, "exp(x) - 1, accurate for tiny x"));
  table.push_back(float64_recipe("softplus", softplus_core, "log(1 + exp(x)) without overflow or cancellation"));
  table.push_back(float64_recipe("log1mexp", log1mexp_core, "log(1 - exp(x)) for x <= 0"));
  table.push_back(float64_recipe("sinh", sinh_core, "sinh(x)"));
  table.push_back(float64_recipe("cosh", cosh_core, "cosh(x)"));
  table.push_back(float64_recipe("asinh", asinh_core, "asinh(x)"));
  table.push_back(float64_recipe("acosh", acosh_core, "acosh(x)"));
  table.push_back(float64_recipe("atanh", atanh_core, "atanh(x)"));
  table.push_back(float64_recipe("atan", atan_core, "atan(x)"));
  table.push_back(float64_recipe("asin", asin_core, "asin(x)"));
  table.push_back(float64_recipe("acos", acos_core, "acos(x)"));
  table.push_back(float64_recipe("atan2", atan2_core, "atan2(y, x) with NumPy's signed zeros and infinities"));
  table.push_back(float64_recipe("tan", tan_core, "tan(x)"));
}

}  // namespace pytensor_onnx::recipes
