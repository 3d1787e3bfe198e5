"""Rules for pytensor.tensor.extra_ops (and Nonzero): cumulative sums and
products, searchsorted, repeat, diagonal fills, index conversions, unique.

- CumOp keeps the input's dtype, as PyTensor's type (and its C code) says:
  integer sums and products wrap, bool sums are ORs and products ANDs.
  (PyTensor's Python ``perform`` calls ``np.cumsum`` without a dtype, which
  promotes small integers and bool to int64 against its own type.) CumProd
  is an ONNX op from opset 26; before, the C++ recipe ``cumprod``
  (src/core/recipes/sort.cc) multiplies in a log-depth scan.
- SearchsortedOp: binary search (recipe ``searchsorted``) after casting both
  operands to NumPy's common dtype; NaN sorts last as in NumPy.
- Where NumPy raises on bad input (negative repeats, out-of-range
  coordinates, unequal dims for fill_diagonal) the model fails at run time.
"""

import numpy as np
from pytensor.graph.basic import Constant
from pytensor.tensor.basic import Nonzero
from pytensor.tensor.extra_ops import (
    Bartlett,
    CumOp,
    FillDiagonal,
    FillDiagonalOffset,
    RavelMultiIndex,
    Repeat,
    SearchsortedOp,
    Unique,
    UnravelIndex,
)

from pytensor_onnx.dispatch.basic import const, onnx_funcify
from pytensor_onnx.dispatch.utils import check, dim_size, int64_const


def _arange(g, size):
    """0, 1, ..., size - 1 (int64) for an int or an int64 scalar Value."""
    if isinstance(size, int):
        return int64_const(g, np.arange(size))
    return g.op("Range", int64_const(g, 0), size, int64_const(g, 1))


# --------------------------------------------------------------------------
# CumOp
# --------------------------------------------------------------------------


@onnx_funcify.register(CumOp)
def _cum_op(op, node, g, x):
    axis = op.axis
    dtype = x.dtype
    if op.mode == "mul":
        return g.recipe("cumprod", x, axis=axis)
    if dtype == "bool":
        # NumPy's add on bools is OR: any True so far.
        return g.cast(g.op("CumSum", g.cast(x, "int32"), int64_const(g, axis)), "bool")
    return g.op("CumSum", x, int64_const(g, axis))


# --------------------------------------------------------------------------
# SearchsortedOp
# --------------------------------------------------------------------------


@onnx_funcify.register(SearchsortedOp)
def _searchsorted(op, node, g, x, v, sorter=None):
    common = np.result_type(node.inputs[0].type.dtype, node.inputs[1].type.dtype).name
    if sorter is not None:
        x = g.op("Gather", x, g.cast(sorter, "int64"), axis=0)
    return g.recipe("searchsorted", g.cast(x, common), g.cast(v, common), right=int(op.side == "right"))


# --------------------------------------------------------------------------
# Repeat
# --------------------------------------------------------------------------


def _constant_repeat_indices(node, length):
    """The source index of each output position when the repeats and the axis length are static."""
    repeats = node.inputs[1]
    if not isinstance(repeats, Constant) or not isinstance(length, int):
        return None
    counts = np.asarray(repeats.data, dtype=np.int64)
    if counts.size not in (1, length) or (counts < 0).any():
        return None  # NumPy raises; leave it to the run-time checks
    return np.repeat(np.arange(length), np.broadcast_to(counts, (length,)))


@onnx_funcify.register(Repeat)
def _repeat(op, node, g, x, repeats):
    axis = op.axis
    length = dim_size(g, x, axis, node.inputs[0].type.shape[axis])
    indices = _constant_repeat_indices(node, length)
    if indices is not None:
        return g.op("Gather", x, int64_const(g, indices), axis=axis)
    # Repeats broadcast from length 1 (Expand fails on any other mismatch,
    # where NumPy raises too); negative repeats raise in NumPy.
    if isinstance(length, int):
        length_vector = int64_const(g, [length])
    else:
        length_vector = g.op("Unsqueeze", length, axes=[0])
    counts = g.op("Expand", g.cast(repeats, "int64"), length_vector)
    counts = check(g, g.op("GreaterOrEqual", counts, int64_const(g, 0)), counts)
    ends = g.op("CumSum", counts, int64_const(g, 0))
    total = g.op("ReduceSum", counts, axes=[0], keepdims=0)
    # Output position p copies the element whose run [end - count, end) holds p.
    source = g.recipe("searchsorted", ends, _arange(g, total), right=1)
    return g.op("Gather", x, source, axis=axis)


# --------------------------------------------------------------------------
# FillDiagonal, FillDiagonalOffset
# --------------------------------------------------------------------------


def _axis_positions(g, x, axis):
    """0..n-1 along ``axis`` of ``x``, shaped to broadcast against ``x``."""
    positions = _arange(g, dim_size(g, x, axis))
    other_axes = [a for a in range(x.rank) if a != axis]
    return g.op("Unsqueeze", positions, axes=other_axes) if other_axes else positions


@onnx_funcify.register(FillDiagonal)
def _fill_diagonal(op, node, g, a, val):
    first = _axis_positions(g, a, 0)
    on_diagonal = None
    for axis in range(1, a.rank):
        equal = g.op("Equal", first, _axis_positions(g, a, axis))
        on_diagonal = equal if on_diagonal is None else g.op("And", on_diagonal, equal)
    if a.rank > 2:
        # np.fill_diagonal needs every dim equal beyond 2-D.
        shape = g.op("Shape", a)
        same = g.op("Equal", shape, g.op("Gather", shape, int64_const(g, 0), axis=0))
        a = check(g, same, a)
    return g.op("Where", on_diagonal, val, a)


