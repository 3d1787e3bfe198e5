"""Run-time broadcasting that PyTensor refuses, refused in the model too.

PyTensor broadcasts a dim only where the type says it is 1
(``type.shape[i] == 1``); two inputs of an Elemwise whose dims it does not
know to be 1 must have equal sizes at run time (``x + y`` of a length-1 and a
length-3 vector raises ``ValueError``). ONNX's element-wise ops, and the
kernel library's Elemwise nodes, broadcast any size-1 dim.

The check is cheap: Elemwise, DimShuffle and CAReduce nodes only relabel or
share dims, so the dims they force equal are unified over the whole graph
(union-find over ``(variable, axis)``). In each class, the dims no such node
derives (graph inputs, outputs of other Ops: the class's *origins*) are
compared once, whatever number of element-wise nodes share them; a class of
one origin needs nothing, static sizes need nothing (static mismatches raise
at conversion). The size differences add up to one index; the model reads a
one-element tensor at that index (out of range unless it is 0), and that
Gather is named as a ``CheckAndRaise(ValueError, ...)`` (``raise_op``) so
mode ONNX raises ``ValueError`` (also a ``RuntimeError``) as PyTensor does,
and any runtime quotes the message. The Gather gives ``[0]``, the axis at
which each graph output is unsqueezed and squeezed back (no copy: ONNX
Runtime's Unsqueeze and Squeeze reuse the buffer); mode ONNX, whose runs
fetch every output, does so for the first output only
(``fgraph_to_onnx(check_each_output=False)``).

The outer graph, Scan bodies (``dispatch/scan.py``: every step), IfElse
branches (``dispatch/ifelse.py``: the work only one branch needs, which the
IfElse rule moves into it, checked there, when that branch is taken) and
OpFromGraph inner graphs (``dispatch/basic.py``: every tensor result) are
checked, each for the nodes every run of it computes.
"""

from __future__ import annotations

from types import SimpleNamespace

from pytensor.raise_op import CheckAndRaise
from pytensor.tensor.elemwise import CAReduce, DimShuffle, Elemwise

from pytensor_onnx import _core
from pytensor_onnx.compat import IfElse
from pytensor_onnx.dispatch.ifelse import branch_nodes
from pytensor_onnx.dispatch.raise_op import check_node_name
from pytensor_onnx.dispatch.utils import int64_const

#: Off only to measure what the checks cost (bench/broadcast_checks.py).
ENABLED = True

_MAX_NAMED = 4


class _DimClasses:
    """Union-find over ``(variable, axis)``."""

    def __init__(self):
        self.parent: dict = {}

    def find(self, key):
        parent = self.parent
        parent.setdefault(key, key)
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[ra] = rb


def equal_dim_classes(nodes, kernel_checked=()) -> list[list[tuple]]:
    """The origins ``(variable, axis)`` of each class of dims that PyTensor's
    broadcasting rules force equal in ``nodes`` (classes of two or more).

    ``kernel_checked``: nodes whose kernel node checks their inputs' dims
    itself. Their outputs are derived dims too, and origins they already
    force equal count once: a ScalarLoop read by the kernel node's outputs
    needs no check of those against the inputs the kernel checked (a
    gradient of gammainc on vectors: 8 comparisons, 27 nodes, ~25 us a run)."""
    classes, verified = _DimClasses(), _DimClasses()
    derived = set()
    _relate(nodes, classes, derived)
    _relate(kernel_checked, classes, derived)
    # Dims known equal at run time: those the kernel nodes check, and a
    # DimShuffle's or CAReduce's dims, which are their input's own (an
    # Elemwise outside a kernel broadcasts, ONNX's way, whatever the sizes).
    _relate(kernel_checked, verified, set())
    _relate(nodes, verified, set(), elemwise=False)
    origins: dict = {}
    for key in classes.parent:
        if key not in derived:
            origins.setdefault(classes.find(key), {}).setdefault(verified.find(key), key)
    return [list(members.values()) for members in origins.values() if len(members) > 1]


def _relate(nodes, classes, derived, elemwise=True) -> None:
    """Unite in ``classes`` the dims ``nodes`` force equal (those of Elemwise
    nodes only with ``elemwise``), adding the dims they derive to ``derived``."""
    for node in nodes:
        op = node.op
        if isinstance(op, Elemwise):
            if not elemwise:
                continue
            for out in node.outputs:
                for axis in range(out.type.ndim):
                    members = [(inp, axis) for inp in node.inputs if inp.type.shape[axis] != 1]
                    if members:
                        derived.add((out, axis))
                        for member in members:
                            classes.union((out, axis), member)
        elif isinstance(op, DimShuffle):
            out = node.outputs[0]
            for axis, source in enumerate(op.new_order):
                if source != "x":
                    derived.add((out, axis))
                    classes.union((out, axis), (node.inputs[0], source))
        elif isinstance(op, CAReduce):
            x, out = node.inputs[0], node.outputs[0]
            reduced = set(range(x.type.ndim)) if op.axis is None else {a % x.type.ndim for a in op.axis}
            kept = [a for a in range(x.type.ndim) if a not in reduced]
            if len(kept) == out.type.ndim:
                for axis, source in enumerate(kept):
                    derived.add((out, axis))
                    classes.union((out, axis), (x, source))


