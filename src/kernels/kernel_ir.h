// Kernel programs as machine code: a ScalarLoop's body or a fused element-wise
// program written out in LLVM's IR, for a JIT compiler to turn into one
// function. The kernels interpret programs (evaluate.h, scalar_loop.h), ~0.5-1
// ns per operation and element; compiled code keeps values in registers and
// vectorizes what it can, as PyTensor's C and Numba backends do. The library
// has no compiler of its own: pytensor_onnx compiles this text with llvmlite
// (Numba's LLVM binding, which every supported PyTensor installs) and hands
// the function back (compiled.h).
//
// A loop's function, per element (ScalarLoop.perform):
//   i8 @<name>(i64 n_steps, ptr state, ptr inputs)
// `state` holds the num_state state values (read, then overwritten with the
// final state); `inputs` points to one pointer per other body input (the
// loop's constants). It returns the until flag: 1 when the condition stopped
// the loop, 0 when the steps ran out or none ran.
//
// A block function of an element-wise program:
//   void @<name>(ptr inputs, ptr outputs, i64 n)
// reads element k < n of input i at inputs[i] + k (the inputs the function
// was written for as scalar: their element 0 only) and writes output j's
// element k at outputs[j] + k. Instructions on scalar inputs and constants
// alone run once a call, before the elements.
//
// Each op is emitted with the interpreter's semantics (scalar_ops.h) to the
// bit: IEEE operations in program order (LLVM contracts nothing without
// fast-math flags), libm's exp and log, NumPy's NaN rules. A body with an op
// or a dtype not written out here gives an empty text: that program stays
// interpreted.
#pragma once

#include <string>
#include <vector>

#include "program.h"
#include "scalar_loop.h"

namespace pytensor_onnx::kernels {

std::string loop_llvm_ir(const LoopProgram& loop, const std::string& function_name);
std::string block_llvm_ir(const Program& program, const std::vector<bool>& scalar_inputs,
                          const std::string& function_name);

}  // namespace pytensor_onnx::kernels
