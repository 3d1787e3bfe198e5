// Merges initializers with identical dtype, dims and bytes.
#pragma once
#include "../ir.h"
namespace pytensor_onnx {
bool deduplicate_initializers(Graph& graph);
}  // namespace pytensor_onnx
