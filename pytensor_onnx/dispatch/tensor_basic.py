"""Rules for pytensor.tensor.basic ops: allocation, ranges, eye, scalar <-> tensor,
the shape-building MakeVector, Join and Split, and the diagonals
(ExtractDiag, AllocDiag).

Shapes arrive as 0-d tensors of any integer dtype; ONNX wants int64 vectors.
Where NumPy raises on a bad size (negative dims, a zero arange step, a
run-time broadcast PyTensor forbids), the model fails at run time instead of
returning something else (``utils.check``).
"""

import numpy as np
from pytensor.graph.basic import Constant
from pytensor.tensor.basic import (
    Alloc,
    AllocEmpty,
    AllocDiag,
    ARange,
    ExtractDiag,
    Eye,
    Join,
    MakeVector,
    ScalarFromTensor,
    Split,
    TensorFromScalar,
)

from pytensor_onnx.compat import join_axis_and_tensors, split_operands
from pytensor_onnx.dispatch.basic import const, onnx_funcify
from pytensor_onnx.dispatch.blockwise import batched_rule
from pytensor_onnx.dispatch.utils import (
    as_int64_value,
    check,
    dim_size,
    int64_const,
    int64_range,
    output_dtype,
    static_int,
)


def _static_int(var):
    """The value of a constant scalar input, or None if it is computed (or a
    constant of more than one dim's worth: a batched size of ``Blockwise``)."""
    if isinstance(var, Constant) and np.ndim(var.data) == 0:
        return int(np.asarray(var.data))
    return None


def _all_true(g, condition):
    """A bool scalar: every element of the bool vector ``condition`` is true."""
    return g.cast(g.op("ReduceMin", g.cast(condition, "uint8"), axes=[0], keepdims=0), "bool")


def shape_vector(g, sizes, size_vars):
    """The int64 shape vector made of the 0-d ``sizes`` (``size_vars`` are their PyTensor variables)."""
    static = [_static_int(var) for var in size_vars]
    if all(s is not None for s in static):
        return const(g, static, "int64")
    parts = [g.op("Unsqueeze", g.cast(size, "int64"), axes=[0]) for size in sizes]
    return g.op("Concat", *parts, axis=0)


def _checked_nonnegative(g, shape, size_vars):
    """``shape``, failing at run time if a size is negative (NumPy: "negative
    dimensions are not allowed")."""
    if all(s is not None and s >= 0 for s in map(_static_int, size_vars)):
        return shape
    ok = _all_true(g, g.op("GreaterOrEqual", shape, const(g, 0, "int64")))
    return check(g, ok, shape)


@onnx_funcify.register(Alloc)
def _alloc(op, node, g, value, *sizes):
    size_vars = node.inputs[1:]
    shape = _checked_nonnegative(g, shape_vector(g, sizes, size_vars), size_vars)

    # Expand broadcasts both ways (a requested 1 keeps the value's size);
    # PyTensor requires every value dim not known to be 1 to equal the
    # requested size. Check the dims PyTensor cannot verify statically.
    value_shape = node.inputs[0].type.shape
    offset = len(size_vars) - len(value_shape)
    unchecked = [
        i
        for i, dim in enumerate(value_shape)
        if dim != 1 and not (dim is not None and dim == _static_int(size_vars[offset + i]))
    ]
    if unchecked:
        value_dims = g.op("Gather", g.op("Shape", value), const(g, unchecked, "int64"), axis=0)
        requested = g.op("Gather", shape, const(g, [offset + i for i in unchecked], "int64"), axis=0)
        shape = check(g, _all_true(g, g.op("Equal", value_dims, requested)), shape)
    return g.op("Expand", value, shape)


@onnx_funcify.register(AllocEmpty)
def _alloc_empty(op, node, g, *sizes):
    # Uninitialised memory in NumPy; zeros here.
    shape = _checked_nonnegative(g, shape_vector(g, sizes, node.inputs), node.inputs)
    return g.op("Expand", const(g, 0, op.dtype), shape)


