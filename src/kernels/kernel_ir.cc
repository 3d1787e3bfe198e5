#include "kernel_ir.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace pytensor_onnx::kernels {
namespace {

// Thrown where the body needs something not written out here.
struct NotCompiled {};

// Float64 ops the interpreter evaluates with one C library function
// (scalar_ops.h: std::exp(double) is libm's exp, ...): the compiled loop calls
// the same function, found in the process by the JIT's linker.
const std::map<std::string, const char*>& libm_functions() {
  static const std::map<std::string, const char*> table{
      {"Exp", "exp"},     {"Exp2", "exp2"},    {"Expm1", "expm1"},  {"Log", "log"},       {"Log2", "log2"},
      {"Log10", "log10"}, {"Log1p", "log1p"},  {"Sin", "sin"},      {"Cos", "cos"},       {"Tan", "tan"},
      {"ArcSin", "asin"}, {"ArcCos", "acos"},  {"ArcTan", "atan"},  {"Sinh", "sinh"},     {"Cosh", "cosh"},
      {"Tanh", "tanh"},   {"ArcSinh", "asinh"}, {"ArcCosh", "acosh"}, {"ArcTanh", "atanh"}, {"Erf", "erf"},
      {"Erfc", "erfc"},   {"Floor", "floor"},  {"Ceil", "ceil"},    {"Trunc", "trunc"},   {"RoundHalfToEven", "nearbyint"},
      {"RoundHalfAwayFromZero", "round"}};
  return table;
}

const char* llvm_type(DType d) {
  switch (d) {
    case DType::Bool: return "i1";
    case DType::Int8: case DType::UInt8: return "i8";
    case DType::Int16: case DType::UInt16: return "i16";
    case DType::Int32: case DType::UInt32: return "i32";
    case DType::Int64: case DType::UInt64: return "i64";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
  }
  throw NotCompiled{};
}

// A register's type in memory (a bool is one byte).
const char* memory_type(DType d) { return d == DType::Bool ? "i8" : llvm_type(d); }

size_t bit_width(DType d) { return d == DType::Bool ? 1 : dtype_size(d) * 8; }

// A constant register's literal. LLVM writes a float constant as the hex
// bits of the double of the same value.
std::string literal(DType d, uint64_t bits) {
  char text[40];
  switch (d) {
    case DType::Bool: return (bits & 0xff) ? "true" : "false";
    case DType::Float64: {
      std::snprintf(text, sizeof text, "0x%016" PRIX64, bits);
      return text;
    }
    case DType::Float32: {
      float f;
      const auto low = static_cast<uint32_t>(bits);
      std::memcpy(&f, &low, sizeof f);
      const double widened = f;
      uint64_t wide_bits;
      std::memcpy(&wide_bits, &widened, sizeof wide_bits);
      std::snprintf(text, sizeof text, "0x%016" PRIX64, wide_bits);
      return text;
    }
    default: {
      // The integer's bytes, sign-extended from its width (LLVM reads a decimal).
      const size_t width = bit_width(d);
      const uint64_t mask = width == 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
      uint64_t v = bits & mask;
      if (width < 64 && (v >> (width - 1)) != 0) v |= ~mask;
      std::snprintf(text, sizeof text, "%" PRId64, static_cast<int64_t>(v));
      return text;
    }
  }
}

// What the loop and block writers share: a program's instructions in LLVM's
// IR, register r as %r<r> (constants as literals), the functions they call
// declared once.
class ProgramWriter {
 public:
  // The functions it declares (declare lines' text).
  const std::set<std::string>& declared() const { return declared_; }

  // The function's code: `entry:` gets the stack slots of the calls.
  std::string code() const {
    std::string code = out_.str();
    const size_t entry = code.find("entry:\n");
    if (entry != std::string::npos) code.insert(entry + 7, allocas_.str());
    return code;
  }

 protected:
  // `lanes`: 0 writes scalar code; else every register is a vector of that
  // many lanes (LanesLoopWriter), one element each.
  explicit ProgramWriter(const Program& body, size_t lanes = 0) : body_(body), lanes_(lanes) {}

  // Register type: T, or <lanes x T>.
  std::string ty(DType d) const {
    return lanes_ == 0 ? std::string(llvm_type(d)) : "<" + std::to_string(lanes_) + " x " + llvm_type(d) + ">";
  }

