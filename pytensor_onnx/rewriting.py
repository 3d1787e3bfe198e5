"""Graph rewrites of the ONNX rewrite set only (tag ``"onnx"``; PyTensor's
own modes never see them).

``local_onnx_mul_cancel_reciprocal``: the ONNX mode leaves out PyTensor's
algebraic canonizers (EXPENSIVE_REWRITES below). One thing they do matters
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

import functools

import numpy as np
import pytensor.scalar.basic as ps
from pytensor.compile import optdb
from pytensor.graph.basic import Constant
from pytensor.graph.rewriting.basic import (
    EquilibriumGraphRewriter,
    GraphRewriter,
    NodeRewriter,
    dfs_rewriter,
    in2out,
    node_rewriter,
)
from pytensor.graph.rewriting.db import RewriteDatabaseQuery
from pytensor.graph.traversal import ancestors
from pytensor.raise_op import CheckAndRaise
from pytensor.scan.op import Scan
from pytensor.tensor.basic import as_tensor_variable, cast, constant as tensor_constant, get_scalar_constant_value, second
from pytensor.tensor.exceptions import NotScalarConstantError
from pytensor.tensor.blockwise import Blockwise
from pytensor.tensor.basic import MakeVector
from pytensor.tensor.elemwise import CAReduce, DimShuffle, Elemwise
from pytensor.tensor.math import Sum, add, and_, mul, or_
from pytensor.tensor.sort import ArgSortOp
from pytensor.tensor.subtensor import IncSubtensor, Subtensor
from pytensor.tensor.rewriting.basic import constant_folding
from pytensor.tensor.rewriting.elemwise import constant_fold_branches_of_add_mul
from pytensor.tensor.rewriting.math import local_add_canonizer, local_mul_canonizer, local_sigm_times_exp

from pytensor_onnx.compat import (
    SCAN_SAVE_MEM_WITHOUT_PREALLOC,
    LogSumExp,
    linalg_op_class,
    scan_args,
    solve_splitting_rewriters,
)


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


# ``all``/``any`` of a vector of bool scalars: PyMC's check_parameters ends
# every bounded log-density with ``pt.all([cond_1, cond_2, ...])``, a
# MakeVector and a reduction (in ONNX: Unsqueeze per condition, Concat, Not,
# Cast, ReduceMax, Cast, Not: ~0.3 us per node). ``and``/``or`` of the
# scalars is the same value, and an Elemwise that PyTensor's fusion joins to
# the element-wise work around it (one kernel node in mode ONNX).
@node_rewriter([CAReduce])
def local_onnx_reduce_vector_of_bools(fgraph, node):
    scalar_op = node.op.scalar_op
    if type(scalar_op) not in (ps.AND, ps.OR) or node.outputs[0].type.dtype != "bool":
        return None
    [vector] = node.inputs
    owner = vector.owner
    if owner is None or not isinstance(owner.op, MakeVector) or vector.type.dtype != "bool" or not owner.inputs:
        return None
    if any(var.type.ndim != 0 or var.type.dtype != "bool" for var in owner.inputs):
        return None
    if len(owner.inputs) == 1:
        return [owner.inputs[0]]
    combine = and_ if isinstance(scalar_op, ps.AND) else or_
    return [functools.reduce(combine, owner.inputs)]


if "local_onnx_reduce_vector_of_bools" not in optdb["canonicalize"].__db__:
    optdb["canonicalize"].register("local_onnx_reduce_vector_of_bools", local_onnx_reduce_vector_of_bools, "onnx")


# ``exp`` of integers computes in floats (PyTensor upcasts its output), but
# PyTensor's stabilizing rewrites subtract before it in the integers' dtype:
# ``local_log_sum_exp`` makes ``log(sum(exp(x)))`` into
# ``m + log(sum(exp(x - m)))`` with ``m = max(x)``, where ``x - m`` of
# unsigned integers wraps (logsumexp of uint32 [1, 0] gave -inf;
# FUZZ_SEED=2797303143; PyTensor's own FAST_RUN raises OverflowError there)
# and of int64 extremes overflows. Casting an integer ``exp``'s input to the
# output's float dtype first gives the same values, and the stabilizing
# rewrites then subtract in floats.
@node_rewriter([Elemwise])
def local_onnx_exp_of_integers(fgraph, node):
    if not isinstance(node.op.scalar_op, ps.Exp):
        return None
    [x] = node.inputs
    out_dtype = node.outputs[0].type.dtype
    if x.type.dtype == out_dtype or not (x.type.dtype.startswith(("int", "uint")) or x.type.dtype == "bool"):
        return None
    return [node.op(cast(x, out_dtype))]


if "local_onnx_exp_of_integers" not in optdb["canonicalize"].__db__:
    optdb["canonicalize"].register("local_onnx_exp_of_integers", local_onnx_exp_of_integers, "onnx")


# PyTensor 3.x's LogSumExp of integers computes in floats (its maximum goes
# through a float Switch), but once inlined, ``x - logsumexp(x)`` becomes
# ``LogSoftmax(x)`` (PyTensor's local_logsoftmax), whose ``x - max(x)`` is
# integer arithmetic: of unsigned integers it wraps (-inf for uint32 [1, 0];
# FUZZ_SEED=2797303143, where the graph as written gives -1.27 and PyTensor's
# FAST_RUN raises OverflowError). LogSumExp of the input cast to the output's
# float dtype is the same value, and no integer LogSoftmax is made of it.
if LogSumExp is not None:

    @node_rewriter([LogSumExp])
    def local_onnx_logsumexp_of_integers(fgraph, node):
        [x] = node.inputs
        out_dtype = node.outputs[0].type.dtype
        if x.type.dtype.startswith("float") or not out_dtype.startswith("float"):
            return None
        return [type(node.op)(axis=node.op.axis)(cast(x, out_dtype))]

    if "local_onnx_logsumexp_of_integers" not in optdb["canonicalize"].__db__:
        optdb["canonicalize"].register("local_onnx_logsumexp_of_integers", local_onnx_logsumexp_of_integers, "onnx")


# A sum of a checked value is the check of its sum: PyMC's bounded
# log-densities are ``Sum(Check{sigma > 0}(logp_terms, cond))``. With the sum
# read straight from the element-wise work, mode ONNX fuses it into that
# kernel node (an output reduction, dispatch/kernel.py) and checks a scalar.
# The check fails exactly when it did (its conditions do not read the value)
# and the sum is the same: only the order of the two changes. A check read by
# anything else stays where it is.
class SequentialSum(Sum):
    """A Sum whose terms add in position order, ``0 + t0 + t1 + ...``: a Scan's
    running total, as ``local_onnx_scan_as_map_and_sums`` rebuilds it outside
    the Scan. Mode ONNX's kernel node adds a plain Sum pairwise, as NumPy
    does (dispatch/kernel.py ``reducing_readers``); this one as the Scan
    did. Elsewhere it is a Sum."""


@node_rewriter([CAReduce])
def local_onnx_sum_of_check(fgraph, node):
    if not isinstance(node.op.scalar_op, ps.Add):
        return None
    [checked] = node.inputs
    owner = checked.owner
    if owner is None or not isinstance(owner.op, CheckAndRaise) or len(fgraph.clients[checked]) != 1:
        return None
    value, *conds = owner.inputs
    total = node.op.make_node(value).outputs[0]
    return [owner.op(total, *conds)]


# In specialize too: PyMC's Sum reads an Alloc of the check (to the shape of
# the observations' dims) until the useless Alloc is gone.
for _phase in ("canonicalize", "specialize"):
    if "local_onnx_sum_of_check" not in optdb[_phase].__db__:
        optdb[_phase].register("local_onnx_sum_of_check", local_onnx_sum_of_check, "onnx")


# Constants as FAST_RUN computes them. Its canonicalize rewrites a tree of
# constants before it folds it (constant folding is the phase's final
# rewriter, the others run first): its algebraic canonizers (left out here,
# EXPENSIVE_REWRITES) gather a tree of Mul/TrueDiv/Reciprocal (or of
# Add/Sub/Neg), combine its constants in the tree's output dtype and rebuild
# the rest with the dtypes of its leaves; its other rewrites make a
# reciprocal a power, lift DimShuffles. The last bit of a float32 constant is
# 6e-8 relative in a float64 graph, so folding constants as they were built
# gives other float64 results than PyTensor's (and PyMC's):
# - ``reciprocal(float32(1/3)) * exp(x64)`` is ``2.9999999105930355 * exp(x)``
#   in FAST_RUN (the canonizer divides in float64), 3.0 folded as built;
#   ``x64 + float32(0.1) + float32(0.2)`` adds 0.30000000447034836 (int8
#   ``x * 100 * 100`` gives 16 as built);
# - ``x - (-gammaln(float32 1.5) + float32 1.5 * log(float32 0.5))`` (PyMC's
#   ChiSquared(nu=3)): the canonizer has nothing to combine, constant folding
#   sums in float32 (-0.9189385175704956, not -0.9189385324716568);
# - ``((-2 - 0) / 1) / sqrt(float32 2)`` (TruncatedNormal(0, 1, lower=-2,
#   upper=3)'s normalizer) is float64 as built (int8 / int8) and float32 once
#   gathered (int8 / float32, then cast): -0.024395190437967007 against
#   -0.02439518733270929.
# So the ONNX rewrites fold early only DimShuffles of constants (below), run
# the canonizer on a tree of the graph whose leaves include constants of
# another dtype than its own (local_onnx_canonize_mixed_constants, as
# FAST_RUN's first canonicalize pass meets it: before its constant parts are
# rewritten), then FAST_RUN's whole canonicalize on the trees of constants
# alone (onnx_canonicalize_constant_expressions), which folds them.
_MUL_FAMILY = (ps.Mul, ps.TrueDiv, ps.Reciprocal)
_ADD_FAMILY = (ps.Add, ps.Sub, ps.Neg)
#: how deep a constant expression is followed (they are short; the bound
#: keeps the check cheap on deep chains)
_MAX_CONSTANT_DEPTH = 16


def _family(op):
    """The canonizer family an Elemwise ``op`` belongs to, or None."""
    if isinstance(op, Elemwise):
        for family in (_MUL_FAMILY, _ADD_FAMILY):
            if isinstance(op.scalar_op, family):
                return family
    return None


def _constant_expression(var, depth=0):
    """Whether ``var`` is computed from constants only."""
    owner = var.owner
    if owner is None:
        return isinstance(var, Constant)
    if depth >= _MAX_CONSTANT_DEPTH:
        return False
    return all(_constant_expression(inp, depth + 1) for inp in owner.inputs)


#: The canonizer of each family (the tree it gathers: add/sub/neg, mul/true_div/reciprocal).
_CANONIZERS = {_ADD_FAMILY: local_add_canonizer, _MUL_FAMILY: local_mul_canonizer}


def _family_client(fgraph, var, family):
    """Whether ``var`` (past a chain of single-client DimShuffles, as the
    canonizer looks) feeds an operation of ``family``: the canonizer leaves
    the tree to that client's."""
    for client, _ in fgraph.clients.get(var, ()):
        while isinstance(client.op, DimShuffle) and len(fgraph.clients.get(client.outputs[0], ())) == 1:
            client = fgraph.clients[client.outputs[0]][0][0]
        if _family(client.op) is family:
            return True
    return False


