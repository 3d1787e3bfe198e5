// Special-function recipes: the generated tables evaluated in double (their
// building block) against SciPy's values, and every recipe building for the
// float dtypes with the input's dtype and shape.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "builder.h"
#include "node_count.h"
#include "recipes/special_tables.h"

namespace pytensor_onnx {
namespace {

// The evaluation the recipes build with ONNX ops (Ew::table), in double.
double evaluate(const recipes::PiecewiseTable& table, double w) {
  double u = (w - table.lo) * (table.pieces / (table.hi - table.lo));
  int k = std::min(std::max(static_cast<int>(std::floor(u)), 0), table.pieces - 1);
  double s = u - k - 0.5;
  const double* c = table.coefficients + k * (table.degree + 1);
  double p = 0.0;
  for (int j = table.degree; j >= 0; --j) p = p * s + c[j];
  return p;
}

TEST(SpecialTables, MatchScipyAtSamplePoints) {
  using namespace recipes::tables;
  // Reference values: scipy.special (i0e, i1e, erfinv, gammaln) in double.
  EXPECT_NEAR(evaluate(kI0eSmall, 1.0), 0.46575960759364043, 4e-16);
  EXPECT_NEAR(evaluate(kI1eSmallOverX, 3.0), 0.06560890443243361, 1e-16);
  EXPECT_NEAR(evaluate(kErfinvSmall, 0.09), 0.9082090490891813, 4e-16);       // erfinv(0.3) / 0.3
  EXPECT_NEAR(evaluate(kLgammaOverZeros, 3.5), 0.32025962729255314, 2e-16);  // lgamma(3.5) / (2.5 * 1.5)
  // mpmath (40 digits): J0(1) / ((1 - j01^2)(1 - j02^2)); Hankel's P of J0
  // and Q / w of J1 at x = 16 (w = 1/2).
  EXPECT_NEAR(evaluate(kJ0OverZeros, 1.0), 0.0054282225397817374, 2e-18);
  EXPECT_NEAR(evaluate(kJ0P, 0.5), 0.9997270203019398, 2e-16);
  EXPECT_NEAR(evaluate(kJ1QOverW, 0.5), 0.046825447412364614, 2e-17);
}

TEST(SpecialRecipes, BuildForEachFloatDtypeKeepingDtypeAndShape) {
  for (const char* name : {"erf", "erfc", "erfcx", "erfinv", "erfcinv", "ndtri_exp", "gammaln", "gamma", "digamma",
                           "trigamma", "i0", "i1", "i0e", "i1e", "j0", "j1"}) {
    for (DType dtype : {DType::Float64, DType::Float32}) {
      GraphBuilder g(18);
      Value* x = g.input("x", dtype, shape_of_sizes({4}));
      std::vector<Value*> out = g.recipe(name, {x});
      ASSERT_EQ(out.size(), 1u) << name;
      EXPECT_EQ(out[0]->dtype, dtype) << name;
      ASSERT_TRUE(out[0]->shape.has_value()) << name;
      EXPECT_EQ((*out[0]->shape)[0].size, 4) << name;
    }
  }
}

TEST(SpecialRecipes, BesselJ0AndJ1AreTablesWithoutLoops) {
  for (const char* name : {"j0", "j1"}) {
    GraphBuilder g(18, "main", /*use_functions=*/false);
    g.recipe(name, {g.input("x", DType::Float64, shape_of_sizes({-1}))});
    EXPECT_EQ(testing::count_nodes(g, "Loop"), 0u) << name;
    EXPECT_GT(testing::count_nodes(g, "Gather"), 0u) << name;
  }
}

}  // namespace
}  // namespace pytensor_onnx
