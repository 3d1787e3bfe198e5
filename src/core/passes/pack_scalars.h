// Makes the float64 scalars a run takes in, or gives out through a kernel
// node, one input or output.
#pragma once
#include <string>
#include <unordered_set>
#include <vector>

#include "../ir.h"
namespace pytensor_onnx {
// A packed input or output: its name, and the names of the graph inputs or
// outputs whose values are its elements, in order.
struct PackedScalars {
  std::string name;
  std::vector<std::string> elements;
};

// ONNX Runtime pays ~0.14 us a run per graph output (bench/call_floor.py),
// and a PyMC log-density's gradient is a scalar per scalar parameter. Where
// an Elemwise kernel node gives two or more float64 scalars that are graph
// outputs and nothing else reads, they become the elements of one float64
// vector output of the node (attribute `packed_outputs`: per output as the
// stages number them, its element of the packed output, the node's last, or
// -1 for an output of its own; src/kernels/elemwise.h). The graph's outputs
// lose them and gain the packed one; the caller splits it again (mode
// ONNX's native sessions, src/runtime). Exported models never get it.
// Returns the packed outputs made.
std::vector<PackedScalars> pack_scalar_outputs_of_kernels(Graph& graph);

// The same for inputs, ~0.09 us a run each (a PyMC model's scalar
// parameters): the float64 scalar graph inputs (not initializers, nor those
// named in `kept`) that only Elemwise kernel nodes read become the elements
// of one float64 vector graph input, which those nodes read in their place
// (attribute `packed_inputs`: per node input, its element of that input, or
// -1). Two or more, or nothing changes. The caller gathers the scalars into
// it (mode ONNX's native sessions). Returns the packed input made, if any.
std::vector<PackedScalars> pack_scalar_inputs_of_kernels(Graph& graph, const std::unordered_set<std::string>& kept);
}  // namespace pytensor_onnx
