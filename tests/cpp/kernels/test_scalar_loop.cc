// The ScalarLoop kernel's evaluator (src/kernels/scalar_loop.h), without
// ONNX Runtime.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "kernel_ir.h"
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

TEST(KernelScalarLoop, LanesThatStopAtDifferentStepsGiveEachElementsOwnResult) {
  // Elements run in lockstep, 64 at a time; each leaves when its own step
  // count or condition says. Against the loop written out, element by element.
  LoopProgram loop = counting_loop();
  const size_t n = 300;
  std::vector<int64_t> steps(n);
  std::vector<double> s0(n), k0{1.0}, c(n);
  for (size_t i = 0; i < n; ++i) {
    steps[i] = static_cast<int64_t>(i % 11);
    s0[i] = static_cast<double>(i % 5) - 2.0;
    c[i] = 0.05 * static_cast<double>(i % 13);
  }
  std::vector<double> s(n), k(n), until(n);
  evaluate_loop(loop, {{steps.data(), {300}}, {s0.data(), {300}}, {k0.data(), {}}, {c.data(), {300}}}, {300},
                {s.data(), k.data(), until.data()});
  for (size_t i = 0; i < n; ++i) {
    double want_s = s0[i], want_k = 1.0;
    bool stopped = false;
    for (int64_t step = 0; step < steps[i] && !stopped; ++step) {
      want_s += want_k * c[i];
      want_k += 1.0;
      stopped = want_s > 10.0;
    }
    EXPECT_EQ(s[i], want_s) << i;
    EXPECT_EQ(k[i], want_k) << i;
    EXPECT_EQ(until[i], stopped ? 1.0 : 0.0) << i;
  }
}

TEST(KernelScalarLoop, AConstantCanBeTheNextState) {
  // state x: x <- 2.5 every step.
  LoopProgram loop = parse_loop("float64", "Const float64 2.5", 1, {1}, -1);
  std::vector<int64_t> steps{0, 1, 3};
  std::vector<double> x{7.0, 7.0, 7.0}, out(3);
  evaluate_loop(loop, {{steps.data(), {3}}, {x.data(), {3}}}, {3}, {out.data()});
  EXPECT_EQ(out, (std::vector<double>{7.0, 2.5, 2.5}));
}

TEST(KernelScalarLoop, AStateReadAfterItsNextValueIsComputedKeepsItsOldValueForTheStep) {
  // state (a, b): a' = a + 1 comes first in the body, then b' = b + a reads
  // the old a. (A next state is written in its state's place only where the
  // step no longer reads that state.)
  LoopProgram loop = parse_loop("float64 float64", "Const float64 1;Add float64 0 2;Add float64 1 0", 2, {3, 4}, -1);
  EXPECT_EQ(loop.copied_state, (std::vector<size_t>{0}));  // a is copied; b' is written in b's place
  std::vector<int64_t> steps{4};
  std::vector<double> a{0.0}, b{0.0}, out_a(1), out_b(1);
  evaluate_loop(loop, {{steps.data(), {}}, {a.data(), {}}, {b.data(), {}}}, {}, {out_a.data(), out_b.data()});
  EXPECT_EQ(out_a[0], 4.0);
  EXPECT_EQ(out_b[0], 0.0 + 1.0 + 2.0 + 3.0);
}

TEST(KernelScalarLoop, ConstantAndPerElementWorkRunsOnceAndGivesTheStepwiseResult) {
  // state s, constant input x: s <- s * (x + cast(2)) - cast(2) / 4. `Cast` of
  // a literal folds into a constant; `x + 2` runs once per element; the rest
  // every step.
  LoopProgram loop = parse_loop(
      "float64 float64",
      "Const int8 2;Cast float64 2;Add float64 1 3;Mul float64 0 4;Const float64 4;TrueDiv float64 3 6;Sub float64 5 7",
      1, {8}, -1);
  EXPECT_EQ(loop.invariant_code.size(), 1u);  // x + 2
  EXPECT_EQ(loop.step_code.size(), 2u);       // the Mul and the Sub; Cast and TrueDiv are constants
  const size_t n = 150;                       // lanes of three groups, some leaving early
  std::vector<int64_t> steps(n);
  std::vector<double> s0(n), x(n), out(n);
  for (size_t i = 0; i < n; ++i) {
    steps[i] = static_cast<int64_t>(i % 7);
    s0[i] = 0.1 * static_cast<double>(i);
    x[i] = -1.0 + 0.01 * static_cast<double>(i);
  }
  evaluate_loop(loop, {{steps.data(), {150}}, {s0.data(), {150}}, {x.data(), {150}}}, {150}, {out.data()});
  for (size_t i = 0; i < n; ++i) {
    double want = s0[i];
    for (int64_t k = 0; k < steps[i]; ++k) want = want * (x[i] + 2.0) - 2.0 / 4.0;
    EXPECT_EQ(out[i], want) << i;
  }
}

TEST(KernelScalarLoopIR, WritesOneFunctionWithTheStateInPhisAndLibmCalls) {
  const std::string ir = loop_llvm_ir(
      parse_loop("float64 float64", "Exp float64 1;Add float64 0 2;Const float64 10;GT bool 3 4", 1, {3}, 5), "body");
  EXPECT_NE(ir.find("define i8 @body(i64 %n, ptr %state, ptr %inputs)"), std::string::npos) << ir;
  EXPECT_NE(ir.find("declare double @exp(double)"), std::string::npos) << ir;
  EXPECT_NE(ir.find("%r0 = phi double"), std::string::npos) << ir;
  EXPECT_NE(ir.find("0x4024000000000000"), std::string::npos) << ir;  // 10.0, as LLVM writes doubles
  // exp(x) reads only the constant input: computed once, before the loop.
  EXPECT_LT(ir.find("call double @exp"), ir.find("step:")) << ir;
}

