#include "program.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace pytensor_onnx::kernels {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream stream(text);
  while (std::getline(stream, part, sep)) {
    if (part.find_first_not_of(" \t\n") != std::string::npos) parts.push_back(part);
  }
  return parts;
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream stream(text);
  std::string w;
  while (stream >> w) out.push_back(w);
  return out;
}

// The bytes of `literal` read as a value of `dtype` (C's strto* read every
// value Python's repr writes exactly).
uint64_t constant_bits(DType dtype, const std::string& literal) {
  const char* text = literal.c_str();
  char* end = nullptr;
  errno = 0;
  uint64_t bits = 0;
  auto store = [&bits](auto value) { std::memcpy(&bits, &value, sizeof value); };
  if (is_float(dtype)) {
    const double v = std::strtod(text, &end);
    if (dtype == DType::Float32) store(static_cast<float>(v));
    else store(v);
  } else if (is_unsigned(dtype) || dtype == DType::Bool) {
    if (literal.find('-') != std::string::npos) throw std::invalid_argument("negative constant of an unsigned dtype");
    const unsigned long long v = std::strtoull(text, &end, 10);
    visit_dtype(dtype, [&](auto tag) { store(static_cast<decltype(tag)>(v)); });
  } else {
    const long long v = std::strtoll(text, &end, 10);
    visit_dtype(dtype, [&](auto tag) { store(static_cast<decltype(tag)>(v)); });
  }
  if (end == text || *end != '\0' || errno == ERANGE) {
    throw std::invalid_argument("constant '" + literal + "' is not a " + dtype_name(dtype));
  }
  return bits;
}

int register_index(const std::string& word, size_t defined) {
  char* end = nullptr;
  const long v = std::strtol(word.c_str(), &end, 10);
  if (end == word.c_str() || *end != '\0' || v < 0 || static_cast<size_t>(v) >= defined) {
    throw std::invalid_argument("operand '" + word + "' is not a register defined before");
  }
  return static_cast<int>(v);
}

// Drops the instructions no output depends on. A Composite with outputs of
// several dtypes is one node per dtype, each given the whole program
// (dispatch/kernel.py): each computes only what its own outputs read.
void drop_unused_code(Program& p) {
  std::vector<bool> needed(p.registers.size(), false);
  for (int o : p.outputs) needed[static_cast<size_t>(o)] = true;
  std::vector<bool> keep(p.code.size(), false);
  for (size_t k = p.code.size(); k-- > 0;) {
    if (!needed[static_cast<size_t>(p.code[k].result)]) continue;
    keep[k] = true;
    for (int a : p.code[k].args) needed[static_cast<size_t>(a)] = true;
  }
  std::vector<Instruction> kept;
  p.cost = 0;
  for (size_t k = 0; k < p.code.size(); ++k) {
    if (!keep[k]) continue;
    p.cost += p.code[k].cost;
    kept.push_back(std::move(p.code[k]));
  }
  p.code = std::move(kept);
}

void assign_slots(Program& p) {
  const size_t n = p.registers.size();
  std::vector<size_t> last_use(n, 0);
  for (size_t k = 0; k < p.code.size(); ++k) {
    for (int a : p.code[k].args) last_use[a] = k;
  }
  const size_t kEnd = p.code.size();
  for (int o : p.outputs) last_use[o] = kEnd;
  p.slot.assign(n, -1);
  std::vector<int> free_slots;
  // Inputs keep their slots (used when an input must be gathered).
  for (size_t r = 0; r < p.num_inputs_; ++r) p.slot[r] = p.num_slots++;
  for (size_t k = 0; k < p.code.size(); ++k) {
    const Instruction& ins = p.code[k];
    // Operands read for the last time free their slots: before the result
    // takes one when their elements are as wide as the result's (a loop may
    // write o[i] over a[i] once a[i] is read), after it otherwise (a wider
    // o[i] would overwrite a[i + 1] before it is read).
    const size_t width = dtype_size(p.registers[ins.result]);
    std::vector<int> freed_after;
    for (int a : ins.args) {
      if (a < static_cast<int>(p.num_inputs_) || p.is_constant[a] || last_use[a] != k || p.slot[a] < 0) continue;
      std::vector<int>& list = dtype_size(p.registers[a]) == width ? free_slots : freed_after;
      if (std::find(free_slots.begin(), free_slots.end(), p.slot[a]) == free_slots.end() &&
          std::find(freed_after.begin(), freed_after.end(), p.slot[a]) == freed_after.end()) {
        list.push_back(p.slot[a]);
      }
    }
    if (!free_slots.empty()) {
      p.slot[ins.result] = free_slots.back();
      free_slots.pop_back();
    } else {
      p.slot[ins.result] = p.num_slots++;
    }
    free_slots.insert(free_slots.end(), freed_after.begin(), freed_after.end());
  }
}

}  // namespace

