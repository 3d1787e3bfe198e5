"""Convolve1d (``pytensor.tensor.signal.convolve1d``): ``np.convolve`` in
mode "full" or "valid".

ONNX Runtime's Conv has no float64 or integer kernels, so the rule builds the
convolution as a product: the first input, padded with len(in2) - 1 zeros on
both sides, is cut into overlapping windows of len(in2) (one Gather) and
multiplied with the reversed second input (MatMul, which wraps integers as
NumPy does). "valid" is the middle of "full": convolution is commutative, so
it drops min(n, k) - 1 values at each end whichever input is longer. The
windows take (n + k - 1) * k elements of memory. Batched inputs arrive as a
Blockwise of this Op (no Blockwise rule exists yet: NotImplementedError).
"""

import numpy as np
from pytensor.graph.basic import Constant
from pytensor.tensor.signal.conv import Convolve1d

from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.shape import dim_size, guarded, int64_const


def _compute_dtype(dtype):
    # Products accumulate in the signed type of the same width (low bits are
    # the same); bools as int32, whose non-zero sums are True.
    if dtype == "bool":
        return "int32"
    return dtype[1:] if dtype.startswith("uint") else dtype


@onnx_funcify.register(Convolve1d)
def _convolve1d(op, node, g, in1, in2, full_mode):
    dtype = node.outputs[0].type.dtype
    compute = _compute_dtype(dtype)
    a, v = g.cast(in1, compute), g.cast(in2, compute)
    n, k = dim_size(g, a, 0), dim_size(g, v, 0)
    n_vec = int64_const(g, [n]) if isinstance(n, int) else g.op("Unsqueeze", n, axes=[0])
    k_vec = int64_const(g, [k]) if isinstance(k, int) else g.op("Unsqueeze", k, axes=[0])
    # NumPy raises for an empty input ("v cannot be empty").
    one = int64_const(g, [1])
    nonempty = g.op("And", g.op("GreaterOrEqual", n_vec, one), g.op("GreaterOrEqual", k_vec, one))
    k_vec = guarded(g, nonempty, k_vec)

    margin = g.op("Sub", k_vec, one)
    padded = g.op("Pad", a, g.op("Concat", margin, margin, axis=0), g.const(np.zeros((), dtype=compute)))
    full_length = g.op("Sub", g.op("Add", n_vec, k_vec), one)
    starts = g.op("Range", int64_const(g, 0), g.op("Squeeze", full_length, axes=[0]), int64_const(g, 1))
    offsets = g.op("Range", int64_const(g, 0), g.op("Squeeze", k_vec, axes=[0]), int64_const(g, 1))
    windows = g.op("Gather", padded, g.op("Add", g.op("Unsqueeze", starts, axes=[1]), offsets), axis=0)
    reversed_v = g.op("Slice", v, int64_const(g, [-1]), int64_const(g, [np.iinfo(np.int64).min]),
                      int64_const(g, [0]), int64_const(g, [-1]))
    full = g.op("MatMul", windows, reversed_v)

    mode = full_mode.constant_value if isinstance(node.inputs[2], Constant) else None
    if mode is None or not bool(mode):
        trim = g.op("Sub", g.op("Min", n_vec, k_vec), one)
        valid = g.op("Slice", full, trim, g.op("Sub", full_length, trim), int64_const(g, [0]))
        if mode is None:
            full = g.op("If", full_mode, then_branch=_branch(g, full, "full"), else_branch=_branch(g, valid, "valid"))
        else:
            full = valid
    return g.cast(full, dtype)


def _branch(g, value, name):
    body = g.subgraph(name)
    body.output(body.op("Identity", value), name)
    return body
