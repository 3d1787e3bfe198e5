// Makes the small float64 arrays a run takes in, or gives out through a
// kernel node, one input or output.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "../ir.h"
namespace pytensor_onnx {
// A packed input or output: its name, and the names of the graph inputs or
// outputs whose values are its elements, in order, with their shapes. Each
// element's values follow the one before's in the packed vector (C order),
// so an element's offset is the sizes of those before it.
struct PackedArrays {
  std::string name;
  std::vector<std::string> elements;
  std::vector<std::vector<int64_t>> shapes;
};

// The most elements an array of static shape may have to be packed: PyMC's
// parameter vectors and their gradients (copying them in and out is a few
// ns; the caller's binding copies arrays of up to 16 KiB anyway).
constexpr int64_t kMaxPackedArrayElements = 256;

// Whether a value of `shape` is one a packed input or output may hold: a
// float64 scalar, or a float64 array of static shape and at most
// kMaxPackedArrayElements elements.
bool packable(DType dtype, const Shape& shape);

// ONNX Runtime pays ~0.14 us a run per graph output (bench/call_floor.py),
// and a PyMC log-density's gradient is an array per parameter, often a
// scalar or a short vector. Where an Elemwise kernel node gives two or more
// packable values (above) that are graph outputs and nothing else reads,
// they become the elements of one float64 vector output of the node
// (attribute `packed_outputs`: per output as the stages number them, its
// element of the packed output, the node's last, or -1 for an output of its
// own; attribute `packed_output_shapes`: records (element, rank, dims...)
// for the elements that are not scalars; src/kernels/elemwise.h). The
// graph's outputs lose them and gain the packed one; the caller splits it
// again (mode ONNX's native sessions, src/runtime). Exported models never
// get it. Returns the packed outputs made.
std::vector<PackedArrays> pack_small_outputs_of_kernels(Graph& graph);

// The same for inputs, ~0.09 us a run each (a PyMC model's parameters): the
// packable graph inputs (not initializers, nor those named in `kept`) that
// only Elemwise kernel nodes read become the elements of one float64 vector
// graph input, which those nodes read in their place (attribute
// `packed_inputs`: per node input, the offset of its first element in that
// input, or -1; attribute `packed_input_shapes`: records (node input, rank,
// dims...) for those that are not scalars). Two or more, or nothing
// changes. The caller gathers the arrays into it (mode ONNX's native
// sessions). Returns the packed input made, if any.
std::vector<PackedArrays> pack_small_inputs_of_kernels(Graph& graph, const std::unordered_set<std::string>& kept);

}  // namespace pytensor_onnx
