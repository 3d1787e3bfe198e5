#include "scalar_loop.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace pytensor_onnx::kernels {
namespace {

// Elements per parallel task: a recurrence costs thousands of operations an
// element, so small arrays already pay for the pool.
constexpr size_t kElementsPerTask = 256;

// Strides (in elements) of an input broadcast to `shape`: 0 along broadcast axes.
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in, const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 0);
  const size_t offset = shape.size() - in.size();
  int64_t stride = 1;
  for (size_t d = in.size(); d-- > 0;) {
    strides[offset + d] = in[d] == 1 ? 0 : stride;
    stride *= in[d];
  }
  return strides;
}

struct LoopCall {
  const LoopProgram* loop;
  std::vector<const char*> data;                 // per input
  std::vector<size_t> itemsize;                  // per input
  std::vector<std::vector<int64_t>> strides;     // per input
  std::vector<int64_t> shape;
  std::vector<char*> outputs;
};

int64_t read_steps(const char* p) {
  int64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

void run_elements(const LoopCall& call, size_t first, size_t last) {
  const LoopProgram& loop = *call.loop;
  const Program& body = loop.body;
  const size_t n_in = call.data.size();
  const size_t rank = call.shape.size();
  std::vector<uint64_t> regs(body.registers.size(), 0);
  std::vector<uint64_t> next(loop.num_state, 0);
  for (size_t r = 0; r < body.registers.size(); ++r) {
    if (body.is_constant[r]) regs[r] = body.constant_bits[r];
  }
  // The multi-index of `first` and each input's offset there.
  std::vector<int64_t> index(rank, 0);
  std::vector<int64_t> offset(n_in, 0);
  size_t rest = first;
  for (size_t d = rank; d-- > 0;) {
    index[d] = static_cast<int64_t>(rest % static_cast<size_t>(call.shape[d]));
    rest /= static_cast<size_t>(call.shape[d]);
    for (size_t i = 0; i < n_in; ++i) offset[i] += index[d] * call.strides[i][d];
  }
  Operand args[3];
  for (size_t e = first; e < last; ++e) {
    const int64_t steps = read_steps(call.data[0] + offset[0] * 8);
    for (size_t i = 1; i < n_in; ++i) {
      std::memcpy(&regs[i - 1], call.data[i] + offset[i] * static_cast<int64_t>(call.itemsize[i]), call.itemsize[i]);
    }
    bool until = false;
    for (int64_t k = 0; k < steps; ++k) {
      for (const Instruction& ins : body.code) {
        for (size_t a = 0; a < ins.args.size(); ++a) args[a] = {&regs[ins.args[a]], true};
        ins.loop(args, &regs[ins.result], 1);
      }
      // Read the whole next state before writing any of it (a body may swap states).
      for (size_t s = 0; s < loop.num_state; ++s) next[s] = regs[loop.next_state[s]];
      std::copy(next.begin(), next.end(), regs.begin());
      if (loop.until >= 0) {
        bool flag;
        std::memcpy(&flag, &regs[loop.until], 1);
        if (flag) {
          until = true;
          break;
        }
      }
    }
    for (size_t s = 0; s < loop.num_state; ++s) {
      const size_t width = dtype_size(body.registers[s]);
      std::memcpy(call.outputs[s] + e * width, &regs[s], width);
    }
    if (loop.until >= 0) {
      // The flag in the state's dtype: 0 or 1.
      visit_dtype(body.registers[0], [&](auto tag) {
        using T = decltype(tag);
        const T value = static_cast<T>(until ? 1 : 0);
        std::memcpy(call.outputs[loop.num_state] + e * sizeof(T), &value, sizeof(T));
      });
    }
    for (size_t d = rank; d-- > 0;) {
      for (size_t i = 0; i < n_in; ++i) offset[i] += call.strides[i][d];
      if (++index[d] < call.shape[d]) break;
      for (size_t i = 0; i < n_in; ++i) offset[i] -= call.strides[i][d] * call.shape[d];
      index[d] = 0;
    }
  }
}

}  // namespace

LoopProgram parse_loop(const std::string& body_input_dtypes, const std::string& body_text, size_t num_state,
                       const std::vector<int64_t>& next_state, int64_t until) {
  LoopProgram loop;
  std::vector<int64_t> outputs(next_state);
  if (until >= 0) outputs.push_back(until);
  loop.body = parse_program(body_input_dtypes, body_text, outputs);
  loop.num_state = num_state;
  if (num_state == 0 || num_state > loop.body.num_inputs() || next_state.size() != num_state) {
    throw std::invalid_argument("the loop's state does not fit its body");
  }
  for (size_t s = 0; s < num_state; ++s) {
    loop.next_state.push_back(static_cast<int>(next_state[s]));
    if (loop.body.registers[next_state[s]] != loop.body.registers[s]) {
      throw std::invalid_argument("state " + std::to_string(s) + " changes dtype in the body");
    }
    if (loop.body.registers[s] != loop.body.registers[0]) {
      throw std::invalid_argument("the state's registers must share one dtype");
    }
  }
  if (until >= 0) {
    if (loop.body.registers[until] != DType::Bool) throw std::invalid_argument("the until flag must be a bool");
    loop.until = static_cast<int>(until);
  }
  return loop;
}

void evaluate_loop(const LoopProgram& loop, const std::vector<ArrayArg>& inputs, const std::vector<int64_t>& out_shape,
                   const std::vector<void*>& outputs, const ParallelFor* parallel) {
  const Program& body = loop.body;
  if (inputs.size() != 1 + body.num_inputs()) {
    throw std::invalid_argument("the loop reads n_steps and " + std::to_string(body.num_inputs()) + " inputs, got " +
                                std::to_string(inputs.size()));
  }
  const size_t n_out = loop.num_state + (loop.until >= 0 ? 1 : 0);
  if (outputs.size() != n_out) {
    throw std::invalid_argument("the loop has " + std::to_string(n_out) + " outputs, got " +
                                std::to_string(outputs.size()));
  }
  LoopCall call;
  call.loop = &loop;
  call.shape = out_shape;
  for (size_t i = 0; i < inputs.size(); ++i) {
    call.data.push_back(static_cast<const char*>(inputs[i].data));
    call.itemsize.push_back(i == 0 ? 8 : dtype_size(body.registers[i - 1]));
    call.strides.push_back(broadcast_strides(inputs[i].shape, out_shape));
  }
  for (void* out : outputs) call.outputs.push_back(static_cast<char*>(out));
  size_t size = 1;
  for (int64_t d : out_shape) size *= static_cast<size_t>(d);
  if (size == 0) return;
  if (loop.until < 0) {
    // Checked before any task runs: nothing may throw inside the pool.
    size_t count = 1;
    for (int64_t d : inputs[0].shape) count *= static_cast<size_t>(d);
    for (size_t i = 0; i < count; ++i) {
      if (read_steps(call.data[0] + i * 8) < 0) {
        throw std::invalid_argument("ScalarLoop does not have a termination condition.");
      }
    }
  }
  run_chunked(size, kElementsPerTask, parallel, [&call](size_t first, size_t last) { run_elements(call, first, last); });
}

}  // namespace pytensor_onnx::kernels
