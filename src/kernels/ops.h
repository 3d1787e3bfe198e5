// The table of scalar ops the element-wise kernels evaluate: for each op its
// arity, how operand and result dtypes relate, the dtypes it takes, and its
// loop over a block of elements for each of those dtypes. The one home of
// these facts: the Python side reads them through describe_ops().
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "dtype.h"

namespace pytensor_onnx::kernels {

// One operand of a loop: `scalar` operands hold one element, broadcast over
// the block; the others hold one element per position of the block.
struct Operand {
  const void* data;
  bool scalar;
};
using LoopFn = void (*)(const Operand* args, void* out, size_t n);

// The most operands an op takes (hyp2f1's four): select_loop refuses more.
inline constexpr size_t kMaxArity = 4;

enum class Signature {
  Same,       // operands and result of one dtype (Add, Exp, ...)
  Compare,    // operands of one dtype, bool result (LT, IsNan, ...)
  Switch,     // bool condition, two operands of the result's dtype
  Cast,       // any dtype to any dtype
};

// The loop of op `name` on operands of dtypes `args` giving `result`; throws
// std::invalid_argument naming what does not fit.
LoopFn select_loop(const std::string& name, const std::vector<DType>& args, DType result);

// Op `name` on float64 scalars, as its float64 loop computes each element:
// a `double (*)(double, double, double, double)` (operands past the op's
// arity are ignored), or null for ops not of that form (compiled programs
// call it, kernel_ir.h).
const void* float64_function(const std::string& name);

// The rough cost of op `name` per element, in adds (1 for an add or a
// compare, ~20 for exp, ~500 for an iterative special function).
int op_cost(const std::string& name);

// "Add 2 same bool,int8,...;Exp 1 same float32,float64;..." : every op, its
// arity, signature and the operand dtypes it takes (the ones evaluated by
// SciPy's functions only once those are set, scipy_special.h).
std::string describe_ops();

}  // namespace pytensor_onnx::kernels
