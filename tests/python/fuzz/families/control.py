"""Control flow (dispatch/ifelse.py, scan.py): an ``ifelse`` whose condition
is a graph input (so rewrites cannot fold it) and a ``scan`` accumulating
along the first axis."""

from __future__ import annotations

import pytensor
import pytensor.tensor as pt
from hypothesis import strategies as st
from pytensor_onnx.compat import ifelse

from fuzz.registry import OpGenerator, register

#: The other branch of the ifelse: an exact function of the operand keeping its dtype and shape.
OTHER_BRANCH = {
    "neg": lambda x: (-x).astype(x.dtype),
    "double": lambda x: (x + x).astype(x.dtype),
    "zeros": lambda x: pt.zeros_like(x),
    "invert": lambda x: ~x,
}


@register
class IfElse(OpGenerator):
    name = "control.ifelse"
    weight = 2.0

    def draw(self, ctx, x):
        options = ["invert", "zeros"] if x.kind == "b" else ["neg", "double", "zeros"]
        if x.kind == "u":
            options.remove("neg")
        params = {"other": ctx.draw(st.sampled_from(options)), "swap": ctx.draw(st.booleans())}
        ctx.new_input("int8", (), (), domain="range:0:1")
        return params

    def build(self, params, x, condition):
        branches = (x, OTHER_BRANCH[params["other"]](x))
        if params["swap"]:
            branches = branches[::-1]
        return ifelse(pt.gt(condition, 0), *branches)


@register
class ScanAccumulate(OpGenerator):
    """Running sum (or max) along axis 0 by a Scan with a sit-sot carry."""

    name = "control.scan"
    weight = 2.0

    def accepts(self, meta):
        return meta.ndim >= 1 and meta.shape[0] >= 1 and meta.kind in "iuf"

    def draw(self, ctx, x):
        return {"step": ctx.draw(st.sampled_from(["sum", "max"])), "reverse": ctx.draw(st.booleans())}

    def build(self, params, x):
        def step(row, carry):
            out = carry + row if params["step"] == "sum" else pt.maximum(carry, row)
            return out.astype(x.dtype)

        init = x[-1] if params["reverse"] else x[0]
        if params["step"] == "sum":
            init = pt.zeros_like(init)
        return pytensor.scan(
            step, sequences=[x], outputs_info=[init], go_backwards=params["reverse"], return_updates=False
        )

    def is_exact(self, params, metas):
        return params["step"] == "max" or metas[0].kind != "f"

    def keeps_zero_signs(self, params, metas):
        return params["step"] != "max"
