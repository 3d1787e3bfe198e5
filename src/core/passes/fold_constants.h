// Folds shape arithmetic to constants: Shape/Size of statically known shapes,
// Gather of known dims from a Shape, and integer ops (Gather, Slice, Concat,
// Unsqueeze, Squeeze, Reshape, Cast, Add, Sub, Mul, Div, Neg, Max, Min,
// ReduceProd, ReduceSum, Identity) whose inputs are all small integer constants;
// and Identity/Reshape/Squeeze/Unsqueeze/Flatten of any constant (a view of the
// same bytes, so weights are never copied).
#pragma once
#include "../ir.h"
namespace pytensor_onnx {
bool fold_constants(Graph& graph);
}  // namespace pytensor_onnx
