"""Reductions (CAReduce family), Dot and related math ops."""

import numpy as np
import pytensor.scalar.basic as ps
from pytensor.tensor.math import Dot

from pytensor_onnx.dispatch.basic import const, onnx_funcify

_REDUCTIONS = {
    ps.Add: "ReduceSum",
    ps.Mul: "ReduceProd",
    ps.Maximum: "ReduceMax",
    ps.Minimum: "ReduceMin",
    ps.AND: "ReduceMin",  # All: min over booleans
    ps.OR: "ReduceMax",  # Any: max over booleans
}


def reduction_axes(op, ndim):
    return list(range(ndim)) if op.axis is None else [a % ndim if ndim else a for a in op.axis]


def reduce(g, onnx_op, x, axes, keepdims=False):
    """ONNX reduction over `axes` (a list; [] reduces nothing), NumPy semantics
    for NaN: ReduceMax/ReduceMin in ONNX Runtime drop a NaN depending on where
    it sits, NumPy propagates it."""
    if not axes:
        return x
    result = g.op(onnx_op, x, axes=list(axes), keepdims=int(keepdims))
    if onnx_op in ("ReduceMax", "ReduceMin") and x.dtype.startswith("float"):
        has_nan = g.op("ReduceMax", g.cast(g.op("IsNaN", x), "uint8"), axes=list(axes), keepdims=int(keepdims))
        nan = const(g, np.nan, x.dtype)
        result = g.op("Where", g.cast(has_nan, "bool"), nan, result)
    return result


def reduce_with_scalar_op(op, node, g, x):
    scalar_type = type(op.scalar_op)
    onnx_op = next((name for cls, name in _REDUCTIONS.items() if issubclass(scalar_type, cls)), None)
    if onnx_op is None:
        raise NotImplementedError(
            f"No ONNX conversion for CAReduce with scalar op {op.scalar_op} (node: {node})"
        )
    dtype = node.outputs[0].type.dtype
    acc_dtype = getattr(op, "acc_dtype", None) or dtype
    x = g.cast(x, acc_dtype)
    axes = reduction_axes(op, node.inputs[0].type.ndim)
    return g.cast(reduce(g, onnx_op, x, axes), dtype)


@onnx_funcify.register(Dot)
def _dot(op, node, g, x, y):
    dtype = node.outputs[0].type.dtype
    # np.dot on vectors and matrices is matmul; 0-d operands are scalar products.
    if x.rank == 0 or y.rank == 0:
        return g.op("Mul", g.cast(x, dtype), g.cast(y, dtype))
    return g.op("MatMul", g.cast(x, dtype), g.cast(y, dtype))