std::vector<DType> parse_dtypes(const std::string& names) {
  std::vector<DType> dtypes;
  for (const std::string& name : words(names)) dtypes.push_back(dtype_from_name(name));
  return dtypes;
}

Program parse_program(const std::string& input_dtypes, const std::string& text, const std::vector<int64_t>& outputs) {
  Program p;
  for (DType dtype : parse_dtypes(input_dtypes)) {
    p.registers.push_back(dtype);
    p.is_constant.push_back(false);
    p.constant_bits.push_back(0);
  }
  p.num_inputs_ = p.registers.size();
  const std::vector<std::string> lines = split(text, ';');
  for (size_t k = 0; k < lines.size(); ++k) {
    const std::vector<std::string> w = words(lines[k]);
    try {
      if (w.size() < 2) throw std::invalid_argument("needs an op and a dtype");
      const DType dtype = dtype_from_name(w[1]);
      if (w[0] == "Const") {
        if (w.size() != 3) throw std::invalid_argument("Const takes one literal");
        p.registers.push_back(dtype);
        p.is_constant.push_back(true);
        p.constant_bits.push_back(constant_bits(dtype, w[2]));
        continue;
      }
      Instruction ins;
      std::vector<DType> arg_dtypes;
      for (size_t i = 2; i < w.size(); ++i) {
        ins.args.push_back(register_index(w[i], p.registers.size()));
        arg_dtypes.push_back(p.registers[ins.args.back()]);
      }
      ins.loop = select_loop(w[0], arg_dtypes, dtype);
      ins.op = w[0];
      ins.cost = op_cost(w[0]);
      p.cost += ins.cost;
      ins.result = static_cast<int>(p.registers.size());
      p.registers.push_back(dtype);
      p.is_constant.push_back(false);
      p.constant_bits.push_back(0);
      p.code.push_back(std::move(ins));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("instruction " + std::to_string(k) + " ('" + lines[k] + "'): " + e.what());
    }
  }
  if (outputs.empty()) throw std::invalid_argument("the program has no outputs");
  for (int64_t o : outputs) {
    if (o < 0 || static_cast<size_t>(o) >= p.registers.size()) {
      throw std::invalid_argument("output register " + std::to_string(o) + " is not defined");
    }
    p.outputs.push_back(static_cast<int>(o));
  }
  drop_unused_code(p);
  assign_slots(p);
  return p;
}

void set_output_reductions(Program& program, const std::vector<int64_t>& reductions) {
  program.reductions.assign(program.outputs.size(), Reduction::None);
  if (reductions.empty()) return;
  if (reductions.size() != program.outputs.size()) {
    throw std::invalid_argument("output_reductions has " + std::to_string(reductions.size()) + " values for " +
                                std::to_string(program.outputs.size()) + " outputs");
  }
  for (size_t j = 0; j < reductions.size(); ++j) {
    const DType dtype = program.registers[static_cast<size_t>(program.outputs[j])];
    const auto reduction = static_cast<Reduction>(reductions[j]);
    switch (reduction) {
      case Reduction::None:
        break;
      case Reduction::Sum:
      case Reduction::SequentialSum:
        if (dtype != DType::Float64) {
          throw std::invalid_argument("output " + std::to_string(j) + " is summed, but is not float64");
        }
        break;
      case Reduction::All:
      case Reduction::Any:
        if (dtype != DType::Bool) {
          throw std::invalid_argument("output " + std::to_string(j) + " is reduced by all/any, but is not bool");
        }
        break;
      default:
        throw std::invalid_argument("output " + std::to_string(j) + " has the unknown reduction " +
                                    std::to_string(reductions[j]));
    }
    program.reductions[j] = reduction;
  }
}

}  // namespace pytensor_onnx::kernels