@node_rewriter([Elemwise])
def local_onnx_canonize_mixed_constants(fgraph, node):
    """PyTensor's canonizer on the tree ``node`` tops when the tree's leaves
    include a constant (or constant expression) of another dtype than the
    tree's: where it combines them, and where it leaves them to constant
    folding, mode ONNX then computes them as FAST_RUN does."""
    family = _family(node.op)
    if family is None or len(node.outputs) != 1 or _family_client(fgraph, node.outputs[0], family):
        return None
    out = node.outputs[0]
    if not _constants_of_another_dtype(out, family):
        return None
    canonizer = _CANONIZERS[family]
    num, denum = canonizer.get_num_denum(out)
    if (family is _MUL_FAMILY and any(_is_zero(leaf) for leaf in num)) or _cancels_a_special_constant(num, denum):
        # (PyTensor 3.3's canonizer makes 0 * x and 0 / x a 0, which is NaN
        # where x is inf or 0: the py linker's answer, as local_zero_div is
        # left out for, UNSUITABLE_REWRITES.)
        return None
    return canonizer.transform(fgraph, node) or None


def _tree_walk(out, family):
    """The operations and leaves of the tree ``out`` tops, as the canonizer
    gathers it: through ``family``'s operations and DimShuffles that only add
    axes on the left."""
    operations, leaves, pending = [], [], [out]
    while pending:
        var = pending.pop()
        owner = var.owner
        if owner is not None and (_family(owner.op) is family or (
                isinstance(owner.op, DimShuffle) and _adds_left_axes_only(owner.op, owner.inputs[0]))):
            operations.append(owner)
            pending.extend(owner.inputs)
        else:
            leaves.append(var)
    return operations, leaves