@onnx_funcify.register(Eye)
def _eye(op, node, g, n, m, k):
    # np.eye: ones where column - row == k.
    sizes = _checked_nonnegative(g, shape_vector(g, [n, m], node.inputs[:2]), node.inputs[:2])
    zero, one = const(g, 0, "int64"), const(g, 1, "int64")
    rows = g.op("Range", zero, g.op("Gather", sizes, zero, axis=0), one)
    cols = g.op("Range", zero, g.op("Gather", sizes, one, axis=0), one)
    offset = g.op("Sub", g.op("Unsqueeze", cols, axes=[0]), g.op("Unsqueeze", rows, axes=[1]))
    return g.cast(g.op("Equal", offset, g.cast(k, "int64")), op.dtype)


def _batch_shape_and_sizes(g, node, values, sizes):
    """For ``Blockwise`` of an allocating Op: the broadcast batch shape of all
    inputs, and the int64 vector of core sizes, which must be the same in
    every batch entry (PyTensor stacks the entries: the model fails at run
    time where they differ, as PyTensor does). An empty batch fails at run
    time too: PyTensor refuses it ("vectorize with zero size not
    implemented"), since the core sizes are then nowhere to be read."""
    zero = const(g, 0, "int64")
    parts = [g.op("Mul", g.cast(v, "int64"), zero) for v in (*values, *sizes)]
    broadcast = parts[0]
    for part in parts[1:]:
        broadcast = g.op("Add", broadcast, part)
    checked = []
    for size in sizes:
        flat = g.op("Reshape", g.cast(size, "int64"), g.const(np.asarray([-1], dtype=np.int64)))
        nonempty = g.op("Greater", g.op("Size", flat), zero)
        flat = check(g, nonempty, flat)
        largest = g.op("ReduceMax", flat, axes=[0], keepdims=1)
        checked.append(check(g, _all_true(g, g.op("Equal", flat, largest)), largest))
    core = _checked_nonnegative(g, g.op("Concat", *checked, axis=0), node.inputs[len(values) : len(values) + len(sizes)])
    return g.op("Shape", broadcast), core


@batched_rule(Eye)
def _batched_eye(op, node, g, n, m, k):
    """``Blockwise(Eye)`` (in PyTensor 2.38's batched Eigh/SVD gradients): one
    eye per batch entry; the offsets may differ per entry."""
    batch, sizes = _batch_shape_and_sizes(g, node, [k], [n, m])
    zero, one = const(g, 0, "int64"), const(g, 1, "int64")
    rows = g.op("Range", zero, g.op("Gather", sizes, zero, axis=0), one)
    cols = g.op("Range", zero, g.op("Gather", sizes, one, axis=0), one)
    offset = g.op("Sub", g.op("Unsqueeze", cols, axes=[0]), g.op("Unsqueeze", rows, axes=[1]))
    diagonal = g.op("Equal", offset, g.op("Unsqueeze", g.cast(k, "int64"), axes=[-2, -1]))
    return g.cast(g.op("Expand", diagonal, g.op("Concat", batch, sizes, axis=0)), output_dtype(node))


@batched_rule(Alloc)
def _batched_alloc(op, node, g, value, *sizes):
    """``Blockwise(Alloc)`` of a scalar value per batch entry (PyTensor 2.38's
    batched SVD gradients)."""
    if node.op.inputs_sig[0]:
        return None  # a non-scalar core value: refused (NotImplementedError)
    batch, core = _batch_shape_and_sizes(g, node, [value], list(sizes))
    spread = g.op("Unsqueeze", value, axes=list(range(-len(sizes), 0)))
    return g.op("Expand", spread, g.op("Concat", batch, core, axis=0))


def _is_float(dtype):
    return dtype.startswith("float")