@onnx_funcify.register(FillDiagonalOffset)
def _fill_diagonal_offset(op, node, g, a, val, offset):
    # Elements (i, j) with j - i == offset (the tall case unwrapped).
    diagonal = g.op("Sub", _axis_positions(g, a, 1), _axis_positions(g, a, 0))
    return g.op("Where", g.op("Equal", diagonal, g.cast(offset, "int64")), val, a)


# --------------------------------------------------------------------------
# Bartlett
# --------------------------------------------------------------------------


@onnx_funcify.register(Bartlett)
def _bartlett(op, node, g, m):
    # np.bartlett: n = arange(1 - M, M, 2), 1 + n/(M-1) for n <= 0 and
    # 1 - n/(M-1) after; M == 1 gives [1.0], M < 1 an empty window.
    m = g.cast(m, "int64")
    n = g.cast(g.op("Range", g.op("Sub", int64_const(g, 1), m), m, int64_const(g, 2)), "float64")
    scale = g.cast(g.op("Sub", m, int64_const(g, 1)), "float64")
    ratio = g.op("Div", n, scale)
    one = const(g, 1.0, "float64")
    window = g.op("Where", g.op("LessOrEqual", n, const(g, 0.0, "float64")), g.op("Add", one, ratio),
                  g.op("Sub", one, ratio))
    return g.op("Where", g.op("Equal", m, int64_const(g, 1)), one, window)


# --------------------------------------------------------------------------
# RavelMultiIndex, UnravelIndex
# --------------------------------------------------------------------------


def _dims(g, dims, count):
    """The ``count`` entries of the 1-D ``dims`` as int64 scalars."""
    dims = g.cast(dims, "int64")
    return [g.op("Gather", dims, int64_const(g, k), axis=0) for k in range(count)]


@onnx_funcify.register(RavelMultiIndex)
def _ravel_multi_index(op, node, g, *inputs):
    *indices, dims = inputs
    sizes = _dims(g, dims, len(indices))
    zero = int64_const(g, 0)
    fixed = []
    for index, size in zip(indices, sizes):
        index = g.cast(index, "int64")
        if op.mode == "wrap":
            index = g.op("Mod", index, size)  # integer Mod takes the divisor's sign, as Python's %
        elif op.mode == "clip":
            index = g.op("Max", g.op("Min", index, g.op("Sub", size, int64_const(g, 1))), zero)
        else:
            # NumPy: "invalid entry in coordinates array"
            inside = g.op("And", g.op("GreaterOrEqual", index, zero), g.op("Less", index, size))
            index = check(g, inside, index)
        fixed.append(index)
    order = range(len(fixed)) if op.order == "C" else reversed(range(len(fixed)))
    flat = None
    for k in order:
        flat = fixed[k] if flat is None else g.op("Add", g.op("Mul", flat, sizes[k]), fixed[k])
    return flat


@onnx_funcify.register(UnravelIndex)
def _unravel_index(op, node, g, indices, dims):
    count = len(node.outputs)
    sizes = _dims(g, dims, count)
    flat = g.cast(indices, "int64")
    total = int64_const(g, 1)
    for size in sizes:
        total = g.op("Mul", total, size)
    # NumPy: "index ... is out of bounds for array with size ..."
    inside = g.op("And", g.op("GreaterOrEqual", flat, int64_const(g, 0)), g.op("Less", flat, total))
    flat = check(g, inside, flat)
    coords = [None] * count
    order = reversed(range(count)) if op.order == "C" else range(count)
    for k in order:
        coords[k] = g.op("Mod", flat, sizes[k])
        flat = g.op("Div", flat, sizes[k])
    return coords


# --------------------------------------------------------------------------
# Nonzero
# --------------------------------------------------------------------------


@onnx_funcify.register(Nonzero)
def _nonzero(op, node, g, a):
    # NonZero lists the coordinates of the non-zero elements in row-major
    # order, one row per axis (NaN counts as non-zero, as in NumPy).
    coords = g.op("NonZero", a)
    return [g.op("Gather", coords, int64_const(g, axis), axis=0) for axis in range(a.rank)]


# --------------------------------------------------------------------------
# Unique
# --------------------------------------------------------------------------


@onnx_funcify.register(Unique)
def _unique(op, node, g, x):
    if op.axis is None or x.rank <= 1:
        values, first, inverse, counts = g.recipe("unique", g.op("Reshape", x, int64_const(g, [-1])))
    else:
        # np.unique(axis=...): the slices along the axis are the rows of the
        # tensor with that axis first and the others flattened; the recipe
        # orders them lexicographically. Their first occurrences pick the
        # unique slices from x itself (no reshape back, empty axes are fine).
        axis = op.axis + x.rank if op.axis < 0 else op.axis
        if not 0 <= axis < x.rank:
            raise NotImplementedError(f"Unique: axis {op.axis} is out of range for a {x.rank}-D tensor (node: {node})")
        moved = x if axis == 0 else g.op("Transpose", x, perm=[axis, *(a for a in range(x.rank) if a != axis)])
        _, first, inverse, counts = g.recipe("unique", g.op("Flatten", moved, axis=1))
        values = g.op("Gather", x, first, axis=axis)
    outputs = [values]
    if op.return_index:
        outputs.append(first)
    if op.return_inverse:
        outputs.append(inverse)
    if op.return_counts:
        outputs.append(counts)
    return outputs
