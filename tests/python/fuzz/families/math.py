"""Reductions (every axis form, keepdims), argmax/argmin and dot products
(dispatch/math.py, dispatch/elemwise.py's CAReduce)."""

from __future__ import annotations

import pytensor.tensor as pt
from hypothesis import strategies as st

from fuzz.operands import draw_dtype
from fuzz.registry import OpGenerator, register

#: name -> (function(x, axis, keepdims), exact on floats, takes exact operands only)
REDUCTIONS = {
    "sum": (pt.sum, False, False),
    "prod": (pt.prod, False, False),
    "max": (pt.max, True, False),
    "min": (pt.min, True, False),
    "all": (pt.all, True, False),
    "any": (pt.any, True, False),
    "mean": (pt.mean, False, False),
    "var": (pt.var, False, False),
    "std": (pt.std, False, False),
    "logsumexp": (pt.logsumexp, False, False),
    # Ties and NaN positions decide the index: exact operands only.
    "argmax": (pt.argmax, True, True),
    "argmin": (pt.argmin, True, True),
}


def draw_axis(ctx, ndim):
    """None, an int or a tuple of distinct axes (negative ones included)."""
    kind = ctx.draw(st.sampled_from(["none", "int", "tuple"])) if ndim else "none"
    if kind == "none":
        return None
    if kind == "int":
        return ctx.draw(st.integers(-ndim, ndim - 1))
    axes = ctx.draw(st.lists(st.integers(0, ndim - 1), unique=True, min_size=1, max_size=ndim))
    return [a - ndim if ctx.draw(st.booleans()) else a for a in axes]


def normalized_axes(axis, ndim):
    if axis is None:
        return list(range(ndim))
    axes = [axis] if isinstance(axis, int) else axis
    return sorted(a % ndim for a in axes)


def reduced_shape(shape, axis, keepdims):
    axes = normalized_axes(axis, len(shape))
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _as_axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


@register
class Reduce(OpGenerator):
    name = "math.reduce"
    weight = 3

    def draw(self, ctx, x):
        names = [n for n, (_, _, needs_exact) in sorted(REDUCTIONS.items()) if x.exact or not needs_exact]
        name = ctx.draw(st.sampled_from(names))
        return {"op": name, "axis": draw_axis(ctx, x.ndim), "keepdims": ctx.draw(st.booleans())}

    def build(self, params, x):
        fn = REDUCTIONS[params["op"]][0]
        return fn(x, axis=_as_axis(params["axis"]), keepdims=params["keepdims"])

    def shape(self, params, x):
        return reduced_shape(x, params["axis"], params["keepdims"])

    def keeps_zero_signs(self, params, metas):
        return params["op"] not in ("max", "min")

    def is_exact(self, params, metas):
        op = params["op"]
        if REDUCTIONS[op][1]:
            return True
        # Integer sums and products wrap exactly; means and variances divide.
        return op in ("sum", "prod") and metas[0].kind != "f"


@register
class Dot(OpGenerator):
    """``dot`` of vectors and matrices (``Dot``; BLAS forms come from FAST_RUN)."""

    name = "math.dot"

    def accepts(self, meta):
        return meta.ndim in (1, 2) and meta.kind != "b"

    def draw(self, ctx, a):
        inner = a.shape[-1]
        ndim = ctx.draw(st.sampled_from([1, 2]))
        shape = (inner,) if ndim == 1 else (inner, ctx.draw(st.sampled_from([0, 1, 2, 3])))
        fits = lambda m: m.ndim == ndim and m.kind != "b" and m.shape[0] == inner and m.shape == shape  # noqa: E731
        b = ctx.pick(fits) or ctx.new_input(draw_dtype(ctx, a.dtype if a.kind != "b" else "float64").replace("bool", "int8"), shape)
        return {}

    def build(self, params, a, b):
        return pt.dot(a, b)

    def shape(self, params, a, b):
        return (*a[:-1], *b[1:])

    def is_exact(self, params, metas):
        return all(m.kind != "f" for m in metas)
