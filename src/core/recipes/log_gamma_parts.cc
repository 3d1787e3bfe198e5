// See log_gamma_parts.h.
#include "log_gamma_parts.h"

#include <vector>

#include "special_tables.h"

namespace pytensor_onnx::recipes {

// a (a - 1) T(1 + a) with the table of lgamma(x) / ((x - 1)(x - 2)) on
// [1, 8] (special_tables.h).
Value* lgamma1p_small(const Ew& f, Value* a) {
  return f.mul(f.mul(a, f.sub(a, 1.0)), f.table(f.add(a, 1.0), tables::kLgammaOverZeros));
}

// The Stirling series sum_k B_2k / (2k (2k - 1) a^(2k - 1)), nine terms.
Value* stirling_correction(const Ew& f, Value* a) {
  std::vector<double> coefficients;
  for (size_t k = 1; k <= 9; ++k) coefficients.push_back(tables::kBernoulli2k[k - 1] / (2.0 * k * (2.0 * k - 1)));
  Value* inv = f.div(1.0, a);
  return f.mul(inv, f.poly(f.sqr(inv), coefficients));
}

// For |t| <= 1/2, with u = t / (2 + t) (|u| <= 1/3): log(1 + t) = 2 atanh(u)
// = 2 (u + u^3/3 + u^5/5 + ...) and t - 2u = u t, so log1pmx = -u t +
// 2 u^3 (1/3 + u^2/5 + ...); twenty terms reach u^42 < 1e-20. Farther out,
// log(x / a) from the correctly rounded quotient (t itself may have lost x
// when x << a: t = -1 exactly).
Value* log1pmx(const Ew& f, Value* t, Value* x, Value* a) {
  Value* u = f.div(t, f.add(t, 2.0));
  Value* u2 = f.sqr(u);
  std::vector<double> odd;
  for (int k = 1; k <= 20; ++k) odd.push_back(2.0 / (2 * k + 1));
  Value* near_zero = f.sub(f.mul(f.mul(u, u2), f.poly(u2, odd)), f.mul(u, t));
  Value* far = f.sub(f.log(f.div(x, a)), t);
  return f.where(f.le(f.abs(t), 0.5), near_zero, far);
}

}  // namespace pytensor_onnx::recipes
