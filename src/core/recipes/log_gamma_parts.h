// Pieces of log Gamma shared by the recipes that form x^a e^-x / Gamma(a)
// or x^a (1 - x)^b / B(a, b) in log space without cancellation
// (incomplete_gamma.cc, incomplete_beta.cc). All float64.
#pragma once

#include "elementwise.h"

namespace pytensor_onnx::recipes {

// lgamma(1 + a) for 0 <= a <= 7, accurate for tiny a (relative error of a
// few ulp as a -> 0, where lgamma(1 + a) ~ -euler_gamma a).
Value* lgamma1p_small(const Ew& f, Value* a);

// mu(a) = lgamma(a) - ((a - 1/2) log a - a + log(2 pi) / 2) for a >= 8: the
// Stirling series.
Value* stirling_correction(const Ew& f, Value* a);

// log(1 + t) - t where 1 + t = x / a (x, a > 0): summed as a series for
// |t| <= 1/2, log(x / a) - t farther out.
Value* log1pmx(const Ew& f, Value* t, Value* x, Value* a);

}  // namespace pytensor_onnx::recipes
