// Dtype and shape inference for the nodes the builder emits.
#pragma once

#include "ir.h"

namespace pytensor_onnx {

// Sets dtype and shape of `node`'s outputs from its inputs and attributes.
// Unknown facts stay unknown (DType::Undefined, unknown dims or rank); it never
// guesses. Throws BuildError when the inputs are provably inconsistent
// (e.g. non-broadcastable static dims).
void infer_node(Node& node);

// NumPy broadcasting of two shapes; throws BuildError for static mismatches.
Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace pytensor_onnx
