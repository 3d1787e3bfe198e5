// The ScalarLoop kernel's evaluator (src/kernels/scalar_loop.h), without
// ONNX Runtime.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "scalar_loop.h"

namespace pytensor_onnx::kernels {
namespace {

// state (s, k), constant c: s += k * c; k += 1; until s > 10.
LoopProgram counting_loop() {
  return parse_loop("float64 float64 float64",
                    "Mul float64 1 2;Add float64 0 3;Const float64 1;Add float64 1 5;Const float64 10;GT bool 4 7",
                    2, {4, 6}, 8);
}

TEST(KernelScalarLoop, EachElementStopsOnItsOwn) {
  LoopProgram loop = counting_loop();
  std::vector<int64_t> steps{100, 2, 0};   // per element: the until condition, the step count, no step
  std::vector<double> s0{0.0}, k0{1.0};    // broadcast
  std::vector<double> c{1.0, 1.0, 1.0};
  std::vector<double> s(3), k(3), until(3);
  evaluate_loop(loop, {{steps.data(), {3}}, {s0.data(), {}}, {k0.data(), {}}, {c.data(), {3}}}, {3},
                {s.data(), k.data(), until.data()});
  // Element 0: s = 1, 3, 6, 10, 15 -> stops after 5 steps with k = 6.
  EXPECT_EQ(s[0], 15.0);
  EXPECT_EQ(k[0], 6.0);
  EXPECT_EQ(until[0], 1.0);
  // Element 1: two steps, s = 1 + 2, condition never held.
  EXPECT_EQ(s[1], 3.0);
  EXPECT_EQ(until[1], 0.0);
  // Element 2: no step: the initial state, and no until (PyTensor's False).
  EXPECT_EQ(s[2], 0.0);
  EXPECT_EQ(k[2], 1.0);
  EXPECT_EQ(until[2], 0.0);
}

TEST(KernelScalarLoop, SwappedStatesReadTheOldValues) {
  // (a, b) -> (b, a + b): Fibonacci; a body that writes one state from another.
  LoopProgram loop = parse_loop("float64 float64", "Add float64 0 1", 2, {1, 2}, -1);
  std::vector<int64_t> steps{10};
  std::vector<double> a{0.0}, b{1.0}, out_a(1), out_b(1);
  evaluate_loop(loop, {{steps.data(), {}}, {a.data(), {}}, {b.data(), {}}}, {}, {out_a.data(), out_b.data()});
  EXPECT_EQ(out_a[0], 55.0);
  EXPECT_EQ(out_b[0], 89.0);
}

TEST(KernelScalarLoop, NegativeStepsWithoutUntilFailBeforeAnyWork) {
  LoopProgram loop = parse_loop("float64", "Exp float64 0", 1, {1}, -1);
  std::vector<int64_t> steps{3, -1};
  std::vector<double> x{0.0, 0.0}, out{-7.0, -7.0};
  EXPECT_THROW(evaluate_loop(loop, {{steps.data(), {2}}, {x.data(), {2}}}, {2}, {out.data()}), std::invalid_argument);
  EXPECT_EQ(out[0], -7.0);  // nothing written
}

TEST(KernelScalarLoop, ParallelTasksGiveTheSerialResult) {
  LoopProgram loop = counting_loop();
  const size_t n = 5000;
  std::vector<int64_t> steps{1000};
  std::vector<double> s0{0.0}, k0{1.0}, c(n);
  for (size_t i = 0; i < n; ++i) c[i] = 0.01 + static_cast<double>(i) * 1e-3;
  std::vector<double> s(n), k(n), until(n), s2(n), k2(n), until2(n);
  const std::vector<ArrayArg> in{{steps.data(), {}}, {s0.data(), {}}, {k0.data(), {}}, {c.data(), {5000}}};
  evaluate_loop(loop, in, {5000}, {s.data(), k.data(), until.data()});
  size_t tasks = 0;
  const ParallelFor backwards = [&tasks](size_t count, const std::function<void(size_t)>& task) {
    for (size_t t = count; t-- > 0; ++tasks) task(t);
  };
  evaluate_loop(loop, in, {5000}, {s2.data(), k2.data(), until2.data()}, &backwards);
  EXPECT_GT(tasks, 1u);
  EXPECT_EQ(s, s2);
  EXPECT_EQ(k, k2);
  EXPECT_EQ(until, until2);
}

TEST(KernelScalarLoop, RejectsABodyThatDoesNotFit) {
  EXPECT_THROW(parse_loop("float64", "Cast float32 0", 1, {1}, -1), std::invalid_argument);     // state changes dtype
  EXPECT_THROW(parse_loop("float64", "Exp float64 0", 1, {1}, 1), std::invalid_argument);       // until not a bool
  EXPECT_THROW(parse_loop("float64 int64", "Exp float64 0", 2, {2, 1}, -1), std::invalid_argument);  // mixed states
}

}  // namespace
}  // namespace pytensor_onnx::kernels