def _constants_of_another_dtype(out, family):
    """Whether the tree ``out`` tops computes constants in another dtype than
    its own, which the canonizer would compute otherwise: an operation of
    such constants inside the tree, a constant expression of another dtype
    at a leaf, or two constants of another dtype to combine. (One plain
    constant of another dtype is cast exactly, whatever the canonizer does
    with it: the common case, ``x64 * float32(3.0)``, costs no rewrite.)"""
    dtype = out.type.dtype
    operations, leaves = _tree_walk(out, family)
    if any(op_node.outputs[0].type.dtype != dtype and _constant_expression(op_node.outputs[0])
           for op_node in operations if not isinstance(op_node.op, DimShuffle)):
        return True
    other = [leaf for leaf in leaves if leaf.type.dtype != dtype and _constant_expression(leaf)]
    return len(other) > 1 or any(leaf.owner is not None for leaf in other)


def _adds_left_axes_only(op, operand):
    return op.new_order == ("x",) * (len(op.new_order) - operand.type.ndim) + tuple(range(operand.type.ndim))


def _cancels_a_special_constant(num, denum):
    """Whether the canonizer would cancel a constant that is 0, inf or NaN
    against itself (``c / c -> 1``, ``c - c -> 0``: NaN as computed). Equal
    constants are one variable once merged: the mean of an empty constant is
    ``0.0 / 0.0`` of one zero (FUZZ_SEED=699548079's case gave 1.0)."""
    shared = [v for v in num if isinstance(v, Constant) and any(v is d for d in denum)]
    return any(not np.all(np.isfinite(np.asarray(v.data))) or not np.all(np.asarray(v.data)) for v in shared)


# In canonicalize too, as FAST_RUN's canonizers run on every pass: after its
# folding has made constants of the parts it left (5 - (1 / 0.3 + log(5) +
# gammaln(0.7)) - exp(x) combines its folded float32 terms in float64).
if "local_onnx_canonize_mixed_constants" not in optdb["canonicalize"].__db__:
    optdb["canonicalize"].register("local_onnx_canonize_mixed_constants", local_onnx_canonize_mixed_constants, "onnx")


def _is_zero(var):
    return isinstance(var, Constant) and np.asarray(var.data).size > 0 and not np.asarray(var.data).any()


#: The fgraph attribute that holds, during _ConstantCanonicalize's pass, the
#: variables known to be computed from constants (on the graph: compilations
#: in other threads run the same rewriter objects).
_CONSTANT_VARS = "onnx_constant_vars"


class _OnConstantExpressions(NodeRewriter):
    """A node rewriter of FAST_RUN's canonicalize, applied only to operations
    of constants."""

    def __init__(self, rewriter):
        self.rewriter = rewriter

    def tracks(self):
        return self.rewriter.tracks()

    def add_requirements(self, fgraph):
        self.rewriter.add_requirements(fgraph)

    def transform(self, fgraph, node, *args, **kwargs):
        known = getattr(fgraph, _CONSTANT_VARS, None)
        if known is None or not all(_known_constant(i, known) for i in node.inputs):
            return False
        family = _family(node.op)
        if family is not None and self.rewriter is _CANONIZERS[family]:
            if _cancels_a_special_constant(*self.rewriter.get_num_denum(node.outputs[0])):
                return False
        return self.rewriter.transform(fgraph, node, *args, **kwargs)

    def __str__(self):
        return f"constants_only({self.rewriter})"


def _known_constant(var, known, depth=0):
    """Whether ``var`` is computed from constants; ``known`` collects those
    found (the pass's rewrites make new ones)."""
    if var in known or isinstance(var, Constant):
        return True
    if var.owner is None or depth >= _MAX_CONSTANT_DEPTH:
        return False
    if all(_known_constant(i, known, depth + 1) for i in var.owner.inputs):
        known.update(var.owner.outputs)
        return True
    return False


