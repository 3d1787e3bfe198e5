// PyTensor's ScalarLoop as a kernel: a scalar recurrence run element by
// element over broadcast inputs (PyTensor builds the gradients of the
// incomplete gamma and beta functions with it). The body is a scalar program
// (program.h) whose first registers are the state, then the constants; per
// element (ScalarLoop.perform):
//   for k in range(n_steps): state, until = body(state, constants); if until: break
// The node's inputs are n_steps (int64), the initial state, the constants;
// its outputs the final state and, for a loop with an until condition, the
// flag (0 or 1, in the state's dtype: a custom op's outputs share one dtype).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiled.h"
#include "evaluate.h"
#include "program.h"

namespace pytensor_onnx::kernels {

struct LoopProgram {
  Program body;                // registers: state..., constants...
  size_t num_state = 0;
  std::vector<int> next_state;  // body registers holding the next state
  int until = -1;               // body register of the until flag (bool), -1 without
  // Set by parse_loop from the body: instructions of constants alone are
  // folded into constants; `invariant_code` (instructions that read only
  // constants and the loop's constant inputs) runs once per element, before
  // the first step; `step_code` runs every step. PyTensor's gradient loops
  // cast literals and combine constant inputs in their bodies: that work
  // repeated every step was a fifth of the censored Gamma model's loop.
  std::vector<size_t> invariant_code;
  std::vector<size_t> step_code;
  std::vector<int> lane_registers;  // registers a lane carries from step to step: state, inputs, invariants
  bool swaps_state = false;          // a next state is another state's register (Fibonacci's (b, a + b))
  std::vector<int> home;             // per register: the register whose storage it uses (itself, or its state)
  std::vector<size_t> copied_state;  // states whose next value is copied in after each step
  // The body as machine code, where pytensor_onnx compiled it (compiled.h):
  // for one element, and for kLoopLanes elements at once (vector registers,
  // where it could be written); the lockstep interpreter runs it otherwise.
  // All give the same bits.
  CompiledLoopFns compiled;
};

// Parses the body and checks it against the loop's layout; throws
// std::invalid_argument naming what does not fit.
LoopProgram parse_loop(const std::string& body_input_dtypes, const std::string& body_text, size_t num_state,
                       const std::vector<int64_t>& next_state, int64_t until);

// `inputs` are n_steps (int64), the state and the constants, broadcast to
// `out_shape`; `outputs` the final state and (with an until flag) the flag.
// A negative n_steps without an until flag throws, as PyTensor raises.
void evaluate_loop(const LoopProgram& loop, ArgList inputs, const std::vector<int64_t>& out_shape,
                   const std::vector<void*>& outputs, const ParallelFor* parallel = nullptr);
inline void evaluate_loop(const LoopProgram& loop, const std::vector<ArrayArg>& inputs,
                          const std::vector<int64_t>& out_shape, const std::vector<void*>& outputs,
                          const ParallelFor* parallel = nullptr) {
  evaluate_loop(loop, ArgList(inputs), out_shape, outputs, parallel);
}

}  // namespace pytensor_onnx::kernels
