"""Softmax and log-softmax (dispatch/special.py). Special functions (erf,
gammaln, ...) are in special_functions.py."""

from __future__ import annotations

import pytensor.tensor as pt
from hypothesis import strategies as st

from pytensor_onnx.compat import SOFTMAX_TAKES_AXIS_TUPLES

from fuzz.families.math import draw_axis
from fuzz.registry import OpGenerator, is_float, register


@register
class Softmax(OpGenerator):
    name = "special.softmax"
    exact = False

    def accepts(self, meta):
        # PyTensor 3.x computes softmax as x - max(x): its reference raises on
        # an empty array (max of nothing) where the result is just empty.
        return is_float(meta) and meta.size > 0

    def draw(self, ctx, x):
        axis = draw_axis(ctx, x.ndim)
        if isinstance(axis, list) and not SOFTMAX_TAKES_AXIS_TUPLES:
            axis = axis[0]  # 2.38 takes an int or None
        return {"log": ctx.draw(st.booleans()), "axis": axis}

    def build(self, params, x):
        fn = pt.special.log_softmax if params["log"] else pt.special.softmax
        axis = params["axis"]
        return fn(x, axis=tuple(axis) if isinstance(axis, list) else axis)
