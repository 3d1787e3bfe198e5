"""Shape ops (dispatch/shape.py, DimShuffle of dispatch/elemwise.py):
dimshuffle, reshape (literal and computed target shapes), flatten,
specify_shape, squeeze/expand_dims, join_dims/split_dims, and shapes used as
values."""

from __future__ import annotations

import math

import numpy as np
import pytensor.tensor as pt
from hypothesis import strategies as st

from fuzz.registry import OpGenerator, register


@register
class DimShuffle(OpGenerator):
    """Transpose, drop static-1 dims, insert broadcastable dims."""

    name = "shape.dimshuffle"
    weight = 2

    def draw(self, ctx, x):
        kept = [axis for axis in range(x.ndim) if x.static[axis] != 1 or ctx.draw(st.booleans())]
        order = list(ctx.draw(st.permutations(kept)))
        for _ in range(ctx.draw(st.integers(0, 2))):
            order.insert(ctx.draw(st.integers(0, len(order))), "x")
        return {"order": order}

    def build(self, params, x):
        return x.dimshuffle(*params["order"])

    def shape(self, params, x):
        return tuple(1 if a == "x" else x[a] for a in params["order"])


def _factorizations(ctx, size, ndim):
    """``ndim`` positive sizes whose product is ``size`` (> 0)."""
    dims = [1] * ndim
    remaining = size
    factor = 2
    while remaining > 1:
        while remaining % factor:
            factor += 1
        dims[ctx.draw(st.integers(0, ndim - 1))] *= factor
        remaining //= factor
    return dims


@register
class Reshape(OpGenerator):
    """A literal target (maybe with -1), or one computed from ``x.shape``
    (products of groups of consecutive dims: Shape_i, MakeVector, Mul)."""

    name = "shape.reshape"
    weight = 2

    def draw(self, ctx, x):
        if x.ndim and ctx.draw(st.booleans()):
            cuts = sorted(ctx.draw(st.lists(st.integers(1, x.ndim - 1), unique=True, max_size=x.ndim - 1))) if x.ndim > 1 else []
            bounds = [0, *cuts, x.ndim]
            return {"groups": [[bounds[i], bounds[i + 1]] for i in range(len(bounds) - 1)]}
        size = x.size
        ndim = ctx.draw(st.integers(0 if size == 1 else 1, 3))
        if size == 0:
            target = [ctx.draw(st.integers(0, 3)) for _ in range(ndim)]
            target[ctx.draw(st.integers(0, ndim - 1))] = 0
        else:
            target = _factorizations(ctx, size, ndim) if ndim else []
            if ndim and ctx.draw(st.booleans()):
                target[ctx.draw(st.integers(0, ndim - 1))] = -1
        return {"target": target}

    def build(self, params, x):
        if "groups" in params:
            return x.reshape([pt.prod([x.shape[i] for i in range(a, b)]) if b - a > 1 else x.shape[a] for a, b in params["groups"]], ndim=len(params["groups"]))
        return x.reshape(params["target"], ndim=len(params["target"]))

    def shape(self, params, x):
        if "groups" in params:
            return tuple(math.prod(x[a:b]) for a, b in params["groups"])
        return np.empty(x, dtype=bool).reshape(params["target"]).shape


@register
class Flatten(OpGenerator):
    name = "shape.flatten"

    def accepts(self, meta):
        return meta.ndim >= 1

    def draw(self, ctx, x):
        return {"ndim": ctx.draw(st.integers(1, x.ndim))}

    def build(self, params, x):
        return pt.flatten(x, ndim=params["ndim"])

    def shape(self, params, x):
        n = params["ndim"]
        return (*x[: n - 1], math.prod(x[n - 1 :]))


@register
class SpecifyShape(OpGenerator):
    name = "shape.specify_shape"

    def draw(self, ctx, x):
        return {"shape": [s if ctx.draw(st.booleans()) else None for s in x.shape]}

    def build(self, params, x):
        return pt.specify_shape(x, tuple(params["shape"]))


@register
class ExpandSqueeze(OpGenerator):
    """``expand_dims`` at an axis, or ``squeeze`` of static-1 axes."""

    name = "shape.expand_squeeze"

    def draw(self, ctx, x):
        ones = [a for a in range(x.ndim) if x.static[a] == 1]
        if ones and ctx.draw(st.booleans()):
            axes = ctx.draw(st.lists(st.sampled_from(ones), unique=True, min_size=1))
            return {"squeeze": [a - x.ndim if ctx.draw(st.booleans()) else a for a in axes]}
        return {"expand": ctx.draw(st.integers(-x.ndim - 1, x.ndim))}

    def build(self, params, x):
        if "squeeze" in params:
            return pt.squeeze(x, axis=tuple(params["squeeze"]))
        return pt.expand_dims(x, params["expand"])

    def shape(self, params, x):
        if "squeeze" in params:
            return np.squeeze(np.empty(x, dtype=bool), axis=tuple(params["squeeze"])).shape
        return np.expand_dims(np.empty(x, dtype=bool), params["expand"]).shape


@register
class JoinSplitDims(OpGenerator):
    """``join_dims`` of consecutive axes or ``split_dims`` of one axis
    (PyTensor rewrites them to Reshape unless excluded; both paths run)."""

    name = "shape.join_split_dims"

    def accepts(self, meta):
        return meta.ndim >= 1

    def draw(self, ctx, x):
        if ctx.draw(st.booleans()):
            start = ctx.draw(st.integers(0, x.ndim - 1))
            # Joining no axes inserts a size-1 axis; PyTensor's Python
            # implementation reshapes with -1 there, which NumPy refuses for
            # an empty array (a bug of the reference): at least one axis then.
            fewest = 1 if x.size == 0 else 0
            return {"join": [start, ctx.draw(st.integers(fewest, x.ndim - start))]}
        axis = ctx.draw(st.integers(0, x.ndim - 1))
        size = x.shape[axis]
        parts = ctx.draw(st.integers(1, 3))
        sizes = _factorizations(ctx, size, parts) if size else [0, *[ctx.draw(st.integers(0, 2)) for _ in range(parts - 1)]]
        return {"split": [axis, sizes]}

    def build(self, params, x):
        if "join" in params:
            start, n = params["join"]
            return pt.join_dims(x, start_axis=start, n_axes=n)
        axis, sizes = params["split"]
        return pt.split_dims(x, sizes, axis=axis)

    def shape(self, params, x):
        if "join" in params:
            start, n = params["join"]
            return (*x[:start], math.prod(x[start : start + n]), *x[start + n :])
        axis, sizes = params["split"]
        return (*x[:axis], *sizes, *x[axis + 1 :])


@register
class ShapeAsValue(OpGenerator):
    """``x.shape`` (an int64 vector) or ``x.shape[i]`` (a 0-d int64) as data."""

    name = "shape.shape"

    def draw(self, ctx, x):
        if x.ndim and ctx.draw(st.booleans()):
            return {"dim": ctx.draw(st.integers(-x.ndim, x.ndim - 1))}
        return {}

    def build(self, params, x):
        return x.shape[params["dim"]] if "dim" in params else x.shape

    def shape(self, params, x):
        return () if "dim" in params else (len(x),)