@onnx_funcify.register(ARange)
def _arange(op, node, g, start, stop, step):
    """np.arange(start, stop, step, dtype) value for value.

    NumPy computes the length in double from the Python scalars,
    ceil((stop - start) / step), stores ``start`` and ``start + step`` (both
    computed on Python scalars, then converted to the dtype) and fills
    element i >= 2 with ``first + i * (second - first)`` in the dtype. ONNX
    Range accumulates by repeated addition instead, so it drifts for floats;
    it is used here only for the integer indices i.
    """
    dtype = op.dtype
    inputs = (start, stop, step)
    # Python arithmetic on the .item() scalars: exact ints, or doubles.
    python_dtype = "float64" if any(_is_float(v.dtype) for v in inputs) else "int64"
    start, stop, step = (g.cast(v, python_dtype) for v in inputs)

    span = g.cast(g.op("Sub", stop, start), "float64")
    quotient = g.op("Div", span, g.cast(step, "float64"))
    # NumPy raises for a zero step (ZeroDivisionError) and for a NaN or
    # infinite length; all of them make the quotient non-finite.
    finite = g.op("Not", g.op("Or", g.op("IsNaN", quotient), g.op("IsInf", quotient)))
    length = g.cast(g.op("Ceil", quotient), "int64")
    zero = const(g, 0, "int64")
    length = g.op("Where", g.op("Less", length, zero), zero, length)
    length = check(g, finite, length)

    first = g.cast(start, dtype)
    second = g.cast(g.op("Add", start, step), dtype)
    delta = g.op("Sub", second, first)
    indices = g.cast(g.op("Range", const(g, 2, "int64"), length, const(g, 1, "int64")), dtype)
    rest = g.op("Add", first, g.op("Mul", indices, delta))
    head = g.op("Concat", g.op("Unsqueeze", first, axes=[0]), g.op("Unsqueeze", second, axes=[0]), axis=0)
    values = g.op("Concat", head, rest, axis=0)
    # The head always holds two values; keep `length` of them.
    return g.op("Slice", values, const(g, [0], "int64"), g.op("Unsqueeze", length, axes=[0]))


@onnx_funcify.register(TensorFromScalar)
@onnx_funcify.register(ScalarFromTensor)
def _scalar_tensor_conversion(op, node, g, x):
    # PyTensor scalars are 0-d tensors in ONNX.
    return x


# --------------------------------------------------------------------------
# pytensor.tensor.basic: MakeVector, Join, Split
# --------------------------------------------------------------------------


@onnx_funcify.register(MakeVector)
def _make_vector(op, node, g, *scalars):
    dtype = output_dtype(node)
    if not scalars:
        return g.const(np.zeros(0, dtype=dtype))
    if all(s.constant_value is not None for s in scalars):
        return g.const(np.array([s.constant_value.reshape(()) for s in scalars], dtype=dtype))
    pieces = [g.op("Unsqueeze", g.cast(s, dtype), axes=[0]) for s in scalars]
    return pieces[0] if len(pieces) == 1 else g.op("Concat", *pieces, axis=0)


def _static_axis(op, node, axis, ndim: int) -> int | None:
    """The axis as a non-negative int, or None when it is known only at run time."""
    value = static_int(axis)
    if value is None:
        return None
    if not -ndim <= value < ndim:
        raise ValueError(f"{op}: axis {value} is out of range for {ndim}-d tensors (node: {node})")
    return value % ndim


def switch_on_axis(g, axis, ndim: int, branch, n_outputs: int = 1):
    """``branch(builder, a)`` for the axis ``a`` that the int scalar Value ``axis`` holds at run time.

    ONNX ops take their axis when the model is built, so each possible axis
    gets its own If branch (in ``[-ndim, ndim)``; others stop the run with an
    index error, where NumPy raises AxisError). ``branch`` returns a list of
    ``n_outputs`` Values built with the given builder.
    """
    axis = g.cast(axis, "int64")
    in_range = g.op(
        "And",
        g.op("GreaterOrEqual", axis, int64_const(g, -ndim)),
        g.op("Less", axis, int64_const(g, ndim)),
    )
    axis = check(g, in_range, g.op("Mod", axis, int64_const(g, ndim)))

    def chain(builder, first: int):
        if first == ndim - 1:
            return branch(builder, first)
        then_graph = builder.subgraph(f"axis_{first}")
        for i, value in enumerate(branch(then_graph, first)):
            then_graph.output(value, f"axis_{first}_out{i}")
        else_graph = builder.subgraph(f"axis_after_{first}")
        for i, value in enumerate(chain(else_graph, first + 1)):
            else_graph.output(value, f"axis_after_{first}_out{i}")
        is_first = builder.op("Equal", axis, int64_const(builder, first))
        outs = builder.op("If", is_first, then_branch=then_graph, else_branch=else_graph, outputs=n_outputs)
        return [outs] if n_outputs == 1 else list(outs)

    return chain(g, 0)


