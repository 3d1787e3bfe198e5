#include "compiled.h"

#include <map>
#include <mutex>

namespace pytensor_onnx::kernels {
namespace {

std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<std::string, CompiledLoopFns>& loops() {
  static std::map<std::string, CompiledLoopFns> compiled;
  return compiled;
}

std::map<std::string, std::vector<CompiledBlock>>& blocks() {
  static std::map<std::string, std::vector<CompiledBlock>> compiled;
  return compiled;
}

std::string joined(const std::vector<int64_t>& values) {
  std::string text;
  for (int64_t v : values) text += std::to_string(v) + " ";
  return text;
}

}  // namespace

std::string loop_key(const std::string& body_input_dtypes, const std::string& body_text, size_t num_state,
                     const std::vector<int64_t>& next_state, int64_t until) {
  return body_input_dtypes + "\n" + body_text + "\n" + std::to_string(num_state) + "\n" + joined(next_state) + "\n" +
         std::to_string(until);
}

void set_compiled_loop(const std::string& key, CompiledLoopFns fns) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  loops()[key] = fns;
}

CompiledLoopFns compiled_loop(const std::string& key) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto it = loops().find(key);
  return it == loops().end() ? CompiledLoopFns{} : it->second;
}

std::string block_key(const std::string& input_dtypes, const std::string& program,
                      const std::vector<int64_t>& output_registers) {
  return input_dtypes + "\n" + program + "\n" + joined(output_registers);
}

void add_compiled_block(const std::string& key, const CompiledBlock& block) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::vector<CompiledBlock>& variants = blocks()[key];
  for (CompiledBlock& known : variants) {
    if (known.scalar_inputs == block.scalar_inputs) {
      known.fn = block.fn;
      return;
    }
  }
  variants.push_back(block);
}

std::vector<CompiledBlock> compiled_blocks(const std::string& key) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto it = blocks().find(key);
  return it == blocks().end() ? std::vector<CompiledBlock>{} : it->second;
}

}  // namespace pytensor_onnx::kernels
