"""Rules for pytensor.tensor.subtensor ops: basic and advanced indexing and
their set/increment forms.

Reading:
- slices become one ONNX Slice (where ONNX's clamping differs from Python's,
  ``_slice_bounds`` corrects the bounds); integer indices become Gather,
  which accepts negative indices and raises on out-of-range ones, as NumPy
  does;
- advanced integer indices become Gather (one index) or GatherND on the
  indexed axes moved to the front; boolean masks become their NonZero
  coordinates.

Writing (set/inc): the same indexing, applied to a tensor holding each
element's flat position, gives the positions of the selected elements in the
order (and with the repeats) NumPy visits them; ScatterND writes there.
``set`` keeps the last write for repeats (ONNX Runtime and NumPy agree);
``inc`` accumulates them like ``np.add.at``: ScatterND's ``reduction="add"``
from opset 16, a sort-and-segmented-sum recipe before. (AdvancedIncSubtensor1,
and PyTensor 3's AdvancedIncSubtensor of one index array on the first axis,
scatter whole rows directly where they can.)

Constant indices of an array of static shape (a diagonal as
``x[arange(n), arange(n)]``): NumPy's own indexing of the flat positions,
when converting, gives the positions read or written, and the model holds
them as one constant (``constant_positions``).
"""

from __future__ import annotations

import numpy as np
from pytensor.graph.basic import Constant
from pytensor.tensor.subtensor import AdvancedIncSubtensor, AdvancedSubtensor, IncSubtensor, Subtensor
from pytensor.tensor.type_other import MakeSlice

from pytensor_onnx.compat import AdvancedIncSubtensor1, AdvancedSubtensor1, subtensor_indices
from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.utils import (
    INT64_MAX,
    INT64_MIN,
    as_int64_value,
    check,
    dim_size,
    dim_sizes,
    int64_const,
    int64_vector,
    static_int,
)

# --------------------------------------------------------------------------
# Basic indexing
# --------------------------------------------------------------------------


def _where_int(g, cond, if_true, if_false):
    return g.op("Where", cond, as_int64_value(g, if_true), as_int64_value(g, if_false))


def _slice_bounds(g, x, axis, slc):
    """ONNX Slice (start, end, step) giving Python's ``slice`` on ``axis`` of ``x``, or None for ``:``.

    Each part is an int when known at conversion time, else an int64 scalar
    Value. ONNX clamps like Python except in two cases with a negative step:
    - start < -size: Python's slice is empty, ONNX clamps start to 0 and keeps
      element 0; the end then moves to 0, which empties the slice;
    - end = INT64_MAX (or INT32_MAX): ONNX Runtime reads it as "through
      element 0"; the builder replaces such ends (src/core/adapt.cc).
    """
    start, stop, step = (None if part is None else _index_value(g, part) for part in (slc.start, slc.stop, slc.step))
    if step is None:
        step = 1
    if isinstance(step, int):
        if step == 0:
            raise ValueError("slice step cannot be zero")
        if step > 0:
            start = 0 if start is None else start
            stop = INT64_MAX if stop is None else stop
            if isinstance(start, int) and isinstance(stop, int) and (start, stop, step) == (0, INT64_MAX, 1):
                return None
            return start, stop, step
        stop = INT64_MIN if stop is None else stop
        if start is None:
            return INT64_MAX, stop, step
        if isinstance(start, int) and start >= 0:
            return start, stop, step
        size = dim_size(g, x, axis)
        if isinstance(start, int) and isinstance(size, int):
            return (start, 0, step) if start < -size else (start, stop, step)
        before_first = g.op("Less", as_int64_value(g, start), g.op("Neg", as_int64_value(g, size)))
        return start, _where_int(g, before_first, 0, stop), step
    # A step known only at run time: the defaults depend on its sign.
    negative = g.op("Less", step, int64_const(g, 0))
    if stop is None:
        stop = _where_int(g, negative, INT64_MIN, INT64_MAX)
    if start is None:
        start = _where_int(g, negative, INT64_MAX, 0)
    elif not (isinstance(start, int) and start >= 0):
        size = as_int64_value(g, dim_size(g, x, axis))
        before_first = g.op("And", negative, g.op("Less", as_int64_value(g, start), g.op("Neg", size)))
        stop = _where_int(g, before_first, 0, stop)
    return start, stop, step


def _index_value(g, value):
    """A scalar index as an int (if constant) or an int64 Value."""
    static = static_int(value)
    return static if static is not None else g.cast(value, "int64")