  // A literal of dtype d in every lane (itself in scalar code).
  std::string splat(DType d, const std::string& scalar) const {
    if (lanes_ == 0) return scalar;
    std::string v = "<";
    for (size_t l = 0; l < lanes_; ++l) v += (l ? ", " : "") + std::string(llvm_type(d)) + " " + scalar;
    return v + ">";
  }

  // Starts block `name` (without the %).
  void label(const std::string& name) {
    out_ << name << ":\n";
    block_ = name;
  }

  // Register r from element `index` of `pointer`, as %r<r><suffix>.
  void load(size_t r, const std::string& pointer, const std::string& index, DType d, const char* suffix) {
    const std::string name = "%r" + std::to_string(r) + suffix;
    const std::string slot = name + ".at";
    out_ << "  " << slot << " = getelementptr " << memory_type(d) << ", ptr " << pointer << ", i64 " << index << "\n";
    if (d == DType::Bool) {
      out_ << "  " << name << ".byte = load i8, ptr " << slot << "\n  " << name << " = icmp ne i8 " << name
           << ".byte, 0\n";
    } else {
      out_ << "  " << name << " = load " << llvm_type(d) << ", ptr " << slot << "\n";
    }
  }

  // `v` (of dtype d) into element `index` of `pointer`; `tag` names the temporaries.
  void store(const std::string& v, DType d, const std::string& pointer, const std::string& index,
             const std::string& tag) {
    const std::string slot = "%" + tag + ".slot";
    out_ << "  " << slot << " = getelementptr " << memory_type(d) << ", ptr " << pointer << ", i64 " << index << "\n";
    std::string stored = v;
    if (d == DType::Bool) {
      stored = "%" + tag + ".byte";
      out_ << "  " << stored << " = zext i1 " << v << " to i8\n";
    }
    out_ << "  store " << memory_type(d) << " " << stored << ", ptr " << slot << "\n";
  }

  std::string value(int r) const {
    if (body_.is_constant[r]) return splat(body_.registers[r], literal(body_.registers[r], body_.constant_bits[r]));
    return "%r" + std::to_string(r);
  }

  // Instruction `ins` as %r<result>: written out where its op has an IR
  // form here, else a call of a function of one element (libm's, a float64
  // function of ops.h, or the interpreter's own loop over one element: the
  // same scalar code, so the same bits; special functions, floor division,
  // float-to-int casts...), lane by lane in vector code.
  void instruction(const Instruction& ins) {
    if (write_out(ins)) return;
    if (lanes_ > 0) {
      lanewise(ins);
      return;
    }
    std::vector<std::string> args;
    for (int a : ins.args) args.push_back(value(a));
    scalar_call(ins, args, "%r" + std::to_string(ins.result), "%r" + std::to_string(ins.result));
  }

  // `ins` on the scalar values `args` into `result` (`slots` names its
  // stack slots, shared by the lanes of one instruction).
  void scalar_call(const Instruction& ins, const std::vector<std::string>& args, const std::string& result,
                   const std::string& slots) {
    if (!call_libm(ins, args, result) && !call_float64(ins, args, result)) call_loop(ins, args, result, slots);
  }

  // Vector code: `ins` one lane at a time, in the lanes of the active mask
  // (`active_`) only. A lane that is done (or pads a short group) keeps
  // zero there: its results are dropped, and a special function's own loop
  // on its stale values would be work for nothing.
  void lanewise(const Instruction& ins) {
    const Program& p = body_;
    const std::string r = "%r" + std::to_string(ins.result);
    const DType rt = p.registers[ins.result];
    std::string previous = "zeroinitializer";
    for (size_t l = 0; l < lanes_; ++l) {
      const std::string lane = r + ".l" + std::to_string(l), at = ", i64 " + std::to_string(l);
      const std::string name = lane.substr(1);
      out_ << "  " << lane << ".on = extractelement " << ty(DType::Bool) << " " << active_ << at << "\n"
           << "  br i1 " << lane << ".on, label %" << name << ".call, label %" << name << ".join\n";
      const std::string skipped_from = block_;
      label(name + ".call");
      std::vector<std::string> args;
      for (size_t a = 0; a < ins.args.size(); ++a) {
        const std::string arg = lane + ".a" + std::to_string(a);
        out_ << "  " << arg << " = extractelement " << ty(p.registers[ins.args[a]]) << " " << value(ins.args[a]) << at
             << "\n";
        args.push_back(arg);
      }
      scalar_call(ins, args, lane + ".v", r);
      out_ << "  " << lane << ".in = insertelement " << ty(rt) << " " << previous << ", " << llvm_type(rt) << " "
           << lane << ".v" << at << "\n  br label %" << name << ".join\n";
      const std::string called_from = block_;
      label(name + ".join");
      out_ << "  " << lane << " = phi " << ty(rt) << " [" << lane << ".in, %" << called_from << "], [" << previous
           << ", %" << skipped_from << "]\n";
      previous = lane;
    }
    out_ << "  " << r << " = select i1 true, " << ty(rt) << " " << previous << ", " << ty(rt) << " " << previous << "\n";
  }

