"""Rule for pytensor.tensor.blockwise.Blockwise: a core Op over leading batch dims.

PyTensor wraps core linear-algebra Ops (and matmul) in ``Blockwise`` for
inputs with batch dims. The rules of those core Ops take inputs with any
leading batch dims, broadcast between inputs as NumPy's gufuncs do (ONNX
MatMul broadcasts that way, and the linear-algebra recipes of the C++ core
flatten and broadcast batch dims themselves); they are marked with
``batch_capable``. ``Blockwise`` dispatches to the core Op's rule with the
batched inputs; a core Op whose rule handles the core shapes only is refused
with ``NotImplementedError``.
"""

from __future__ import annotations

import numpy as np
from pytensor.compile.builders import OpFromGraph
from pytensor.tensor.blockwise import Blockwise
from pytensor.tensor.subtensor import AdvancedSubtensor

from pytensor_onnx.compat import AdvancedSubtensor1, subtensor_indices
from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.utils import int64_const

#: Core Op classes whose rules accept leading batch dims.
_BATCH_CAPABLE: set[type] = set()

#: Core Op class -> rule for its Blockwise form, for core Ops whose own rule
#: handles the core shapes only.
_BATCHED_RULES: dict[type, object] = {}


def batch_capable(*op_classes):
    """Mark ``op_classes`` as having rules that accept leading batch dims.

    Usable as a decorator of the rule (``@batch_capable(MyOp)``) or called
    directly; classes that are ``None`` (absent on this PyTensor line) are
    skipped.
    """
    _BATCH_CAPABLE.update(cls for cls in op_classes if cls is not None)

    def decorate(rule):
        return rule

    return decorate


def is_batch_capable(op) -> bool:
    return any(isinstance(op, cls) for cls in _BATCH_CAPABLE)


def batched_rule(*op_classes):
    """Register a rule for ``Blockwise(core)`` with ``core`` one of ``op_classes``."""

    def decorate(rule):
        for cls in op_classes:
            if cls is not None:
                _BATCHED_RULES[cls] = rule
        return rule

    return decorate


@onnx_funcify.register(Blockwise)
def _blockwise(op, node, g, *inputs):
    core = op.core_op
    for cls in type(core).__mro__:
        if cls in _BATCHED_RULES:
            result = _BATCHED_RULES[cls](op, node, g, *inputs)
            if result is not None:
                return result
            break
    if not is_batch_capable(core):
        raise NotImplementedError(
            f"No ONNX conversion for Blockwise({type(core).__name__}) (node: {node}): the rule of "
            f"{type(core).__name__} does not take batch dims. Register one that does and mark it with "
            "pytensor_onnx.dispatch.blockwise.batch_capable."
        )
    return onnx_funcify(core, node, g, *inputs)


def _batch_shape(g, x, batch_rank):
    return g.op("Slice", g.op("Shape", x), int64_const(g, [0]), int64_const(g, [batch_rank]), int64_const(g, [0]))


@batched_rule(AdvancedSubtensor, AdvancedSubtensor1)
def _batched_vector_index(op, node, g, x, *index_values):
    """``x[idx]`` per batch entry: one integer index array on the first core
    axis (how lu_solve permutes the rows of b). Other forms: None (refused)."""
    indices = subtensor_indices(node.op.core_op, index_values)
    if len(indices) != 1 or isinstance(indices[0], slice | type(None)) or indices[0].dtype.startswith(("float", "bool")):
        return None
    [index] = indices
    batch_rank = node.op.batch_ndim(node)
    x_core = x.rank - batch_rank
    index_core = index.rank - batch_rank
    if index_core != 1:
        return None
    # Broadcast the batch dims of both, then gather along the first core axis.
    zero = g.const(np.zeros((), dtype=np.int32))
    batch = g.op("Shape", g.op("Add", g.op("Expand", zero, _batch_shape(g, x, batch_rank)),
                                g.op("Expand", zero, _batch_shape(g, index, batch_rank))))
    x_rest = g.op("Slice", g.op("Shape", x), int64_const(g, [batch_rank]), int64_const(g, [x.rank]), int64_const(g, [0]))
    x = g.op("Expand", x, g.op("Concat", batch, x_rest, axis=0))
    index = g.cast(index, "int64")
    length = g.op("Slice", g.op("Shape", index), int64_const(g, [index.rank - 1]), int64_const(g, [index.rank]), int64_const(g, [0]))
    index = g.op("Expand", index, g.op("Concat", batch, length, axis=0))
    if x_core > 1:
        index = g.op("Unsqueeze", index, axes=list(range(batch_rank + 1, batch_rank + x_core)))
        rest = g.op("Slice", x_rest, int64_const(g, [1]), int64_const(g, [x_core]), int64_const(g, [0]))
        index = g.op("Expand", index, g.op("Concat", batch, length, rest, axis=0))
    return g.op("GatherElements", x, index, axis=batch_rank)



# --------------------------------------------------------------------------
# Blockwise of an Op with an inner graph (gradients of OpFromGraph Ops, ...)
# --------------------------------------------------------------------------


@batched_rule(OpFromGraph)
def _batched_op_from_graph(op, node, g, *inputs):
    """The inner graph vectorized over the batch dims (PyTensor's
    ``vectorize_graph``), converted in place. Core Ops whose own rule takes
    batch dims use that rule instead."""
    core = op.core_op
    if is_batch_capable(core):
        return None
    from pytensor.graph.replace import vectorize_graph
    from pytensor.graph.traversal import io_toposort

    from pytensor_onnx.dispatch.basic import _lookup, convert_nodes

    inner = core.fgraph
    batched = [var.type() for var in node.inputs]
    outputs = vectorize_graph(list(inner.outputs), replace=dict(zip(inner.inputs, batched, strict=True)))
    env = dict(zip(batched, inputs, strict=True))
    try:
        convert_nodes(io_toposort(batched, outputs), g, env, outputs=outputs)
    except NotImplementedError as exc:
        raise NotImplementedError(
            f"No ONNX conversion for Blockwise({type(core).__name__}) (node: {node}): its inner graph, "
            f"vectorized over the batch dims, does not convert ({exc}). Register a rule for "
            f"{type(core).__name__} that takes batch dims and mark it with "
            "pytensor_onnx.dispatch.blockwise.batch_capable."
        ) from exc
    return [_lookup(g, env, out) for out in outputs]
