"""IfElse (and 3.3's LazyIfElse) -> ONNX ``If``.

PyTensor's IfElse is lazy: only the work of the taken branch runs. Its node
takes the branch *results* as inputs, so the rule moves the work that only
one branch needs into that branch's subgraph: the nodes of the surrounding
graph whose results feed nothing but the then-inputs (or nothing but the
else-inputs) of this IfElse are converted again inside the subgraph, reading
everything else from the enclosing graph. The copies converted earlier in
the enclosing graph are then unused, and the dead-node pass removes them (it
runs in mode ONNX and in exports with ``optimize=True``; without it both
branches are computed eagerly, as PyTensor's non-lazy linkers do). Work both
branches or the condition need stays outside, as in PyTensor's own
``introduce_lazy_ifelse``.

The condition is any scalar: true when it is not 0 (NaN is true), as
IfElse's Python implementation reads it.
"""

from __future__ import annotations

import re
from collections import ChainMap

from pytensor_onnx.compat import IfElse, LazyIfElse
from pytensor_onnx.dispatch.basic import const, convert_nodes, current_scope, lookup, onnx_funcify


def truth(g, condition):
    """The bool scalar ``condition != 0`` (a bool condition itself)."""
    if condition.dtype == "bool":
        return condition
    return g.op("Not", g.op("Equal", condition, const(g, 0, condition.dtype)))


def _subgraph_name(op, suffix: str) -> str:
    name = getattr(op, "name", None)
    base = re.sub(r"[^A-Za-z0-9_]", "_", name) if name else "ifelse"
    return f"{base}_{suffix}"


def branch_nodes(scope, node, slots) -> list:
    """The nodes of ``scope`` (in order) whose results only feed input
    ``slots`` of ``node``, directly or through other such nodes."""
    if scope is None:
        return []
    outputs = set(scope.outputs or ())
    position, clients = _positions_and_clients(scope)
    if node not in position:
        return []
    movable: set = set()
    for candidate in reversed(scope.nodes[: position[node]]):
        uses = [use for out in candidate.outputs for use in clients.get(out, ())]
        if (
            uses
            and not any(out in outputs for out in candidate.outputs)
            and all((user is node and index in slots) or user in movable for user, index in uses)
        ):
            movable.add(candidate)
    return [n for n in scope.nodes if n in movable]


def _positions_and_clients(scope):
    cached = getattr(scope, "_ifelse_clients", None)
    if cached is None:
        clients: dict = {}
        for n in scope.nodes:
            for index, var in enumerate(n.inputs):
                clients.setdefault(var, []).append((n, index))
        cached = scope._ifelse_clients = ({n: i for i, n in enumerate(scope.nodes)}, clients)
    return cached


def build_branch(g, name: str, env, nodes, results) -> object:
    """A subgraph of ``g`` computing ``results`` from ``nodes`` (converted
    inside it) and values of the enclosing graphs (read from ``env``).
    PyTensor's broadcasting rule holds in the branch as in the outer graph
    (dispatch/broadcast.py): its first tensor result reads the branch's
    check (the If makes every result of the branch it takes)."""
    from pytensor_onnx.dispatch.broadcast import checked_outputs

    branch = g.subgraph(name)
    branch_env = ChainMap({}, env)
    scope = convert_nodes(nodes, branch, branch_env, outputs=results)
    values = [lookup(branch, branch_env, var) for var in results]
    tensors = [getattr(var.type, "ndim", 0) > 0 for var in results]
    if any(tensors):
        first = tensors.index(True)
        values = checked_outputs(branch, nodes, branch_env, results, values,
                                 [i == first for i in range(len(results))], scope.checked_in_kernels)
    for i, value in enumerate(values):
        branch.output(value, f"{name}_out{i}")
    return branch


@onnx_funcify.register(IfElse)
def _ifelse(op, node, g, condition, *branch_values):
    n = op.n_outs
    scope = current_scope()
    then_slots = set(range(1, 1 + n))
    else_slots = set(range(1 + n, 1 + 2 * n))
    env = scope.env if scope is not None else {}
    # Values the rule received but env lacks (rules called directly) stay reachable.
    env = ChainMap(dict(zip(node.inputs[1:], branch_values)), env)
    then_graph = build_branch(
        g, _subgraph_name(op, "then"), env, branch_nodes(scope, node, then_slots), node.inputs[1 : 1 + n]
    )
    else_graph = build_branch(
        g, _subgraph_name(op, "else"), env, branch_nodes(scope, node, else_slots), node.inputs[1 + n :]
    )
    outs = g.op("If", truth(g, condition), then_branch=then_graph, else_branch=else_graph, outputs=n)
    return [outs] if n == 1 else list(outs)


if LazyIfElse is not None:

    @onnx_funcify.register(LazyIfElse)
    def _lazy_ifelse(op, node, g, condition, *inputs):
        # The branches are OpFromGraphs over the same boundary inputs.
        graphs = []
        for suffix, branch in (("then", op.true_branch), ("else", op.false_branch)):
            inner = branch.fgraph
            env = dict(zip(inner.inputs, inputs, strict=True))
            graphs.append(build_branch(g, f"lazy_ifelse_{suffix}", env, inner.toposort(), inner.outputs))
        n = len(node.outputs)
        outs = g.op("If", truth(g, condition), then_branch=graphs[0], else_branch=graphs[1], outputs=n)
        return [outs] if n == 1 else list(outs)
