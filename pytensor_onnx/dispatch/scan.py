"""Scan -> ONNX ``Loop``.

A Scan node's outer inputs are ``n_steps``, sequences, the buffers of the
mit-mot, mit-sot and sit-sot outputs, the initial values of the untraced
sit-sots (shared-variable updates), the lengths of the nit-sot outputs and the
non-sequences; ``Scan.perform`` (pytensor/scan/op.py) defines what it returns.
The Loop body is the converted inner graph; what it carries is chosen so no
step copies more than its own values (no O(n^2) buffer updates):

- sequences: the body reads row ``i`` of the enclosing graph's sequence
  (``Gather``); a sequence read with several taps arrives as several sequences
  (PyTensor slices them outside);
- mit-sot / sit-sot with taps down to ``-m``: the last ``m`` values are
  carried, each as its own loop-carried value (shifting them passes
  references, no copies); when more than the last ``m`` values may be needed,
  each new value is also a scan output (ONNX Runtime concatenates those once at
  the end) and the initial rows are prepended once;
- nit-sot: scan outputs;
- untraced sit-sot: carried;
- mit-mot (gradients of Scan): at step ``i`` the taps touch rows
  ``i + lo .. i + hi`` of the buffer, rows below are final. The window of
  those ``hi - lo + 1`` rows is carried, the row leaving it is a scan output
  and the next row of the outer buffer enters it;
- while loops (``until``): the body's condition output is ``not until``; the
  number of steps run is carried.

The outputs are then laid out as ``Scan.perform`` leaves its buffers: a
buffer of length ``S`` holding the history ``H`` (initial taps, then one row
per step; ``L`` rows) keeps its last ``S`` rows when ``S < L`` (PyTensor's
circular buffers, from the scan-save-mem rewrites, rotated back into order),
else ``H`` followed by zero rows, cut by the steps a while loop did not run.
With ``n_steps == 0`` the buffers are returned as given.
"""

from __future__ import annotations

from itertools import islice

import numpy as np
from pytensor.raise_op import CheckAndRaise
from pytensor.scalar.basic import ScalarType
from pytensor.scan.op import Scan
from pytensor.tensor.basic import get_underlying_scalar_constant_value
from pytensor.tensor.exceptions import NotScalarConstantError
from pytensor.tensor.shape import Shape_i
from pytensor.tensor.type import TensorType

from pytensor_onnx.compat import SCAN_INNER_GRAPHS_REWRITTEN_BY_MODE
from pytensor_onnx.dispatch.basic import convert_nodes, lookup, onnx_funcify
from pytensor_onnx.dispatch.broadcast import checked_outputs
from pytensor_onnx.dispatch.ifelse import truth
from pytensor_onnx.dispatch.raise_op import check_node_name
from pytensor_onnx.dispatch.utils import INT64_MAX, as_int64_value, check, dim_size, int64_const

# The run-time checks Scan.perform makes before it loops (same exception types).
_NEGATIVE_STEPS = check_node_name(CheckAndRaise(IndexError, "Scan was asked to run for a negative number of steps"))
_SHORT_SEQUENCE = check_node_name(CheckAndRaise(ValueError, "A Scan sequence is shorter than the number of steps"))


def _unsupported(node, why: str):
    return NotImplementedError(f"Scan {node.op.name or ''} ({node}): {why}")


def _rows(g, x):
    """Length of the leading axis of ``x`` (int64 scalar Value)."""
    return as_int64_value(g, dim_size(g, x, 0))


def _row(g, x, index):
    return g.op("Gather", x, index, axis=0)


def _rows_between(g, x, start, end):
    return g.op("Slice", x, g.op("Unsqueeze", start, axes=[0]), g.op("Unsqueeze", end, axes=[0]), int64_const(g, [0]))


def _stack(g, rows):
    rows = [g.op("Unsqueeze", r, axes=[0]) for r in rows]
    return rows[0] if len(rows) == 1 else g.op("Concat", *rows, axis=0)


def _after_steps(g, steps, stacked, others, *, stacked_last=False):
    """``stacked`` (rows a Loop stacked) concatenated with ``others``.

    After zero iterations ONNX Runtime gives a stacked output 0 for every dim
    it cannot infer, which Concat would reject: an If leaves it out then."""
    pieces = [*others, stacked] if stacked_last else [stacked, *others]
    if stacked.shape is not None and all(isinstance(d, int) for d in stacked.shape[1:]):
        return g.op("Concat", *pieces, axis=0)
    ran = g.subgraph("scan_ran")
    ran.output(ran.op("Concat", *pieces, axis=0), "scan_rows")
    did_not_run = g.subgraph("scan_did_not_run")
    did_not_run.output(others[0] if len(others) == 1 else did_not_run.op("Concat", *others, axis=0), "scan_rows")
    ran_at_all = g.op("Greater", steps.done, int64_const(g, 0))
    return g.op("If", ran_at_all, then_branch=ran, else_branch=did_not_run)


