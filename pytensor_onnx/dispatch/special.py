"""Softmax and LogSoftmax."""

from pytensor.tensor.special import LogSoftmax, Softmax

from pytensor_onnx.dispatch.basic import onnx_funcify


def _axes(op, ndim):
    return list(range(ndim)) if op.axis is None else [a % ndim for a in op.axis]


def _normalize(g, x, axes, log):
    # Over several axes ONNX has no single op: the stable formula with reductions.
    shifted = g.op("Sub", x, g.op("ReduceMax", x, axes=axes, keepdims=1))
    exp = g.op("Exp", shifted)
    total = g.op("ReduceSum", exp, axes=axes, keepdims=1)
    return g.op("Sub", shifted, g.op("Log", total)) if log else g.op("Div", exp, total)


def _rule(onnx_op, log):
    def rule(op, node, g, x):
        x = g.cast(x, node.outputs[0].type.dtype)
        axes = _axes(op, x.rank)
        if not axes:  # 0-d: a single element normalizes to 1 (log: 0), NaN and inf stay NaN
            return g.op("Sub", x, x) if log else g.op("Div", x, x)
        if len(axes) == 1:
            return g.op(onnx_op, x, axis=axes[0])
        return _normalize(g, x, axes, log)

    return rule


onnx_funcify.register(Softmax)(_rule("Softmax", log=False))
onnx_funcify.register(LogSoftmax)(_rule("LogSoftmax", log=True))
