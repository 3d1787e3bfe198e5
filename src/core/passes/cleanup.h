// Removes Casts to the dtype a value already has and Identity nodes that do
// not produce graph outputs.
#pragma once
#include "../ir.h"
namespace pytensor_onnx {
bool remove_redundant_casts_and_identities(Graph& graph);
}  // namespace pytensor_onnx
