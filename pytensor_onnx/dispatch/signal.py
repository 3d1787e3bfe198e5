"""Convolve1d (``pytensor.tensor.signal.convolve1d``): ``np.convolve`` in
mode "full" or "valid" ("same" is "valid" of an input PyTensor pads itself),
and Convolve2d.

ONNX Runtime's Conv has no float64 or integer kernels, so the rule builds the
convolution as a product: the first input, padded with len(in2) - 1 zeros on
both sides, is cut into overlapping windows of len(in2) (one Gather) and
multiplied with the reversed second input (MatMul, which wraps integers as
NumPy does). "valid" is the middle of "full": convolution is commutative, so
it drops min(n, k) - 1 values at each end whichever input is longer. The
windows take (n + k - 1) * k elements of memory.

Convolve2d (``convolve2d``, ``scipy.signal.convolve`` in 2-D; "same" and
the other boundaries are PyTensor's padding around a "valid" one) does the
same per axis: the padded first input is cut into k1 x k2 windows (two
Gathers), multiplied by the second input reversed on both axes and summed
over each window (memory: (n1 + k1 - 1) (n2 + k2 - 1) k1 k2 elements).
"valid" needs one input at least as large as the other on both axes (SciPy
raises otherwise; the model fails at run time). SciPy has no bool
convolution (PyTensor's perform fails): bool inputs raise
NotImplementedError.

Batched inputs arrive as a Blockwise of these Ops. The rule takes leading batch
dims (MatMul broadcasts them as Blockwise does), so Convolve1d is marked
batch capable. Blockwise gives the mode as a tensor with batch dims; a
constant one must say one mode everywhere (else NotImplementedError), a
symbolic one (gradients compute it from the input lengths) is checked at run
time to hold one value.
"""

import numpy as np
from pytensor.graph.basic import Constant
from pytensor.tensor.signal.conv import Convolve1d, Convolve2d

from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.blockwise import batch_capable
from pytensor_onnx.dispatch.utils import INT64_MIN, check, dim_size, int64_const, output_dtype


def _compute_dtype(dtype):
    # Products accumulate in the signed type of the same width (low bits are
    # the same); bools as int32, whose non-zero sums are True.
    if dtype == "bool":
        return "int32"
    return dtype[1:] if dtype.startswith("uint") else dtype


def _static_mode(node, full_mode):
    """True for "full", False for "valid", None for a symbolic mode."""
    value = full_mode.constant_value
    if value is None and isinstance(node.inputs[2], Constant):
        value = node.inputs[2].data
    if value is None:
        return None
    modes = np.unique(np.asarray(value, dtype=bool))
    if modes.size > 1:
        raise NotImplementedError(
            f"{node.op} with both modes in one batch (node: {node}) has no ONNX conversion: "
            "the outputs would have different lengths"
        )
    # An empty batch of modes gives an empty output either way.
    return bool(modes[0]) if modes.size else True


def _one_mode(g, full_mode):
    """The bool scalar mode of a symbolic batched mode (gradients compute it
    from shapes, one value broadcast over the batch). Mixed modes would give
    outputs of different lengths, where PyTensor fails: the model fails at
    run time. An empty batch reads as "valid" (its output is empty)."""
    flat = g.op("Reshape", g.cast(full_mode, "int32"), int64_const(g, [-1]))
    zero, one = g.const(np.zeros(1, np.int32)), g.const(np.ones(1, np.int32))
    any_full = g.op("Greater", g.op("ReduceMax", g.op("Concat", zero, flat, axis=0), keepdims=0), g.const(np.int32(0)))
    any_valid = g.op("Equal", g.op("ReduceMin", g.op("Concat", one, flat, axis=0), keepdims=0), g.const(np.int32(0)))
    return check(g, g.op("Not", g.op("And", any_full, any_valid)), any_full)