@onnx_funcify.register(Join)
def _join(op, node, g, *inputs):
    axis, tensors = join_axis_and_tensors(op, inputs)
    ndim = node.outputs[0].type.ndim
    static_axis = _static_axis(op, node, axis, ndim)
    dtype = output_dtype(node)
    tensors = [g.cast(t, dtype) for t in tensors]
    if len(tensors) == 1:
        return tensors[0]
    if static_axis is None:
        return switch_on_axis(g, axis, ndim, lambda b, a: [b.op("Concat", *tensors, axis=a)])[0]
    return g.op("Concat", *tensors, axis=static_axis)


@onnx_funcify.register(Split)
def _split(op, node, g, *inputs):
    x, axis, splits = split_operands(op, inputs)
    ndim = node.inputs[0].type.ndim
    static_axis = _static_axis(op, node, axis, ndim)
    splits = g.cast(splits, "int64")
    n = op.len_splits

    def split(b, a):
        outputs = b.op("Split", x, splits, axis=a, outputs=n)
        return [outputs] if n == 1 else list(outputs)

    if static_axis is None:
        return switch_on_axis(g, axis, ndim, split, n_outputs=n)
    return split(g, static_axis)


# --------------------------------------------------------------------------
# Diagonals: ExtractDiag, AllocDiag
# --------------------------------------------------------------------------


def _diagonal_length(g, rows, cols, offset: int):
    """max(0, min(rows - max(0, -offset), cols - max(0, offset)))."""
    row_start, col_start = max(0, -offset), max(0, offset)
    if isinstance(rows, int) and isinstance(cols, int):
        return max(0, min(rows - row_start, cols - col_start))
    left = g.op("Sub", as_int64_value(g, rows), int64_const(g, row_start))
    right = g.op("Sub", as_int64_value(g, cols), int64_const(g, col_start))
    return g.op("Max", g.op("Min", left, right), int64_const(g, 0))

# A diagonal of an array of static shape (the GP's 20 x 20 covariance and
# its gradient) moves elements whose positions are known when converting:
# one Gather of constant positions reads it, one ScatterND into constant
# zeros writes it, where the general forms compute indices in 9 and 18 nodes
# at every run. Up to this many elements:
_STATIC_DIAGONAL_LIMIT = 1 << 20


def _static_shape(var):
    shape = var.type.shape
    if None in shape or int(np.prod(shape, dtype=np.float64)) > _STATIC_DIAGONAL_LIMIT:
        return None
    return tuple(shape)


def _static_extract_diagonal(g, node, x, axis1, axis2, offset):
    shape = _static_shape(node.inputs[0])
    if shape is None:
        return None
    positions = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    taken = np.diagonal(positions, offset, axis1, axis2)  # numpy.diagonal's own order
    return g.op("Gather", g.op("Reshape", x, int64_const(g, [-1])), g.const(np.ascontiguousarray(taken)), axis=0)


def _static_alloc_diagonal(g, node, x, axis1, axis2, offset):
    shape = _static_shape(node.inputs[0])
    out_shape = _static_shape(node.outputs[0])
    if shape is None or out_shape is None:
        return None
    rank = len(shape)
    # Element x[..., i] of the batch ... goes to [..., i + max(0, -offset),
    # i + max(0, offset)] of matrices whose axes are last (alloc_diagonal).
    where = np.indices(shape).reshape(rank, -1)
    core = [where[-1] + max(0, -offset), where[-1] + max(0, offset)]
    coordinates = np.stack([*where[:-1], *core], axis=-1)
    perm = _alloc_diagonal_perm(rank, axis1, axis2)
    coordinates = np.ascontiguousarray(coordinates[:, perm]).astype(np.int64)
    zeros = g.const(np.zeros(out_shape, dtype=node.outputs[0].type.dtype))
    if coordinates.shape[0] == 0:
        return zeros
    return g.op("ScatterND", zeros, g.const(coordinates), g.op("Reshape", x, int64_const(g, [-1])))


@onnx_funcify.register(ExtractDiag)
def _extract_diag(op, node, g, x):
    static = _static_extract_diagonal(g, node, x, op.axis1, op.axis2, op.offset)
    return static if static is not None else extract_diagonal(g, x, op.axis1, op.axis2, op.offset)

