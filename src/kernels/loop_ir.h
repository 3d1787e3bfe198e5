// A ScalarLoop's body as machine code: the loop written out in LLVM's IR, for
// a JIT compiler to turn into one function per loop. The kernels interpret a
// body in lockstep over elements (scalar_loop.h), ~1 ns per operation and
// element; the compiled loop keeps an element's state in registers, as
// PyTensor's C and Numba backends do (10x fewer cycles on the censored Gamma
// model's gradient). The library has no compiler of its own: pytensor_onnx
// compiles this text with llvmlite (Numba's LLVM binding, which every
// supported PyTensor installs) and hands the function back
// (set_compiled_loop in scalar_loop.h).
//
// The function, per element (ScalarLoop.perform):
//   i8 @<name>(i64 n_steps, ptr state, ptr inputs)
// `state` holds the num_state state values (read, then overwritten with the
// final state); `inputs` points to one pointer per other body input (the
// loop's constants). It returns the until flag: 1 when the condition stopped
// the loop, 0 when the steps ran out or none ran.
//
// Each op is emitted with the interpreter's semantics (scalar_ops.h) to the
// bit: IEEE operations in program order (LLVM contracts nothing without
// fast-math flags), libm's exp and log, NumPy's NaN rules. A body with an op
// or a dtype written out here does not support gives an empty text: that
// loop stays interpreted.
#pragma once

#include <string>

#include "scalar_loop.h"

namespace pytensor_onnx::kernels {

std::string loop_llvm_ir(const LoopProgram& loop, const std::string& function_name);

}  // namespace pytensor_onnx::kernels