  // A float64 op of libm (libm_functions).
  bool call_libm(const Instruction& ins, const std::vector<std::string>& args, const std::string& result) {
    if (body_.registers[ins.result] != DType::Float64 || libm_functions().count(ins.op) == 0) return false;
    const char* name = libm_functions().at(ins.op);
    declared_.insert(std::string("double @") + name + "(double)");
    out_ << "  " << result << " = call double @" << name << "(double " << args.at(0) << ")\n";
    return true;
  }

  // A float64 op as a direct call of its scalar function (ops.h), where it
  // has one: cheaper than its loop over one element.
  bool call_float64(const Instruction& ins, const std::vector<std::string>& args, const std::string& result) {
    const Program& p = body_;
    if (p.registers[ins.result] != DType::Float64 || ins.args.size() > 4) return false;
    for (int a : ins.args) {
      if (p.registers[a] != DType::Float64) return false;
    }
    const void* fn = float64_function(ins.op);
    if (fn == nullptr) return false;
    out_ << "  " << result << " = call double inttoptr (i64 " << reinterpret_cast<uintptr_t>(fn) << " to ptr)(";
    for (size_t a = 0; a < 4; ++a) out_ << (a ? ", " : "") << "double " << (a < args.size() ? args[a] : "0.0");
    out_ << ")\n";
    return true;
  }

  void call_loop(const Instruction& ins, const std::vector<std::string>& args, const std::string& result,
                 const std::string& slots) {
    const Program& p = body_;
    if (ins.loop == nullptr || ins.args.size() > kMaxArity) throw NotCompiled{};
    const std::string& r = slots;
    const size_t arity = ins.args.size();
    const DType rt = p.registers[ins.result];
    // (Stack slots in the entry block: allocated once, not per element or lane.)
    const bool new_slots = slotted_.insert(r).second;
    if (new_slots) {
      allocas_ << "  " << r << ".ops = alloca [" << arity << " x { ptr, i8 }], align 8\n"
               << "  " << r << ".out = alloca " << memory_type(rt) << ", align 8\n";
    }
    for (size_t a = 0; a < arity; ++a) {
      const DType at = p.registers[ins.args[a]];
      const std::string slot = r + ".a" + std::to_string(a), arg = result + ".a" + std::to_string(a);
      if (new_slots) allocas_ << "  " << slot << " = alloca " << memory_type(at) << ", align 8\n";
      std::string v = args.at(a);
      if (at == DType::Bool) {
        out_ << "  " << arg << ".byte = zext i1 " << v << " to i8\n";
        v = arg + ".byte";
      }
      out_ << "  store " << memory_type(at) << " " << v << ", ptr " << slot << "\n"
           << "  " << arg << ".op = getelementptr [" << arity << " x { ptr, i8 }], ptr " << r << ".ops, i64 0, i64 " << a
           << "\n  store ptr " << slot << ", ptr " << arg << ".op\n  " << arg << ".flag = getelementptr { ptr, i8 }, ptr "
           << arg << ".op, i32 0, i32 1\n  store i8 1, ptr " << arg << ".flag\n";
    }
    out_ << "  call void inttoptr (i64 " << reinterpret_cast<uintptr_t>(ins.loop) << " to ptr)(ptr " << r << ".ops, ptr "
         << r << ".out, i64 1)\n";
    if (rt == DType::Bool) {
      out_ << "  " << result << ".byte = load i8, ptr " << r << ".out\n  " << result << " = icmp ne i8 " << result
           << ".byte, 0\n";
    } else {
      out_ << "  " << result << " = load " << llvm_type(rt) << ", ptr " << r << ".out\n";
    }
  }