def extract_diagonal(g, x, axis1: int, axis2: int, offset: int):
    """numpy.diagonal(x, offset, axis1, axis2)."""
    rank = x.rank
    axis1, axis2 = axis1 % rank, axis2 % rank
    rest = [a for a in range(rank) if a not in (axis1, axis2)]
    if [*rest, axis1, axis2] != list(range(rank)):
        x = g.op("Transpose", x, perm=[*rest, axis1, axis2])
    length = _diagonal_length(g, dim_size(g, x, -2), dim_size(g, x, -1), offset)
    rows = int64_range(g, max(0, -offset), length)
    cols = int64_range(g, max(0, offset), length)
    picked_rows = g.op("Gather", x, rows, axis=rank - 2)  # (..., L, cols)
    index_shape = g.op(
        "Concat", g.op("Slice", g.op("Shape", picked_rows), int64_const(g, [0]), int64_const(g, [rank - 1])),
        int64_const(g, [1]), axis=0,
    )
    index = g.op("Expand", g.op("Unsqueeze", cols, axes=[1]), index_shape)
    return g.op("Squeeze", g.op("GatherElements", picked_rows, index, axis=rank - 1), axes=[rank - 1])

@onnx_funcify.register(AllocDiag)
def _alloc_diag(op, node, g, x):
    static = _static_alloc_diagonal(g, node, x, op.axis1, op.axis2, op.offset)
    return static if static is not None else alloc_diagonal(g, x, op.axis1, op.axis2, op.offset)


def _alloc_diagonal_perm(rank: int, axis1: int, axis2: int) -> list[int]:
    """The Transpose that puts the matrix axes (last two of a rank + 1
    result) at ``axis1`` and ``axis2``, the batch axes in order elsewhere."""
    batch = iter(range(rank - 1))
    perm = []
    for position in range(rank + 1):
        if position == axis1:
            perm.append(rank - 1)
        elif position == axis2:
            perm.append(rank)
        else:
            perm.append(next(batch))
    return perm

def alloc_diagonal(g, x, axis1: int, axis2: int, offset: int):
    """Matrices with x on diagonal ``offset``, their axes at ``axis1 < axis2`` of the result."""
    shift = abs(offset)
    rank = x.rank
    length = dim_size(g, x, -1)
    size = length + shift if isinstance(length, int) else g.op("Add", length, int64_const(g, shift))
    index = int64_range(g, 0, size)
    rows, cols = g.op("Unsqueeze", index, axes=[1]), g.op("Unsqueeze", index, axes=[0])
    on_diagonal = g.op("Equal", g.op("Sub", cols, rows), int64_const(g, offset))  # (M, M)
    # Row r of the result holds x[r - max(0, -offset)] on the diagonal; the
    # padded copy of x makes every gathered index valid (x may be empty).
    padded = g.op("Pad", x, int64_const(g, [0] * rank + [0] * (rank - 1) + [shift + 1]), g.const(np.array(0, dtype=x.dtype)))
    source = g.op("Min", g.op("Max", g.op("Sub", index, int64_const(g, max(0, -offset))), int64_const(g, 0)), as_int64_value(g, size))
    by_row = g.op("Unsqueeze", g.op("Gather", padded, source, axis=rank - 1), axes=[rank])  # (..., M, 1)
    result = g.op("Where", on_diagonal, by_row, g.const(np.array(0, dtype=x.dtype)))
    out_rank = rank + 1
    if (axis1, axis2) != (out_rank - 2, out_rank - 1):
        result = g.op("Transpose", result, perm=_alloc_diagonal_perm(rank, axis1, axis2))
    return result

@batched_rule(ExtractDiag, AllocDiag)
def _batched_diag(op, node, g, x):
    """The core Op's rule with its axes moved past the batch dims."""
    core = op.core_op
    batch = op.batch_ndim(node)
    if isinstance(core, ExtractDiag):
        core_rank = x.rank - batch
        axes = (core.axis1 % core_rank + batch, core.axis2 % core_rank + batch)
        static = _static_extract_diagonal(g, node, x, *axes, core.offset)
        return static if static is not None else extract_diagonal(g, x, *axes, core.offset)
    axes = (core.axis1 + batch, core.axis2 + batch)
    static = _static_alloc_diagonal(g, node, x, *axes, core.offset)
    return static if static is not None else alloc_diagonal(g, x, *axes, core.offset)
