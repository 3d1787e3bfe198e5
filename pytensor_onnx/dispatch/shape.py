"""Rules for pytensor.tensor.shape and pytensor.tensor.reshape ops, plus the
shape-building ops of pytensor.tensor.basic (MakeVector, Join, Split).

Shape arithmetic is int64 end to end, as in PyTensor and ONNX. The helpers
here keep sizes that are known at conversion time as Python ints, so the
shape vectors they build are initializers whenever possible (and the C++
builder can infer static output shapes); sizes known only at run time are
int64 scalar Values.
"""

from __future__ import annotations

import numpy as np
from pytensor.graph.basic import Constant
from pytensor.tensor.basic import Join, MakeVector, Split
from pytensor.tensor.reshape import JoinDims, SplitDims
from pytensor.tensor.shape import Reshape, Shape, Shape_i, SpecifyShape

from pytensor_onnx.compat import join_axis_and_tensors, split_operands
from pytensor_onnx.dispatch.basic import onnx_funcify

INT64_MAX = int(np.iinfo(np.int64).max)
INT64_MIN = int(np.iinfo(np.int64).min)


# --------------------------------------------------------------------------
# Helpers shared with subtensor.py
# --------------------------------------------------------------------------


def int64_const(g, value):
    return g.const(np.asarray(value, dtype=np.int64))


def static_int(value) -> int | None:
    """The Python int a scalar Value (or int) holds if it is a constant, else None."""
    if value is None:
        return None
    if isinstance(value, int | np.integer):
        return int(value)
    data = value.constant_value
    if data is None or data.ndim != 0:
        return None
    return int(data)


def dim_size(g, x, axis: int, static_dim=None):
    """Size of axis ``axis`` of ``x``: a Python int if known, else an int64 scalar Value."""
    if static_dim is not None:
        return int(static_dim)
    if x.shape is not None and isinstance(x.shape[axis], int):
        return x.shape[axis]
    return g.op("Gather", g.op("Shape", x), int64_const(g, axis), axis=0)


def dim_sizes(g, x, static_shape=None) -> list:
    """Every axis size of ``x`` (ints where known); ``static_shape`` may add PyTensor's knowledge."""
    static_shape = static_shape or (None,) * x.rank
    return [dim_size(g, x, axis, static_shape[axis]) for axis in range(x.rank)]


def int64_vector(g, pieces):
    """A 1-D int64 Value from ``pieces``: ints, int scalar Values and 1-D int Values (spliced in).

    Runs of constants become one initializer, so an all-constant vector is an
    initializer itself.
    """
    parts, run = [], []

    def flush():
        if run:
            parts.append(int64_const(g, run))
            run.clear()

    for piece in pieces:
        value = static_int(piece)
        if value is not None:
            run.append(value)
            continue
        if piece.rank == 1 and piece.constant_value is not None:
            run.extend(int(v) for v in piece.constant_value)
            continue
        flush()
        piece = g.cast(piece, "int64")
        if piece.rank == 0:
            piece = g.op("Unsqueeze", piece, axes=[0])
        parts.append(piece)
    flush()
    if not parts:
        return int64_const(g, np.zeros(0, dtype=np.int64))
    if len(parts) == 1:
        return parts[0]
    return g.op("Concat", *parts, axis=0)


def as_int64_value(g, value):
    """An int or a Value as an int64 Value."""
    if isinstance(value, int | np.integer):
        return int64_const(g, int(value))
    return g.cast(value, "int64")


def guard(g, ok, value):
    """``value`` (int64) unchanged, computed only if every element of the bool ``ok`` is true.

    ONNX has no assertion op; a failing check makes a Gather read index 1 of a
    one-element tensor, so ONNX Runtime stops with an index error instead of
    producing a wrong result.
    """
    failures = g.op("ReduceSum", g.cast(g.op("Not", ok), "int64"), keepdims=0)
    index = g.op("Min", failures, int64_const(g, 1))
    zero = g.op("Gather", int64_const(g, [0]), index, axis=0)
    return g.op("Add", value, zero)


def guarded(g, ok, x):
    """``x`` itself, computed only if ``ok`` holds everywhere (see ``guard``)."""
    # Where(true, x, x) is the identity and keeps x's static shape. (A Reshape
    # to x's own guarded shape would be too, but ONNX Runtime 1.21's reshape
    # fusion crashes on it.)
    true = g.cast(guard(g, ok, int64_const(g, 1)), "bool")
    return g.op("Where", true, x, x)


def _is_copy_of_input_dim(piece_var, x_var, position) -> bool:
    """Whether PyTensor variable ``piece_var`` is ``Shape_i{position}(x_var)``."""
    owner = piece_var.owner
    return owner is not None and isinstance(owner.op, Shape_i) and owner.op.i == position and owner.inputs[0] is x_var