  bool write_out(const Instruction& ins) {
    const Program& p = body_;
    const DType rt = p.registers[ins.result];
    const std::string res = "  %r" + std::to_string(ins.result) + " = ";
    const std::string ty = this->ty(rt), cond = this->ty(DType::Bool);
    auto arg = [&](size_t i) { return value(ins.args.at(i)); };
    auto arg_type = [&](size_t i) { return p.registers[ins.args.at(i)]; };
    const std::string& op = ins.op;
    const bool flt = is_float(rt);
    if (op == "Add" || op == "Sub" || op == "Mul") {
      if (rt == DType::Bool) {
        if (op == "Sub") return false;
        out_ << res << (op == "Add" ? "or " : "and ") << cond << " " << arg(0) << ", " << arg(1) << "\n";
        return true;
      }
      const char* name = op == "Add" ? (flt ? "fadd" : "add") : op == "Sub" ? (flt ? "fsub" : "sub") : (flt ? "fmul" : "mul");
      out_ << res << name << " " << ty << " " << arg(0) << ", " << arg(1) << "\n";
    } else if (op == "TrueDiv" && flt) {
      out_ << res << "fdiv " << ty << " " << arg(0) << ", " << arg(1) << "\n";
    } else if (op == "Sqr" && rt != DType::Bool) {
      out_ << res << (flt ? "fmul " : "mul ") << ty << " " << arg(0) << ", " << arg(0) << "\n";
    } else if (op == "Neg" && rt != DType::Bool) {
      // (fneg, as the interpreter's -x: NumPy's -(+0.0) is -0.0; integers 0 - x.)
      if (flt) out_ << res << "fneg " << ty << " " << arg(0) << "\n";
      else out_ << res << "sub " << ty << " " << splat(rt, "0") << ", " << arg(0) << "\n";
    } else if ((op == "Abs" || op == "Sqrt") && flt) {
      // (Exact in IEEE arithmetic, as fabs and sqrt are.)
      const std::string name = std::string("llvm.") + (op == "Abs" ? "fabs" : "sqrt") + intrinsic_suffix(rt);
      declared_.insert(ty + " @" + name + "(" + ty + ")");
      out_ << res << "call " << ty << " @" << name << "(" << ty << " " << arg(0) << ")\n";
    } else if (op == "Reciprocal" && flt) {
      out_ << res << "fdiv " << ty << " " << splat(rt, "1.0") << ", " << arg(0) << "\n";
    } else if ((op == "Maximum" || op == "Minimum") && flt) {
      // (a >= b || a != a) ? a : b, and its mirror: NaN in either gives NaN.
      const std::string t = "%r" + std::to_string(ins.result);
      out_ << "  " << t << ".cmp = fcmp " << (op == "Maximum" ? "oge " : "ole ") << ty << " " << arg(0) << ", "
           << arg(1) << "\n  " << t << ".nan = fcmp uno " << ty << " " << arg(0) << ", " << splat(rt, "0.0") << "\n  "
           << t << ".pick = or " << cond << " " << t << ".cmp, " << t << ".nan\n"
           << res << "select " << cond << " " << t << ".pick, " << ty << " " << arg(0) << ", " << ty << " " << arg(1)
           << "\n";
    } else if (op == "LT" || op == "GT" || op == "LE" || op == "GE" || op == "EQ" || op == "NEQ") {
      const DType at = arg_type(0);
      const std::string aty = this->ty(at);
      std::string pred;
      if (is_float(at)) {
        pred = op == "LT" ? "olt" : op == "GT" ? "ogt" : op == "LE" ? "ole" : op == "GE" ? "oge" : op == "EQ" ? "oeq" : "une";
        out_ << res << "fcmp " << pred << " " << aty << " " << arg(0) << ", " << arg(1) << "\n";
      } else {
        const bool u = is_unsigned(at) || at == DType::Bool;
        pred = op == "EQ" ? "eq" : op == "NEQ" ? "ne" : std::string(u ? "u" : "s") + (op == "LT" ? "lt" : op == "GT" ? "gt" : op == "LE" ? "le" : "ge");
        out_ << res << "icmp " << pred << " " << aty << " " << arg(0) << ", " << arg(1) << "\n";
      }
    } else if ((op == "AND" || op == "OR" || op == "XOR") && !flt) {
      const char* name = op == "AND" ? "and" : op == "OR" ? "or" : "xor";
      out_ << res << name << " " << ty << " " << arg(0) << ", " << arg(1) << "\n";
    } else if (op == "Invert" && !flt) {
      out_ << res << "xor " << ty << " " << arg(0) << ", " << splat(rt, rt == DType::Bool ? "true" : "-1") << "\n";
    } else if (op == "Switch") {
      out_ << res << "select " << cond << " " << arg(0) << ", " << ty << " " << arg(1) << ", " << ty << " " << arg(2)
           << "\n";
    } else if ((op == "IsNan" || op == "IsInf") && is_float(arg_type(0))) {
      const std::string at = this->ty(arg_type(0)), t = "%r" + std::to_string(ins.result);
      if (op == "IsNan") {
        out_ << res << "fcmp uno " << at << " " << arg(0) << ", " << arg(0) << "\n";
      } else {
        const std::string name = "llvm.fabs" + intrinsic_suffix(arg_type(0));
        declared_.insert(at + " @" + name + "(" + at + ")");
        out_ << "  " << t << ".abs = call " << at << " @" << name << "(" << at << " " << arg(0) << ")\n"
             << res << "fcmp oeq " << at << " " << t << ".abs, " << splat(arg_type(0), "0x7FF0000000000000") << "\n";
      }
    } else if (op == "Cast") {
      return cast(res, rt, arg_type(0), arg(0));
    } else {
      return false;
    }
    return true;
  }

