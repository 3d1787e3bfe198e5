"""Rules for pytensor.tensor.basic ops: allocation, ranges, eye, scalar <-> tensor.

Shapes arrive as 0-d tensors of any integer dtype; ONNX wants int64 vectors.
Where NumPy raises on a bad size (negative dims, a zero arange step, a
run-time broadcast PyTensor forbids), the model fails at run time instead of
returning something else (``check_at_run_time``).
"""

import numpy as np
from pytensor.graph.basic import Constant
from pytensor.tensor.basic import Alloc, AllocEmpty, ARange, Eye, ScalarFromTensor, TensorFromScalar

from pytensor_onnx.dispatch.basic import const, onnx_funcify
from pytensor_onnx.dispatch.blockwise import batched_rule
from pytensor_onnx.dispatch.math import check_at_run_time


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
    return check_at_run_time(g, ok, shape)


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
        shape = check_at_run_time(g, _all_true(g, g.op("Equal", value_dims, requested)), shape)
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
        flat = check_at_run_time(g, nonempty, flat)
        largest = g.op("ReduceMax", flat, axes=[0], keepdims=1)
        checked.append(check_at_run_time(g, _all_true(g, g.op("Equal", flat, largest)), largest))
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
    return g.cast(g.op("Expand", diagonal, g.op("Concat", batch, sizes, axis=0)), node.outputs[0].type.dtype)


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
    length = check_at_run_time(g, finite, length)

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