def _zero_rows(g, count, like):
    shape = g.op("Concat", g.op("Unsqueeze", count, axes=[0]),
                 g.op("Slice", g.op("Shape", like), int64_const(g, [1]), int64_const(g, [INT64_MAX])), axis=0)
    return g.op("Expand", g.const(np.zeros((), dtype=like.dtype)), shape)


class _Steps:
    """Scalars of the run: ``requested`` (n_steps) and ``done`` (steps run;
    fewer only for a while loop that stopped early)."""

    def __init__(self, g, requested, done, may_stop_early: bool):
        self.requested = requested
        self.done = done
        self.may_stop_early = may_stop_early
        self.none_requested = g.op("Equal", requested, int64_const(g, 0))


def _lay_out(g, steps: _Steps, known, offset, history_length, size, given_rows=None):
    """A buffer of ``size`` rows as ``Scan.perform`` leaves it.

    ``known`` holds rows ``offset`` to ``history_length - 1`` of the history
    ``H``. ``size < len(H)``: the last ``size`` rows; else ``H`` and zero rows,
    less the steps a while loop did not run. ``given_rows(start, count)``: the
    rows a zero-step run returns instead of zeros (the buffer as given).
    """
    zero = int64_const(g, 0)
    excess = g.op("Sub", size, history_length)
    start = g.op("Max", g.op("Neg", excess), zero)
    end = g.op("Add", start, size)
    missing = excess
    if steps.may_stop_early:
        stopped_early = g.op("Less", steps.done, steps.requested)
        cut = g.op("Where", g.op("And", g.op("Greater", excess, zero), stopped_early),
                   g.op("Sub", steps.requested, steps.done), zero)
        end = g.op("Sub", end, cut)
        missing = g.op("Sub", excess, cut)
    missing = g.op("Max", missing, zero)
    padding = _zero_rows(g, missing, known)
    if given_rows is not None:
        padding = g.op("Where", steps.none_requested, given_rows(history_length, missing), padding)
    padded = g.op("Concat", known, padding, axis=0)
    if offset is not None:
        start, end = g.op("Sub", start, offset), g.op("Sub", end, offset)
    return _rows_between(g, padded, start, end)


def _is_length_of(var, seq_var) -> bool:
    """Whether PyTensor variable ``var`` is ``seq_var.shape[0]``."""
    owner = var.owner
    return owner is not None and isinstance(owner.op, Shape_i) and owner.op.i == 0 and owner.inputs[0] is seq_var


def _never_negative(var) -> bool:
    owner = var.owner
    if owner is not None and isinstance(owner.op, Shape_i):
        return True
    try:
        return int(get_underlying_scalar_constant_value(var)) >= 0
    except NotScalarConstantError:
        return False


def inner_graph(op):
    """The Scan's inner graph, rewritten as the ONNX mode rewrites graphs:
    fewer nodes in the Loop body run on every step. (PyTensor 3.3+ has done
    so when compiling with mode ONNX; its graph is used as it is.)"""
    if SCAN_INNER_GRAPHS_REWRITTEN_BY_MODE:
        return op.fgraph
    from pytensor_onnx.dispatch.basic import kernels_enabled
    from pytensor_onnx.rewriting import onnx_rewriter

    fgraph = op.fgraph.clone()
    onnx_rewriter(kernels_enabled()).rewrite(fgraph)
    return fgraph