  bool cast(const std::string& res, DType to, DType from, const std::string& x) {
    const std::string tt = ty(to), ft = ty(from);
    if (to == from) {
      // (A select of the value with itself: a copy LLVM folds away.)
      out_ << res << "select i1 true, " << tt << " " << x << ", " << tt << " " << x << "\n";
    } else if (to == DType::Bool) {
      if (is_float(from)) out_ << res << "fcmp une " << ft << " " << x << ", " << splat(from, "0.0") << "\n";
      else out_ << res << "icmp ne " << ft << " " << x << ", " << splat(from, "0") << "\n";
    } else if (is_float(to) && is_float(from)) {
      out_ << res << (to == DType::Float64 ? "fpext " : "fptrunc ") << ft << " " << x << " to " << tt << "\n";
    } else if (is_float(to)) {
      const bool u = is_unsigned(from) || from == DType::Bool;
      out_ << res << (u ? "uitofp " : "sitofp ") << ft << " " << x << " to " << tt << "\n";
    } else if (is_float(from)) {
      return false;  // (NumPy's out-of-range results: scalar::convert)
    } else {
      const size_t tw = bit_width(to), fw = bit_width(from);
      const bool u = is_unsigned(from) || from == DType::Bool;
      const char* name = tw < fw ? "trunc " : tw == fw ? nullptr : (u ? "zext " : "sext ");
      if (name == nullptr) {
        out_ << res << "select i1 true, " << tt << " " << x << ", " << tt << " " << x << "\n";
      } else {
        out_ << res << name << ft << " " << x << " to " << tt << "\n";
      }
    }
    return true;
  }

  // An intrinsic's type suffix: .f64, or .v8f64 for 8 lanes.
  std::string intrinsic_suffix(DType d) const {
    const char* t = d == DType::Float64 ? "f64" : "f32";
    return lanes_ == 0 ? std::string(".") + t : ".v" + std::to_string(lanes_) + t;
  }

  const Program& body_;
  const size_t lanes_;
  std::string active_;          // vector code: the mask of the lanes still running
  std::string block_ = "entry";  // the block being written
  std::ostringstream out_;
  std::ostringstream allocas_;
  std::set<std::string> declared_;
  std::set<std::string> slotted_;  // instructions whose stack slots are made
};

class LoopWriter : public ProgramWriter {
 public:
  explicit LoopWriter(const LoopProgram& loop) : ProgramWriter(loop.body), loop_(loop) {}

