// ONNX's type constraints for the inputs of the ops rules use (onnx/defs).
#pragma once

#include "ir.h"

namespace pytensor_onnx {

// Throws BuildError when an input of `node` (a default-domain op) has a dtype
// its ONNX schema does not allow at `opset`, or inputs that must share a
// dtype do not, e.g. Exp of int64, Add(float32, float64), And of int8,
// Where with a non-bool condition. Such a node would make a model the ONNX
// checker and ONNX Runtime reject. Inputs of unknown dtype and ops not in the
// table pass.
void check_input_dtypes(const Node& node, int opset);

}  // namespace pytensor_onnx