def basic_index(g, x, indices):
    """``x[indices]`` for slices (parts: Values or None) and integer scalar Values."""
    runtime_steps = [
        position for position, index in enumerate(indices)
        if isinstance(index, slice) and index.step is not None and static_int(index.step) is None
    ]
    if not runtime_steps or all(isinstance(index, slice) for index in indices):
        return _integer_index(g, _slice(g, x, indices), indices)
    # A step of 0 fails, and NumPy checks the indices from left to right:
    # x[0, 5, ::k] of an axis of size 3 and k = 0 raises the IndexError,
    # x[::k, 5] the step's ValueError (FUZZ_SEED=3069807091: mode ONNX
    # failed in the Slice). So the indices go in runs, each ending at a slice
    # of a run-time step: a run's integers index first, then its slices.
    removed, start = 0, 0  # integer axes indexed away; where the run starts
    for end in [*(position + 1 for position in runtime_steps), len(indices)]:
        run = indices[start:end]
        whole = [slice(None)] * (start - removed)  # the axes of earlier runs
        x = _integer_index(g, x, whole + [index if not isinstance(index, slice) else slice(None) for index in run])
        sliced = [index for index in run if isinstance(index, slice)]
        x = _slice(g, x, whole + sliced)
        removed += len(run) - len(sliced)
        start = end
    return x


def _slice(g, x, indices):
    """``x[indices]`` for the slices of ``indices`` (integer indices are left to ``_integer_index``)."""
    starts, ends, axes, steps = [], [], [], []
    for axis, index in enumerate(indices):
        if isinstance(index, slice):
            bounds = _slice_bounds(g, x, axis, index)
            if bounds is not None:
                axes.append(axis)
                for parts, part in zip((starts, ends, steps), bounds):
                    parts.append(part)
    if not axes:
        return x
    return g.op("Slice", x, int64_vector(g, starts), int64_vector(g, ends), int64_const(g, axes), int64_vector(g, steps))


def _integer_index(g, x, indices):
    """``x`` indexed by the integer indices of ``indices`` on their axes (slices are ``:`` here)."""
    # From the last axis down, so earlier axes keep their numbers.
    for axis in reversed(range(len(indices))):
        index = indices[axis]
        if not isinstance(index, slice):
            x = g.op("Gather", x, g.cast(index, "int64"), axis=axis)
    return x


@onnx_funcify.register(Subtensor)
def _subtensor(op, node, g, x, *index_values):
    return basic_index(g, x, subtensor_indices(op, index_values))


# --------------------------------------------------------------------------
# Advanced indexing
# --------------------------------------------------------------------------


def _mask_matches(g, x, first_axis, mask):
    """Bool vector: whether ``mask`` has the sizes of the axes of ``x`` it indexes (else NumPy raises
    IndexError); None when the static shapes already agree."""
    if mask.shape is not None and x.shape is not None:
        wanted = x.shape[first_axis : first_axis + mask.rank]
        if all(isinstance(a, int) and a == b for a, b in zip(mask.shape, wanted)):
            return None
    wanted = g.op(
        "Slice", g.op("Shape", x), int64_const(g, [first_axis]), int64_const(g, [first_axis + mask.rank])
    )
    return g.op("Equal", g.op("Shape", mask), wanted)


def advanced_index(g, x, indices):
    """NumPy's ``x[indices]`` for slices, integer arrays (any rank) and boolean masks."""
    # Slices first: they keep every axis where it is. A boolean mask spans
    # as many axes as it has (x[mask, :0] slices the axis after the mask's;
    # found by the fuzzer, FUZZ_SEED=668176363).
    spanned = []
    for index in indices:
        if isinstance(index, slice):
            spanned.append(index)
        else:
            spanned.extend([slice(None)] * (index.rank if index.dtype == "bool" else 1))
    x = basic_index(g, x, spanned)
    # Boolean masks stand for their NonZero coordinates, one index per mask axis.
    expanded, axes, checks = [], [], []
    axis = 0
    for index in indices:
        if isinstance(index, slice):
            axis += 1
            continue
        if index.dtype != "bool":
            expanded.append(g.cast(index, "int64"))
            axes.append(axis)
            axis += 1
            continue
        ok = _mask_matches(g, x, axis, index)
        if ok is not None:
            checks.append(ok)
        coordinates = g.op("NonZero", index)
        expanded.extend(g.op("Gather", coordinates, int64_const(g, k), axis=0) for k in range(index.rank))
        axes.extend(range(axis, axis + index.rank))
        axis += index.rank
    if checks:
        x = check(g, g.op("Concat", *checks, axis=0), x)
    if not axes:
        return x
    if len(axes) == 1:
        return g.op("Gather", x, expanded[0], axis=axes[0])
    return _gather_nd(g, x, expanded, axes)


