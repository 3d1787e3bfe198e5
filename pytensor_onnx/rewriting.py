"""Graph rewrites of the ONNX rewrite set only (tag ``"onnx"``; PyTensor's
own modes never see them).

``local_onnx_mul_cancel_reciprocal``: the ONNX mode leaves out PyTensor's
algebraic canonizers (mode.EXPENSIVE_REWRITES). One thing they do matters
for accuracy, not speed: gradients multiply a value by its own reciprocal,
``d log(sigmoid(x)) = (1 / s) * s * (1 - s)``, which is NaN where s
underflows to 0 (x = -1e3) instead of 1, and keeps ``1 - s`` from becoming
``sigmoid(-x)`` (exact where 1 - s rounds to 0). This rewrite cancels such
pairs inside one multiplication (``(a / t) * t -> a``), as the canonizer
would, at the cost of a scan over that node's inputs. Like the canonizer it
turns 0 * inf = NaN at t = 0 into the limit. PyTensor's
``local_sigm_times_exp`` also runs in specialize (see below).
"""

from __future__ import annotations

import numpy as np
import pytensor.scalar.basic as ps
from pytensor.compile import optdb
from pytensor.graph.basic import Constant
from pytensor.graph.rewriting.basic import node_rewriter
from pytensor.tensor.basic import second
from pytensor.tensor.elemwise import Elemwise
from pytensor.tensor.math import mul
from pytensor.tensor.rewriting.math import local_sigm_times_exp


def _quotient(var):
    """``(a, t)`` when ``var`` is ``a / t``, ``(None, t)`` when it is
    ``reciprocal(t)``, else None."""
    owner = var.owner
    if owner is None or not isinstance(owner.op, Elemwise):
        return None
    scalar_op = owner.op.scalar_op
    if isinstance(scalar_op, ps.Reciprocal):
        return None, owner.inputs[0]
    if isinstance(scalar_op, ps.TrueDiv):
        numerator, denominator = owner.inputs
        one = isinstance(numerator, Constant) and numerator.data.size and (numerator.data == 1).all()
        return (None if one else numerator), denominator
    return None


def _same_constant(a, b):
    return (isinstance(a, Constant) and isinstance(b, Constant) and a.type.shape == b.type.shape
            and np.array_equal(a.data, b.data))


def _same_value(a, b):
    """Whether ``a`` and ``b`` are one value: the same variable, or the same
    Op on the same inputs, constants compared by value (without the
    canonizers, 1 - s and 1.0 - s keep apart)."""
    if a is b or _same_constant(a, b):
        return True
    if a.owner is None or b.owner is None or a.type != b.type or a.owner.op != b.owner.op:
        return False
    if a.owner.outputs.index(a) != b.owner.outputs.index(b) or len(a.owner.inputs) != len(b.owner.inputs):
        return False
    return all(x is y or _same_constant(x, y) for x, y in zip(a.owner.inputs, b.owner.inputs))


@node_rewriter([mul])
def local_onnx_mul_cancel_reciprocal(fgraph, node):
    """``(a / t) * t * ...`` -> ``a * ...`` (``reciprocal(t) * t * ...`` -> ``...``)."""
    factors = list(node.inputs)
    for i, factor in enumerate(factors):
        quotient = _quotient(factor)
        if quotient is None:
            continue
        numerator, denominator = quotient
        for j, other in enumerate(factors):
            if j == i or not _same_value(other, denominator):
                continue
            rest = [f for k, f in enumerate(factors) if k not in (i, j)]
            if numerator is not None:
                rest.append(numerator)
            if not rest:
                # t / t: ones of t's shape (canonicalize sinks the fill)
                one = np.ones((), dtype=node.outputs[0].type.dtype)
                product = second(denominator, one)
            else:
                product = mul(*rest) if len(rest) > 1 else rest[0]
            # Only when the remaining factors give the same type (dtype,
            # static shape): the cancelled pair must not have decided it.
            if product.type != node.outputs[0].type:
                return None
            return [product]
    return None


# Tagged "onnx" only (register_canonicalize would add "fast_run" and change
# PyTensor's own modes). In canonicalize for the a / t that gradients build,
# in specialize for the reciprocal(t) that specialize makes of 1 / t.
for _phase in ("canonicalize", "specialize"):
    if "local_onnx_mul_cancel_reciprocal" not in optdb[_phase].__db__:
        optdb[_phase].register("local_onnx_mul_cancel_reciprocal", local_onnx_mul_cancel_reciprocal, "onnx")

# PyTensor's exp(x) * sigmoid(-x) -> sigmoid(x) runs in stabilize; without
# the canonizers, specialize's local_1msigmoid can make its input later (the
# gradient of log1p(-sigmoid(x)) ends as -exp(x) * sigmoid(-x), NaN at
# x = 1e3): run it in specialize too.
if "onnx_local_sigm_times_exp" not in optdb["specialize"].__db__:
    optdb["specialize"].register("onnx_local_sigm_times_exp", local_sigm_times_exp, "onnx")