class _ConstantCanonicalize(GraphRewriter):
    """FAST_RUN's canonicalize (its node rewriters in its order, then constant
    folding) on the trees of constants only, and only when the graph has
    operations of constants that are not DimShuffles (the early folding's):
    on them the canonizers' cost stays small."""

    def __init__(self):
        canonicalize = optdb["canonicalize"].query(
            RewriteDatabaseQuery(include=["fast_run"], exclude=list(UNSUITABLE_REWRITES)))
        self.rewriter = EquilibriumGraphRewriter(
            [_OnConstantExpressions(r) for r in canonicalize.get_node_rewriters()],
            max_use_ratio=canonicalize.max_use_ratio, ignore_newtrees=canonicalize.ignore_newtrees,
            tracks_on_change_inputs=canonicalize.tracks_on_change_inputs, final_rewriters=canonicalize.final_rewriters)

    def add_requirements(self, fgraph):
        self.rewriter.add_requirements(fgraph)

    def apply(self, fgraph):
        known = set()
        for node in fgraph.toposort():
            if all(isinstance(i, Constant) or i in known for i in node.inputs):
                known.update(node.outputs)
        if not any(v.owner is not None and not isinstance(v.owner.op, DimShuffle) for v in known):
            return None
        setattr(fgraph, _CONSTANT_VARS, known)
        try:
            return self.rewriter.apply(fgraph)
        finally:
            delattr(fgraph, _CONSTANT_VARS)


@node_rewriter([DimShuffle])
def local_onnx_fold_dimshuffle_of_constant(fgraph, node):
    """PyTensor's ``constant_folding`` of a DimShuffle of a constant that only
    adds axes on the left: the canonizers look through those, so folding it
    early changes nothing they do."""
    if not _adds_left_axes_only(node.op, node.inputs[0]):
        return None
    return constant_folding.transform(fgraph, node)


#: The early constant folding (below), with the canonizer of mixed trees in
#: the same walk: a walk over the graph costs more than these rewrites (7% of
#: the rewrite time of bench/conversion.py's 2,000-step chain each).
early_constant_folding = dfs_rewriter(local_onnx_canonize_mixed_constants, local_onnx_fold_dimshuffle_of_constant,
                                      ignore_newtrees=True, name="onnx_fold_constants_early")


@node_rewriter([add, mul])
def local_onnx_fold_constant_operands(fgraph, node):
    """PyTensor's ``constant_fold_branches_of_add_mul`` after the canonizer of
    mixed trees (it folds constants in their own dtype)."""
    canonized = local_onnx_canonize_mixed_constants.transform(fgraph, node)
    if canonized is None:
        return constant_fold_branches_of_add_mul.transform(fgraph, node)
    [new_out] = canonized
    if new_out.owner is None or new_out.owner.op not in (add, mul):
        return canonized
    return constant_fold_branches_of_add_mul.transform(fgraph, new_out.owner) or canonized


# In place of PyTensor's constant_fold_branches_of_add_mul, which the ONNX
# rewrite set leaves out (below), in the same place: after
# flatten_nested_add_mul (position 0) brings constants together.
if "onnx_fold_constant_operands" not in optdb["add_mul_fusion"].__db__:
    optdb["add_mul_fusion"].register(
        "onnx_fold_constant_operands",
        in2out(local_onnx_fold_constant_operands, ignore_newtrees=True),
        "onnx",
        position=1,
    )


# --------------------------------------------------------------------------
# The ONNX rewrite set
# --------------------------------------------------------------------------

#: PyTensor rewrites left out of the ONNX rewrite set: their cost is far
#: above their worth for an ONNX model (bench/conversion.py).
#: - The algebraic canonizers rebuild every Mul/Add/Neg they reach into a flat
#:   canonical form (neg(x) -> mul(-1, x) -> neg(x) round trips included),
#:   each application a full graph replacement: 85-90% of the rewrite time of
#:   deep element-wise chains (1,000 steps: 9.6 s with them, 1.2 s without).
#:   What they save at run time (x*2*3 -> x*6, x*y/y -> x) did not show on
#:   bench/backends.py's workloads (bench/results.md).
#: - The constant upcast only helps PyTensor merge (1 - x) with (1.0 - x);
#:   each application imports a new node, and importing a node copies the
#:   graph's whole variable set (PyTensor 3.3's toposort blockers): quadratic
#:   on deep chains. The builder casts mixed-dtype inputs itself, and ONNX
#:   Runtime folds a Cast of an initializer when it loads the model.
#: Same names in PyTensor 2.38 and 3.3.
EXPENSIVE_REWRITES = (
    "local_mul_canonizer",
    "local_add_canonizer",
    "local_neg_to_mul",
    "local_upcast_elemwise_constant_inputs",
)

#: Rewrites whose result is worse for ONNX: a batched matmul flattened into a
#: Dot by Reshape(x, (-1, k)). ONNX's MatMul broadcasts batch dims itself, and
#: that Reshape cannot infer its -1 for an empty x (NumPy and ONNX refuse;
#: PyTensor's C Reshape reads 0). And the folding of an Add's or Mul's
#: constant inputs in their own dtype, not the node's (float32 0.1 + 0.2 in a
#: float64 sum, int8 100 * 100 = 16): rewriting.local_onnx_fold_constant_operands
#: takes its place. And 0 / x -> 0, which is NaN where x is 0 (the mean of
#: an empty constant, whose sum the early constant folding below makes a
#: literal 0 before canonicalize runs; PyTensor's py linker gives NaN).
#: Same names in PyTensor 2.38 and 3.3.
UNSUITABLE_REWRITES = (
    "local_batched_matmul_to_core_matmul_with_reshape",
    "constant_fold_branches_of_add_mul",
    "local_zero_div",
)

