"""``CheckAndRaise`` and its subclass ``Assert`` (``pytensor.raise_op``).

PyTensor's FAST_RUN rewrites insert them where they drop an op whose
run-time check must survive: a one-way ``split`` becomes ``Assert(x,
eq(x.shape[axis], size))``, broadcasting rewrites assert that dims match.
The rule returns the value, computed only when every condition holds; a
failing condition makes running the model fail (ONNX has no assertion op,
see ``shape.guard``), where PyTensor raises the Op's exception type.
"""

from __future__ import annotations

import numpy as np
from pytensor.raise_op import CheckAndRaise

from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.shape import guarded


@onnx_funcify.register(CheckAndRaise)
def _check_and_raise(op, node, g, x, *conditions):
    pending = []
    for condition in conditions:
        known = condition.constant_value
        if known is not None and bool(np.all(known)):
            continue  # holds for every input: nothing to check
        pending.append(g.cast(condition, "bool"))
    if not pending:
        return x
    ok = pending[0]
    for condition in pending[1:]:
        ok = g.op("And", ok, condition)
    return guarded(g, ok, x)
