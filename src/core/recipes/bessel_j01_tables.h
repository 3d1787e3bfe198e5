// What J0 and J1 are evaluated from, in their recipe (bessel_jy.cc) and
// their kernel (src/kernels/special_bessel_j01.cc): for |x| <= 8 a table of
// J with its two zeros below 8 divided out, beyond it tables of Hankel's P
// and Q / w in w = 8 / |x|.
#pragma once

#include "special_tables.h"

namespace pytensor_onnx::recipes {

struct BesselJTables {
  const PiecewiseTable& small;  // J (J / x for J1) over its zeros, in z = x^2
  double zeros[2][2];           // its zeros below 8, each as hi, lo
  const PiecewiseTable& p;      // Hankel's P in w = 8 / x
  const PiecewiseTable& q_over_w;
  bool odd;                     // J1: chi = a - 3 pi/4, and J1(-x) = -J1(x)
};

inline constexpr BesselJTables kJ0Tables{
    tables::kJ0OverZeros,
    {{tables::kJ0Zero1Hi, tables::kJ0Zero1Lo}, {tables::kJ0Zero2Hi, tables::kJ0Zero2Lo}},
    tables::kJ0P,
    tables::kJ0QOverW,
    false};
inline constexpr BesselJTables kJ1Tables{
    tables::kJ1OverXAndZeros,
    {{tables::kJ1Zero1Hi, tables::kJ1Zero1Lo}, {tables::kJ1Zero2Hi, tables::kJ1Zero2Lo}},
    tables::kJ1P,
    tables::kJ1QOverW,
    true};

}  // namespace pytensor_onnx::recipes