#: Rewrites the ONNX mode (and export) runs: PyTensor's fast_run set, minus
#: EXPENSIVE_REWRITES and the ones that introduce C-only, BLAS-only, in-place
#: or fused (Composite) ops (``ONNXLinker.incompatible_rewrites``).
ONNX_REWRITES = RewriteDatabaseQuery(include=["fast_run", "onnx"], exclude=[*EXPENSIVE_REWRITES, *UNSUITABLE_REWRITES])

#: What the ONNX linker needs of every rewrite set (``ONNXLinker.required_rewrites``).
REQUIRED_REWRITES = ("minimum_compile",)

#: What the ONNX linker cannot take (``ONNXLinker.incompatible_rewrites``).
INCOMPATIBLE_REWRITES = (
    "cxx_only",
    "BlasOpt",
    "fusion",
    "local_careduce_fusion",
    "inplace",
    # The preallocating scan-save-mem rewrite (2.38's and 3.3's names);
    # "onnx_scan_save_mem" below is the variant without preallocation.
    "scan_save_mem_prealloc",
    "scan_reduce_trace_prealloc",
    # They split tridiagonal solves into LAPACK's gttrf/gttrs steps; the
    # ONNX variants below split general and positive definite solves only,
    # as JAX's do.
    "reuse_decomposition_multiple_solves",
    # PyTensor 3.3 inlines Softmax, LogSoftmax, LogSumExp, ... before its
    # fusion so their bodies fuse; their ONNX rules (native Softmax and
    # LogSoftmax kernels) are kept, as JAX's are.
    "inline_symbolic_for_fusion",
    "scan_split_non_sequence_decomposition_and_solve",
)


def incompatible_rewrites(kernels: bool) -> tuple[str, ...]:
    """INCOMPATIBLE_REWRITES for a conversion with or without the kernel
    library: with it, PyTensor's element-wise fusion makes the Composites that
    become single kernel nodes."""
    return tuple(r for r in INCOMPATIBLE_REWRITES if r != "fusion") if kernels else INCOMPATIBLE_REWRITES


def onnx_rewriter(kernels: bool):
    """The rewriter of mode ONNX (``kernels``) or of export: what
    ``Mode(ONNXLinker(kernels=...), ONNX_REWRITES).optimizer`` is."""
    query = ONNX_REWRITES.including(*REQUIRED_REWRITES).excluding(*incompatible_rewrites(kernels))
    return optdb.query(query)

# Scan buffers shrunk to what the graph reads, without the extra slot that
# preallocating backends write into (as for JAX and Numba): the Loop then
# carries only the values a recurrence reads (dispatch/scan.py). Same place
# as PyTensor's own scan-save-mem rewrite.
if "onnx_scan_save_mem" not in optdb:
    optdb.register(
        "onnx_scan_save_mem",
        dfs_rewriter(SCAN_SAVE_MEM_WITHOUT_PREALLOC, ignore_newtrees=True),
        "onnx",
        position=1.612,
    )

# Constants folded (DimShuffles of constants above all) before merge1 merges
# equal ones. Folded later, in canonicalize, a merged DimShuffle of a constant
# is replaced in each of its many clients, and PyTensor's ShapeFeature scans
# all the clients of the replaced variable on each such change: quadratic in
# graphs that reuse a constant (canonicalize of a 4,000-step chain: 6 s, of
# an 8,000-step one: 28 s). Here each constant still has its one client and
# ShapeFeature is not attached yet (ShapeOpt, position 0.1). The same
# rewrite as canonicalize's, run earlier; canonicalize still folds what later
# rewrites create. The same walk computes constant operands of a sum or
# product in its dtype, as PyTensor's canonizers do (rewriting.py).
# FAST_RUN's canonicalize on trees of constants (_ConstantCanonicalize):
# just before canonicalize, where PyTensor's ShapeFeature is attached.
if "onnx_canonicalize_constant_expressions" not in optdb:
    optdb.register("onnx_canonicalize_constant_expressions", _ConstantCanonicalize(), "onnx", position=0.99)
if "onnx_fold_constants_early" not in optdb:
    optdb.register(
        "onnx_fold_constants_early",
        early_constant_folding,
        "onnx",
        position=-0.005,
    )


# --------------------------------------------------------------------------
# Linear algebra (the rules are in dispatch/linalg/)
# --------------------------------------------------------------------------

PivotToPermutations = linalg_op_class("PivotToPermutations")

_split_solve, _split_solve_in_scan = solve_splitting_rewriters()
if _split_solve is not None:

    @node_rewriter([Blockwise])
    def reuse_decomposition_multiple_solves_onnx(fgraph, node):
        """Solves sharing a matrix share its LU or Cholesky factor (PyTensor's
        rewrite, without its tridiagonal case: ONNX mode keeps those Solves)."""
        return _split_solve(fgraph, node, eager=False, allowed_assume_a={"gen", "pos"})

    optdb["specialize"].register(
        reuse_decomposition_multiple_solves_onnx.__name__,
        dfs_rewriter(reuse_decomposition_multiple_solves_onnx, ignore_newtrees=True),
        "onnx",
        use_db_name_as_tag=False,
    )

    from pytensor.scan.op import Scan
    from pytensor.scan.rewriting import scan_seqopt1

    @node_rewriter([Scan])
    def scan_split_non_sequence_decomposition_and_solve_onnx(fgraph, node):
        return _split_solve_in_scan(fgraph, node, allowed_assume_a={"gen", "pos"})

    scan_seqopt1.register(
        scan_split_non_sequence_decomposition_and_solve_onnx.__name__,
        dfs_rewriter(scan_split_non_sequence_decomposition_and_solve_onnx, ignore_newtrees=True),
        "onnx",
        use_db_name_as_tag=False,
        position=2,
    )


def _core(op):
    return op.core_op if isinstance(op, Blockwise) else op


