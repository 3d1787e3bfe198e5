// Common-subexpression elimination: nodes with the same op, inputs and
// attributes compute the same values, so later copies read the first.
#pragma once
#include "../functions.h"
#include "../ir.h"
namespace pytensor_onnx {
// Calls of model-local functions are merged like ops when the function is
// pure (`functions` says which; without it, no call is merged).
bool eliminate_common_subexpressions(Graph& graph, const FunctionLibrary* functions = nullptr);
}  // namespace pytensor_onnx
