"""CheckAndRaise and Assert (``pytensor.raise_op``): run-time checks.

ONNX has no assertion op. The rule is the rules' one run-time check
(``utils.check``): the checked value read back through a Gather whose index
is ``not ok``, out of range when a condition is false, so ONNX Runtime stops
the run (inside If branches and Loop bodies too). The Gather node is named
after the check -- ``pytensor_check:<id> <ExceptionType>: <message>`` -- and ONNX
Runtime quotes the failing node's name in its error, so the message shows up
in the error of any runtime that runs the exported model. In mode ONNX,
``raised_check_error`` turns such a failure back into the Op's exception type
(see linker.py).

The read-back copies the value once (a memcpy); PyTensor's checks guard
shapes and small values in practice (the ones FAST_RUN gradient graphs carry).
"""

from __future__ import annotations

import hashlib
import re

from pytensor.raise_op import CheckAndRaise
from pytensor.tensor.basic import get_underlying_scalar_constant_value
from pytensor.tensor.exceptions import NotScalarConstantError

from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.utils import check

#: The checks converted in this process, by the id their node names carry.
_CHECKS: dict[str, CheckAndRaise] = {}

_NAME_PATTERN = re.compile(r"pytensor_check:([0-9a-f]{12})")
_MAX_MESSAGE = 200


def check_node_name(op: CheckAndRaise) -> str:
    """The ONNX node name of ``op``'s check (registered for ``raised_check_error``)."""
    exc_name = op.exc_type.__name__
    key = hashlib.sha256(f"{op.exc_type.__module__}.{exc_name}\0{op.msg}".encode()).hexdigest()[:12]
    _CHECKS.setdefault(key, op)
    message = " ".join(str(op.msg).split())
    if len(message) > _MAX_MESSAGE:
        message = message[: _MAX_MESSAGE - 3] + "..."
    return f"pytensor_check:{key} {exc_name}: {message}"


@onnx_funcify.register(CheckAndRaise)
def _check_and_raise(op, node, g, value, *conds):
    pending = [cond for var, cond in zip(node.inputs[1:], conds) if not _always_true(var)]
    if not pending:
        return value
    ok = g.cast(pending[0], "bool")
    for cond in pending[1:]:
        ok = g.op("And", ok, g.cast(cond, "bool"))
    return check(g, ok, value, check_node_name(op))


def _always_true(var) -> bool:
    try:
        return bool(get_underlying_scalar_constant_value(var))
    except NotScalarConstantError:
        return False


def raised_check_error(exc: BaseException, description: str) -> BaseException | None:
    """The exception for an ONNX Runtime failure of a converted check, or None.

    Its type derives from both RuntimeError (what every ONNX Runtime failure
    of mode ONNX raises) and the check's own exception type (AssertionError
    for Assert), so ``except AssertionError`` works as with PyTensor's
    linkers; its message starts with the check's message.
    """
    match = _NAME_PATTERN.search(str(exc))
    if match is None or match.group(1) not in _CHECKS:
        return None
    op = _CHECKS[match.group(1)]
    text = f"{op.msg}\n{description}"
    exc_type = op.exc_type
    if issubclass(exc_type, RuntimeError):
        return exc_type(text)
    combined = _ERROR_TYPES.get(exc_type)
    if combined is None:
        try:
            combined = type(f"ONNX{exc_type.__name__}", (RuntimeError, exc_type), {})
        except TypeError:  # exception types whose layouts cannot be combined (OSError, ...)
            return RuntimeError(f"{exc_type.__name__}: {text}")
        _ERROR_TYPES[exc_type] = combined
    return combined(text)


_ERROR_TYPES: dict[type, type] = {}