TEST(KernelScalarLoopIR, CallsTheInterpretersLoopForAnOpWithoutAnIRForm) {
  // Integer floor division (NumPy's rules) has no IR form here: the compiled
  // loop calls the interpreter's own loop over one element, whose operands
  // live in stack slots made once, in the entry block.
  const std::string ir = loop_llvm_ir(parse_loop("int64 int64", "IntDiv int64 0 1", 1, {2}, -1), "body");
  EXPECT_NE(ir.find("call void inttoptr (i64 "), std::string::npos) << ir;
  EXPECT_LT(ir.find("alloca"), ir.find("step:")) << ir;
  EXPECT_GT(ir.find("call void inttoptr"), ir.find("step:")) << ir;
  // A float64 op is a direct call of its scalar function instead.
  const std::string direct = loop_llvm_ir(parse_loop("float64 float64", "IntDiv float64 0 1", 1, {2}, -1), "body");
  EXPECT_NE(direct.find("call double inttoptr (i64 "), std::string::npos) << direct;
  EXPECT_EQ(direct.find("alloca"), std::string::npos) << direct;
}

TEST(KernelBlockIR, ReadsScalarInputsOnceAndRefusesAMaskOfAnotherSize) {
  const Program program = parse_program("float64 float64", "Exp float64 1;Mul float64 0 2", {3});
  const std::string ir = block_llvm_ir(program, {false, true}, "block");
  EXPECT_NE(ir.find("define void @block(ptr %inputs, ptr %outputs, i64 %n)"), std::string::npos) << ir;
  EXPECT_LT(ir.find("call double @exp"), ir.find("element:")) << ir;  // exp of the scalar input: once
  EXPECT_EQ(block_llvm_ir(program, {false}, "block"), "");
}

TEST(KernelScalarLoop, CompiledBodiesAreFoundByTheirNodesAttributes) {
  const std::string key = loop_key("float64", "Exp float64 0", 1, {1}, -1);
  EXPECT_EQ(compiled_loop(key).one, nullptr);
  EXPECT_EQ(compiled_loop(key).lanes, nullptr);
  CompiledLoop fn = [](int64_t, void*, const void* const*) -> int8_t { return 0; };
  CompiledLoopLanes lanes = [](const int64_t*, void*, const void* const*, int8_t*) {};
  set_compiled_loop(key, {fn, lanes});
  EXPECT_EQ(compiled_loop(key).one, fn);
  EXPECT_EQ(compiled_loop(key).lanes, lanes);
  EXPECT_EQ(compiled_loop(loop_key("float64", "Exp float64 0", 1, {1}, 2)).one, nullptr);  // another until
}

TEST(KernelScalarLoopIR, WritesTheLoopForLanesOfElementsToo) {
  // Beside the loop of one element, one of kLoopLanes elements in vector
  // registers, whose functions of one element (libm's exp, a float64
  // special function, the interpreter's loop) run lane by lane, in running
  // lanes only; the state keeps its value in lanes that stopped.
  const std::string ir = loop_llvm_ir(
      parse_loop("float64 float64 int64 int64",
                 "Exp float64 0;GammaLn float64 1;Add float64 4 5;IntDiv int64 2 3;Cast float64 7;Add float64 6 8;"
                 "Const float64 3.0;GT bool 9 10",
                 2, {9, 5}, 11),
      "body");
  const std::string lanes = "<" + std::to_string(kLoopLanes) + " x double>";
  const size_t start = ir.find("define void @body_lanes(ptr %steps, ptr %state, ptr %inputs, ptr %flags)");
  ASSERT_NE(start, std::string::npos) << ir;
  EXPECT_LT(ir.find("define i8 @body(i64 %n, ptr %state, ptr %inputs)"), start) << ir;
  const std::string vector_code = ir.substr(start);
  EXPECT_NE(vector_code.find("fadd " + lanes), std::string::npos) << vector_code;
  EXPECT_NE(vector_code.find("fcmp ogt " + lanes), std::string::npos) << vector_code;
  EXPECT_NE(vector_code.find("select <" + std::to_string(kLoopLanes) + " x i1> %act, " + lanes), std::string::npos)
      << vector_code;
  for (const char* call : {"call double @exp(double %r4.l0.a0)", "call double inttoptr", "call void inttoptr"}) {
    const size_t at = vector_code.find(call);
    ASSERT_NE(at, std::string::npos) << call << "\n" << vector_code;
    // (Inside a lane's call block, entered when the lane runs.)
    EXPECT_LT(vector_code.rfind(".on = extractelement <" + std::to_string(kLoopLanes) + " x i1> %act", at),
              at) << call;
  }
  EXPECT_EQ(ir.find("declare double @exp(double)"), ir.rfind("declare double @exp(double)")) << ir;  // once
}

TEST(KernelScalarLoop, RejectsABodyThatDoesNotFit) {
  EXPECT_THROW(parse_loop("float64", "Cast float32 0", 1, {1}, -1), std::invalid_argument);     // state changes dtype
  EXPECT_THROW(parse_loop("float64", "Exp float64 0", 1, {1}, 1), std::invalid_argument);       // until not a bool
  EXPECT_THROW(parse_loop("float64 int64", "Exp float64 0", 2, {2, 1}, -1), std::invalid_argument);  // mixed states
}

}  // namespace
}  // namespace pytensor_onnx::kernels
