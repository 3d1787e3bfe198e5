// Gauss–Legendre rules, for the quadratures of the recipes and of the
// kernel library (the same nodes and weights in both).
#pragma once

#include <cmath>
#include <vector>

namespace pytensor_onnx::recipes {

struct GaussLegendre {
  std::vector<double> nodes;    // on [-1, 1]
  std::vector<double> weights;  // summing to 2
};

// The n-point Gauss–Legendre rule: the roots of P_n by Newton's method from
// Tricomi's approximation cos(pi (k - 1/4) / (n + 1/2)), P_n and P_n' from
// the three-term recurrence, weights 2 / ((1 - x^2) P_n'(x)^2).
inline GaussLegendre gauss_legendre(int n) {
  constexpr double kPi = 0x1.921fb54442d18p+1;
  GaussLegendre rule;
  for (int k = 1; k <= n; ++k) {
    double x = std::cos(kPi * (k - 0.25) / (n + 0.5));
    double derivative = 1.0;
    for (int iteration = 0; iteration < 100; ++iteration) {
      double p0 = 1.0, p1 = x;
      for (int j = 2; j <= n; ++j) {
        const double p2 = ((2.0 * j - 1.0) * x * p1 - (j - 1.0) * p0) / j;
        p0 = p1;
        p1 = p2;
      }
      derivative = n * (x * p1 - p0) / (x * x - 1.0);
      const double dx = p1 / derivative;
      x -= dx;
      if (std::fabs(dx) < 1e-17) break;
    }
    rule.nodes.push_back(x);
    rule.weights.push_back(2.0 / ((1.0 - x * x) * derivative * derivative));
  }
  return rule;
}

}  // namespace pytensor_onnx::recipes