def _gather_nd(g, x, indices, axes):
    """Several advanced indices on ``axes`` (NumPy's placement of the broadcast index dims)."""
    rank = x.rank
    rest = [a for a in range(rank) if a not in axes]
    if axes != list(range(len(axes))):
        x = g.op("Transpose", x, perm=axes + rest)
    broadcast = indices[0]
    for index in indices[1:]:
        broadcast = g.op("Add", broadcast, index)
    broadcast_shape = g.op("Shape", broadcast)
    stacked = g.op(
        "Concat",
        *[g.op("Unsqueeze", g.op("Expand", index, broadcast_shape), axes=[-1]) for index in indices],
        axis=-1,
    )
    result = g.op("GatherND", x, stacked)
    # Consecutive advanced axes put the index dims where the first of them was;
    # otherwise NumPy leaves them in front.
    consecutive = axes == list(range(axes[0], axes[0] + len(axes)))
    if consecutive and axes[0] > 0:
        n_index_dims = broadcast.rank
        n_rest = rank - len(axes)
        before = list(range(n_index_dims, n_index_dims + axes[0]))
        perm = before + list(range(n_index_dims)) + list(range(n_index_dims + axes[0], n_index_dims + n_rest))
        result = g.op("Transpose", result, perm=perm)
    return result


def _advanced_subtensor1(op, node, g, x, index):
    return g.op("Gather", x, g.cast(index, "int64"), axis=0)


if AdvancedSubtensor1 is not None:
    onnx_funcify.register(AdvancedSubtensor1)(_advanced_subtensor1)


@onnx_funcify.register(MakeSlice)
def _make_slice(op, node, g, *parts):
    # PyTensor 2.38 passes the slices of advanced indexing as MakeSlice
    # inputs; the index rules read them as Python slices of Values.
    return slice(*parts)


# Positions known when converting. Where x's shape is static and every index
# is a constant (a matrix's diagonal as ``x[arange(n), arange(n)]``, PyMC's
# gradient of ``a[idx_a, idx_b]``), NumPy's own indexing of an array of flat
# positions gives the elements selected, in order and with repeats: the
# model reads or writes them through one constant, instead of nodes that
# compute coordinates at every run. Up to this many elements in x:
_CONSTANT_POSITIONS_LIMIT = 1 << 20


def constant_positions(op, node, first_index_input):
    """The int64 flat (C-order) positions that ``op``'s indexing of
    ``node.inputs[0]`` selects, shaped as the selection, when x's shape is
    static and every index input (from ``first_index_input`` on) is a
    constant; ``REFUSED`` where NumPy refuses those indices (out of range);
    else None."""
    shape = node.inputs[0].type.shape
    if not shape or None in shape or int(np.prod(shape, dtype=np.float64)) > _CONSTANT_POSITIONS_LIMIT:
        return None
    raw = []
    for var in node.inputs[first_index_input:]:
        if not isinstance(var, Constant):
            return None
        raw.append(var.data)
    try:
        indices = subtensor_indices(op, raw)
        return np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)[tuple(indices)]
    except IndexError:
        return REFUSED
    except (ValueError, TypeError):
        return None


#: ``constant_positions`` of indices NumPy refuses for x's shape.
REFUSED = "refused"


def _refused(g, node, x):
    """Indexing of ``x`` that NumPy refuses whatever x holds (constant indices
    out of range): a value of the output's shape behind a check that always
    fails, so that running the model fails, as PyTensor raises IndexError when
    called. The general form would index with constants out of range, which
    ONNX Runtime 1.21 folds, and refuses, when it loads the model. The value
    reads ``x``: a failing check of constants alone is folded too."""
    out_shape = node.outputs[0].type.shape
    if None in out_shape:
        return None
    if node.outputs[0].type.shape == node.inputs[0].type.shape:
        value = x  # (a set or an increment)
    else:
        value = g.op("Gather", g.op("Reshape", x, int64_const(g, [-1])), g.const(np.zeros(out_shape, np.int64)), axis=0)
    return check(g, g.const(np.asarray(False)), value)