  void write(const std::string& name) {
    const Program& p = body_;
    const DType state = p.registers[0];
    out_ << "define i8 @" << name << "(i64 %n, ptr %state, ptr %inputs) {\nentry:\n";
    for (size_t s = 0; s < loop_.num_state; ++s) load(s, "%state", std::to_string(s), state, ".init");
    for (size_t r = loop_.num_state; r < p.num_inputs(); ++r) {
      out_ << "  %in" << r << ".slot = getelementptr ptr, ptr %inputs, i64 " << (r - loop_.num_state) << "\n"
           << "  %in" << r << " = load ptr, ptr %in" << r << ".slot\n";
      load(r, "%in" + std::to_string(r), "0", p.registers[r], "");
    }
    for (size_t k : loop_.invariant_code) instruction(p.code[k]);
    out_ << "  %go = icmp sgt i64 %n, 0\n  br i1 %go, label %step, label %none\nnone:\n  ret i8 0\nstep:\n"
         << "  %k = phi i64 [1, %entry], [%k.next, %more]\n";
    for (size_t s = 0; s < loop_.num_state; ++s) {
      out_ << "  %r" << s << " = phi " << llvm_type(state) << " [%r" << s << ".init, %entry], ["
           << value(loop_.next_state[s]) << ", %more]\n";
    }
    for (size_t k : loop_.step_code) instruction(p.code[k]);
    if (loop_.until >= 0) {
      out_ << "  br i1 " << value(loop_.until) << ", label %stopped, label %counted\ncounted:\n";
    }
    out_ << "  %last = icmp sge i64 %k, %n\n  br i1 %last, label %ran_out, label %more\n"
         << "more:\n  %k.next = add i64 %k, 1\n  br label %step\n";
    if (loop_.until >= 0) finish("stopped", 1);
    finish("ran_out", 0);
    out_ << "}\n";
  }

 private:
  void finish(const char* label, int flag) {
    out_ << label << ":\n";
    for (size_t s = 0; s < loop_.num_state; ++s) {
      store(value(loop_.next_state[s]), body_.registers[0], "%state", std::to_string(s),
            std::string(label) + std::to_string(s));
    }
    out_ << "  ret i8 " << flag << "\n";
  }

  const LoopProgram& loop_;
};

// The loop of kLoopLanes elements at once (compiled.h, CompiledLoopLanes):
// every register a vector of one element per lane, run step by step while
// any lane runs. A lane stops as its element's loop does (its until flag,
// or its step count), and keeps its state from then on; its operations are
// the scalar loop's, lane by lane (IEEE operations, no fast-math), so each
// element gets the scalar loop's bits.
//   void @<name>_lanes(ptr n_steps, ptr state, ptr inputs, ptr flags)
// n_steps: kLoopLanes int64; state: num_state runs of kLoopLanes values;
// inputs: per constant input a pointer to its kLoopLanes values; flags:
// kLoopLanes bytes, the until flags out.
class LanesLoopWriter : public ProgramWriter {
 public:
  explicit LanesLoopWriter(const LoopProgram& loop) : ProgramWriter(loop.body, kLoopLanes), loop_(loop) {}