@batch_capable(Convolve1d)
@onnx_funcify.register(Convolve1d)
def _convolve1d(op, node, g, in1, in2, full_mode):
    dtype = output_dtype(node)
    compute = _compute_dtype(dtype)
    a, v = g.cast(in1, compute), g.cast(in2, compute)
    rank = a.rank  # Blockwise gives both inputs the same number of batch dims
    n, k = dim_size(g, a, rank - 1), dim_size(g, v, v.rank - 1)
    n_vec = int64_const(g, [n]) if isinstance(n, int) else g.op("Unsqueeze", n, axes=[0])
    k_vec = int64_const(g, [k]) if isinstance(k, int) else g.op("Unsqueeze", k, axes=[0])
    # NumPy raises for an empty input ("v cannot be empty").
    one = int64_const(g, [1])
    nonempty = g.op("And", g.op("GreaterOrEqual", n_vec, one), g.op("GreaterOrEqual", k_vec, one))
    k_vec = check(g, nonempty, k_vec)

    margin = g.op("Sub", k_vec, one)
    batch_zeros = int64_const(g, [0] * (rank - 1))
    pads = g.op("Concat", batch_zeros, margin, batch_zeros, margin, axis=0)
    padded = g.op("Pad", a, pads, g.const(np.zeros((), dtype=compute)))
    full_length = g.op("Sub", g.op("Add", n_vec, k_vec), one)
    starts = g.op("Range", int64_const(g, 0), g.op("Squeeze", full_length, axes=[0]), int64_const(g, 1))
    offsets = g.op("Range", int64_const(g, 0), g.op("Squeeze", k_vec, axes=[0]), int64_const(g, 1))
    # windows[..., i, j] = padded[..., i + j]; times v reversed as a column.
    windows = g.op("Gather", padded, g.op("Add", g.op("Unsqueeze", starts, axes=[1]), offsets), axis=rank - 1)
    reversed_v = g.op("Slice", v, int64_const(g, [-1]), int64_const(g, [INT64_MIN]),
                      int64_const(g, [-1]), int64_const(g, [-1]))
    column = g.op("Unsqueeze", reversed_v, axes=[-1])
    if rank > 1:
        # ONNX Runtime 1.21's MatMul cannot broadcast a batch dim of 1
        # against one of 0: both operands get the common batch shape first.
        windows, column = _common_batch(g, windows, column, rank - 1)
    full = g.op("MatMul", windows, column)
    full = g.op("Squeeze", full, axes=[-1])

    mode = _static_mode(node, full_mode)
    if mode is None and full_mode.rank:
        full_mode = _one_mode(g, full_mode)
    if mode is None or not mode:
        trim = g.op("Sub", g.op("Min", n_vec, k_vec), one)
        valid = g.op("Slice", full, trim, g.op("Sub", full_length, trim), int64_const(g, [-1]))
        if mode is None:
            full = g.op("If", full_mode, then_branch=_branch(g, full, "full"), else_branch=_branch(g, valid, "valid"))
        else:
            full = valid
    return g.cast(full, dtype)


def _common_batch(g, x, y, batch_rank):
    """``x`` and ``y`` expanded to their broadcast leading ``batch_rank`` dims
    (NumPy's rule: a 1 takes the other size, 0 included)."""

    def split(v):
        shape = g.op("Shape", v)
        return (g.op("Slice", shape, int64_const(g, [0]), int64_const(g, [batch_rank]), int64_const(g, [0])),
                g.op("Slice", shape, int64_const(g, [batch_rank]), int64_const(g, [v.rank]), int64_const(g, [0])))

    (x_batch, x_core), (y_batch, y_core) = split(x), split(y)
    batch = g.op("Where", g.op("Equal", x_batch, int64_const(g, 1)), y_batch, x_batch)
    return (g.op("Expand", x, g.op("Concat", batch, x_core, axis=0)),
            g.op("Expand", y, g.op("Concat", batch, y_core, axis=0)))


def _length_vector(g, x, axis):
    size = dim_size(g, x, axis)
    return int64_const(g, [size]) if isinstance(size, int) else g.op("Unsqueeze", size, axes=[0])


