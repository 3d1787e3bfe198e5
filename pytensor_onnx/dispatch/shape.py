"""Rules for pytensor.tensor.shape and pytensor.tensor.reshape ops.

Shape arithmetic is int64 end to end, as in PyTensor and ONNX; the shape
helpers (sizes as Python ints where known, reshapes with NumPy's zero sizes)
are in ``dispatch/utils.py``.
"""

from __future__ import annotations

import numpy as np
from pytensor.graph.basic import Constant
from pytensor.tensor.basic import MakeVector
from pytensor.tensor.reshape import JoinDims, SplitDims
from pytensor.tensor.shape import Reshape, Shape, Shape_i, SpecifyShape
from pytensor.tensor.subtensor import Subtensor

from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.utils import (
    as_int64_value,
    check,
    dim_size,
    dim_sizes,
    int64_const,
    int64_vector,
    reshape,
    static_int,
)


def _is_copy_of_input_dim(piece_var, x_var, position) -> bool:
    """Whether PyTensor variable ``piece_var`` is ``Shape_i{position}(x_var)``."""
    owner = piece_var.owner
    return owner is not None and isinstance(owner.op, Shape_i) and owner.op.i == position and owner.inputs[0] is x_var


# --------------------------------------------------------------------------
# pytensor.tensor.shape
# --------------------------------------------------------------------------


@onnx_funcify.register(Shape)
def _shape(op, node, g, x):
    return g.op("Shape", x)


@onnx_funcify.register(Shape_i)
def _shape_i(op, node, g, x):
    return as_int64_value(g, dim_size(g, x, op.i, node.inputs[0].type.shape[op.i]))


@onnx_funcify.register(SpecifyShape)
def _specify_shape(op, node, g, x, *shape):
    # ONNX values are immutable, so this is the identity; it keeps PyTensor's
    # run-time check (sizes differing from the specified ones raise) and
    # writes the specified sizes into the ONNX value's static shape.
    checked_axes, expected = [], []
    known = x.shape or (None,) * len(shape)
    static_target = [static_int(size) if size is not None else None for size in shape]
    typed = node.outputs[0].type.shape
    # PyTensor's rewrites can specify sizes that contradict x's known sizes
    # or the output's own type (a reshape's -1 computed as 0 // 0 in its
    # static shape, FUZZ_SEED=3876483234; 3.3 types the output (0, 0)
    # against a specified 1, 2.38 (None, 1) against an x known (0, 0)). No
    # run can pass the check then, as PyTensor's fails (the reshape
    # raises): the output, never read, is given the sizes of its type,
    # which the nodes after it were typed with.
    against_type = [axis for axis, (t, s) in enumerate(zip(typed, static_target)) if None not in (t, s) and t != s]
    against_input = [axis for axis, (k, s) in enumerate(zip(known, static_target)) if isinstance(k, int) and s is not None and k != s]
    for axis, size in enumerate(shape):
        if size is None or (not against_type and isinstance(known[axis], int) and static_target[axis] == known[axis]):
            continue
        checked_axes.append(axis)
        expected.append(size)
    if checked_axes:
        actual = g.op("Gather", g.op("Shape", x), int64_const(g, checked_axes), axis=0)
        ok = g.op("Equal", actual, int64_vector(g, expected))
        if against_type or against_input:
            # The run must also give x the other size of each contradiction:
            # never all true, by construction.
            others = [(axis, typed[axis]) for axis in against_type] + [(axis, known[axis]) for axis in against_input]
            also = g.op("Gather", g.op("Shape", x), int64_const(g, [axis for axis, _ in others]), axis=0)
            ok = g.op("Concat", ok, g.op("Equal", also, int64_const(g, [size for _, size in others])), axis=0)
            sizes = [
                t if t is not None else s if s is not None else dim_size(g, x, axis)
                for axis, (t, s) in enumerate(zip(typed, static_target))
            ]
            # (A scalar read from x's data, not a constant: ONNX Runtime
            # folds a check of constants when the session is made, and fails.)
            scalar = g.cast(g.op("ReduceSum", g.cast(x, "float64"), keepdims=0), x.dtype)
            x = g.op("Expand", check(g, ok, scalar), int64_vector(g, sizes))
            static_target = list(typed)
        else:
            x = check(g, ok, x)
    known = x.shape or (None,) * len(shape)
    if any(s is not None and not isinstance(known[axis], int) for axis, s in enumerate(static_target)):
        # A Reshape to [size or 0 (copy) per axis] records the sizes statically.
        x = g.op("Reshape", x, int64_const(g, [0 if s is None else s for s in static_target]))
    return x


@onnx_funcify.register(Reshape)
def _reshape(op, node, g, x, target):
    owner = node.inputs[1].owner
    if owner is None or not isinstance(owner.op, MakeVector):
        return reshape(g, x, [target])
    # A target built by MakeVector: keep its pieces apart, so constants and
    # known sizes stay static and opset 13 can copy the input dims it repeats.
    pieces, copies, sizes = [], set(), set()
    for i, var in enumerate(owner.inputs):
        size = _static_size(var)
        if size is not None:
            pieces.append(size)
        else:
            pieces.append(g.op("Gather", target, int64_const(g, i), axis=0))
        if _is_copy_of_input_dim(var, node.inputs[0], i):
            copies.add(i)
        elif _is_dim_size(var):
            sizes.add(i)
    return reshape(g, x, pieces, copies, nonnegative=sizes)


def _is_dim_size(var) -> bool:
    """Whether PyTensor variable ``var`` is a dim read from a shape
    (``Shape_i``, or ``Shape(x)[i]``): never negative, so never the inferred
    size of a reshape."""
    owner = var.owner
    if owner is None:
        return False
    if isinstance(owner.op, Shape_i):
        return True
    source = owner.inputs[0].owner
    return (
        isinstance(owner.op, Subtensor)
        and len(owner.inputs) == 2
        and owner.outputs[0].ndim == 0
        and source is not None
        and isinstance(source.op, Shape)
    )


def _static_size(var) -> int | None:
    """The size a MakeVector piece is known to hold at conversion time, if any."""
    if isinstance(var, Constant):
        return int(np.asarray(var.data))
    owner = var.owner
    if owner is not None and isinstance(owner.op, Shape_i):
        static = owner.inputs[0].type.shape[owner.op.i]
        if static is not None:
            return int(static)
    return None


# --------------------------------------------------------------------------
# pytensor.tensor.reshape
# --------------------------------------------------------------------------


@onnx_funcify.register(JoinDims)
def _join_dims(op, node, g, x):
    sizes = dim_sizes(g, x, node.inputs[0].type.shape)
    start, stop = op.start_axis, op.start_axis + op.n_axes
    joined = sizes[start:stop]
    if all(isinstance(s, int) for s in joined):
        product = int(np.prod(joined, dtype=np.int64))
    else:
        product = g.op("ReduceProd", int64_vector(g, joined), keepdims=0)
    pieces = [*sizes[:start], product, *sizes[stop:]]
    return reshape(g, x, pieces, copies=set(range(start)), nonnegative=set(range(len(pieces))))


@onnx_funcify.register(SplitDims)
def _split_dims(op, node, g, x, shape):
    sizes = dim_sizes(g, x, node.inputs[0].type.shape)
    axis = op.axis
    pieces = [*sizes[:axis], shape, *sizes[axis + 1 :]]
    # (Positions are those of `pieces`: every one but `shape`'s is a dim of x.)
    nonnegative = set(range(len(pieces))) - {axis}
    return reshape(g, x, pieces, copies=set(range(axis)), nonnegative=nonnegative)
