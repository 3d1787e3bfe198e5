"""Choosing further operands that fit the primary one (shared by the families)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from fuzz.program import DTYPES


def broadcastable(layouts) -> bool:
    """Whether PyTensor broadcasts these ``(shape, static)`` layouts together at
    run time: aligned from the right, each dim is equal to the others or a
    *static* 1 (PyTensor refuses to broadcast a dim it does not know is 1)."""
    ndim = max((len(shape) for shape, _ in layouts), default=0)
    for axis in range(1, ndim + 1):
        sizes = {shape[-axis] for shape, static in layouts if len(shape) >= axis and static[-axis] != 1}
        if len(sizes) > 1:
            return False
    return True


def layout(meta):
    return (meta.shape, meta.static)


def combined(layouts):
    """The ``(shape, static)`` of the broadcast result of ``layouts``."""
    ndim = max((len(shape) for shape, _ in layouts), default=0)
    shape, static = [], []
    for axis in range(ndim, 0, -1):
        dims = [(s[-axis], k[-axis]) for s, k in layouts if len(s) >= axis]
        non_broadcast = [d for d in dims if d[1] != 1]
        shape.append(non_broadcast[0][0] if non_broadcast else 1)
        static.append(None if non_broadcast else 1)
    return tuple(shape), tuple(static)


def draw_partner_layout(ctx, target, *, grow=True, refused=False):
    """A ``(shape, static)`` that broadcasts with the ``target`` layout: the
    target's trailing dims, each kept or replaced by a static 1 (or, where the
    target has a static 1, any size), with extra leading dims at times.
    ``refused``: rarely a length 1 of unknown static size where the target's
    is longer, which PyTensor refuses to broadcast at run time.
    ``grow=False``: one that broadcasts *to* the target (no dim larger, no
    extra dim)."""
    shape, static = target
    draw = ctx.draw
    ndim = draw(st.integers(0, len(shape) + int(grow)))
    out_shape, out_static = [], []
    for axis in range(ndim, 0, -1):
        if axis > len(shape):
            size = draw(st.sampled_from([1, 0, 2, 3]))
            out_shape.append(size)
            out_static.append(1 if size == 1 else (size if draw(st.booleans()) else None))
            continue
        size, known = shape[-axis], static[-axis]
        choice = draw(st.sampled_from(["same", "same", "one", "any"]))
        if refused and size > 1 and known != 1 and draw(st.integers(0, 15)) == 0:
            # Error parity: a length-1 dim PyTensor does not know to be 1
            # against a longer one; PyTensor refuses to broadcast it at run
            # time, and mode ONNX and the export must fail too.
            out_shape.append(1)
            out_static.append(None)
            continue
        if choice == "one":
            out_shape.append(1)
            out_static.append(1)
        elif choice == "any" and known == 1 and grow:
            new = draw(st.sampled_from([0, 2, 3, 1]))
            out_shape.append(new)
            out_static.append(1 if new == 1 else None)
        else:
            out_shape.append(size)
            out_static.append(size if draw(st.booleans()) else (1 if size == 1 and draw(st.booleans()) else None))
    return tuple(out_shape), tuple(out_static)


def draw_dtype(ctx, like=None):
    """``like`` most of the time, any dtype at times (mixed-dtype graphs)."""
    if like is not None and ctx.draw(st.integers(0, 2)) > 0:
        return like
    return ctx.draw(st.sampled_from(DTYPES))


def partner(ctx, layouts, *, dtype=None, predicate=lambda m: True, grow=True, refused=False):
    """An operand that broadcasts with all ``layouts`` (``grow=False``: to
    them): a graph variable when one fits (and the draw says so), else a new
    input (``refused``: see ``draw_partner_layout``)."""
    target = combined(layouts)

    def fits(m):
        if not predicate(m) or not broadcastable([*layouts, layout(m)]):
            return False
        return grow or combined([target, layout(m)])[0] == target[0]

    meta = ctx.pick(fits)
    if meta is not None:
        return meta
    shape, static = draw_partner_layout(ctx, target, grow=grow, refused=refused)
    return ctx.new_input(dtype or draw_dtype(ctx), shape, static)


def scalar_input(ctx, dtype, value):
    """A 0-d input of fixed ``value`` (run-time bounds, sizes, indices)."""
    return ctx.new_input(dtype, (), (), value=np.array(value, dtype=dtype).item())