@onnx_funcify.register(AdvancedSubtensor)
def _advanced_subtensor(op, node, g, x, *index_values):
    indices = subtensor_indices(op, index_values)
    arrays = [i for i in indices if not isinstance(i, slice)]
    if len(arrays) > 1 or any(a.dtype == "bool" for a in arrays):
        # (One integer array is one Gather already.)
        positions = constant_positions(op, node, 1)
        refused = _refused(g, node, x) if positions is REFUSED else None
        if refused is not None:
            return refused
        if positions is not None and positions is not REFUSED:
            return g.op("Gather", g.op("Reshape", x, int64_const(g, [-1])), g.const(positions), axis=0)
    return advanced_index(g, x, indices)


# --------------------------------------------------------------------------
# Set and increment
# --------------------------------------------------------------------------


def _strides(g, sizes):
    """C-order element strides for axis ``sizes`` (ints where known; never 0, so they divide)."""
    strides, stride = [], 1
    for size in reversed(sizes):
        strides.append(stride)
        if isinstance(stride, int) and isinstance(size, int):
            stride *= max(size, 1)
        else:
            stride = g.op("Mul", as_int64_value(g, stride), g.op("Max", as_int64_value(g, size), int64_const(g, 1)))
    return strides[::-1]


def _flat_positions(g, sizes, strides):
    """A tensor of shape ``sizes`` holding each element's flat (C-order) position.

    Built by broadcasting one range per axis, so no Reshape reads a 0 size as
    "copy" (opset 13).
    """
    rank = len(sizes)
    positions = None
    for axis, (size, stride) in enumerate(zip(sizes, strides)):
        along = g.op("Range", int64_const(g, 0), as_int64_value(g, size), int64_const(g, 1))
        if not (isinstance(stride, int) and stride == 1):
            along = g.op("Mul", along, as_int64_value(g, stride))
        other_axes = [a for a in range(rank) if a != axis]
        if other_axes:
            along = g.op("Unsqueeze", along, axes=other_axes)
        positions = along if positions is None else g.op("Add", positions, along)
    return positions


def _coordinates(g, positions, sizes, strides):
    """Index tuples (one row of ``len(sizes)`` coordinates per flat position), for ScatterND."""
    columns = []
    for axis, (size, stride) in enumerate(zip(sizes, strides)):
        coordinate = positions
        if not (isinstance(stride, int) and stride == 1):
            coordinate = g.op("Div", coordinate, as_int64_value(g, stride))
        if axis > 0:
            coordinate = g.op("Mod", coordinate, g.op("Max", as_int64_value(g, size), int64_const(g, 1)))
        columns.append(g.op("Unsqueeze", coordinate, axes=[-1]))
    return columns[0] if len(columns) == 1 else g.op("Concat", *columns, axis=-1)


def _add(g, a, b):
    return g.op("Or", a, b) if a.dtype == "bool" else g.op("Add", a, b)


def write_selection(g, x, y, select, *, set_values, accumulate):
    """``x`` with ``x[selection] = y`` (``set_values``) or ``+= y``.

    ``select(t)`` applies the indexing to a tensor ``t`` shaped like ``x``.
    ``accumulate``: increments at repeated positions add up (``np.add.at``);
    otherwise each position is incremented once, as ``x[idx] += y`` does.
    """
    sizes = dim_sizes(g, x)
    strides = _strides(g, sizes)
    selected = select(_flat_positions(g, sizes, strides))
    positions = g.op("Reshape", selected, int64_const(g, [-1]))
    coordinates = _coordinates(g, positions, sizes, strides)
    y = g.cast(y, x.dtype)
    # A static target shape stays a constant, which lets the builder guard
    # Expand against ONNX Runtime's ExpandElimination (src/core/adapt.cc).
    static = selected.shape is not None and all(isinstance(d, int) and d >= 0 for d in selected.shape)
    if static and 0 in selected.shape:
        # Nothing selected: x as it is. (The scatter would be built from
        # folded empty constants, and ONNX Runtime 1.21's NoopElimination
        # takes an Add of an empty constant for the other operand.)
        return x
    target = int64_const(g, list(selected.shape)) if static else g.op("Shape", selected)
    return _scatter(g, x, y, target, coordinates, positions, set_values=set_values, accumulate=accumulate)