def reshape(g, x, pieces, copies=()):
    """``np.reshape(x, shape)`` for a target given as ``int64_vector`` pieces.

    NumPy reads 0 as a size; ONNX Reshape reads it as "copy the input dim"
    unless ``allowzero=1`` (opset 14). ``copies`` lists target positions known
    to equal the input dim at the same position: there copying is exact, so a
    target of copies and non-zero constants needs neither.
    """
    # NumPy takes any negative size for the one inferred size; ONNX only -1.
    pieces = [-1 if static_int(p) is not None and static_int(p) < 0 else p for p in pieces]
    if all(i in copies or (static_int(p) is not None and static_int(p) != 0) for i, p in enumerate(pieces)):
        return g.op("Reshape", x, int64_vector(g, [0 if i in copies else p for i, p in enumerate(pieces)]))
    target = int64_vector(g, pieces)
    if target.constant_value is None:
        target = g.op("Max", target, int64_const(g, -1))
    if g.opset >= 14:
        return g.op("Reshape", x, target, allowzero=1)
    return _reshape_with_zero_sizes(g, x, target)


def _reshape_with_zero_sizes(g, x, target):
    """Reshape with NumPy's zero sizes before ``allowzero`` existed (opset 13).

    A target with a 0 has no elements, and the input must have none either.
    Reshape a zero-padded copy of the flat input to the target with every 0
    replaced by 1, then slice each axis down to its size: without zeros the
    padding is empty and both steps are the identity.
    """
    rank = target.shape[0]
    if rank == 0:
        return g.op("Reshape", x, target)
    n = g.op("Size", x)
    is_infer = g.op("Equal", target, int64_const(g, -1))
    is_zero = g.op("Equal", target, int64_const(g, 0))
    known = g.op("ReduceProd", g.op("Where", is_infer, int64_const(g, 1), target), keepdims=0)
    inferred = g.op("Div", n, g.op("Max", known, int64_const(g, 1)))
    sizes = g.op("Where", is_infer, inferred, target)
    # NumPy refuses a -1 next to a 0 (the size would be ambiguous) and sizes
    # whose product differs from the input's.
    any_infer = g.cast(g.op("ReduceMax", g.cast(is_infer, "int64"), keepdims=0), "bool")
    any_zero = g.cast(g.op("ReduceMax", g.cast(is_zero, "int64"), keepdims=0), "bool")
    ok = g.op(
        "And",
        g.op("Equal", g.op("ReduceProd", sizes, keepdims=0), n),
        g.op("Not", g.op("And", any_infer, any_zero)),
    )
    nonzero_sizes = g.op("Max", sizes, int64_const(g, 1))
    padded_numel = g.op("ReduceProd", nonzero_sizes, keepdims=1)
    pad = guard(g, ok, g.op("Sub", padded_numel, n))
    zero = g.const(np.zeros((), dtype=x.dtype))
    flat = g.op("Concat", g.op("Reshape", x, int64_const(g, [-1])), g.op("Expand", zero, pad), axis=0)
    padded = g.op("Reshape", flat, nonzero_sizes)
    return g.op(
        "Slice", padded, int64_const(g, [0] * rank), sizes, int64_const(g, list(range(rank)))
    )


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
    for axis, size in enumerate(shape):
        if size is None or (isinstance(known[axis], int) and static_int(size) == known[axis]):
            continue
        checked_axes.append(axis)
        expected.append(size)
    if checked_axes:
        actual = g.op("Gather", g.op("Shape", x), int64_const(g, checked_axes), axis=0)
        x = guarded(g, g.op("Equal", actual, int64_vector(g, expected)), x)
    static_target = [static_int(size) if size is not None else None for size in shape]
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
    pieces, copies = [], set()
    for i, var in enumerate(owner.inputs):
        size = _static_size(var)
        if size is not None:
            pieces.append(size)
        else:
            pieces.append(g.op("Gather", target, int64_const(g, i), axis=0))
        if _is_copy_of_input_dim(var, node.inputs[0], i):
            copies.add(i)
    return reshape(g, x, pieces, copies)


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
    return reshape(g, x, pieces, copies=set(range(start)))


@onnx_funcify.register(SplitDims)
def _split_dims(op, node, g, x, shape):
    sizes = dim_sizes(g, x, node.inputs[0].type.shape)
    axis = op.axis
    pieces = [*sizes[:axis], shape, *sizes[axis + 1 :]]
    return reshape(g, x, pieces, copies=set(range(axis)))


# --------------------------------------------------------------------------
# pytensor.tensor.basic: MakeVector, Join, Split
# --------------------------------------------------------------------------


@onnx_funcify.register(MakeVector)
def _make_vector(op, node, g, *scalars):
    dtype = node.outputs[0].type.dtype
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
    axis = guard(g, in_range, g.op("Mod", axis, int64_const(g, ndim)))

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
    dtype = node.outputs[0].type.dtype
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
