"""Graph rewrites of the ONNX rewrite set only (tag ``"onnx"``; PyTensor's
own modes never see them).

``local_onnx_mul_cancel_reciprocal``: the ONNX mode leaves out PyTensor's
algebraic canonizers (mode.EXPENSIVE_REWRITES). One thing they do matters
for accuracy, not speed: gradients multiply a value by its own reciprocal,
``d log(sigmoid(x)) = (1 / s) * s * (1 - s)``, which is NaN where s
underflows to 0 (x = -1e3) instead of 1, and keeps ``1 - s`` from becoming
``sigmoid(-x)`` (exact where 1 - s rounds to 0). This rewrite cancels such
pairs inside one multiplication (``(a / t) * t -> a``), as the canonizer
would, at the cost of a scan over that node's inputs. Like the canonizer it
turns 0 * inf = NaN at t = 0 into the limit. PyTensor's
``local_sigm_times_exp`` also runs in specialize (see below).
"""

from __future__ import annotations

import numpy as np
import pytensor.scalar.basic as ps
from pytensor.compile import optdb
from pytensor.graph.basic import Constant
from pytensor.graph.rewriting.basic import dfs_rewriter, in2out, node_rewriter
from pytensor.tensor.basic import cast, constant as tensor_constant, second
from pytensor.tensor.elemwise import DimShuffle, Elemwise
from pytensor.tensor.math import add, mul
from pytensor.tensor.rewriting.basic import constant_folding
from pytensor.tensor.rewriting.elemwise import constant_fold_branches_of_add_mul
from pytensor.tensor.rewriting.math import local_sigm_times_exp


def _quotient(var):
    """``(a, t)`` when ``var`` is ``a / t``, ``(None, t)`` when it is
    ``reciprocal(t)``, else None."""
    owner = var.owner
    if owner is None or not isinstance(owner.op, Elemwise):
        return None
    scalar_op = owner.op.scalar_op
    if isinstance(scalar_op, ps.Reciprocal):
        return None, owner.inputs[0]
    if isinstance(scalar_op, ps.TrueDiv):
        numerator, denominator = owner.inputs
        one = isinstance(numerator, Constant) and numerator.data.size and (numerator.data == 1).all()
        return (None if one else numerator), denominator
    return None


def _same_constant(a, b):
    return (isinstance(a, Constant) and isinstance(b, Constant) and a.type.shape == b.type.shape
            and np.array_equal(a.data, b.data))


def _same_value(a, b):
    """Whether ``a`` and ``b`` are one value: the same variable, or the same
    Op on the same inputs, constants compared by value (without the
    canonizers, 1 - s and 1.0 - s keep apart)."""
    if a is b or _same_constant(a, b):
        return True
    if a.owner is None or b.owner is None or a.type != b.type or a.owner.op != b.owner.op:
        return False
    if a.owner.outputs.index(a) != b.owner.outputs.index(b) or len(a.owner.inputs) != len(b.owner.inputs):
        return False
    return all(x is y or _same_constant(x, y) for x, y in zip(a.owner.inputs, b.owner.inputs))


@node_rewriter([mul])
def local_onnx_mul_cancel_reciprocal(fgraph, node):
    """``(a / t) * t * ...`` -> ``a * ...`` (``reciprocal(t) * t * ...`` -> ``...``)."""
    factors = list(node.inputs)
    for i, factor in enumerate(factors):
        quotient = _quotient(factor)
        if quotient is None:
            continue
        numerator, denominator = quotient
        for j, other in enumerate(factors):
            if j == i or not _same_value(other, denominator):
                continue
            rest = [f for k, f in enumerate(factors) if k not in (i, j)]
            if numerator is not None:
                rest.append(numerator)
            if not rest:
                # t / t: ones of t's shape (canonicalize sinks the fill)
                one = np.ones((), dtype=node.outputs[0].type.dtype)
                product = second(denominator, one)
            else:
                product = mul(*rest) if len(rest) > 1 else rest[0]
            # Only when the remaining factors give the same type (dtype,
            # static shape): the cancelled pair must not have decided it.
            if product.type != node.outputs[0].type:
                return None
            return [product]
    return None


