// The constants that define the methods of recipes whose kernels run the
// same methods in scalar code (src/kernels/special_*.cc): one definition
// for both, so that a change to a method changes both of its forms.
#pragma once

#include <cstdint>

namespace pytensor_onnx::recipes {

namespace bessel {  // bessel_ik.cc, bessel_jy.cc (bessel_common.h)
// An element needing more steps than this in any iteration is NaN.
inline constexpr int64_t kMaxSteps = 30000;
inline constexpr double kEpsilon = 0x1p-53;
// The downward recurrences are rescaled by this power of two (exactly) when
// they grow past its inverse.
inline constexpr double kRescale = 0x1p-500;
// Hankel's expansions stop after this many terms (asymptotic series: past
// ~2x terms they grow again): J and Y, and I.
inline constexpr int64_t kHankelJYTerms = 400;
inline constexpr int64_t kHankelITerms = 200;
}  // namespace bessel

namespace owens_t_method {  // owens_t.cc
inline constexpr int kQuadraturePoints = 24;
inline constexpr double kGaussianCut = 9.0;  // the integral stops where h x = 9
// Beyond h = 100 exp(-h^2 / 2) is 0 in double: the quadrature sees at most
// this (so that h x is never inf * 0).
inline constexpr double kMaxQuadratureH = 100.0;
}  // namespace owens_t_method

namespace betaincinv_method {  // incomplete_beta_inverse.cc
// At most this many Halley steps (six reach the root on the test grids).
inline constexpr int kHalleySteps = 8;
inline constexpr double kEpsilon = 0x1p-53;
inline constexpr double kMaxStep = 20.0;  // in the log-odds
// log of the smallest root the iteration is trusted with (e^-740 ~ 4e-322).
inline constexpr double kLogUnderflow = -740.0;
// Parameters up to this are tested (the root within 1e-11 of SciPy's).
inline constexpr double kLargestParameter = 1e10;
}  // namespace betaincinv_method

namespace hyp2f1_method {  // hyp2f1.cc
// Results whose estimated relative error is above the tolerance are NaN:
// 1e-11 for float64 results; for narrower dtypes the float64 method runs
// with a tolerance that still rounds right in that dtype, so that
// near-singular points a float64 result could not resolve keep their
// float32 value.
inline constexpr double kTolerance = 1e-11;
inline constexpr double kFloat32Tolerance = 1e-8;
inline constexpr double kFloat16Tolerance = 1e-4;
// The Gauss series is a candidate up to x = 0.99 (about 100 (|a| + |b|) +
// 3700 steps there): it is what remains where c - a - b is close to, but
// not, an integer, and the connection formula cancels.
inline constexpr double kSeriesLimit = 0.99;
// Steps of each series; elements that need more are NaN.
inline constexpr int kMaxSteps = 10000;
}  // namespace hyp2f1_method

}  // namespace pytensor_onnx::recipes