def eager_nodes(nodes, outputs) -> list:
    """The ``nodes`` (a graph's nodes in order) every run computes: the
    ancestors of ``outputs`` but the work that only one branch of an IfElse
    needs, which the IfElse rule moves into that branch
    (``dispatch/ifelse.py``, ``branch_nodes``): it runs lazily, as in
    PyTensor, so its dims meet only when that branch is taken. Work both
    branches need (``ifelse(c, x + y, -(x + y))``'s ``x + y``) runs whichever
    is taken, in PyTensor too, and is checked."""
    scope = SimpleNamespace(nodes=list(nodes), outputs=list(outputs))
    lazy: set = set()
    for node in scope.nodes:
        if isinstance(node.op, IfElse):
            n = node.op.n_outs
            for slots in (range(1, 1 + n), range(1 + n, 1 + 2 * n)):
                lazy.update(branch_nodes(scope, node, set(slots)))
    needed: set = set()
    stack = list(outputs)
    while stack:
        node = stack.pop().owner
        if node is None or node in needed or node in lazy:
            continue
        needed.add(node)
        stack.extend(node.inputs)
    return [node for node in nodes if node in needed]


def _describe(var, axis) -> str:
    return f"{var.name or var} axis {axis}"


def _dim(g, value, axis):
    """Axis ``axis``'s size of ``value`` as a 1-element int64 vector."""
    return g.op("Shape", value, start=axis, end=axis + 1)


def broadcast_mismatch(g, nodes, env, kernel_checked=()):
    """``(mismatch, message)``: an int64 ``[1]`` Value that is 0 when every
    class of ``equal_dim_classes(nodes, kernel_checked)`` has equal sizes at
    run time (the sum of the size differences), or ``(None, None)`` when
    nothing needs checking at run time. Raises ValueError for dims whose
    static sizes already differ."""
    differences = []
    named = []
    for members in equal_dim_classes(nodes, kernel_checked):
        static, dynamic = {}, []
        for var, axis in members:
            value = env.get(var)
            if not isinstance(value, _core.Value):
                continue  # no value of its own (basic.FUSED: summed inside a kernel node)
            size = var.type.shape[axis]
            if size is None and value.shape is not None and isinstance(value.shape[axis], int):
                size = value.shape[axis]
            if size is not None:
                static.setdefault(size, (var, axis))
            else:
                dynamic.append((var, axis, value))
        if len(static) > 1:
            (a, b) = list(static.items())[:2]
            raise ValueError(
                f"Incompatible static dims that PyTensor's broadcasting requires equal: {_describe(*a[1])} has "
                f"size {a[0]}, {_describe(*b[1])} has size {b[0]} (only a dim PyTensor knows to be 1 broadcasts)"
            )
        if not dynamic or (not static and len(dynamic) < 2):
            continue
        if static:
            [(size, reference)] = static.items()
            reference_size = int64_const(g, [size])
            others = dynamic
        else:
            reference = dynamic[0][:2]
            reference_size = _dim(g, dynamic[0][2], dynamic[0][1])
            others = dynamic[1:]
        for var, axis, value in others:
            differences.append(g.op("Abs", g.op("Sub", _dim(g, value, axis), reference_size)))
            named.append(f"{_describe(*reference)} == {_describe(var, axis)}")
    if not differences:
        return None, None
    mismatch = differences[0]
    for difference in differences[1:]:
        mismatch = g.op("Add", mismatch, difference)
    listed = "; ".join(named[:_MAX_NAMED]) + ("; ..." if len(named) > _MAX_NAMED else "")
    message = (
        "Input dimension mismatch: a dim broadcasts only where PyTensor's type says it is 1 (shape[i] == 1); "
        f"these sizes must be equal at run time: {listed}"
    )
    return mismatch, message


def checked_outputs(g, nodes, env, outputs, values, tensors, checked_in_kernels=frozenset()):
    """``values`` (the ONNX Values of the graph's ``outputs``), each tensor
    (``tensors``: a flag per value) read through the run-time broadcast check
    of ``nodes`` (a graph's nodes in order) when one is needed; the nodes in
    ``checked_in_kernels`` (``ConversionScope.checked_in_kernels``) check
    their own inputs' dims in their kernel nodes."""
    if not ENABLED or not any(tensors):
        return values
    eager = eager_nodes(nodes, outputs)
    unchecked = [node for node in eager if node not in checked_in_kernels]
    kernel_checked = [node for node in eager if node in checked_in_kernels]
    mismatch, message = broadcast_mismatch(g, unchecked, env, kernel_checked)
    if mismatch is None:
        return values
    # One check node for all outputs: [0] read at index ``mismatch``, out of
    # range unless it is 0. Each output is unsqueezed at that axis and
    # squeezed back: both reuse the buffer.
    name = check_node_name(CheckAndRaise(ValueError, message))
    axes = g.op("Gather", int64_const(g, [0]), mismatch, axis=0, node_name=name)
    return [
        g.op("Squeeze", g.op("Unsqueeze", value, axes), axes=[0]) if tensor else value
        for value, tensor in zip(values, tensors)
    ]