# Tagged "onnx" only (register_canonicalize would add "fast_run" and change
# PyTensor's own modes). In canonicalize for the a / t that gradients build,
# in specialize for the reciprocal(t) that specialize makes of 1 / t.
for _phase in ("canonicalize", "specialize"):
    if "local_onnx_mul_cancel_reciprocal" not in optdb[_phase].__db__:
        optdb[_phase].register("local_onnx_mul_cancel_reciprocal", local_onnx_mul_cancel_reciprocal, "onnx")

# PyTensor's exp(x) * sigmoid(-x) -> sigmoid(x) runs in stabilize; without
# the canonizers, specialize's local_1msigmoid can make its input later (the
# gradient of log1p(-sigmoid(x)) ends as -exp(x) * sigmoid(-x), NaN at
# x = 1e3): run it in specialize too.
if "onnx_local_sigm_times_exp" not in optdb["specialize"].__db__:
    optdb["specialize"].register("onnx_local_sigm_times_exp", local_sigm_times_exp, "onnx")


# Constants at the consumer's precision. PyTensor's canonizers (left out
# here, mode.EXPENSIVE_REWRITES) gather the operands of a tree of
# Mul/TrueDiv/Reciprocal (or of Add/Sub/Neg) and combine its
# constants in the tree's output dtype: in FAST_RUN,
# ``reciprocal(float32(1/3)) * exp(x64)`` is ``2.9999999105930355 * exp(x)``,
# and ``x64 + float32(0.1) + float32(0.2)`` adds 0.30000000447034836.
# Without them, constant folding computes ``reciprocal(float32 0.33333334)``
# in float32 (3.0), and ``constant_fold_branches_of_add_mul`` adds or
# multiplies the constant inputs of a flattened Add/Mul in their own dtype
# (float32 0.3, or int8 100 * 100 = 16): 1e-8 relative off in float64 graphs,
# or worse. ``local_onnx_upcast_constant_algebra`` rebuilds such constant
# operands from their constants cast to the consumer's dtype before they are
# folded. Like the canonizers it does not enter an operation of the other
# family or another kind: that operand is computed in its own dtype and cast
# (FAST_RUN adds ``x64 * (a32 + b32)``'s constants in float32, and folds
# ``x64 * reciprocal(a32 + b32)``'s reciprocal in float32 too, _in_family).
# It rewrites only a node with a constant operand of another dtype that is
# computed (a constant expression) or folded with another constant; a single
# constant leaf is cast exactly by the conversion and left alone.
_MUL_FAMILY = (ps.Mul, ps.TrueDiv, ps.Reciprocal)
_ADD_FAMILY = (ps.Add, ps.Sub, ps.Neg)
_NUMERIC = {"float64", "float32", "float16", "int64", "int32", "int16", "uint64", "uint32", "uint16"}
#: how deep a constant expression is followed (they are short; the bound
#: keeps the check cheap on deep chains)
_MAX_CONSTANT_DEPTH = 16


def _family(op):
    """The canonizer family an Elemwise/DimShuffle ``op`` belongs to, or None."""
    if isinstance(op, Elemwise):
        for family in (_MUL_FAMILY, _ADD_FAMILY):
            if isinstance(op.scalar_op, family):
                return family
    return None


def _below_dimshuffles(var):
    while var.owner is not None and isinstance(var.owner.op, DimShuffle):
        var = var.owner.inputs[0]
    return var


def _in_family(var, family):
    """Whether ``var`` is a ``family`` operation (or DimShuffle) that the
    canonizer gathers. A reciprocal of an operand that is neither a constant
    nor of the family is not: PyTensor's ``local_reciprocal_canon`` makes it a
    Pow first, which the canonizer leaves alone."""
    owner = var.owner
    if owner is None:
        return False
    op = owner.op
    if isinstance(op, DimShuffle):
        return True
    if not (isinstance(op, Elemwise) and isinstance(op.scalar_op, family)):
        return False
    if isinstance(op.scalar_op, ps.Reciprocal):
        operand = _below_dimshuffles(owner.inputs[0])
        return isinstance(operand, Constant) or _in_family(operand, family)
    return True


def _constant_expression(var, depth=0):
    """Whether ``var`` is computed from constants only."""
    owner = var.owner
    if owner is None:
        return isinstance(var, Constant)
    if depth >= _MAX_CONSTANT_DEPTH:
        return False
    return all(_constant_expression(inp, depth + 1) for inp in owner.inputs)


