// Kernel code compiled by pytensor_onnx (kernel_ir.h), by the attributes of
// the nodes it is for. pytensor_onnx compiles a node's program when it
// converts the node, before ONNX Runtime builds the node's kernel, which
// looks its code up here. Code registered stays valid for the process.
// Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pytensor_onnx::kernels {

// A ScalarLoop body: runs one element's loop, returns its until flag.
using CompiledLoop = int8_t (*)(int64_t n_steps, void* state, const void* const* inputs);
// The same loop run on kLoopLanes elements at once (kernel_ir.h): n_steps,
// each state and each other input kLoopLanes values (a state's overwritten
// with the final ones), the until flags out as kLoopLanes bytes.
using CompiledLoopLanes = void (*)(const int64_t* n_steps, void* state, const void* const* inputs, int8_t* flags);
constexpr size_t kLoopLanes = 8;
// The most states, and the most other inputs, of a compiled loop.
constexpr size_t kMaxCompiledInputs = 64;

struct CompiledLoopFns {
  CompiledLoop one = nullptr;
  CompiledLoopLanes lanes = nullptr;  // (may be missing where `one` is not)
};

std::string loop_key(const std::string& body_input_dtypes, const std::string& body_text, size_t num_state,
                     const std::vector<int64_t>& next_state, int64_t until);
void set_compiled_loop(const std::string& key, CompiledLoopFns fns);
CompiledLoopFns compiled_loop(const std::string& key);  // nulls when none

// A block of an element-wise program, written for the inputs in
// `scalar_inputs` being one element (kernel_ir.h).
using BlockFn = void (*)(const void* const* inputs, void* const* outputs, int64_t n);
struct CompiledBlock {
  std::vector<bool> scalar_inputs;
  BlockFn fn;
};

std::string block_key(const std::string& input_dtypes, const std::string& program,
                      const std::vector<int64_t>& output_registers);
void add_compiled_block(const std::string& key, const CompiledBlock& block);
std::vector<CompiledBlock> compiled_blocks(const std::string& key);

}  // namespace pytensor_onnx::kernels