  void write(const std::string& name) {
    const Program& p = body_;
    const DType state = p.registers[0];
    const std::string lanes = std::to_string(kLoopLanes), steps = ty(DType::Int64), mask = ty(DType::Bool);
    const std::string any = "llvm.vector.reduce.or.v" + lanes + "i1";
    declared_.insert("i1 @" + any + "(" + mask + ")");
    out_ << "define void @" << name << "_lanes(ptr %steps, ptr %state, ptr %inputs, ptr %flags) {\nentry:\n"
         << "  %n = load " << steps << ", ptr %steps, align 8\n"
         << "  %act0 = icmp sgt " << steps << " %n, zeroinitializer\n";
    for (size_t s = 0; s < loop_.num_state; ++s) {
      load_lanes("%r" + std::to_string(s) + ".init", "%state", s * kLoopLanes, state);
    }
    for (size_t r = loop_.num_state; r < p.num_inputs(); ++r) {
      out_ << "  %in" << r << ".slot = getelementptr ptr, ptr %inputs, i64 " << (r - loop_.num_state) << "\n"
           << "  %in" << r << " = load ptr, ptr %in" << r << ".slot\n";
      load_lanes("%r" + std::to_string(r), "%in" + std::to_string(r), 0, p.registers[r]);
    }
    active_ = "%act0";
    for (size_t k : loop_.invariant_code) instruction(p.code[k]);
    const std::string before = block_;
    out_ << "  %go = call i1 @" << any << "(" << mask << " %act0)\n"
         << "  br i1 %go, label %step, label %none\n";
    label("none");
    out_ << "  store " << ty(DType::Int8) << " zeroinitializer, ptr %flags, align 1\n  ret void\n";
    label("step");
    out_ << "  %k = phi i64 [1, %" << before << "], [%k.next, %more]\n"
         << "  %act = phi " << mask << " [%act0, %" << before << "], [%act.next, %more]\n"
         << "  %stopped = phi " << mask << " [zeroinitializer, %" << before << "], [%stopped.next, %more]\n";
    for (size_t s = 0; s < loop_.num_state; ++s) {
      out_ << "  %r" << s << " = phi " << ty(state) << " [%r" << s << ".init, %" << before << "], [%r" << s
           << ".kept, %more]\n";
    }
    active_ = "%act";
    for (size_t k : loop_.step_code) instruction(p.code[k]);
    // A running lane takes its next state; it stops on its until flag, or
    // after its n-th step.
    const std::string until = loop_.until >= 0 ? value(loop_.until) : "zeroinitializer";
    out_ << "  %stop = and " << mask << " %act, " << until << "\n"
         << "  %stopped.next = or " << mask << " %stopped, %stop\n"
         << "  %k.one = insertelement " << steps << " poison, i64 %k, i64 0\n"
         << "  %k.all = shufflevector " << steps << " %k.one, " << steps << " poison, <" << lanes
         << " x i32> zeroinitializer\n"
         << "  %left = icmp slt " << steps << " %k.all, %n\n"
         << "  %go.on = xor " << mask << " %stop, " << splat(DType::Bool, "true") << "\n"
         << "  %act.on = and " << mask << " %act, %go.on\n"
         << "  %act.next = and " << mask << " %act.on, %left\n";
    for (size_t s = 0; s < loop_.num_state; ++s) {
      out_ << "  %r" << s << ".kept = select " << mask << " %act, " << ty(state) << " " << value(loop_.next_state[s])
           << ", " << ty(state) << " %r" << s << "\n";
    }
    out_ << "  %again = call i1 @" << any << "(" << mask << " %act.next)\n"
         << "  br i1 %again, label %more, label %done\n";
    label("more");
    out_ << "  %k.next = add i64 %k, 1\n  br label %step\n";
    label("done");
    for (size_t s = 0; s < loop_.num_state; ++s) {
      store_lanes("%r" + std::to_string(s) + ".kept", "%state", s * kLoopLanes, state, "out" + std::to_string(s));
    }
    out_ << "  %flags.bytes = zext " << mask << " %stopped.next to " << ty(DType::Int8) << "\n"
         << "  store " << ty(DType::Int8) << " %flags.bytes, ptr %flags, align 1\n  ret void\n}\n";
  }

 private:
  // `name` from the kLoopLanes values at element `first` of `pointer`.
  void load_lanes(const std::string& name, const std::string& pointer, size_t first, DType d) {
    const std::string memory = d == DType::Bool ? ty(DType::Int8) : ty(d);
    out_ << "  " << name << ".at = getelementptr " << memory_type(d) << ", ptr " << pointer << ", i64 " << first << "\n";
    if (d == DType::Bool) {
      out_ << "  " << name << ".bytes = load " << memory << ", ptr " << name << ".at, align 1\n  " << name
           << " = icmp ne " << memory << " " << name << ".bytes, zeroinitializer\n";
    } else {
      out_ << "  " << name << " = load " << memory << ", ptr " << name << ".at, align 1\n";
    }
  }

  void store_lanes(const std::string& v, const std::string& pointer, size_t first, DType d, const std::string& tag) {
    const std::string memory = d == DType::Bool ? ty(DType::Int8) : ty(d);
    std::string stored = v;
    if (d == DType::Bool) {
      stored = "%" + tag + ".bytes";
      out_ << "  " << stored << " = zext " << ty(d) << " " << v << " to " << memory << "\n";
    }
    out_ << "  %" << tag << ".at = getelementptr " << memory_type(d) << ", ptr " << pointer << ", i64 " << first
         << "\n  store " << memory << " " << stored << ", ptr %" << tag << ".at, align 1\n";
  }

