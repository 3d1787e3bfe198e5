"""Softmax, LogSoftmax and (PyTensor 2.38) SoftmaxGrad.

PyTensor defines both by their graph, ``x - max(x)`` then ``exp`` and a sum;
the rules follow it step by step, so a slice holding +inf or NaN is NaN
throughout (``inf - inf``), single elements included, as PyTensor's Python
implementation gives. On PyTensor 2.38 LogSoftmax's Python implementation is
SciPy's, which shifts by the maximum only where it is finite (a slice with
+inf gives ``[nan, -inf, ...]``); the rule follows that there
(``compat.LOG_SOFTMAX_SHIFTS_BY_FINITE_MAX``).
"""

import numpy as np
import pytensor.scalar as ps
from pytensor.tensor.special import LogSoftmax, Softmax

from pytensor_onnx.compat import LOG_SOFTMAX_SHIFTS_BY_FINITE_MAX, SoftmaxGrad, softmax_axes
from pytensor_onnx.dispatch.basic import kernels_enabled, onnx_funcify
from pytensor_onnx.dispatch.kernel import elemwise_kernel
from pytensor_onnx.dispatch.math import REDUCE_KERNEL_DTYPES, reduce
from pytensor_onnx.dispatch.utils import output_dtype


def _rule(log):
    def rule(op, node, g, x):
        dtype = output_dtype(node)
        if not dtype.startswith("float"):
            # PyTensor 2.38 types softmax of integers as integers, which its
            # own C code refuses ("not a float"); there is no right answer.
            raise NotImplementedError(
                f"{type(op).__name__} with output dtype {dtype} (node: {node}): the result is a probability, "
                "which an integer cannot hold. Cast the input to a float dtype first."
            )
        axes = softmax_axes(op, x.rank)
        in_kernels = kernels_enabled() and x.dtype in REDUCE_KERNEL_DTYPES
        if not log and len(axes) == 1 and x.dtype == dtype and not in_kernels:
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
        # Mode ONNX: the formula's nodes are stages of the kernel nodes
        # around them (the Reduce kernel's max, which propagates NaN, among
        # them), where a Softmax or ReduceMax node stops their merging
        # (PyMC's simplex transform: a softmax between two kernel nodes).
        if in_kernels:
            highest = reduce(g, "ReduceMax", x, axes, keepdims=True)
        elif x.dtype.startswith("float"):
            highest = g.op("ReduceMax", x, axes=axes, keepdims=1)
        else:
            highest = reduce(g, "ReduceMax", x, axes, keepdims=True)
        if log and LOG_SOFTMAX_SHIFTS_BY_FINITE_MAX and highest.dtype.startswith("float"):
            highest = _finite_or_zero(g, highest, in_kernels)
        shifted = g.cast(g.op("Sub", x, highest), dtype)
        exp = g.op("Exp", shifted)
        total = g.op("ReduceSum", exp, axes=axes, keepdims=1)
        return g.op("Sub", shifted, g.op("Log", total)) if log else g.op("Div", exp, total)

    return rule


def _finite_or_zero(g, x, in_kernels):
    """``x`` where it is finite, else 0: in mode ONNX a kernel node (a stage
    of those around it), else IsInf and Where."""
    if in_kernels:
        value = ps.get_scalar_type(x.dtype)()
        (result,) = elemwise_kernel(g, [value], [ps.switch(ps.isinf(value), 0, value)], [x], [x.dtype]) or [None]
        if result is not None:
            return result
    return g.op("Where", g.op("IsInf", x), g.const(np.zeros((), dtype=x.dtype)), x)


onnx_funcify.register(Softmax)(_rule(log=False))
onnx_funcify.register(LogSoftmax)(_rule(log=True))


if SoftmaxGrad is not None:

    @onnx_funcify.register(SoftmaxGrad)
    def _softmax_grad(op, node, g, dy, sm):
        # SoftmaxGrad.perform (PyTensor 2.38): dy*sm - sum(dy*sm, axis, keepdims) * sm,
        # in the output dtype (dy and sm may differ).
        dtype = output_dtype(node)
        dy, sm = g.cast(dy, dtype), g.cast(sm, dtype)
        dy_sm = g.op("Mul", dy, sm)
        total = g.op("ReduceSum", dy_sm, axes=softmax_axes(op, sm.rank), keepdims=1)
        return g.op("Sub", dy_sm, g.op("Mul", total, sm))