@node_rewriter([ArgSortOp, Blockwise])
def argsort_of_pivot_permutation(fgraph, node):
    """``argsort(pivot_to_permutation(p, inverse=True))`` is
    ``pivot_to_permutation(p, inverse=False)`` (lu_solve with trans=True
    builds the former): one recipe instead of a sort."""
    if not isinstance(_core(node.op), ArgSortOp):
        return None
    [perm] = node.inputs[:1]
    producer = perm.owner
    if producer is None or not isinstance(_core(producer.op), PivotToPermutations) or not _core(producer.op).inverse:
        return None
    if perm.type.ndim != 1 and not isinstance(node.op, Blockwise):
        return None  # an argsort over the batch: not this pattern
    pivots = producer.inputs[0]
    forward = PivotToPermutations(inverse=False)
    result = Blockwise(forward)(pivots) if pivots.type.ndim > 1 else forward(pivots)
    return [result.astype(node.outputs[0].type.dtype)]


optdb["specialize"].register(
    argsort_of_pivot_permutation.__name__,
    dfs_rewriter(argsort_of_pivot_permutation),
    "onnx",
    use_db_name_as_tag=False,
)


# --------------------------------------------------------------------------
# Element-wise work on one element, inside the kernel that reads it
# --------------------------------------------------------------------------

# PyTensor fuses element-wise nodes of one broadcast pattern only: work on a
# scalar parameter broadcast into a vector's Composite (PyMC's
# ``log(sigma)`` of ``Normal(mu, sigma)``, an ExpandDims of ``exp(tau_log__)``)
# stays a node of its own, with an Unsqueeze, in front of the kernel that
# reads it. One element's worth of work costs nothing inside the kernel (a
# scalar register, computed once per block), while each ONNX node costs
# ~0.5 us a call. Mode ONNX with the kernels (tag "fusion": exports run no
# fusion) inlines such a producer's scalar graph into the reading Composite,
# which then reads the producer's own inputs. The producer stays for any
# other reader.
def _expands_only(op) -> bool:
    return isinstance(op, DimShuffle) and not op.drop and list(op.shuffle) == sorted(op.shuffle)


def _past_added_axes(var):
    """``var`` past the DimShuffles that only add axes to it."""
    while var.owner is not None and _expands_only(var.owner.op):
        var = var.owner.inputs[0]
    return var


def _one_element_producer(var):
    """The Elemwise output (every dim of size 1) that ``var`` is, past
    DimShuffles that only add axes, when the kernels evaluate its scalar op;
    else None."""
    from pytensor_onnx.dispatch.kernel import evaluates

    var = _past_added_axes(var)
    owner = var.owner
    if owner is None or not isinstance(owner.op, Elemwise) or not all(var.type.broadcastable):
        return None
    return var if evaluates(owner.op.scalar_op) else None


def _one_element_source(var):
    """``var`` past DimShuffles that only add axes when it holds one element
    (the same value however its axes of size 1 are placed: the kernel node
    reads it once), else ``var``."""
    source = _past_added_axes(var)
    return source if all(source.type.broadcastable) else var


@node_rewriter([Elemwise])
def local_onnx_inline_one_element_producers(fgraph, node):
    composite = node.op.scalar_op
    if not isinstance(composite, ps.Composite) or len(node.inputs) > 32:
        return None
    inner_inputs, replacements, outer_inputs = [], {}, []
    inlined = {}  # source -> its scalar result: a producer read by several inputs is inlined once
    # outer input -> its inner input: producers that read the same variables
    # (PyMC's exp(alpha_log__) and alpha_log__ * beta_log__) share them, where
    # each would otherwise add its own copy, one more input the kernel node
    # reads on every run.
    inner_of = {}
    for outer, inner in zip(node.inputs, composite.fgraph.inputs, strict=True):
        source = _one_element_producer(outer)
        if source is None:
            outer = _one_element_source(outer)
            if outer in inner_of:
                replacements[inner] = inner_of[outer]
                continue
            inner_inputs.append(inner)
            outer_inputs.append(outer)
            inner_of[outer] = inner
            continue
        if source in inlined:
            replacements[inner] = inlined[source]
            continue
        producer = source.owner
        fresh = []
        for v in producer.inputs:
            if v not in inner_of:
                inner_of[v] = ps.get_scalar_type(v.type.dtype)()
                inner_inputs.append(inner_of[v])
                outer_inputs.append(v)
            fresh.append(inner_of[v])
        results = producer.op.scalar_op.make_node(*fresh).outputs
        replacements[inner] = inlined[source] = results[producer.outputs.index(source)]
    if not replacements:
        return None
    # (Rebuilt node by node: PyTensor 3's Composite graphs are frozen, which
    # clone_replace cannot clone.)
    env = dict(replacements)
    for inner_node in composite.fgraph.toposort():
        rebuilt = inner_node.op.make_node(*(env.get(v, v) for v in inner_node.inputs)).outputs
        env.update(zip(inner_node.outputs, rebuilt, strict=True))
    outputs = [env.get(v, v) for v in composite.fgraph.outputs]
    # Where every input was inlined, the producers' inputs may have fewer
    # dims than the node's outputs (a Composite on ExpandDims of exp(x) for a
    # scalar x): axes in front keep the outputs' rank (the kernel node reads
    # past them, src/core/passes/fold_into_kernels.h).
    ndim = node.outputs[0].type.ndim
    outer_inputs = [v if v.type.ndim >= ndim else v.dimshuffle(["x"] * (ndim - v.type.ndim) + list(range(v.type.ndim)))
                    for v in outer_inputs]
    new = Elemwise(ps.Composite(inner_inputs, outputs)).make_node(*outer_inputs).outputs
    if any(a.type != b.type for a, b in zip(node.outputs, new, strict=True)):
        return None
    return new