def write_positions(g, x, y, positions, shape, *, set_values, accumulate):
    """``write_selection`` where the selection's flat ``positions`` (of x of
    static ``shape``) are known when converting (``constant_positions``)."""
    if positions.size == 0:
        return x
    flat = positions.reshape(-1)
    coordinates = g.const(np.stack(np.unravel_index(flat, shape), axis=-1).astype(np.int64))
    target = int64_const(g, list(positions.shape))
    return _scatter(g, x, g.cast(y, x.dtype), target, coordinates, g.const(flat),
                    set_values=set_values, accumulate=accumulate)


def _scatter(g, x, y, target, coordinates, keys, *, set_values, accumulate):
    """x with y, broadcast to the selection's shape ``target``, set or added
    at ``coordinates`` (ScatterND indices; ``keys``: their flat positions)."""
    updates = g.op("Reshape", g.op("Expand", y, target), int64_const(g, [-1]))
    if set_values:
        return g.op("ScatterND", x, coordinates, updates)
    if not accumulate:
        return g.op("ScatterND", x, coordinates, _add(g, g.op("GatherND", x, coordinates), updates))
    return scatter_add(g, x, coordinates, updates, keys)


def scatter_add(g, x, coordinates, updates, keys):
    """``x`` with ``updates`` added at ``coordinates`` (ScatterND indices); repeats add up.

    ``keys``: one int64 per update, equal exactly where the coordinates are.
    """
    if x.dtype == "bool":
        # np.add.at on bools is a logical or; count in int64, then test for non-zero.
        total = scatter_add(g, g.cast(x, "int64"), coordinates, g.cast(updates, "int64"), keys)
        return g.cast(total, "bool")
    if g.opset >= 16:
        return g.op("ScatterND", x, coordinates, updates, reduction="add")
    return _scatter_add_by_sorting(g, x, coordinates, updates, keys)


# Doubling steps of the segmented sum when the number of updates is known
# only at run time: up to 2**32 updates (more raise).
_SEGMENTED_SUM_STEPS = 32


def _scatter_add_by_sorting(g, x, coordinates, updates, keys):
    """ScatterND with ``reduction="add"`` for opsets before 16.

    Stable-sort the updates by key (TopK keeps ties in index order), sum each
    run of equal keys with a segmented inclusive scan (log-step doubling, so
    sums never subtract and inf/NaN behave), and scatter one total per
    distinct key. Sums group the additions in a tree rather than NumPy's
    left-to-right order, so float results agree to rounding.
    """
    static_count = keys.shape[0] if keys.shape is not None else None
    if isinstance(static_count, int):
        count = int64_const(g, static_count)
        n_steps = max(static_count - 1, 0).bit_length()  # 2**n_steps >= static_count
    else:
        count = g.op("Size", keys)
        count = check(g, g.op("LessOrEqual", count, int64_const(g, 2**_SEGMENTED_SUM_STEPS)), count)
        n_steps = _SEGMENTED_SUM_STEPS
    sorted_keys, order = g.op(
        "TopK", keys, g.op("Unsqueeze", count, axes=[0]), axis=0, largest=0, sorted=1, outputs=2
    )
    sums = g.op("Gather", updates, order, axis=0)
    ids = g.op("Range", int64_const(g, 0), count, int64_const(g, 1))
    zero = int64_const(g, 0)
    previous = g.op("Gather", sorted_keys, g.op("Max", g.op("Sub", ids, int64_const(g, 1)), zero), axis=0)
    starts_run = g.op("Or", g.op("Equal", ids, zero), g.op("Not", g.op("Equal", sorted_keys, previous)))
    run_of = g.op("Sub", g.op("CumSum", g.cast(starts_run, "int64"), zero), int64_const(g, 1))
    first_of_run = g.op("Gather", _where_true(g, starts_run), run_of, axis=0)
    no_update = g.const(np.zeros((), dtype=x.dtype))
    for step in range(n_steps):
        source = g.op("Sub", ids, int64_const(g, 1 << step))
        same_run = g.op("GreaterOrEqual", source, first_of_run)
        earlier = g.op("Gather", sums, g.op("Max", source, zero), axis=0)
        sums = g.op("Add", sums, g.op("Where", same_run, earlier, no_update))
    last = g.op("Sub", count, int64_const(g, 1))
    next_id = g.op("Min", g.op("Add", ids, int64_const(g, 1)), g.op("Max", last, zero))
    following = g.op("Gather", sorted_keys, next_id, axis=0)
    ends_run = g.op("Or", g.op("Equal", ids, last), g.op("Not", g.op("Equal", sorted_keys, following)))
    run_ends = _where_true(g, ends_run)
    targets = g.op("Gather", coordinates, g.op("Gather", order, run_ends, axis=0), axis=0)
    totals = g.op("Gather", sums, run_ends, axis=0)
    return g.op("ScatterND", x, targets, g.op("Add", g.op("GatherND", x, targets), totals))


