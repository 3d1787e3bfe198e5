// Float32 export of a float64 graph: every float64 value, initializer,
// constant attribute and dtype attribute becomes float32, in the graph and
// its subgraphs (If/Loop bodies). For deployment targets where float32 is
// faster or the only choice; the precision cost is the user's choice.
#pragma once
#include "../ir.h"
namespace pytensor_onnx {
// Returns whether anything changed. Run the cleanup passes afterwards: Casts
// between float64 and float32 have become no-op Casts.
bool demote_float64_to_float32(Graph& graph);
}  // namespace pytensor_onnx
