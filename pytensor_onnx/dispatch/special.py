"""Softmax and LogSoftmax.

PyTensor defines both by their graph, ``x - max(x)`` then ``exp`` and a sum,
and evaluates that graph after its rewrites; the rules follow it step by step.
"""

from pytensor.tensor.special import LogSoftmax, Softmax

from pytensor_onnx.dispatch.basic import const, onnx_funcify
from pytensor_onnx.dispatch.math import reduce


def _axes(op, ndim):
    return list(range(ndim)) if op.axis is None else [a % ndim for a in op.axis]


def _rule(log):
    def rule(op, node, g, x):
        dtype = node.outputs[0].type.dtype
        static_shape = node.inputs[0].type.shape
        axes = _axes(op, x.rank)
        if all(static_shape[axis] == 1 for axis in axes):
            # Normalizing single elements (0-d included): PyTensor's rewrites
            # turn x - max(x) into 0, so the result is 1 (log: 0) even for
            # NaN and ±inf.
            return g.op("Expand", const(g, 0 if log else 1, dtype), g.op("Shape", x))
        if not log and len(axes) == 1 and x.dtype == dtype:
            return g.op("Softmax", x, axis=axes[0])
        # Over several axes ONNX has no single op. ONNX Runtime's LogSoftmax
        # kernel is wrong in float64 on slices with NaN or inf (it returns
        # finite values such as 45.05), so LogSoftmax always takes the formula;
        # a NaN or inf anywhere in a slice makes it NaN, as in PyTensor, whether
        # or not ReduceMax propagates NaN.
        # Integer inputs: x - max(x) is integer arithmetic (wrapping) in
        # PyTensor's graph; exp then gives the float dtype. (math.reduce works
        # around ONNX Runtime's wrong int64 ReduceMax; for floats the plain
        # ReduceMax is enough.)
        if x.dtype.startswith("float"):
            highest = g.op("ReduceMax", x, axes=axes, keepdims=1)
        else:
            highest = reduce(g, "ReduceMax", x, axes, keepdims=True)
        shifted = g.cast(g.op("Sub", x, highest), dtype)
        exp = g.op("Exp", shifted)
        total = g.op("ReduceSum", exp, axes=axes, keepdims=1)
        return g.op("Sub", shifted, g.op("Log", total)) if log else g.op("Div", exp, total)

    return rule


onnx_funcify.register(Softmax)(_rule(log=False))
onnx_funcify.register(LogSoftmax)(_rule(log=True))
