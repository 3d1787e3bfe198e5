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

#include "evaluate.h"
#include "program.h"

namespace pytensor_onnx::kernels {

struct LoopProgram {
  Program body;                // registers: state..., constants...
  size_t num_state = 0;
  std::vector<int> next_state;  // body registers holding the next state
  int until = -1;               // body register of the until flag (bool), -1 without
};

// Parses the body and checks it against the loop's layout; throws
// std::invalid_argument naming what does not fit.
LoopProgram parse_loop(const std::string& body_input_dtypes, const std::string& body_text, size_t num_state,
                       const std::vector<int64_t>& next_state, int64_t until);

// `inputs` are n_steps (int64), the state and the constants, broadcast to
// `out_shape`; `outputs` the final state and (with an until flag) the flag.
// A negative n_steps without an until flag throws, as PyTensor raises.
void evaluate_loop(const LoopProgram& loop, const std::vector<ArrayArg>& inputs, const std::vector<int64_t>& out_shape,
                   const std::vector<void*>& outputs, const ParallelFor* parallel = nullptr);

}  // namespace pytensor_onnx::kernels
