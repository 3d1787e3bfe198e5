"""Joins and splits (Join, Split, MakeVector via stack of scalars) and
allocations (Alloc, fill/second, zeros/ones/full, ARange, Eye, tri/tril/triu)
of dispatch/tensor_basic.py."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from hypothesis import strategies as st

from fuzz.operands import draw_dtype, scalar_input
from fuzz.registry import OpGenerator, register


def _same_but(ctx, x, axis, dtype):
    """A graph variable or new input shaped like ``x`` except along ``axis``."""
    fits = lambda m: m.ndim == x.ndim and all(m.shape[a] == x.shape[a] for a in range(x.ndim) if a != axis)  # noqa: E731
    meta = ctx.pick(fits)
    if meta is not None:
        return meta
    shape = list(x.shape)
    shape[axis] = ctx.draw(st.sampled_from([0, 1, 2, 3]))
    return ctx.new_input(dtype, shape)


@register
class Join(OpGenerator):
    """``concatenate`` of 2-3 tensors (the same one twice at times), mixed dtypes."""

    name = "tensor_basic.join"
    weight = 2

    def accepts(self, meta):
        return meta.ndim >= 1

    def draw(self, ctx, x):
        axis = ctx.draw(st.integers(-x.ndim, x.ndim - 1))
        for _ in range(ctx.draw(st.integers(1, 2))):
            if ctx.draw(st.integers(0, 4)) == 0:
                ctx.operands.append(x.index)
            else:
                _same_but(ctx, x, axis % x.ndim, draw_dtype(ctx, x.dtype))
        order = list(ctx.draw(st.permutations(range(len(ctx.operands)))))
        ctx.operands[:] = [ctx.operands[i] for i in order]
        return {"axis": axis}

    def build(self, params, *tensors):
        return pt.concatenate(tensors, axis=params["axis"])

    def shape(self, params, *shapes):
        axis = params["axis"] % len(shapes[0])
        out = list(shapes[0])
        out[axis] = sum(s[axis] for s in shapes)
        return tuple(out)


@register
class Stack(OpGenerator):
    """``stack`` of same-shaped tensors (scalars give MakeVector)."""

    name = "tensor_basic.stack"

    def draw(self, ctx, x):
        for _ in range(ctx.draw(st.integers(1, 2))):
            meta = ctx.pick(lambda m: m.shape == x.shape)
            if meta is None:
                ctx.new_input(draw_dtype(ctx, x.dtype), x.shape)
        return {"axis": ctx.draw(st.integers(-x.ndim - 1, x.ndim))}

    def build(self, params, *tensors):
        return pt.stack(tensors, axis=params["axis"])

    def shape(self, params, *shapes):
        return np.stack([np.empty(s, dtype=bool) for s in shapes], axis=params["axis"]).shape


@register
class Split(OpGenerator):
    """One output of ``split`` (sizes constant or a run-time vector)."""

    name = "tensor_basic.split"

    def accepts(self, meta):
        return meta.ndim >= 1

    def draw(self, ctx, x):
        axis = ctx.draw(st.integers(-x.ndim, x.ndim - 1))
        size = x.shape[axis]
        n = ctx.draw(st.integers(1, 3))
        cuts = sorted(ctx.draw(st.lists(st.integers(0, size), min_size=n - 1, max_size=n - 1)))
        sizes = [b - a for a, b in zip([0, *cuts], [*cuts, size])]
        runtime = ctx.draw(st.booleans())
        if runtime:
            ctx.new_input("int64", (n,), (n,), value=sizes)
        return {"axis": axis, "sizes": sizes, "which": ctx.draw(st.integers(0, n - 1)), "runtime": runtime}

    def build(self, params, x, *sizes):
        n = len(params["sizes"])
        parts = pt.split(x, sizes[0] if params["runtime"] else params["sizes"], n_splits=n, axis=params["axis"])
        return parts[params["which"]] if isinstance(parts, list | tuple) else parts

    def shape(self, params, x, *rest):
        out = list(x)
        out[params["axis"]] = params["sizes"][params["which"]]
        return tuple(out)


@register
class Alloc(OpGenerator):
    """``alloc`` to a larger shape: new leading dims, static-1 dims expanded;
    sizes constant, run-time scalars, or read from the operand's shape."""

    name = "tensor_basic.alloc"

    def draw(self, ctx, x):
        sizes = [ctx.draw(st.sampled_from([0, 1, 2, 3])) for _ in range(ctx.draw(st.integers(0, 2)))]
        sizes += [ctx.draw(st.sampled_from([0, 2, 3])) if x.static[a] == 1 and ctx.draw(st.booleans()) else x.shape[a] for a in range(x.ndim)]
        kinds = []
        for axis, size in enumerate(sizes):
            own = axis - (len(sizes) - x.ndim)
            options = ["const", "runtime"] + (["shape"] if own >= 0 and size == x.shape[own] else [])
            kind = ctx.draw(st.sampled_from(options))
            if kind == "runtime":
                scalar_input(ctx, ctx.draw(st.sampled_from(["int64", "int32", "uint8"])), size)
            kinds.append(kind)
        return {"sizes": sizes, "kinds": kinds}

    def build(self, params, x, *runtime):
        runtime = list(runtime)
        offset = len(params["sizes"]) - x.ndim
        shape = []
        for axis, (size, kind) in enumerate(zip(params["sizes"], params["kinds"])):
            if kind == "runtime":
                shape.append(runtime.pop(0))
            elif kind == "shape":
                shape.append(x.shape[axis - offset])
            else:
                shape.append(size)
        return pt.alloc(x, *shape)

    def shape(self, params, x, *rest):
        return tuple(params["sizes"])


