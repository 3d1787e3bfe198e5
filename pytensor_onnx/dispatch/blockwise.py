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

from pytensor.tensor.blockwise import Blockwise

from pytensor_onnx.dispatch.basic import onnx_funcify

#: Core Op classes whose rules accept leading batch dims.
_BATCH_CAPABLE: set[type] = set()


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


@onnx_funcify.register(Blockwise)
def _blockwise(op, node, g, *inputs):
    core = op.core_op
    if not is_batch_capable(core):
        raise NotImplementedError(
            f"No ONNX conversion for Blockwise({type(core).__name__}) (node: {node}): the rule of "
            f"{type(core).__name__} does not take batch dims. Register one that does and mark it with "
            "pytensor_onnx.dispatch.blockwise.batch_capable."
        )
    return onnx_funcify(core, node, g, *inputs)
