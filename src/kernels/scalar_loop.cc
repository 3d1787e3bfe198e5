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

// Elements run in lockstep, up to this many at a time: each instruction of
// the body runs over every element still looping, so its dispatch is paid
// once per step for all of them instead of once per element (the censored
// gamma survival model's gradient: a body of ~60 instructions run ~100 times
// per element).
constexpr size_t kLanes = 64;

// Registers of up to kLanes elements each, element j of register r at
// `r * kLanes * 8 + j * itemsize(r)` (a float32 register packs its elements,
// as the instructions' loops read them).
class LaneRegisters {
 public:
  explicit LaneRegisters(const Program& body) : body_(body) {
    words_.assign(body.registers.size() * kLanes, 0);
  }
  char* data(size_t r) { return reinterpret_cast<char*>(words_.data() + r * kLanes); }
  size_t itemsize(size_t r) const { return dtype_size(body_.registers[r]); }
  // Element `to` of register r becomes element `from`'s.
  void move(size_t r, size_t from, size_t to) {
    const size_t item = itemsize(r);
    std::memcpy(data(r) + to * item, data(r) + from * item, item);
  }

 private:
  const Program& body_;
  std::vector<uint64_t> words_;
};

void run_elements(const LoopCall& call, size_t first, size_t last) {
  const LoopProgram& loop = *call.loop;
  const Program& body = loop.body;
  const size_t n_in = call.data.size();
  const size_t n_body_in = body.num_inputs();
  const size_t rank = call.shape.size();
  LaneRegisters regs(body);
  // Constants fill every lane: the next state or the flag may be one.
  for (size_t r = 0; r < body.registers.size(); ++r) {
    if (!body.is_constant[r]) continue;
    for (size_t lane = 0; lane < kLanes; ++lane) {
      std::memcpy(regs.data(r) + lane * regs.itemsize(r), &body.constant_bits[r], regs.itemsize(r));
    }
  }
  std::vector<uint64_t> next(loop.num_state * kLanes, 0);
  // Per lane: the element it computes and its step count; lanes [0, active)
  // still loop, in no particular order.
  size_t element[kLanes];
  int64_t steps[kLanes];
  std::vector<std::vector<Operand>> args(body.code.size());
  for (size_t k = 0; k < body.code.size(); ++k) {
    const Instruction& ins = body.code[k];
    for (int a : ins.args) {
      args[k].push_back(body.is_constant[a] ? Operand{&body.constant_bits[a], true} : Operand{regs.data(a), false});
    }
  }
  // Writes the outputs of the lane at `lane` (its element's final state and flag).
  auto finish = [&](size_t lane, bool until) {
    const size_t e = element[lane];
    for (size_t s = 0; s < loop.num_state; ++s) {
      const size_t width = regs.itemsize(s);
      std::memcpy(call.outputs[s] + e * width, regs.data(s) + lane * width, width);
    }
    if (loop.until >= 0) {
      // The flag in the state's dtype: 0 or 1.
      visit_dtype(body.registers[0], [&](auto tag) {
        using T = decltype(tag);
        const T value = static_cast<T>(until ? 1 : 0);
        std::memcpy(call.outputs[loop.num_state] + e * sizeof(T), &value, sizeof(T));
      });
    }
  };
  // The lane at `lane` leaves: the last active lane takes its place.
  size_t active = 0;
  auto retire = [&](size_t lane) {
    --active;
    if (lane == active) return;
    for (size_t r = 0; r < n_body_in; ++r) regs.move(r, active, lane);
    element[lane] = element[active];
    steps[lane] = steps[active];
  };

  // The multi-index of `first` and each input's offset there.
  std::vector<int64_t> index(rank, 0);
  std::vector<int64_t> offset(n_in, 0);
  size_t rest = first;
  for (size_t d = rank; d-- > 0;) {
    index[d] = static_cast<int64_t>(rest % static_cast<size_t>(call.shape[d]));
    rest /= static_cast<size_t>(call.shape[d]);
    for (size_t i = 0; i < n_in; ++i) offset[i] += index[d] * call.strides[i][d];
  }
  for (size_t group = first; group < last; group += kLanes) {
    const size_t n = std::min(kLanes, last - group);
    active = n;
    for (size_t lane = 0; lane < n; ++lane) {
      element[lane] = group + lane;
      steps[lane] = read_steps(call.data[0] + offset[0] * 8);
      for (size_t i = 1; i < n_in; ++i) {
        const size_t item = call.itemsize[i];
        std::memcpy(regs.data(i - 1) + lane * item, call.data[i] + offset[i] * static_cast<int64_t>(item), item);
      }
      for (size_t d = rank; d-- > 0;) {
        for (size_t i = 0; i < n_in; ++i) offset[i] += call.strides[i][d];
        if (++index[d] < call.shape[d]) break;
        for (size_t i = 0; i < n_in; ++i) offset[i] -= call.strides[i][d] * call.shape[d];
        index[d] = 0;
      }
    }
    for (size_t lane = active; lane-- > 0;) {
      if (steps[lane] <= 0) {
        finish(lane, false);
        retire(lane);
      }
    }
    for (int64_t k = 1; active > 0; ++k) {
      for (size_t c = 0; c < body.code.size(); ++c) {
        const Instruction& ins = body.code[c];
        ins.loop(args[c].data(), regs.data(ins.result), active);
      }
      // Read the whole next state before writing any of it (a body may swap states).
      for (size_t s = 0; s < loop.num_state; ++s) {
        std::memcpy(next.data() + s * kLanes, regs.data(loop.next_state[s]), active * regs.itemsize(s));
      }
      for (size_t s = 0; s < loop.num_state; ++s) {
        std::memcpy(regs.data(s), next.data() + s * kLanes, active * regs.itemsize(s));
      }
      const bool* flags = loop.until >= 0 ? reinterpret_cast<const bool*>(regs.data(loop.until)) : nullptr;
      // (From the last lane down: a retired lane takes the last one's place.)
      for (size_t lane = active; lane-- > 0;) {
        const bool until = flags != nullptr && flags[lane];
        if (until || k >= steps[lane]) {
          finish(lane, until);
          retire(lane);
        }
      }
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
