// For |x| <= 8: a table in z = x^2 of J with its two zeros below 8 divided
// out (J1 also divided by x), multiplied back as (a - j)(a + j) with
// j = hi + lo, so the result keeps its relative accuracy next to them.
// Beyond 8: tables of Hankel's P and Q / w in w = 8 / |x|, and
// J = sqrt(2 / (pi a)) (P cos chi - Q sin chi) with chi = a - pi/4 (J0) or
// a - 3 pi/4 (J1). C's cos and sin are accurate for every double, as the
// recipe's (trig.cc) are; cos(+-inf) is NaN, and so is the result there, as
// SciPy's j0 and j1 give.
#include "special_bessel_j01.h"

#include <cmath>

#include "special_tables.h"

namespace pytensor_onnx::kernels::special {
namespace {

namespace tables = recipes::tables;
using recipes::evaluate_table;
using recipes::PiecewiseTable;

struct BesselJTables {
  const PiecewiseTable& small;  // J (J / x for J1) over its zeros, in z = x^2
  double zeros[2][2];           // its zeros below 8, each as hi, lo
  const PiecewiseTable& p;      // Hankel's P in w = 8 / x
  const PiecewiseTable& q_over_w;
  bool odd;                     // J1: chi = a - 3 pi/4, and J1(-x) = -J1(x)
};

double bessel_j(double x, const BesselJTables& t) {
  const double a = std::fabs(x);
  const double w = 8.0 / a;
  if (a <= 8.0) {
    double near = evaluate_table(t.small, a * a);
    for (const auto& zero : t.zeros) near = near * (((a - zero[0]) - zero[1]) * ((a + zero[0]) + zero[1]));
    return t.odd ? near * x : near;  // J1 is odd (J1(-0) = -0)
  }
  const double p = evaluate_table(t.p, w);
  const double q = evaluate_table(t.q_over_w, w) * w;
  const double c = std::cos(a);
  const double s = std::sin(a);
  // sqrt(2) cos chi and sqrt(2) sin chi.
  const double cos_chi = t.odd ? s - c : c + s;
  const double sin_chi = t.odd ? -(s + c) : s - c;
  const double far = (p * cos_chi - q * sin_chi) / std::sqrt(a * tables::kPiHi);
  return t.odd && x < 0.0 ? -far : far;
}

const BesselJTables kJ0{tables::kJ0OverZeros,
                        {{tables::kJ0Zero1Hi, tables::kJ0Zero1Lo}, {tables::kJ0Zero2Hi, tables::kJ0Zero2Lo}},
                        tables::kJ0P,
                        tables::kJ0QOverW,
                        false};
const BesselJTables kJ1{tables::kJ1OverXAndZeros,
                        {{tables::kJ1Zero1Hi, tables::kJ1Zero1Lo}, {tables::kJ1Zero2Hi, tables::kJ1Zero2Lo}},
                        tables::kJ1P,
                        tables::kJ1QOverW,
                        true};

}  // namespace

double j0(double x) { return bessel_j(x, kJ0); }

double j1(double x) { return bessel_j(x, kJ1); }

}  // namespace pytensor_onnx::kernels::special