def _windows_along(g, x, axis, length, width):
    """``x`` with axis ``axis`` replaced by (length, width) windows:
    ``out[..., i, j, ...] = x[..., i + j, ...]`` (int64 [1] sizes)."""
    starts = g.op("Range", int64_const(g, 0), g.op("Squeeze", length, axes=[0]), int64_const(g, 1))
    offsets = g.op("Range", int64_const(g, 0), g.op("Squeeze", width, axes=[0]), int64_const(g, 1))
    return g.op("Gather", x, g.op("Add", g.op("Unsqueeze", starts, axes=[1]), offsets), axis=axis)


@batch_capable(Convolve2d)
@onnx_funcify.register(Convolve2d)
def _convolve2d(op, node, g, in1, in2, full_mode):
    dtype = output_dtype(node)
    if dtype == "bool":
        raise NotImplementedError(
            f"Convolve2d of bool inputs (node: {node}) has no ONNX conversion: scipy.signal.convolve, "
            "PyTensor's implementation, has no bool convolution"
        )
    compute = _compute_dtype(dtype)
    a, v = g.cast(in1, compute), g.cast(in2, compute)
    rank = a.rank  # Blockwise gives both inputs the same number of batch dims
    rows, cols = rank - 2, rank - 1
    n = [_length_vector(g, a, rows), _length_vector(g, a, cols)]
    k = [_length_vector(g, v, rows), _length_vector(g, v, cols)]
    one = int64_const(g, [1])
    # SciPy fails on empty inputs.
    nonempty = g.op("Concat", *n, *k, axis=0)
    k[0] = check(g, g.op("GreaterOrEqual", nonempty, one), k[0])

    margins = [g.op("Sub", size, one) for size in k]
    batch_zeros = int64_const(g, [0] * (rank - 2))
    pads = g.op("Concat", batch_zeros, *margins, batch_zeros, *margins, axis=0)
    padded = g.op("Pad", a, pads, g.const(np.zeros((), dtype=compute)))
    full_lengths = [g.op("Sub", g.op("Add", n_i, k_i), one) for n_i, k_i in zip(n, k)]
    # (..., L1, k1, P2) then (..., L1, k1, L2, k2)
    windows = _windows_along(g, padded, rows, full_lengths[0], k[0])
    windows = _windows_along(g, windows, rank, full_lengths[1], k[1])
    minus_one = int64_const(g, [-1, -1])
    reversed_v = g.op("Slice", v, minus_one, int64_const(g, [INT64_MIN] * 2),
                      int64_const(g, [rows, cols]), minus_one)
    kernel = g.op("Unsqueeze", reversed_v, axes=[rows, rank])  # (..., 1, k1, 1, k2)
    full = g.op("ReduceSum", g.op("Mul", windows, kernel), int64_const(g, [rank - 1, rank + 1]), keepdims=0)

    mode = _static_mode(node, full_mode)
    if mode is None and full_mode.rank:
        full_mode = _one_mode(g, full_mode)
    if mode is None or not mode:
        # One input at least as large as the other on both axes (SciPy's rule).
        first_larger = g.op("And", g.op("GreaterOrEqual", n[0], k[0]), g.op("GreaterOrEqual", n[1], k[1]))
        second_larger = g.op("And", g.op("LessOrEqual", n[0], k[0]), g.op("LessOrEqual", n[1], k[1]))
        trims = g.op("Sub", g.op("Min", g.op("Concat", *n, axis=0), g.op("Concat", *k, axis=0)), int64_const(g, [1, 1]))
        dominated = g.op("Or", first_larger, second_larger)
        if mode is None:  # checked only when the run takes "valid"
            dominated = g.op("Or", dominated, g.op("Unsqueeze", g.cast(full_mode, "bool"), axes=[0]))
        trims = check(g, dominated, trims)
        ends = g.op("Sub", g.op("Concat", *full_lengths, axis=0), trims)
        valid = g.op("Slice", full, trims, ends, int64_const(g, [rows, cols]))
        if mode is None:
            full = g.op("If", full_mode, then_branch=_branch(g, full, "full"), else_branch=_branch(g, valid, "valid"))
        else:
            full = valid
    return g.cast(full, dtype)


def _branch(g, value, name):
    body = g.subgraph(name)
    body.output(body.op("Identity", value), name)
    return body
