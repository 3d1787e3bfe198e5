// Owen's T function T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx
// (SciPy's owens_t) in float64 from standard ONNX ops.
//
// Method (written for this project; checked against mpmath in
// tests/python/test_special_inverse.py):
//   - Symmetries: T(-h, a) = T(h, a), T(h, -a) = -T(h, a).
//   - For a > 1, Owen's (1956) identity with the other argument below 1:
//     T(h, a) = (Phi(h) + Phi(a h)) / 2 - Phi(h) Phi(a h) - T(a h, 1/a)
//             = (Phi(h) Q(a h) + Phi(a h) Q(h)) / 2 - T(a h, 1/a)    (h >= 0),
//     Q(x) = 1 - Phi(x) = erfc(x / sqrt 2) / 2 written as a sum of positive
//     terms so that the tails keep their relative accuracy (the subtracted
//     T(a h, 1/a) is at most about half of it).
//   - For 0 <= a <= 1: T = exp(-h^2/2) / (2 pi) int_0^m exp(-(h x)^2 / 2) /
//     (1 + x^2) dx with m = min(a, 9 / h): beyond x = 9 / h the integrand is
//     below exp(-40.5) of its value at 0, i.e. 1e-18 of the integral. On
//     [0, m] the integrand is analytic (poles of 1 / (1 + x^2) at +-i, at
//     least a unit away) and its Gaussian factor spans at most 9 standard
//     deviations, so one 24-point Gauss–Legendre rule reaches double precision
//     (measured against mpmath: below 3e-15 relative; 20 points already give
//     2e-15).
//   - exp(-h^2 / 2) is exp(-(h/2)^2)^2 with (h/2)^2 taken exactly (Ew's
//     exp_neg_square), not the rounded h^2 (700 ulp near the underflow).
// Special values follow SciPy: NaN if h or a is NaN; T(+-inf, a) = 0;
// T(h, +-inf) = +-erfc(|h| / sqrt 2) / 4; T(h, 0) = 0.
#include <cmath>
#include <limits>
#include <vector>

#include "elementwise.h"
#include "gauss_legendre.h"
#include "method_constants.h"
#include "recipes.h"
#include "registry.h"

namespace pytensor_onnx::recipes {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 0x1.921fb54442d18p+1;
constexpr double kInvSqrt2 = 0x1.6a09e667f3bcdp-1;
using namespace owens_t_method;

// exp(-h^2 / 2) for h >= 0.
Value* half_gaussian(const Ew& f, Value* h) { return f.sqr(f.exp_neg_square(f.mul(h, 0.5))); }

// T(h, a) for h >= 0 (finite) and 0 <= a <= 1.
Value* owens_t_small_a(const Ew& f, Value* h, Value* a) {
  static const GaussLegendre rule = gauss_legendre(kQuadraturePoints);
  h = f.min(h, f.c(kMaxQuadratureH));
  Value* top = f.min(a, f.div(kGaussianCut, h));  // 9 / 0 = inf: m = a
  Value* half = f.mul(top, 0.5);
  Value* sum = nullptr;
  for (size_t k = 0; k < rule.nodes.size(); ++k) {
    Value* x = f.mul(half, rule.nodes[k] + 1.0);
    Value* hx = f.mul(h, x);
    Value* term = f.div(f.mul(f.exp(f.mul(f.sqr(hx), -0.5)), rule.weights[k]), f.add(f.sqr(x), 1.0));
    sum = sum ? f.add(sum, term) : term;
  }
  return f.mul(f.mul(half_gaussian(f, h), f.mul(half, sum)), 1.0 / (2.0 * kPi));
}

// Q(x) = erfc(x / sqrt 2) / 2. x is clamped to [-40, 40] (Q(40) = 4e-350
// is 0 in double): the erfc recipe gives NaN at some huge arguments
// (erfc(-4.95e7), erfc(1e50)).
Value* normal_sf(const Ew& f, Value* x) {
  x = f.max(f.min(x, f.c(40.0)), f.c(-40.0));
  return f.mul(build_recipe_named(f.g(), "erfc", {f.mul(x, kInvSqrt2)}, {})[0], 0.5);
}

Value* owens_t(const Ew& f, Value* h, Value* a) {
  Value* nan_result = f.or_(f.isnan(h), f.isnan(a));
  Value* sign = f.sign(a);
  h = f.abs(h);
  a = f.abs(a);
  Value* h_inf = f.isinf(h);
  Value* a_inf = f.isinf(a);
  h = f.where(h_inf, 0.0, h);
  Value* large_a = f.gt(a, 1.0);
  Value* inv_a = f.div(1.0, a);
  Value* ah = f.mul(a, h);  // may overflow to inf: Q(inf) = 0, T(inf, .) = 0
  Value* inner = owens_t_small_a(f, f.where(large_a, ah, h), f.where(large_a, inv_a, a));
  Value* q_h = normal_sf(f, h);
  Value* q_ah = normal_sf(f, ah);
  Value* phi_h = normal_sf(f, f.neg(h));
  Value* phi_ah = normal_sf(f, f.neg(ah));
  Value* reflected = f.sub(f.mul(f.add(f.mul(phi_h, q_ah), f.mul(phi_ah, q_h)), 0.5), inner);
  Value* result = f.where(large_a, reflected, inner);
  result = f.where(a_inf, f.mul(q_h, 0.5), result);  // (also h = 0, where ah = inf * 0)
  result = f.where(h_inf, 0.0, result);
  return f.where(nan_result, kNaN, f.mul(sign, result));
}

std::vector<Value*> owens_t_core(const Ew& f, const std::vector<Value*>& in, const Attributes&) {
  return {owens_t(f, in[0], in[1])};
}

}  // namespace

void add_owens_t_recipes(std::vector<RecipeInfo>& table) {
  table.push_back(float64_recipe("owens_t", owens_t_core, 2, "Owen's T function T(h, a)"));
}

}  // namespace pytensor_onnx::recipes
