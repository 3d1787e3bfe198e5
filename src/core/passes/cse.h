// Common-subexpression elimination: nodes with the same op, inputs and
// attributes compute the same values, so later copies read the first.
#pragma once
#include "../ir.h"
namespace pytensor_onnx {
bool eliminate_common_subexpressions(Graph& graph);
}  // namespace pytensor_onnx
