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

#include "bessel_j01_tables.h"

namespace pytensor_onnx::kernels::special {
namespace {

namespace tables = recipes::tables;
using recipes::BesselJTables;
using recipes::evaluate_table;

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

}  // namespace

double j0(double x) { return bessel_j(x, recipes::kJ0Tables); }

double j1(double x) { return bessel_j(x, recipes::kJ1Tables); }

}  // namespace pytensor_onnx::kernels::special
