// A scalar program: what one fused element-wise kernel node evaluates at
// every position of its (broadcast) inputs. The node carries it as text, so
// an exported model stays readable:
//   input_dtypes = "float64 int64"             the dtypes of the node's inputs
//   program = "Cast float64 1;Const float64 0.5;Mul float64 0 3;Exp float64 4"
//   output_registers = [5]                     registers that become outputs
// Registers 0..n-1 are the inputs; each instruction `<op> <dtype> <args>`
// appends one register of that dtype ("Const <dtype> <literal>" a constant).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiled.h"
#include "dtype.h"
#include "ops.h"
#include "run_plan.h"

namespace pytensor_onnx::kernels {

struct Instruction {
  std::string op;  // its name in the program text ("Add", "Cast", ...)
  LoopFn loop;
  std::vector<int> args;  // registers read
  int result;             // register written
  int cost = 1;           // per element, in adds (op_cost)
};

// The attribute values of `output_reductions`.
// Sum adds as NumPy's add.reduce does (pairwise: the py linker's bits);
// SequentialSum adds 0 + t0 + t1 + ... in position order (a Scan's running
// total, rewriting.SequentialSum).
enum class Reduction : int64_t { None = 0, Sum = 1, All = 2, Any = 3, SequentialSum = 4 };
inline bool is_sum(Reduction r) { return r == Reduction::Sum || r == Reduction::SequentialSum; }

struct Program {
  std::vector<DType> registers;        // dtype of every register
  std::vector<bool> is_constant;       // per register
  std::vector<uint64_t> constant_bits; // per register: the constant's value (its dtype's bytes)
  std::vector<Instruction> code;
  std::vector<int> outputs;
  // Per output: whether the node gives a reduction of the register over
  // every position instead of the array (0-d): a Sum of a fused expression,
  // PyMC's usual shape (float64), or an All or Any of a fused condition
  // (bool; PyMC's checks of its parameters).
  std::vector<Reduction> reductions;
  // A Sum adds pairwise over every position (0), or pairwise within chunks
  // of this many positions, the chunks' sums in order: NumPy 2.0's
  // add.reduce (attribute `sum_chunk`, pytensor_onnx.compat.numpy_sum_chunk).
  int64_t sum_chunk = 0;
  // Block storage: each register that needs a buffer gets a slot; a slot is
  // reused once the register it held is read for the last time.
  std::vector<int> slot;  // per register, -1 for constants
  int num_slots = 0;

  // The rough cost of one element of the program, in adds (op_cost): every
  // instruction's. A run counts only those it runs per element (evaluate.cc:
  // instructions on scalars alone run once).
  int64_t cost = 0;

  // Block functions of the program compiled by pytensor_onnx (compiled.h),
  // one per set of scalar inputs it was written for; empty: interpreted.
  std::vector<CompiledBlock> compiled;
  // What evaluate decided per set of one-element inputs (run_plan.h). Set
  // `compiled` before the first evaluation.
  RunPlanCache plans;

  size_t num_inputs() const { return num_inputs_; }
  size_t num_inputs_ = 0;
};

// The dtypes of a space-separated list ("float64 int64"), as attribute
// `input_dtypes` gives them; throws std::invalid_argument for an unknown name.
std::vector<DType> parse_dtypes(const std::string& names);

// Parses and checks a program; throws std::invalid_argument naming the
// instruction that is wrong.
Program parse_program(const std::string& input_dtypes, const std::string& text, const std::vector<int64_t>& outputs);

// Sets each output's reduction from `reductions` (Reduction values, one per
// output, or none); throws std::invalid_argument for a Sum of an output that
// is not float64, an All or Any of one that is not bool, or another value.
void set_output_reductions(Program& program, const std::vector<int64_t>& reductions);

}  // namespace pytensor_onnx::kernels