if "local_onnx_inline_one_element_producers" not in optdb:
    optdb.register(
        "local_onnx_inline_one_element_producers",
        dfs_rewriter(local_onnx_inline_one_element_producers),
        "onnx",
        "fusion",
        position=49.05,
    )


# --------------------------------------------------------------------------
# Scans that only map and accumulate
# --------------------------------------------------------------------------

# After PyTensor's scan push-outs, the Scan of a PyMC log-density (a
# CustomDist built with scan, its gradient) often does no sequential work at
# all: it checks each step's term, which was computed outside from the
# sequences, and adds terms into running totals that start at 0 (the
# gradient's accumulators of non-sequences). An ONNX Loop still pays for
# every step (~3.5 us a step for such a body: AR(1)'s 39 steps were 26x
# Numba). Such a Scan is the same work on the whole sequences: the per-step
# scalar graph applied to the sequences, and a sum for each total. Mode ONNX
# with the kernels only (tag "fusion"): a sum of element-wise work joins that
# kernel node; as a SequentialSum it adds in position order, 0 + t0 + t1 +
# ..., the order in which the Scan adds, so such totals equal the Scan's bit
# for bit (a sum of
# anything else is ONNX Runtime's ReduceSum, within a few ulps). What the
# rewrite takes:
# - a Scan of a constant number of steps (>= 1), no while condition;
# - sequences of a static length of at least that many steps, 0-d per step;
# - no recurrences but totals: 0-d float64 sit-sots whose step is
#   ``Add(total, term)`` with a float64 term that reads no total, starting
#   from the constant +0, of which the graph reads only the last value
#   (untraced, or the buffer's ``[-1]``);
# - per-step outputs that read no total;
# - per-step work of Elemwise and CheckAndRaise nodes on 0-d values, whose
#   check conditions read no sequence and no total (a check's conditions
#   are scalars, the same every step).
def _constant_int(var):
    if not isinstance(var, Constant) or var.data.ndim != 0 or var.data.dtype.kind not in "iu":
        return None
    return int(var.data)


def _is_positive_zero(var):
    return isinstance(var, Constant) and var.data.ndim == 0 and var.data == 0 and not np.signbit(var.data)


def _total_term(output, state, states):
    """The term that the untraced output ``output`` adds to ``state`` each
    step, when its step is ``Add(state, term)`` and the term reads no state."""
    owner = output.owner
    if owner is None or not isinstance(owner.op, Elemwise) or not isinstance(owner.op.scalar_op, ps.Add):
        return None
    if len(owner.inputs) != 2 or state not in owner.inputs:
        return None
    term = owner.inputs[1] if owner.inputs[0] is state else owner.inputs[0]
    if term is state or term.type.dtype != "float64" or _reads_any(term, states):
        return None
    return term


def _known_length(fgraph, var, depth=0):
    """The length of ``var``'s first axis when its type, an Elemwise input's
    type (a type not yet refined after rewrites below it) or the graph's
    shape feature knows it as a constant."""
    if var.type.shape[0] is not None:
        return var.type.shape[0]
    owner = var.owner
    if owner is not None and isinstance(owner.op, Subtensor) and depth < 16:
        # A slice of constant bounds (scan's own ``x[:n_steps]``).
        length = _known_length(fgraph, owner.inputs[0], depth + 1)
        bounds = [_constant_int(v) for v in owner.inputs[1:]]
        [entry] = owner.op.idx_list if len(owner.op.idx_list) == 1 else [None]
        if length is not None and isinstance(entry, slice) and None not in bounds:
            given = iter(bounds)
            indices = [None if part is None else next(given) for part in (entry.start, entry.stop, entry.step)]
            if indices[2] != 0:
                return len(range(*slice(*indices).indices(length)))
    if owner is not None and isinstance(owner.op, Elemwise) and depth < 16:
        # An input whose dim is not broadcastable has the output's length (or
        # the Elemwise raises).
        for input_ in owner.inputs:
            if not input_.type.broadcastable[0]:
                length = _known_length(fgraph, input_, depth + 1)
                if length is not None:
                    return length
    shape_feature = getattr(fgraph, "shape_feature", None)
    if shape_feature is None:
        return None
    try:
        return int(get_scalar_constant_value(shape_feature.get_shape(var, 0)))
    except NotScalarConstantError:
        return None


def _reads_any(var, variables) -> bool:
    return not set(variables).isdisjoint(ancestors([var]))


def _last_state_readers(fgraph, buffer, length):
    """The readers of ``buffer``, a traced sit-sot's outer output of
    ``length`` entries, when each takes only its last state (``buffer[-1]``,
    or ``buffer[length - 1]``); else None."""
    readers = []
    for client, _ in fgraph.clients[buffer]:
        if not isinstance(client.op, Subtensor) or len(client.inputs) != 2 or client.inputs[0] is not buffer:
            return None
        if len(client.op.idx_list) != 1 or isinstance(client.op.idx_list[0], slice):
            return None
        if _constant_int(client.inputs[1]) not in (-1, length - 1):
            return None
        readers.append(client.outputs[0])
    return readers


def _first_entry(buffer):
    """The constant first entry of a sit-sot's initial buffer: a constant, or
    a constant written into the buffer's first entries (``SetSubtensor{:k}``,
    how PyTensor 2.38's scan-save-mem lays it out); else None."""
    owner = buffer.owner
    if (
        owner is not None
        and isinstance(owner.op, IncSubtensor)
        and owner.op.set_instead_of_inc
        and len(owner.op.idx_list) == 1
        and isinstance(owner.op.idx_list[0], slice)
        and owner.op.idx_list[0].start is None
        and owner.op.idx_list[0].step is None
        and len(owner.inputs) == 3
        and (_constant_int(owner.inputs[2]) or 0) >= 1
    ):
        buffer = owner.inputs[1]
    if not isinstance(buffer, Constant) or buffer.data.ndim > 1 or buffer.data.size == 0:
        return None
    return tensor_constant(buffer.data.reshape(-1)[0])