def _rebuilt_in(var, dtype, family):
    """``var`` (a constant expression) computed in ``dtype`` as the canonizer
    does: its ``family`` operations from operands cast to ``dtype``, an
    operand of another kind computed in its own dtype and cast."""
    if var.owner is None:
        return tensor_constant(np.asarray(var.data).astype(dtype))
    if not _in_family(var, family):
        return cast(var, dtype)
    return var.owner.op(*(_rebuilt_in(inp, dtype, family) for inp in var.owner.inputs))


def _exactly_cast(var, dtype):
    """Whether the values of constant ``var`` are the same in ``dtype``."""
    data = np.asarray(var.data)
    return np.array_equal(data.astype(dtype).astype(data.dtype), data)


@node_rewriter([Elemwise])
def local_onnx_upcast_constant_algebra(fgraph, node):
    """Constant operands of a Mul/TrueDiv/Reciprocal/Add/Sub computed in the
    node's output dtype, as PyTensor's canonizers combine them."""
    family = _family(node.op)
    if family is None or len(node.outputs) != 1:
        return None
    dtype = node.outputs[0].type.dtype
    if dtype not in _NUMERIC:
        return None
    folded = isinstance(node.op.scalar_op, (ps.Add, ps.Mul)) and sum(isinstance(i, Constant) for i in node.inputs) > 1
    new_inputs = list(node.inputs)
    changed = False
    for i, inp in enumerate(node.inputs):
        if inp.type.dtype == dtype:
            continue
        if isinstance(inp, Constant):
            replace = folded and _exactly_cast(inp, dtype)
        else:
            base = _below_dimshuffles(inp)
            replace = base.owner is not None and _in_family(base, family) and _constant_expression(inp)
        if replace:
            new_inputs[i] = _rebuilt_in(inp, dtype, family)
            changed = True
    if not changed:
        return None
    new_out = node.op(*new_inputs)
    if new_out.type != node.outputs[0].type:
        return None
    return [new_out]


def _awaits_upcast(fgraph, node, depth=0):
    """Whether ``node`` (a family operation) feeds, through operations of its
    family and DimShuffles, a consumer of its family with another output
    dtype: ``local_onnx_upcast_constant_algebra`` recomputes it there."""
    family = _family(node.op)
    if family is None or depth >= _MAX_CONSTANT_DEPTH:
        return False
    dtype = node.outputs[0].type.dtype
    pending = [node.outputs[0]]
    while pending:
        var = pending.pop()
        for client, _ in fgraph.clients.get(var, ()):
            if isinstance(client.op, DimShuffle):
                pending.append(client.outputs[0])
            elif _family(client.op) is family:
                if client.outputs[0].type.dtype != dtype or _awaits_upcast(fgraph, client, depth + 1):
                    return True
    return False


@node_rewriter(None)
def local_onnx_constant_folding(fgraph, node):
    """PyTensor's ``constant_folding``, except for a constant operation that
    ``local_onnx_upcast_constant_algebra`` recomputes in its consumer's dtype
    (folded in its own dtype first, it would be too late)."""
    if _awaits_upcast(fgraph, node):
        return None
    return constant_folding.transform(fgraph, node)


#: The early constant folding (mode.py), with the upcast in the same walk:
#: a walk over the graph costs more than these rewrites (7% of the rewrite
#: time of bench/conversion.py's 2,000-step chain each).
early_constant_folding = dfs_rewriter(local_onnx_upcast_constant_algebra, local_onnx_constant_folding,
                                      ignore_newtrees=True, name="onnx_fold_constants_early")


@node_rewriter([add, mul])
def local_onnx_fold_constant_operands(fgraph, node):
    """PyTensor's ``constant_fold_branches_of_add_mul`` on the constants cast
    to the node's dtype first (it folds them in their own dtype)."""
    upcast = local_onnx_upcast_constant_algebra.transform(fgraph, node)
    if upcast is None:
        return constant_fold_branches_of_add_mul.transform(fgraph, node)
    [new_out] = upcast
    return constant_fold_branches_of_add_mul.transform(fgraph, new_out.owner) or upcast


# In place of PyTensor's constant_fold_branches_of_add_mul, which the ONNX
# rewrite set leaves out (mode.py), in the same place: after
# flatten_nested_add_mul (position 0) brings constants together.
if "onnx_fold_constant_operands" not in optdb["add_mul_fusion"].__db__:
    optdb["add_mul_fusion"].register(
        "onnx_fold_constant_operands",
        in2out(local_onnx_fold_constant_operands, ignore_newtrees=True),
        "onnx",
        position=1,
    )