@register
class Fill(OpGenerator):
    """``zeros_like``/``ones_like``/``full_like``, ``second`` (fill), and
    ``zeros``/``full`` of a shape read from the operand."""

    name = "tensor_basic.fill"

    def draw(self, ctx, x):
        kind = ctx.draw(st.sampled_from(["zeros_like", "ones_like", "full_like", "second", "zeros", "full"]))
        params = {"kind": kind, "dtype": ctx.draw(st.sampled_from([None, "float32", "int16", "bool", "uint64"]))}
        if kind in ("full_like", "full"):
            params["value"] = ctx.draw(st.sampled_from([0, 1, 2, 7]))
        if kind == "second":
            ctx.new_input(draw_dtype(ctx, x.dtype), (), ())
        return params

    def build(self, params, x, *value):
        kind, dtype = params["kind"], params["dtype"]
        if kind == "zeros_like":
            return pt.zeros_like(x, dtype=dtype)
        if kind == "ones_like":
            return pt.ones_like(x, dtype=dtype)
        if kind == "full_like":
            return pt.full_like(x, params["value"], dtype=dtype)
        if kind == "second":
            return pt.second(x, value[0])
        if kind == "zeros":
            return pt.zeros(x.shape, dtype=dtype or x.dtype)
        return pt.full(x.shape, params["value"], dtype=dtype or x.dtype)


def _scalar_or_input(ctx, value, dtype="int64"):
    if ctx.draw(st.booleans()):
        scalar_input(ctx, dtype, value)
        return {"arg": len(ctx.operands) - 1}
    return value


def _resolve(part, operands):
    return operands[part["arg"]] if isinstance(part, dict) else part


@register
class Arange(OpGenerator):
    """``arange`` with int or float bounds, constant or at run time."""

    name = "tensor_basic.arange"
    source = True
    weight = 0.5

    def draw(self, ctx):
        if ctx.draw(st.booleans()):
            start, stop = ctx.draw(st.integers(-5, 5)), ctx.draw(st.integers(-5, 8))
            step = ctx.draw(st.sampled_from([1, 1, 2, -1, 3, -2]))
            dtype = "int64"
        else:
            start, stop = ctx.draw(st.sampled_from([0.0, -1.5, 0.25, 2.0])), ctx.draw(st.sampled_from([3.0, 4.7, -2.0, 0.1]))
            step = ctx.draw(st.sampled_from([1.0, 0.5, -0.75, 0.3]))
            dtype = "float64"
        parts = [_scalar_or_input(ctx, v, dtype) for v in (start, stop, step)]
        return {"parts": parts, "values": [start, stop, step]}

    def build(self, params, *operands):
        return pt.arange(*(_resolve(p, operands) for p in params["parts"]))

    def shape(self, params, *shapes):
        return np.arange(*params["values"]).shape

    def is_exact(self, params, metas):
        return True  # NumPy's formula is computed exactly (docs/semantics.md)


@register
class Eye(OpGenerator):
    """``eye(n, m, k)`` with constant or run-time sizes and offset."""

    name = "tensor_basic.eye"
    source = True
    weight = 0.5

    def draw(self, ctx):
        n, m, k = ctx.draw(st.integers(0, 4)), ctx.draw(st.integers(0, 4)), ctx.draw(st.integers(-4, 4))
        parts = [_scalar_or_input(ctx, v) for v in (n, m, k)]
        return {"parts": parts, "values": [n, m, k], "dtype": ctx.draw(st.sampled_from(["float64", "int8", "bool", "float32"]))}

    def build(self, params, *operands):
        n, m, k = (_resolve(p, operands) for p in params["parts"])
        return pt.eye(n, m, k, dtype=params["dtype"])

    def shape(self, params, *shapes):
        n, m, _ = params["values"]
        return (n, m)


@register
class Tri(OpGenerator):
    """``tril``/``triu`` of the last two axes with offset ``k``."""

    name = "tensor_basic.tri"

    def accepts(self, meta):
        return meta.ndim >= 2 and meta.kind != "b"  # PyTensor's tril/triu multiply

    def draw(self, ctx, x):
        return {"upper": ctx.draw(st.booleans()), "k": ctx.draw(st.integers(-3, 3))}

    def build(self, params, x):
        return (pt.triu if params["upper"] else pt.tril)(x, params["k"])
