#include "scalar_loop.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "thread_instance.h"

namespace pytensor_onnx::kernels {
namespace {

// Elements per parallel task: a recurrence costs thousands of operations an
// element, so small arrays already pay for the pool.
constexpr size_t kElementsPerTask = 256;

// Strides (in elements) of an input broadcast to `shape`: 0 along broadcast axes.
// A loop's inputs and outputs for one run. Kept per thread and reused
// (thread_instance.h): a PyMC-sized loop is a few µs of work, and its dozen
// inputs made as many allocations per run. Pool tasks only read the calling
// thread's.
struct LoopCall {
  const LoopProgram* loop;
  std::vector<const char*> data;  // per input
  std::vector<size_t> itemsize;   // per input
  std::vector<int64_t> strides;   // per input, one per dim of `shape` (in elements; 0 where broadcast)
  std::vector<int64_t> shape;
  std::vector<char*> outputs;

  int64_t stride(size_t input, size_t d) const { return strides[input * shape.size() + d]; }
  // Input `in` of shape `in_shape` read as NumPy broadcasts it to `shape`.
  void add_input(const void* in, const std::vector<int64_t>& in_shape, size_t item) {
    data.push_back(static_cast<const char*>(in));
    itemsize.push_back(item);
    const size_t start = strides.size();
    strides.resize(start + shape.size(), 0);
    const size_t offset = shape.size() - in_shape.size();
    int64_t stride = 1;
    for (size_t d = in_shape.size(); d-- > 0;) {
      strides[start + offset + d] = in_shape[d] == 1 ? 0 : stride;
      stride *= in_shape[d];
    }
  }
};

int64_t read_steps(const char* p) {
  int64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Element e's until flag, for a loop that has one: 0 or 1 in the state's
// dtype (a custom op's outputs share one dtype).
void write_until_flag(const LoopCall& call, size_t e, bool until) {
  const LoopProgram& loop = *call.loop;
  if (loop.until < 0) return;
  visit_dtype(loop.body.registers[0], [&](auto tag) {
    using T = decltype(tag);
    const T value = static_cast<T>(until ? 1 : 0);
    std::memcpy(call.outputs[loop.num_state] + e * sizeof(T), &value, sizeof(T));
  });
}

// The multi-index of element `first` of the loop's shape, and each input's
// offset (in elements) there.
void seek(const LoopCall& call, size_t first, std::vector<int64_t>& index, std::vector<int64_t>& offset) {
  const size_t n_in = call.data.size();
  index.assign(call.shape.size(), 0);
  offset.assign(n_in, 0);
  size_t rest = first;
  for (size_t d = call.shape.size(); d-- > 0;) {
    index[d] = static_cast<int64_t>(rest % static_cast<size_t>(call.shape[d]));
    rest /= static_cast<size_t>(call.shape[d]);
    for (size_t i = 0; i < n_in; ++i) offset[i] += index[d] * call.stride(i, d);
  }
}

// The next element's multi-index and offsets.
void step(const LoopCall& call, std::vector<int64_t>& index, std::vector<int64_t>& offset) {
  const size_t n_in = call.data.size();
  for (size_t d = call.shape.size(); d-- > 0;) {
    for (size_t i = 0; i < n_in; ++i) offset[i] += call.stride(i, d);
    if (++index[d] < call.shape[d]) break;
    for (size_t i = 0; i < n_in; ++i) offset[i] -= call.stride(i, d) * call.shape[d];
    index[d] = 0;
  }
}

// Elements run in lockstep, up to this many at a time: each instruction of
// the body runs over every element still looping, so its dispatch is paid
// once per step for all of them instead of once per element (the censored
// gamma survival model's gradient: a body of ~60 instructions run ~100 times
// per element).
constexpr size_t kLanes = 64;

// Registers of up to kLanes elements each, element j of register r at
// `r * kLanes * 8 + j * itemsize(r)` (a float32 register packs its elements,
// as the instructions' loops read them). Kept per thread and reused from run
// to run: a PyMC-sized loop node is a few microseconds of work.
class LaneRegisters {
 public:
  void reset(const LoopProgram& loop) {
    const Program& body = loop.body;
    words_.assign(body.registers.size() * kLanes, 0);
    itemsize_.resize(body.registers.size());
    for (size_t r = 0; r < body.registers.size(); ++r) itemsize_[r] = dtype_size(body.registers[r]);
    home_ = &loop.home;
  }
  // A next state written in its state's place (LoopProgram::home) shares its storage.
  char* data(size_t r) { return reinterpret_cast<char*>(words_.data() + static_cast<size_t>((*home_)[r]) * kLanes); }
  size_t itemsize(size_t r) const { return itemsize_[r]; }
  // Element `to` of register r becomes element `from`'s.
  void move(size_t r, size_t from, size_t to) {
    const size_t item = itemsize_[r];
    std::memcpy(data(r) + to * item, data(r) + from * item, item);
  }

 private:
  std::vector<uint64_t> words_;
  std::vector<size_t> itemsize_;
  const std::vector<int>* home_ = nullptr;
};

// Copies `count` elements of `item` bytes (one state's active lanes).
void copy_lanes(char* dst, const char* src, size_t count, size_t item) {
  if (item == 8) {
    for (size_t k = 0; k < count; ++k) std::memcpy(dst + 8 * k, src + 8 * k, 8);
  } else {
    std::memcpy(dst, src, count * item);
  }
}

// An element's multi-index in the loop's shape and each input's offset
// there, kept per thread from run to run (thread_instance.h).
struct Position {
  std::vector<int64_t> index, offset;
};

// What run_elements keeps from run to run, per thread (thread_instance.h).
struct LoopScratch {
  Position at;
  LaneRegisters regs;
  std::vector<uint64_t> next;     // the next state, per lane
  std::vector<Operand> args;      // each instruction's operands
  std::vector<size_t> arg_start;  // where instruction k's are in args
};

void run_elements(const LoopCall& call, size_t first, size_t last) {
  const LoopProgram& loop = *call.loop;
  const Program& body = loop.body;
  const size_t n_in = call.data.size();
  LoopScratch& scratch = thread_instance<LoopScratch>();
  LaneRegisters& regs = scratch.regs;
  regs.reset(loop);
  // Constants fill every lane: the next state or the flag may be one.
  for (size_t r = 0; r < body.registers.size(); ++r) {
    if (!body.is_constant[r]) continue;
    for (size_t lane = 0; lane < kLanes; ++lane) {
      std::memcpy(regs.data(r) + lane * regs.itemsize(r), &body.constant_bits[r], regs.itemsize(r));
    }
  }
  std::vector<uint64_t>& next = scratch.next;
  next.assign(loop.num_state * kLanes, 0);
  // Per lane: the element it computes and its step count; lanes [0, active)
  // still loop, in no particular order.
  size_t element[kLanes];
  int64_t steps[kLanes];
  // Each instruction's operands, at args[arg_start[k]...].
  std::vector<Operand>& args = scratch.args;
  std::vector<size_t>& arg_start = scratch.arg_start;
  args.clear();
  arg_start.assign(body.code.size(), 0);
  for (size_t k = 0; k < body.code.size(); ++k) {
    arg_start[k] = args.size();
    for (int a : body.code[k].args) {
      args.push_back(body.is_constant[a] ? Operand{&body.constant_bits[a], true} : Operand{regs.data(a), false});
    }
  }
  auto run = [&](size_t k, size_t n) {
    const Instruction& ins = body.code[k];
    ins.loop(args.data() + arg_start[k], regs.data(ins.result), n);
  };
  // Writes the outputs of the lane at `lane` (its element's final state and flag).
  auto finish = [&](size_t lane, bool until) {
    const size_t e = element[lane];
    for (size_t s = 0; s < loop.num_state; ++s) {
      const size_t width = regs.itemsize(s);
      std::memcpy(call.outputs[s] + e * width, regs.data(s) + lane * width, width);
    }
    write_until_flag(call, e, until);
  };
  // The lane at `lane` leaves: the last active lane takes its place.
  size_t active = 0;
  auto retire = [&](size_t lane) {
    --active;
    if (lane == active) return;
    for (int r : loop.lane_registers) regs.move(static_cast<size_t>(r), active, lane);
    element[lane] = element[active];
    steps[lane] = steps[active];
  };

  std::vector<int64_t>& index = scratch.at.index;
  std::vector<int64_t>& offset = scratch.at.offset;
  seek(call, first, index, offset);
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
      step(call, index, offset);
    }
    for (size_t k : loop.invariant_code) run(k, n);
    for (size_t lane = active; lane-- > 0;) {
      if (steps[lane] <= 0) {
        finish(lane, false);
        retire(lane);
      }
    }
    for (int64_t k = 1; active > 0; ++k) {
      for (size_t c : loop.step_code) run(c, active);
      if (loop.swaps_state) {
        // Read the whole next state before writing any of it.
        for (size_t s = 0; s < loop.num_state; ++s) {
          copy_lanes(reinterpret_cast<char*>(next.data() + s * kLanes), regs.data(loop.next_state[s]), active,
                     regs.itemsize(s));
        }
        for (size_t s = 0; s < loop.num_state; ++s) {
          copy_lanes(regs.data(s), reinterpret_cast<const char*>(next.data() + s * kLanes), active, regs.itemsize(s));
        }
      } else {
        for (size_t s : loop.copied_state) {
          copy_lanes(regs.data(s), regs.data(static_cast<size_t>(loop.next_state[s])), active, regs.itemsize(s));
        }
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

// Copies one element of `width` bytes. (Per element and state: memcpy of a
// size known only at run time was a libc call each, 5% of the censored
// Gamma's log-density; a fixed size is one move.)
inline void copy_element(void* to, const void* from, size_t width) {
  switch (width) {
    case 8: std::memcpy(to, from, 8); break;
    case 4: std::memcpy(to, from, 4); break;
    default: std::memcpy(to, from, width); break;
  }
}

// The elements [first, last) through the compiled body, one at a time.
void run_compiled(const LoopCall& call, size_t first, size_t last) {
  const LoopProgram& loop = *call.loop;
  const Program& body = loop.body;
  const size_t n_in = call.data.size();
  const size_t width = dtype_size(body.registers[0]);
  uint64_t state[kMaxCompiledInputs];  // (loop_llvm_ir compiles no loop with more)
  const void* constants[kMaxCompiledInputs];
  Position& at = thread_instance<Position>();
  std::vector<int64_t>& index = at.index;
  std::vector<int64_t>& offset = at.offset;
  seek(call, first, index, offset);
  for (size_t e = first; e < last; ++e) {
    const int64_t steps = read_steps(call.data[0] + offset[0] * 8);
    for (size_t s = 0; s < loop.num_state; ++s) {
      copy_element(reinterpret_cast<char*>(state) + s * width, call.data[1 + s] + offset[1 + s] * static_cast<int64_t>(width),
                   width);
    }
    for (size_t i = 1 + loop.num_state; i < n_in; ++i) {
      constants[i - 1 - loop.num_state] = call.data[i] + offset[i] * static_cast<int64_t>(call.itemsize[i]);
    }
    const bool until = loop.compiled.one(steps, state, constants) != 0;
    for (size_t s = 0; s < loop.num_state; ++s) {
      copy_element(call.outputs[s] + e * width, reinterpret_cast<const char*>(state) + s * width, width);
    }
    write_until_flag(call, e, until);
    step(call, index, offset);
  }
}

// The elements [first, last) through the compiled lanes' function,
// kLoopLanes at a time: each element's n_steps, state and constants gathered
// into the lanes, the final states and flags put back. A short last group
// pads its lanes with its first element's values and no steps (lanes that
// never run).
void run_compiled_lanes(const LoopCall& call, size_t first, size_t last) {
  const LoopProgram& loop = *call.loop;
  const size_t n_in = call.data.size();
  const size_t n_constants = n_in - 1 - loop.num_state;
  const size_t width = dtype_size(loop.body.registers[0]);
  alignas(64) int64_t steps[kLoopLanes];
  alignas(64) uint64_t state[kMaxCompiledInputs * kLoopLanes];  // (loop_llvm_ir compiles no loop with more)
  alignas(64) uint64_t constants[kMaxCompiledInputs * kLoopLanes];
  const void* constant_lanes[kMaxCompiledInputs];
  int8_t flags[kLoopLanes];
  for (size_t c = 0; c < n_constants; ++c) constant_lanes[c] = constants + c * kLoopLanes;
  auto* state_bytes = reinterpret_cast<char*>(state);
  Position& at = thread_instance<Position>();
  std::vector<int64_t>& index = at.index;
  std::vector<int64_t>& offset = at.offset;
  seek(call, first, index, offset);
  for (size_t group = first; group < last; group += kLoopLanes) {
    const size_t used = std::min(kLoopLanes, last - group);
    for (size_t lane = 0; lane < kLoopLanes; ++lane) {
      // (Padding lanes read the group's first element again, and take no step.)
      const bool pads = lane >= used;
      if (pads && lane == used) seek(call, group, index, offset);
      steps[lane] = pads ? 0 : read_steps(call.data[0] + offset[0] * 8);
      for (size_t s = 0; s < loop.num_state; ++s) {
        copy_element(state_bytes + (s * kLoopLanes + lane) * width,
                     call.data[1 + s] + offset[1 + s] * static_cast<int64_t>(width), width);
      }
      for (size_t c = 0; c < n_constants; ++c) {
        const size_t i = 1 + loop.num_state + c, item = call.itemsize[i];
        copy_element(reinterpret_cast<char*>(constants + c * kLoopLanes) + lane * item,
                     call.data[i] + offset[i] * static_cast<int64_t>(item), item);
      }
      if (!pads) step(call, index, offset);
    }
    loop.compiled.lanes(steps, state, constant_lanes, flags);
    for (size_t lane = 0; lane < used; ++lane) {
      const size_t e = group + lane;
      for (size_t s = 0; s < loop.num_state; ++s) {
        copy_element(call.outputs[s] + e * width, state_bytes + (s * kLoopLanes + lane) * width, width);
      }
      write_until_flag(call, e, flags[lane] != 0);
    }
  }
}

// Where the step's last read of a state comes before the instruction that
// computes its next value, that instruction writes the next value in the
// state's own place (`home`), and the step copies nothing for it. (An
// instruction writes element i after reading its operands' element i, so it
// may read the state it replaces.) The others are copied after the step.
void place_next_states(LoopProgram& loop) {
  const Program& body = loop.body;
  loop.home.resize(body.registers.size());
  for (size_t r = 0; r < body.registers.size(); ++r) loop.home[r] = static_cast<int>(r);
  std::vector<int> position(body.registers.size(), -1);  // step_code index of the instruction writing r
  for (size_t i = 0; i < loop.step_code.size(); ++i) position[body.code[loop.step_code[i]].result] = static_cast<int>(i);
  std::vector<int> last_read(body.registers.size(), -1);
  for (size_t i = 0; i < loop.step_code.size(); ++i) {
    for (int a : body.code[loop.step_code[i]].args) last_read[a] = static_cast<int>(i);
  }
  std::vector<int> claims(body.registers.size(), 0);
  for (int t : loop.next_state) ++claims[t];
  for (size_t s = 0; s < loop.num_state; ++s) {
    const int t = loop.next_state[s];
    const bool in_place = !loop.swaps_state && position[t] >= 0 && claims[t] == 1 && last_read[s] <= position[t] &&
                          t != loop.until;
    if (in_place) {
      loop.home[t] = static_cast<int>(s);
    } else if (static_cast<size_t>(t) != s) {
      loop.copied_state.push_back(s);
    }
  }
}

// Sorts the body's instructions into those folded into constants, those
// run once per element and those run every step (LoopProgram's fields).
void plan_loop(LoopProgram& loop) {
  Program& body = loop.body;
  std::vector<bool> invariant(body.registers.size(), false);
  for (size_t r = loop.num_state; r < body.num_inputs(); ++r) invariant[r] = true;
  for (size_t r = 0; r < body.registers.size(); ++r) {
    if (body.is_constant[r]) invariant[r] = true;
  }
  for (size_t k = 0; k < body.code.size(); ++k) {
    const Instruction& ins = body.code[k];
    bool constant = true, steady = true;
    Operand args[kMaxArity];
    for (size_t a = 0; a < ins.args.size(); ++a) {
      constant = constant && body.is_constant[ins.args[a]];
      steady = steady && invariant[ins.args[a]];
      args[a] = {&body.constant_bits[ins.args[a]], true};
    }
    if (constant) {
      // (An op's result fits its register's 8 bytes, zero-filled.)
      body.constant_bits[ins.result] = 0;
      ins.loop(args, &body.constant_bits[ins.result], 1);
      body.is_constant[ins.result] = true;
      invariant[ins.result] = true;
    } else if (steady) {
      loop.invariant_code.push_back(k);
      invariant[ins.result] = true;
      loop.lane_registers.push_back(ins.result);
    } else {
      loop.step_code.push_back(k);
    }
  }
  std::vector<int> carried;
  for (size_t r = 0; r < body.num_inputs(); ++r) carried.push_back(static_cast<int>(r));
  loop.lane_registers.insert(loop.lane_registers.begin(), carried.begin(), carried.end());
  for (size_t s = 0; s < loop.num_state; ++s) {
    const auto from = static_cast<size_t>(loop.next_state[s]);
    loop.swaps_state = loop.swaps_state || (from < loop.num_state && from != s);
  }
  place_next_states(loop);
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
  plan_loop(loop);
  return loop;
}

void evaluate_loop(const LoopProgram& loop, ArgList inputs, const std::vector<int64_t>& out_shape,
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
  LoopCall& call = thread_instance<LoopCall>();
  call.loop = &loop;
  call.shape.assign(out_shape.begin(), out_shape.end());
  call.data.clear();
  call.itemsize.clear();
  call.strides.clear();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].shape.size() > out_shape.size()) {
      throw std::invalid_argument("input " + std::to_string(i) + " has more dims than the loop's output");
    }
    call.add_input(inputs[i].data, inputs[i].shape, i == 0 ? 8 : dtype_size(body.registers[i - 1]));
  }
  call.outputs.clear();
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
  if (loop.compiled.lanes != nullptr && size > 1) {
    // (Chunks of whole groups of lanes, but the last.)
    run_chunked(size, kElementsPerTask, parallel,
                [&call](size_t first, size_t last) { run_compiled_lanes(call, first, last); });
  } else if (loop.compiled.one != nullptr) {
    run_chunked(size, kElementsPerTask, parallel, [&call](size_t first, size_t last) { run_compiled(call, first, last); });
  } else {
    run_chunked(size, kElementsPerTask, parallel, [&call](size_t first, size_t last) { run_elements(call, first, last); });
  }
}

}  // namespace pytensor_onnx::kernels
