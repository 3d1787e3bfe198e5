// The hyp2f1 recipe (hyp2f1.cc): its interface (broadcast shape and dtype,
// rejection of bad inputs), that it sums its series in Loops and evaluates
// gammaln once per formula, and that float32 inputs get a float64 function
// of their own (built with a looser tolerance). Values are checked against
// SciPy and mpmath in tests/python/test_special_hyp2f1.py.
#include <gtest/gtest.h>

#include <string>

#include "builder.h"
#include "errors.h"
#include "node_count.h"

namespace pytensor_onnx {
namespace {

using testing::count_iteration_loops;

TEST(Hyp2F1Recipe, BroadcastsItsFourInputsAndKeepsTheDtype) {
  GraphBuilder g(18);
  Value* a = g.input("a", DType::Float64, shape_of_sizes({2, 1}));
  Value* b = g.input("b", DType::Float64, shape_of_sizes({3}));
  Value* c = g.input("c", DType::Float64, shape_of_sizes({1, 1}));
  Value* z = g.input("z", DType::Float64, shape_of_sizes({1, 3}));
  Value* y = g.recipe("hyp2f1", {a, b, c, z})[0];
  EXPECT_EQ(y->dtype, DType::Float64);
  ASSERT_EQ(y->rank(), 2u);
  EXPECT_EQ((*y->shape)[0].size, 2);
  EXPECT_EQ((*y->shape)[1].size, 3);
}

TEST(Hyp2F1Recipe, SumsInLoopsWithGammalnOncePerFormula) {
  // Inlined: the Gauss series (the function's own, the two of the
  // connection formula, the finite sum and the b = c polynomial) and the
  // digamma series are Loops; gammaln and digamma are built on the
  // concatenated arguments, once per formula (so 2 gammaln and 1 digamma
  // function calls before inlining, whatever the number of arguments).
  GraphBuilder g(18);
  const Shape flat = shape_of_sizes({-1});
  g.recipe("hyp2f1", {g.input("a", DType::Float64, flat), g.input("b", DType::Float64, flat),
                      g.input("c", DType::Float64, flat), g.input("z", DType::Float64, flat)});
  size_t gammaln_calls = 0, digamma_calls = 0, loops = 0;
  for (const Function* f : g.functions()->all()) {
    for (const Node* n : f->body->nodes()) {
      gammaln_calls += n->op_type.rfind("gammaln", 0) == 0;
      digamma_calls += n->op_type.rfind("digamma", 0) == 0;
    }
    loops += count_iteration_loops(*f->body);
  }
  EXPECT_EQ(gammaln_calls, 2u);
  EXPECT_EQ(digamma_calls, 1u);
  EXPECT_EQ(loops, 6u);
}

TEST(Hyp2F1Recipe, Float32GetsItsOwnFloat64Function) {
  // The float32 recipe casts to float64 and calls a float64 function built
  // with the tolerance attribute: a different function from the float64
  // recipe's (which rejects results with an estimated error above 1e-11).
  GraphBuilder g(18);
  const Shape flat = shape_of_sizes({-1});
  std::vector<Value*> wide, narrow;
  for (const char* name : {"a", "b", "c", "z"}) {
    wide.push_back(g.input(std::string(name) + "64", DType::Float64, flat));
    narrow.push_back(g.input(std::string(name) + "32", DType::Float32, flat));
  }
  EXPECT_EQ(g.recipe("hyp2f1", narrow)[0]->dtype, DType::Float32);
  g.recipe("hyp2f1", wide);
  size_t float64_bodies = 0;
  for (const Function* f : g.functions()->all()) {
    float64_bodies += f->name.rfind("hyp2f1_float64", 0) == 0;
  }
  EXPECT_EQ(float64_bodies, 2u);
}

TEST(Hyp2F1Recipe, RejectsIntegerInputsAndWrongArity) {
  GraphBuilder g(18);
  Value* n = g.input("n", DType::Int64, shape_of_sizes({2}));
  Value* x = g.input("x", DType::Float64, shape_of_sizes({2}));
  Value* f = g.input("f", DType::Float32, shape_of_sizes({2}));
  EXPECT_THROW(g.recipe("hyp2f1", {n, n, n, n}), BuildError);
  EXPECT_THROW(g.recipe("hyp2f1", {x, x, x}), BuildError);
  EXPECT_THROW(g.recipe("hyp2f1", {x, x, x, f}), BuildError);
}

}  // namespace
}  // namespace pytensor_onnx
