"""Indexing (dispatch/subtensor.py): basic slicing (negative and huge bounds,
negative steps, constant or run-time parts), integer-array and boolean-mask
indexing, and set/inc of both.

An index is stored as a list of items, one per indexed axis:

- ``{"int": v}`` a constant, ``{"int": v, "arg": j}`` a run-time 0-d input
  (operand ``j``; ``v`` is its value);
- ``{"slice": [start, stop, step]}``, each part None, an int, or
  ``{"arg": j, "value": v}``;
- ``{"array": j, "shape": [...]}`` an integer array input (values drawn from
  the axis' valid indices);
- ``{"mask": j, "shape": [...], "true": n}`` a boolean mask input (fixed
  value with ``n`` True entries), covering ``len(shape)`` axes.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from hypothesis import strategies as st

from fuzz.operands import layout, partner, scalar_input
from fuzz.registry import OpGenerator, register

INT64_LIMITS = [2**63 - 1, -(2**63)]
BOUNDS = st.one_of(st.none(), st.integers(-8, 8), st.sampled_from([-100, 100, -(2**40), 2**40, *INT64_LIMITS]))
STEPS = st.one_of(st.none(), st.integers(-3, 3).filter(bool), st.sampled_from([-100, 100]))
INDEX_DTYPES = ["int64", "int64", "int32", "int8", "uint8", "uint16"]


def _runtime_int(ctx, value):
    """A 0-d integer input holding ``value`` (the smallest fitting dtype at times)."""
    dtypes = [d for d in INDEX_DTYPES if np.iinfo(d).min <= value <= np.iinfo(d).max]
    return scalar_input(ctx, ctx.draw(st.sampled_from(dtypes)), value)


def draw_basic_item(ctx, size, *, allow_bad=False):
    """One basic index item for an axis of ``size``."""
    runtime = ctx.draw(st.booleans())
    if size > 0 and ctx.draw(st.integers(0, 2)) == 0:
        value = ctx.draw(st.integers(-size, size - 1))
        if runtime and allow_bad and ctx.draw(st.integers(0, 9)) == 0:
            value = ctx.draw(st.sampled_from([size, -size - 1, 2**40]))  # out of range: both sides must fail
        if runtime:
            j = len(ctx.operands)
            _runtime_int(ctx, value)
            return {"int": value, "arg": j}
        return {"int": value}
    step = ctx.draw(STEPS)
    bad_step = runtime and allow_bad and ctx.draw(st.integers(0, 19)) == 0
    if bad_step:
        step = 0  # ValueError in NumPy: both sides must fail
    parts = [ctx.draw(BOUNDS), ctx.draw(BOUNDS), step]
    items = []
    for position, value in enumerate(parts):
        if value is not None and runtime and (ctx.draw(st.booleans()) or (bad_step and position == 2)):
            j = len(ctx.operands)
            scalar_input(ctx, "int64", value)
            items.append({"arg": j, "value": value})
        else:
            items.append(value)
    return {"slice": items}


def symbolic_index(items, operands):
    """The PyTensor index tuple of ``items`` (``operands``: the step's variables)."""

    def part(p):
        return operands[p["arg"]] if isinstance(p, dict) else p

    index = []
    for item in items:
        if "int" in item:
            index.append(operands[item["arg"]] if "arg" in item else item["int"])
        elif "slice" in item:
            index.append(slice(*(part(p) for p in item["slice"])))
        elif "array" in item:
            index.append(operands[item["array"]])
        else:
            index.append(operands[item["mask"]])
    return tuple(index)


def concrete_index(items):
    """A NumPy index with the same result shape as ``items``."""

    def part(p):
        return p["value"] if isinstance(p, dict) else p

    index = []
    for item in items:
        if "int" in item:
            index.append(0)
        elif "slice" in item:
            index.append(slice(*(part(p) for p in item["slice"])))
        elif "array" in item:
            index.append(np.zeros(item["shape"], dtype=np.int64))
        else:
            mask = np.zeros(int(np.prod(item["shape"])), dtype=bool)
            mask[: item["true"]] = True
            index.append(mask.reshape(item["shape"]))
    return tuple(index)


def result_shape(items, shape):
    """The concrete shape of ``x[items]`` for ``x`` of ``shape``."""
    dims = list(shape)
    kept = []
    for item in items:
        # A run-time int may be out of range on purpose (the case then checks
        # that both sides fail); its result shape is that of any valid int.
        if "int" in item or "slice" in item:
            size = dims.pop(0)
            if "slice" in item:
                bounds = [p["value"] if isinstance(p, dict) else p for p in item["slice"]]
                kept.append(len(range(*slice(*bounds).indices(size))) if bounds[2] != 0 else 0)
            continue
        return np.broadcast_to(np.zeros((), dtype=bool), shape)[concrete_index(items)].shape
    return (*kept, *dims)


def draw_advanced_items(ctx, x):
    """Items with integer arrays (one shape, broadcast together) or one boolean
    mask, among slices and ints (axes of size 0 get slices)."""
    use_mask = ctx.draw(st.integers(0, 3)) == 0
    array_shape = ctx.draw(st.lists(st.sampled_from([0, 1, 2, 3]), min_size=0, max_size=2).map(tuple))
    n_indexed = ctx.draw(st.integers(1, x.ndim))
    items, axis = [], 0
    while axis < n_indexed:
        size = x.shape[axis]
        kind = ctx.draw(st.sampled_from(["advanced", "advanced", "slice", "int"]))
        if kind == "advanced" and use_mask and not any("mask" in i for i in items):
            n_axes = ctx.draw(st.integers(1, n_indexed - axis))
            items.append(_mask_item(ctx, x.shape[axis : axis + n_axes]))
            axis += n_axes
            continue
        if kind == "advanced" and not use_mask and size > 0:
            j = len(ctx.operands)
            dtype = ctx.draw(st.sampled_from(["int64", "int64", "int32", "int8"] if size <= 127 else ["int64"]))
            ctx.new_input(dtype, array_shape, domain=f"index:{size}")
            items.append({"array": j, "shape": list(array_shape)})
        elif kind == "int" and size > 0:
            items.append({"int": ctx.draw(st.integers(-size, size - 1))})
        else:
            items.append(draw_basic_item(ctx, 0))
        axis += 1
    if not any("array" in i or "mask" in i for i in items):
        items[0] = _mask_item(ctx, x.shape[:1])  # at least one advanced part
    return items


def _mask_item(ctx, shape):
    """A boolean mask input over axes of ``shape`` (a fixed value: the result's
    length depends on it)."""
    shape = list(shape)
    n = int(np.prod(shape))
    values = np.array(ctx.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool).reshape(shape)
    j = len(ctx.operands)
    ctx.new_input("bool", shape, [None] * len(shape), value=values.tolist())
    return {"mask": j, "shape": shape, "true": int(values.sum())}


@register
class Basic(OpGenerator):
    name = "subtensor.basic"
    weight = 2

    def accepts(self, meta):
        return meta.ndim >= 1

    def draw(self, ctx, x):
        n = ctx.draw(st.integers(1, x.ndim))
        return {"index": [draw_basic_item(ctx, x.shape[a], allow_bad=True) for a in range(n)]}

    def build(self, params, x, *index_operands):
        return x[symbolic_index(params["index"], [x, *index_operands])]

    def shape(self, params, x, *rest):
        return result_shape(params["index"], x)


@register
class Advanced(OpGenerator):
    name = "subtensor.advanced"
    weight = 2

    def accepts(self, meta):
        return meta.ndim >= 1

    def draw(self, ctx, x):
        return {"index": draw_advanced_items(ctx, x)}

    def build(self, params, x, *index_operands):
        return x[symbolic_index(params["index"], [x, *index_operands])]

    def shape(self, params, x, *rest):
        return result_shape(params["index"], x)


@register
class SetInc(OpGenerator):
    """``set_subtensor``/``inc_subtensor`` on a basic or advanced selection,
    with a value that broadcasts to the selection (duplicated indices
    included: inc accumulates, set keeps the last write)."""

    name = "subtensor.set_inc"
    weight = 2

    def accepts(self, meta):
        return meta.ndim >= 1

    def draw(self, ctx, x):
        advanced = ctx.draw(st.booleans())
        if advanced:
            items = draw_advanced_items(ctx, x)
        else:
            items = [draw_basic_item(ctx, x.shape[a]) for a in range(ctx.draw(st.integers(1, x.ndim)))]
        n_index = len(ctx.operands) - 1
        selection = x.var[symbolic_index(items, [x.var, *[ctx.metas[k].var for k in ctx.operands[1:]]])]
        target = (result_shape(items, x.shape), tuple(selection.type.shape))
        dtype = x.dtype if ctx.draw(st.integers(0, 2)) else ctx.draw(st.sampled_from(["bool", "int8", "uint8", "int16"]))
        if np.promote_types(dtype, x.dtype) != np.dtype(x.dtype):
            dtype = x.dtype
        partner(ctx, [target], dtype=dtype, grow=False, predicate=lambda m: np.promote_types(m.dtype, x.dtype) == np.dtype(x.dtype))
        return {"index": items, "set": ctx.draw(st.booleans()), "n_index": n_index}

    def build(self, params, x, *rest):
        index_operands, y = rest[: params["n_index"]], rest[params["n_index"]]
        selection = x[symbolic_index(params["index"], [x, *index_operands])]
        if not params["set"] and any(len(item.get("shape", ())) >= 2 for item in params["index"] if "array" in item):
            # NumPy 2.5.5's np.add.at (the reference's AdvancedIncSubtensor.perform)
            # reads uninitialized memory when the value broadcasts against a
            # multi-dimensional index array: np.add.at(zeros(2), zeros((2, 2), int),
            # zeros(2)) gave [8.5e-268, 0] (FUZZ_SEED=3854188664). The value is
            # given at the selection's shape there.
            y = pt.broadcast_to(y, selection.shape)
        return (pt.set_subtensor if params["set"] else pt.inc_subtensor)(selection, y)