def _totals(fgraph, steps, args, info):
    """``[(state, inner output, outer variables that are its final value)]``
    for every recurrence of the Scan, when each is a float64 total that
    starts at +0; else None. PyTensor 3 keeps such a total untraced (only its
    last value); PyTensor 2.38 keeps a buffer of the last states, which the
    graph reads at ``[-1]``."""
    totals = []
    for init, state, out, final in zip(
        args.outer_in_shared, args.inner_in_shared, args.inner_out_shared, args.outer_out_shared, strict=True
    ):
        if not _is_positive_zero(init):
            return None
        totals.append((state, out, [final]))
    for init, state, out, buffer, taps in zip(
        args.outer_in_sit_sot,
        args.inner_in_sit_sot,
        args.inner_out_sit_sot,
        args.outer_out_sit_sot,
        info.sit_sot_in_slices,
        strict=True,
    ):
        # The buffer holds the initial state first; once the Scan has run, its
        # last entry is the last state when it holds no more than all of them.
        length = _known_length(fgraph, init) if init.type.ndim == 1 else None
        if tuple(taps) != (-1,) or length is None or not 1 <= length <= steps + 1:
            return None
        first = _first_entry(init)
        if first is None or not _is_positive_zero(first):
            return None
        readers = _last_state_readers(fgraph, buffer, length)
        if readers is None:
            return None
        totals.append((state, out, readers))
    for state, _, _ in totals:
        if getattr(state.type, "dtype", None) != "float64" or getattr(state.type, "ndim", 1) != 0:
            return None
    return totals


@node_rewriter([Scan])
def local_onnx_scan_as_map_and_sums(fgraph, node):
    op = node.op
    info = op.info
    if info.as_while or info.n_mit_mot or info.n_mit_sot:
        return None
    steps = _constant_int(node.inputs[0])
    if steps is None or steps < 1:
        return None
    args = scan_args(node)
    if any(_constant_int(length) != steps for length in args.outer_in_nit_sot):
        return None
    lengths = [_known_length(fgraph, outer) for outer in args.outer_in_seqs]
    for outer, inner, length in zip(args.outer_in_seqs, args.inner_in_seqs, lengths, strict=True):
        if outer.type.ndim != 1 or length is None or length < steps or inner.type.ndim:
            return None
    totals = _totals(fgraph, steps, args, info)
    if totals is None:
        return None
    states = [state for state, _, _ in totals]
    terms = [_total_term(out, state, states) for state, out, _ in totals]
    if any(term is None for term in terms):
        return None
    if any(_reads_any(out, states) for out in args.inner_out_nit_sot):
        return None  # (a running total emitted each step: a cumulative sum)
    # Every node between the per-step inputs and what is kept: scalar work.
    inner = op.fgraph
    for inner_node in inner.toposort():
        if isinstance(inner_node.op, CheckAndRaise):
            if any(_reads_any(c, args.inner_in_seqs + states) for c in inner_node.inputs[1:]):
                return None
        elif not isinstance(inner_node.op, Elemwise):
            return None
        if getattr(inner_node.op, "destroy_map", None):
            return None  # (rebuilt outside, an inplace op would overwrite a sequence)
        if any(getattr(v.type, "ndim", 0) != 0 for v in inner_node.outputs):
            return None
    # The per-step graph on the whole sequences (node by node: PyTensor 3's
    # inner graphs are frozen, which clone_replace cannot clone).
    env = {inner_in: outer[:steps] if length != steps else outer
           for inner_in, outer, length in zip(args.inner_in_seqs, args.outer_in_seqs, lengths, strict=True)}
    env.update(zip(args.inner_in_non_seqs, args.outer_in_non_seqs, strict=True))
    for inner_node in inner.toposort():
        if any(s in inner_node.inputs for s in states):
            continue  # a total's own Add
        rebuilt = inner_node.op.make_node(*(env.get(v, v) for v in inner_node.inputs)).outputs
        env.update(zip(inner_node.outputs, rebuilt, strict=True))

    def per_step(var):
        value = env.get(var, var)
        if isinstance(value.type, ps.ScalarType) or value.type.ndim == 0:
            # The same value every step; element-wise (Second), so that it
            # joins the kernel node of the sum.
            value = second(np.zeros(steps), as_tensor_variable(value))
        return value

    replacements = {}
    for outer_out, inner_out in zip(args.outer_out_nit_sot, args.inner_out_nit_sot, strict=True):
        replacements[outer_out] = outer_out.type.filter_variable(per_step(inner_out))
    for (_, _, finals), term in zip(totals, terms, strict=True):
        total = SequentialSum()(per_step(term))
        replacements.update((final, final.type.filter_variable(total)) for final in finals)
    return replacements


# Just before the fusion: the Scan's sequences have their static lengths
# there and its initial totals are folded constants (PyTensor's scan-save-mem
# and, on PyTensor 3, sit-sot-to-untraced steps have run), and no rewrite
# moves factors out of the new sums or regroups them (canonicalize's
# ``Sum(x * rho) -> rho * Sum(x)`` would add x in ONNX Runtime's order). The
# fusion then puts each sum into its kernel node; a sum of a check of the
# terms becomes the check of their sum first (local_onnx_sum_of_check).
if "onnx_scan_as_map_and_sums" not in optdb:
    optdb.register(
        "onnx_scan_as_map_and_sums",
        dfs_rewriter(local_onnx_scan_as_map_and_sums, local_onnx_sum_of_check),
        "onnx",
        "fusion",
        position=48.9,
    )