  const LoopProgram& loop_;
};

// Functions' code after the declarations they use, once each.
std::string module_text(const std::vector<const ProgramWriter*>& writers) {
  std::set<std::string> declared;
  std::string code;
  for (const ProgramWriter* w : writers) {
    declared.insert(w->declared().begin(), w->declared().end());
    code += w->code() + "\n";
  }
  std::string text;
  for (const std::string& d : declared) text += "declare " + d + "\n";
  return text + "\n" + code;
}

// One block of a fused element-wise program: `n` elements of every array
// input in, of every output out; inputs in `scalar` are read once.
class BlockWriter : public ProgramWriter {
 public:
  BlockWriter(const Program& program, const std::vector<bool>& scalar) : ProgramWriter(program), scalar_(scalar) {}

  void write(const std::string& name) {
    const Program& p = body_;
    if (scalar_.size() != p.num_inputs()) throw NotCompiled{};
    // Registers known before the loop: the scalar inputs, constants, and
    // instructions on those alone (the interpreter runs those once a call).
    std::vector<bool> known(p.registers.size(), false);
    for (size_t r = 0; r < p.registers.size(); ++r) known[r] = p.is_constant[r] || (r < p.num_inputs() && scalar_[r]);
    out_ << "define void @" << name << "(ptr %inputs, ptr %outputs, i64 %n) {\nentry:\n";
    for (size_t r = 0; r < p.num_inputs(); ++r) {
      out_ << "  %in" << r << ".slot = getelementptr ptr, ptr %inputs, i64 " << r << "\n"
           << "  %in" << r << " = load ptr, ptr %in" << r << ".slot\n";
      if (scalar_[r]) load(r, "%in" + std::to_string(r), "0", p.registers[r], "");
    }
    for (size_t j = 0; j < p.outputs.size(); ++j) {
      out_ << "  %out" << j << ".slot = getelementptr ptr, ptr %outputs, i64 " << j << "\n"
           << "  %out" << j << " = load ptr, ptr %out" << j << ".slot\n";
    }
    std::vector<const Instruction*> per_element;
    for (const Instruction& ins : p.code) {
      bool all_known = true;
      for (int a : ins.args) all_known = all_known && known[a];
      if (all_known) {
        instruction(ins);
        known[ins.result] = true;
      } else {
        per_element.push_back(&ins);
      }
    }
    out_ << "  %any = icmp sgt i64 %n, 0\n  br i1 %any, label %element, label %done\nelement:\n"
         << "  %k = phi i64 [0, %entry], [%k.next, %element]\n";
    for (size_t r = 0; r < p.num_inputs(); ++r) {
      if (!scalar_[r]) load(r, "%in" + std::to_string(r), "%k", p.registers[r], "");
    }
    for (const Instruction* ins : per_element) instruction(*ins);
    for (size_t j = 0; j < p.outputs.size(); ++j) {
      store(value(p.outputs[j]), p.registers[p.outputs[j]], "%out" + std::to_string(j), "%k",
            "o" + std::to_string(j));
    }
    out_ << "  %k.next = add i64 %k, 1\n  %more = icmp slt i64 %k.next, %n\n"
         << "  br i1 %more, label %element, label %done\ndone:\n  ret void\n}\n";
  }

 private:
  const std::vector<bool>& scalar_;
};



}  // namespace

std::string loop_llvm_ir(const LoopProgram& loop, const std::string& function_name) {
  if (loop.num_state > kMaxCompiledInputs || loop.body.num_inputs() - loop.num_state > kMaxCompiledInputs) return "";
  LoopWriter one(loop);
  try {
    one.write(function_name);
  } catch (const NotCompiled&) {
    return "";
  } catch (const std::out_of_range&) {
    return "";
  }
  // (The lanes' function where it can be written: each op written out or a
  // function of one element, which it calls lane by lane.)
  LanesLoopWriter lanes(loop);
  try {
    lanes.write(function_name);
  } catch (const NotCompiled&) {
    return module_text({&one});
  } catch (const std::out_of_range&) {
    return module_text({&one});
  }
  return module_text({&one, &lanes});
}

std::string block_llvm_ir(const Program& program, const std::vector<bool>& scalar_inputs,
                          const std::string& function_name) {
  try {
    BlockWriter writer(program, scalar_inputs);
    writer.write(function_name);
    return module_text({&writer});
  } catch (const NotCompiled&) {
    return "";
  } catch (const std::out_of_range&) {
    return "";
  }
}

}  // namespace pytensor_onnx::kernels