@onnx_funcify.register(Scan)
def _scan(op, node, g, n_steps, *outer):
    info = op.info
    fgraph = inner_graph(op)
    inner_inputs = list(fgraph.inputs)
    inner_outputs = list(fgraph.outputs)
    for var in [*node.inputs[1:], *node.outputs, *inner_inputs, *inner_outputs]:
        # A PyTensor scalar (e.g. a gradient's bool flag among the
        # non-sequences) is a 0-d tensor in ONNX.
        if not isinstance(var.type, TensorType | ScalarType):
            raise _unsupported(node, f"it carries {var} of type {var.type}; ONNX Loops carry tensors only")

    # Outer inputs, grouped by kind with Scan's own accessors (they slice any
    # list laid out as the node's inputs: here the converted Values).
    outer = [n_steps, *outer]
    seqs = op.outer_seqs(outer)
    mit_mot_buffers = op.outer_mitmot(outer)
    traced_buffers = op.outer_mitsot(outer) + op.outer_sitsot(outer)
    untraced_init = op.outer_untraced_sit_sot(outer)
    nit_sot_sizes = op.outer_nitsot(outer)
    non_seqs = op.outer_non_seqs(outer)
    traced_taps = list(info.mit_sot_in_slices) + list(info.sit_sot_in_slices)

    requested = g.cast(n_steps, "int64")
    n_steps_var = node.inputs[0]
    if not _never_negative(n_steps_var):
        requested = check(g, g.op("GreaterOrEqual", requested, int64_const(g, 0)), requested, _NEGATIVE_STEPS)
    for seq, seq_var in zip(seqs, op.outer_seqs(node.inputs)):
        if not _is_length_of(n_steps_var, seq_var):
            requested = check(g, g.op("GreaterOrEqual", _rows(g, seq), requested), requested, _SHORT_SEQUENCE)

    body = g.subgraph(f"{op.name or 'scan'}_body".replace(" ", "_"))
    iteration = body.input("iteration", "int64", [])
    keep_going = body.input("condition", "bool", [])
    env: dict = {}
    carried_init, carried_out = [], []  # outer initial values, body results (filled below)
    scan_outs = []  # body results stacked by the Loop

    def carry(init, name, dtype, rank):
        carried_init.append(init)
        return body.input(name, dtype, [None] * rank)

    # Sequences.
    for var, seq in zip(op.inner_seqs(inner_inputs), seqs):
        env[var] = _row(body, seq, iteration)

    # Mit-mot: a window of rows lo..hi around the current position.
    mit_mot_windows = []
    mit_mot_taps = iter(op.inner_mitmot(inner_inputs))  # every state's taps, one after the other
    for k, (in_taps, out_taps) in enumerate(zip(info.mit_mot_in_slices, info.mit_mot_out_slices)):
        buffer = mit_mot_buffers[k]
        lowest = min(in_taps)
        if lowest > 0 or min(out_taps) < lowest:
            raise _unsupported(node, f"mit-mot taps in={in_taps} out={out_taps} (reads wrap around the buffer)")
        width = max(max(in_taps), max(out_taps)) - lowest + 1
        length = _rows(g, buffer)
        # Zero rows past the end: the window may reach beyond the buffer (rows
        # no step reads); the rows entering the window come as a sequence.
        padded = g.op("Concat", buffer, _zero_rows(g, int64_const(g, width), buffer), axis=0)
        entering = _rows_between(g, padded, int64_const(g, width), int64_const(g, INT64_MAX))
        window = [
            carry(_row(g, padded, int64_const(g, j)), f"mitmot{k}_row{j}", buffer.dtype, buffer.rank - 1)
            for j in range(width)
        ]
        for tap, var in zip(in_taps, mit_mot_taps):
            env[var] = window[tap - lowest]
        mit_mot_windows.append((buffer, length, lowest, width, window, entering))

    # Mit-sot / sit-sot: the last m values.
    traced_windows = []
    traced_tap_vars = iter(op.inner_mitsot(inner_inputs) + op.inner_sitsot(inner_inputs))
    for k, (buffer, taps) in enumerate(zip(traced_buffers, traced_taps)):
        if max(taps) >= 0:
            raise _unsupported(node, f"recurrent output {k} reads taps {taps}; taps must be negative")
        depth = -min(taps)
        length = _rows(g, buffer)
        window = [
            carry(_row(g, buffer, int64_const(g, j)), f"trace{k}_row{j}", buffer.dtype, buffer.rank - 1)
            for j in range(depth)
        ]
        for tap, var in zip(taps, traced_tap_vars):
            env[var] = window[depth + tap]
        traced_windows.append((buffer, length, depth, window))

    # Untraced sit-sot.
    untraced_state = []
    for k, (var, init) in enumerate(zip(op.inner_untraced_sit_sot(inner_inputs), untraced_init)):
        env[var] = carry(init, f"untraced{k}", init.dtype, init.rank)
        untraced_state.append(env[var])

    # Non-sequences: read from the enclosing graph.
    for var, value in zip(op.inner_non_seqs(inner_inputs), non_seqs):
        env[var] = value
    if len(env) != len(inner_inputs):
        raise _unsupported(node, "its inner inputs do not match its ScanInfo")

    counter = carry(int64_const(g, 0), "steps_done", "int64", 0) if info.as_while else None

    inner_nodes = fgraph.toposort()
    scope = convert_nodes(inner_nodes, body, env, outputs=inner_outputs)
    results = [lookup(body, env, var) for var in inner_outputs]
    # PyTensor's broadcasting rule holds in every step as in the outer graph
    # (dispatch/broadcast.py): the first tensor result reads the step's
    # check; the Loop needs every result of every step, so a failing step
    # fails the run.
    tensors = [isinstance(var.type, TensorType) and var.type.ndim > 0 for var in inner_outputs]
    if any(tensors):
        first = tensors.index(True)
        results = checked_outputs(body, inner_nodes, env, inner_outputs, results,
                                  [i == first for i in range(len(tensors))], scope.checked_in_kernels)

    # Mit-mot: write the out taps into the window, emit its first row, shift.
    mit_mot_results = iter(op.inner_mitmot_outs(results))  # every state's out taps, one after the other
    for (buffer, length, lowest, width, window, entering), out_taps in zip(mit_mot_windows, info.mit_mot_out_slices):
        updated = list(window)
        for tap, value in zip(out_taps, mit_mot_results):
            updated[tap - lowest] = body.cast(value, buffer.dtype)
        scan_outs.append(updated[0])
        carried_out.extend([*updated[1:], _row(body, entering, iteration)])

    # Mit-sot / sit-sot: shift the new value in; keep the history if needed.
    traced_keep_history = []
    traced_results = op.inner_mitsot_outs(results) + op.inner_sitsot_outs(results)
    for (buffer, length, depth, window), value in zip(traced_windows, traced_results, strict=True):
        value = body.cast(value, buffer.dtype)
        carried_out.extend([*window[1:], value])
        static_length = buffer.shape[0] if buffer.shape is not None else None
        keep = not (isinstance(static_length, int) and static_length <= depth)
        traced_keep_history.append(keep)
        if keep:
            scan_outs.append(value)

    nit_sot_values = [
        body.cast(value, var.type.dtype)
        for value, var in zip(op.inner_nitsot_outs(results), op.outer_nitsot_outs(node.outputs), strict=True)
    ]
    scan_outs.extend(nit_sot_values)
    untraced_results = op.inner_untraced_sit_sot_outs(results)
    for var_out, value in zip(op.outer_untraced_sit_sot_outs(node.outputs), untraced_results, strict=True):
        carried_out.append(body.cast(value, var_out.type.dtype))
    if info.as_while:
        until = results[-1]  # a while Scan's last inner output is its condition
        body.output(body.op("Not", truth(body, until)), "continue")
        carried_out.append(body.op("Add", counter, int64_const(body, 1)))
    else:
        body.output(keep_going, "continue")
    for i, value in enumerate(carried_out):
        body.output(value, f"carried{i}")
    for i, value in enumerate(scan_outs):
        body.output(value, f"stacked{i}")

    loop_outputs = g.op("Loop", requested, g.const(np.array(True)), *carried_init, body=body,
                        outputs=len(carried_init) + len(scan_outs))
    if len(carried_init) + len(scan_outs) == 1:
        loop_outputs = [loop_outputs]
    finals = list(loop_outputs[: len(carried_init)])
    stacked = list(loop_outputs[len(carried_init) :])
    done = finals[-1] if info.as_while else requested
    steps = _Steps(g, requested, done, may_stop_early=info.as_while)

    outputs = []
    final_values = iter(finals)  # the carried values in the order carry() made them
    for buffer, length, lowest, width, *_ in mit_mot_windows:
        final_window = list(islice(final_values, width))
        finished = stacked.pop(0)
        rest = _rows_between(g, buffer, g.op("Add", done, int64_const(g, width)), int64_const(g, INT64_MAX))
        whole = _after_steps(g, steps, finished, [_stack(g, final_window), rest])
        outputs.append(_rows_between(g, whole, int64_const(g, 0), length))

    for (buffer, length, depth, _), keep in zip(traced_windows, traced_keep_history):
        final_window = list(islice(final_values, depth))
        history_length = g.op("Add", done, int64_const(g, depth))
        if keep:
            initial = _rows_between(g, buffer, int64_const(g, 0), int64_const(g, depth))
            known = _after_steps(g, steps, stacked.pop(0), [initial], stacked_last=True)
            offset = None
        else:
            known = _stack(g, final_window)
            offset = done

        def given_rows(start, count, buffer=buffer):
            return _rows_between(g, buffer, start, g.op("Add", start, count))

        outputs.append(_lay_out(g, steps, known, offset, history_length, length, given_rows))

    for size in nit_sot_sizes:
        known = stacked.pop(0)
        # A zero-step run returns no rows, whatever the buffer size (Scan.perform).
        size = g.op("Where", steps.none_requested, int64_const(g, 0), g.cast(size, "int64"))
        outputs.append(_lay_out(g, steps, known, None, done, size))

    outputs.extend(islice(final_values, info.n_untraced_sit_sot))  # (a while loop's counter comes after)
    return outputs
