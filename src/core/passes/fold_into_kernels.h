// Lets the kernel library's element-wise nodes read past the Unsqueeze and
// Squeeze nodes that only add or drop leading size-1 axes of their operands,
// and past the Shape and Gather nodes that read the size of an axis.
#pragma once
#include "../ir.h"
namespace pytensor_onnx {
// An Elemwise or ScalarLoop kernel broadcasts its inputs as NumPy does (ranks
// aligned on the right) and, given its output rank (attribute `rank`), drops
// leading axes of an input beyond that rank, failing the run unless they are
// of size 1, as the Squeeze would. ONNX Runtime pays ~0.5 us per node, and
// PyTensor's ExpandDims of scalar parameters is everywhere in PyMC's graphs.
// Returns true if the graph changed (the bypassed nodes are left for the
// dead-node pass).
bool fold_leading_axes_into_kernels(Graph& graph);

// An Elemwise kernel node reads an operand past the Unsqueeze, Squeeze
// (of constant axes) and Transpose nodes that made it (attribute
// `input_axes`, src/kernels/elemwise.h): the view is strides over the
// operand's own elements, and a dropped axis is checked to be 1 on every
// run, as the Squeeze would. PyTensor's DimShuffles (`x[:, None]`, `x.T`)
// are everywhere in PyMC's graphs, each ~0.5 us as a node of its own. A
// Transpose is read past only where reading it costs no more than copying
// it: small operands, or the innermost axis kept in place, and not a
// constant (ONNX Runtime's constant folding gives the kernel a transposed
// constant, read in place once, src/kernels/constant_inputs.h). Returns true if the graph changed (the bypassed nodes are left for
// the dead-node pass).
bool fold_axis_views_into_kernels(Graph& graph);

// The same for the Elemwise kernel nodes of several stages that
// merge_kernel_stages makes (it runs after the folds above): a node input
// made by such a node is read past where every stage that reads it is a
// plain program of a declared rank (a reduction, gather, reshape... reads
// its input contiguous), each through its own view. A DimShuffle that fed
// ONNX's arithmetic, which becomes a stage only in that merge, is read past
// this way (the Gaussian process's gradient: a Transpose of a solve's
// result). Returns true if the graph changed.
bool fold_axis_views_into_merged_kernels(Graph& graph);

// An Elemwise kernel node reads the size of an axis of an array itself
// (attribute `dim_inputs`: pairs input, axis) where its int64 input is
// Gather(Shape(x), k) of a constant k: PyMC's log-densities scale by the
// number of observations (`x.shape[0]`), two nodes for one number. The node
// then reads x for that size only, not its elements, and fails the run if x
// has too few dims. Returns true if the graph changed.
bool fold_shape_reads_into_kernels(Graph& graph);
}  // namespace pytensor_onnx
