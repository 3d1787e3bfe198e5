// ONNX's type constraints on the inputs of an op (onnx/defs): the classes of
// dtypes they name, and the check of a node against its op's constraints
// (listed in the op table, ops.cc).
#pragma once

#include <cstddef>
#include <vector>

#include "ir.h"

namespace pytensor_onnx {

enum class Allowed { Float, Bool, Integer, Unsigned, Numeric, Wide, Signed, NumericOrBool, Any, Int64, Index, PowBase };

// One constraint: the inputs at `positions` (empty: every input) all have
// one dtype, of the `allowed` class.
struct Constraint {
  Allowed allowed;
  std::vector<size_t> positions;
};

// Throws BuildError when an input of `node` (a default-domain op) has a dtype
// its ONNX schema does not allow at `opset`, or inputs that must share a
// dtype do not, e.g. Exp of int64, Add(float32, float64), And of int8,
// Where with a non-bool condition. Such a node would make a model the ONNX
// checker and ONNX Runtime reject. Inputs of unknown dtype and ops not in the
// table pass.
void check_input_dtypes(const Node& node, int opset);

}  // namespace pytensor_onnx