def _where_true(g, flags):
    """Positions of the true elements of a 1-d bool tensor."""
    return g.op("Squeeze", g.op("NonZero", flags), axes=[0])


@onnx_funcify.register(IncSubtensor)
def _inc_subtensor(op, node, g, x, y, *index_values):
    indices = subtensor_indices(op, index_values)
    return write_selection(
        g, x, y, lambda t: basic_index(g, t, indices), set_values=op.set_instead_of_inc, accumulate=False
    )


def _has_static_shape(value, wanted) -> bool:
    """Whether the builder knows ``value``'s shape to be ``wanted``, every
    dim an int."""
    return value.shape is not None and all(isinstance(d, int) for d in wanted) and tuple(value.shape) == wanted


def _advanced_inc_subtensor1(op, node, g, x, y, index):
    index = g.cast(index, "int64")
    if op.set_instead_of_inc or (g.opset >= 16 and x.dtype != "bool"):
        # ScatterND on whole rows: ONNX Runtime reads negative indices like
        # NumPy and rejects out-of-range ones.
        updates = g.cast(y, x.dtype)
        rows = (*(index.shape or (None,)), *(x.shape or (None, None))[1:])
        if not _has_static_shape(y, rows):
            # (y broadcasts to the rows; where its type has their shape, as
            # a gradient of x[idx] does, it is the updates as it is. A
            # static shape of the rows is a constant target, which the
            # builder guards against ONNX Runtime's ExpandElimination, as in
            # write_selection: a (1,) y set at an empty index array reached
            # ScatterND unexpanded; FUZZ_SEED=424242.)
            if all(isinstance(d, int) and d >= 0 for d in rows):
                target = int64_const(g, list(rows))
            else:
                target = int64_vector(g, [g.op("Shape", index), *dim_sizes(g, x)[1:]])
            updates = g.op("Expand", updates, target)
        attrs = {} if op.set_instead_of_inc else {"reduction": "add"}
        return g.op("ScatterND", x, g.op("Unsqueeze", index, axes=[-1]), updates, **attrs)
    return write_selection(g, x, y, lambda t: g.op("Gather", t, index, axis=0), set_values=False, accumulate=True)


if AdvancedIncSubtensor1 is not None:
    onnx_funcify.register(AdvancedIncSubtensor1)(_advanced_inc_subtensor1)


def _rows_of_one_index_array(indices) -> bool:
    """Whether ``indices`` are one integer array on the first axis, and whole
    axes after it: ``x[idx]``, ``x[idx, :]`` (PyTensor 3's form of what
    2.38's AdvancedIncSubtensor1 is)."""
    first, *rest = indices
    whole = slice(None, None, None)
    return not isinstance(first, slice) and first.dtype != "bool" and all(r == whole for r in rest)


@onnx_funcify.register(AdvancedIncSubtensor)
def _advanced_inc_subtensor(op, node, g, x, y, *index_values):
    indices = subtensor_indices(op, index_values)
    if indices and _rows_of_one_index_array(indices) and not (op.ignore_duplicates and not op.set_instead_of_inc):
        # One ScatterND on whole rows, as for AdvancedIncSubtensor1 (PyMC's
        # gradient of ``a[group_idx]``): the index array is the scatter's
        # indices; no flat positions or coordinates to compute.
        return _advanced_inc_subtensor1(op, node, g, x, y, indices[0])
    # Only integer arrays can select a position twice (masks and scalars cannot).
    may_repeat = any(not isinstance(index, slice) and index.dtype != "bool" and index.rank > 0 for index in indices)
    accumulate = may_repeat and not op.ignore_duplicates
    positions = constant_positions(op, node, 2)
    if positions is REFUSED:
        return check(g, g.const(np.asarray(False)), x)  # (see _refused)
    if positions is not None:
        return write_positions(
            g, x, y, positions, node.inputs[0].type.shape, set_values=op.set_instead_of_inc, accumulate=accumulate
        )
    return write_selection(
        g, x, y, lambda t: advanced_index(g, t, indices), set_values=op.set_instead_of_inc, accumulate=accumulate
    )
