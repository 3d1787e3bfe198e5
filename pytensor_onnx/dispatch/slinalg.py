"""Rules for PyTensor's SciPy-style linear algebra (``pytensor.tensor.slinalg``
on 2.38, the ``pytensor.tensor.linalg`` package on 3.3): Cholesky, the
solvers, LU, and the helpers the other linear-algebra modules share.

The decompositions are recipes of the C++ core (``src/core/recipes/linalg*.cc``)
built from standard ONNX ops (in mode ONNX, LAPACK kernels where one does the
job: ``linalg_kernel.factorization``), in the output's dtype (float32 stays float32,
float64 is never computed in float32). Every rule takes leading batch dims
(``Blockwise``). Failures follow PyTensor: NaN where LAPACK reports one
(not positive definite, exactly singular). A non-square matrix, or a right-hand
side whose rows differ from the matrix's, raises at conversion when the
shapes are static, else makes ONNX Runtime fail at run time, as PyTensor
raises there.
"""

from __future__ import annotations

import numpy as np
from pytensor.compile import optdb
from pytensor.graph.rewriting.basic import dfs_rewriter, node_rewriter
from pytensor.tensor.blockwise import Blockwise
from pytensor.tensor.sort import ArgSortOp

from pytensor_onnx.compat import eigh_driver, linalg_op_class, solve_splitting_rewriters
from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.blockwise import batch_capable
from pytensor_onnx.dispatch.linalg_kernel import factorization, has_kernel
from pytensor_onnx.dispatch.shape import guarded, int64_const

Cholesky = linalg_op_class("Cholesky")
SolveTriangular = linalg_op_class("SolveTriangular")
Solve = linalg_op_class("Solve")
CholeskySolve = linalg_op_class("CholeskySolve")
LUFactor = linalg_op_class("LUFactor")
LU = linalg_op_class("LU")
PivotToPermutations = linalg_op_class("PivotToPermutations")


# --------------------------------------------------------------------------
# Helpers shared with nlinalg.py
# --------------------------------------------------------------------------


def output_dtype(node, index: int = 0) -> str:
    return node.outputs[index].type.dtype


def _dim(g, x, axis: int):
    """Size of ``axis`` of ``x``: an int when known, else a 1-D int64 Value."""
    size = x.shape[axis] if x.shape is not None else None
    if isinstance(size, int):
        return size
    return g.op("Gather", g.op("Shape", x), int64_const(g, [axis % x.rank]), axis=0)


def same_sizes(g, x, axis_x: int, y, axis_y: int, what: str, node, check: bool = True):
    """``x`` unchanged, checked to have as many elements on ``axis_x`` as ``y`` on ``axis_y``.

    Static sizes are checked now (ValueError); others make ONNX Runtime fail
    at run time where they differ (unless ``check`` is false: a kernel that
    checks them itself reads ``x``).
    """
    a, b = _dim(g, x, axis_x), _dim(g, y, axis_y)
    if isinstance(a, int) and isinstance(b, int):
        if a != b:
            raise ValueError(f"{node.op}: {what} ({a} != {b}) in node {node}")
        return x
    if not check:
        return x
    a = int64_const(g, [a]) if isinstance(a, int) else a
    b = int64_const(g, [b]) if isinstance(b, int) else b
    return guarded(g, g.op("Equal", a, b), x)


def square(g, x, node, dtype: str, recipe: str | None = None):
    """``x`` cast to ``dtype``, checked to be (stacks of) square matrices (at
    run time only when ``recipe`` has no kernel here, see ``has_kernel``)."""
    x = g.cast(x, dtype)
    check = recipe is None or not has_kernel(recipe, dtype)
    return same_sizes(g, x, -1, x, -2, "expected square matrices", node, check)


def solve_operands(g, node, a, b, b_ndim: int, recipe: str, **attrs):
    """``a`` and ``b`` of a solve: square ``a``, ``b`` with as many rows, both in the output dtype."""
    dtype = output_dtype(node)
    check = not has_kernel(recipe, dtype, 2, **attrs)
    a = g.cast(a, dtype)
    a = same_sizes(g, a, -1, a, -2, "expected square matrices", node, check)
    b = g.cast(b, dtype)
    b = same_sizes(g, b, -b_ndim, a, -1, "b's rows must match a's size", node, check)
    return a, b


# --------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------


@batch_capable(Cholesky)
@onnx_funcify.register(Cholesky)
def _cholesky(op, node, g, x):
    # PyTensor returns NaN everywhere where potrf fails (on_error="raise" is
    # a separate CheckAndRaise node).
    return factorization(g, "cholesky", square(g, x, node, output_dtype(node), "cholesky"), lower=int(op.lower))


@batch_capable(SolveTriangular)
@onnx_funcify.register(SolveTriangular)
def _solve_triangular(op, node, g, a, b):
    a, b = solve_operands(g, node, a, b, op.b_ndim, "solve_triangular")
    return factorization(
        g,
        "solve_triangular",
        a,
        b,
        lower=int(op.lower),
        trans=int(getattr(op, "trans", 0) in (1, "T", True)),
        unit_diagonal=int(op.unit_diagonal),
        b_ndim=op.b_ndim,
    )


@batch_capable(Solve)
@onnx_funcify.register(Solve)
def _solve(op, node, g, a, b):
    a, b = solve_operands(g, node, a, b, op.b_ndim, "solve", assume_a=op.assume_a)
    return factorization(g, "solve", a, b, assume_a=op.assume_a, lower=int(op.lower), b_ndim=op.b_ndim)


@batch_capable(CholeskySolve)
@onnx_funcify.register(CholeskySolve)
def _cholesky_solve(op, node, g, c, b):
    c, b = solve_operands(g, node, c, b, op.b_ndim, "cholesky_solve")
    return factorization(g, "cholesky_solve", c, b, lower=int(op.lower), b_ndim=op.b_ndim)


@batch_capable(LUFactor)
@onnx_funcify.register(LUFactor)
def _lu_factor(op, node, g, a):
    a = square(g, a, node, output_dtype(node), "lu_factor")
    packed, pivots, _, singular = factorization(g, "lu_factor", a)
    # getrf's info > 0 (an exactly zero pivot): PyTensor returns NaN factors.
    return nan_where(g, singular, packed, core_rank=2), g.cast(pivots, output_dtype(node, 1))


def nan_where(g, flag, x, core_rank: int):
    """``x`` with NaN in the core matrices (or vectors) whose ``flag`` (batch dims only) is true."""
    if core_rank:
        flag = g.op("Unsqueeze", flag, axes=list(range(flag.rank, flag.rank + core_rank)))
    return g.op("Where", flag, g.const(np.array(np.nan, dtype=x.dtype)), x)


@batch_capable(PivotToPermutations)
@onnx_funcify.register(PivotToPermutations)
def _pivot_to_permutations(op, node, g, pivots):
    return factorization(g, "pivot_to_permutation", g.cast(pivots, "int64"), inverse=int(op.inverse))


@batch_capable(LU)
@onnx_funcify.register(LU)
def _lu(op, node, g, a):
    """scipy.linalg.lu: ``a = P @ L @ U`` (``p_indices``: ``a = L[p] @ U``;
    ``permute_l``: ``(P @ L, U)``)."""
    dtype = output_dtype(node, len(node.outputs) - 1)
    a = square(g, a, node, dtype, "lu_factor")
    packed, _, perm, _ = factorization(g, "lu_factor", a)
    n = _dim(g, a, -1)
    n_value = int64_const(g, n) if isinstance(n, int) else g.op("Squeeze", n, axes=[0])
    index = g.op("Range", int64_const(g, 0), n_value, int64_const(g, 1))
    rows = g.op("Unsqueeze", index, axes=[1])
    cols = g.op("Unsqueeze", index, axes=[0])
    zero, one = g.const(np.array(0, dtype=dtype)), g.const(np.array(1, dtype=dtype))
    lower = g.op("Where", g.op("Greater", rows, cols), packed, g.op("Where", g.op("Equal", rows, cols), one, zero))
    upper = g.op("Where", g.op("LessOrEqual", rows, cols), packed, zero)
    # P A = L U with (P A)[i] = A[perm[i]], so A = P^T L U: P^T[perm[i], i] = 1,
    # and A = L[inv] U with inv the inverse permutation of perm.
    perm_rows = g.op("Unsqueeze", perm, axes=[-1])  # (..., n, 1)
    p_matrix = g.cast(g.op("Equal", perm_rows, cols), dtype)  # P: P[i, perm[i]] = 1
    p_transposed = _swap_last2(g, p_matrix)
    if op.permute_l:
        return g.op("MatMul", p_transposed, lower), upper
    if op.p_indices:
        # p = argsort(perm): p[perm[i]] = i.
        positions = g.op("Expand", index, g.op("Shape", perm))
        inverse = g.op("ScatterElements", g.op("Mul", positions, int64_const(g, 0)), perm, positions, axis=-1)
        return g.cast(inverse, output_dtype(node, 0)), lower, upper
    return g.cast(p_transposed, output_dtype(node, 0)), lower, upper


def _swap_last2(g, x):
    perm = list(range(x.rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return g.op("Transpose", x, perm=perm)


# --------------------------------------------------------------------------
# ONNX-mode rewrites (tag "onnx")
# --------------------------------------------------------------------------

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
# Eigenvalues, QR, Expm, BlockDiagonal
# --------------------------------------------------------------------------

Eigvalsh = linalg_op_class("Eigvalsh")
EigvalshGrad = linalg_op_class("EigvalshGrad")
QR = linalg_op_class("QR")
Expm = linalg_op_class("Expm")
BlockDiagonal = linalg_op_class("BlockDiagonal")


def _eigh_operands(g, node, a, b):
    dtype = output_dtype(node)
    generalized = b is not None and hasattr(b, "rank")
    operands = [square(g, a, node, dtype, None if generalized else "eigh")]
    if generalized:
        operands.append(square(g, b, node, dtype))
    return operands


@batch_capable(Eigvalsh)
@onnx_funcify.register(Eigvalsh)
def _eigvalsh(op, node, g, a, b=None):
    w, _ = factorization(
        g, "eigh", *_eigh_operands(g, node, a, b), lower=int(op.lower), kernel_attrs={"driver": eigh_driver(op)}
    )
    return w


if EigvalshGrad is not None:

    @onnx_funcify.register(EigvalshGrad)
    def _eigvalsh_grad(op, node, g, a, b, gw):
        """PyTensor 2.38's EigvalshGrad: with (w, v) = eigh(a, b),
        gA = v diag(gw) v^T and gB = -v diag(gw w) v^T, each folded onto the
        triangle eigh reads."""
        from pytensor_onnx.dispatch.nlinalg import _fold_triangle, _transpose

        dtype = output_dtype(node)
        a, b, gw = (g.cast(t, dtype) for t in (a, b, gw))
        w, v = factorization(g, "eigh", a, b, lower=int(op.lower))
        v_t = _transpose(g, v)
        g_a = g.op("MatMul", g.op("Mul", v, g.op("Unsqueeze", gw, axes=[0])), v_t)
        g_b = g.op("Neg", g.op("MatMul", g.op("Mul", v, g.op("Unsqueeze", g.op("Mul", gw, w), axes=[0])), v_t))
        return _fold_triangle(g, g_a, op.lower), _fold_triangle(g, g_b, op.lower)


def _rows_cols(g, x):
    rows, cols = _dim(g, x, -2), _dim(g, x, -1)
    return (int64_const(g, [rows]) if isinstance(rows, int) else rows), (int64_const(g, [cols]) if isinstance(cols, int) else cols)


def _triangle(g, x, upper: bool):
    """triu(x) (or tril) over the last two axes, for any shape."""
    rows, cols = _rows_cols(g, x)
    r = g.op("Unsqueeze", g.op("Range", int64_const(g, 0), g.op("Squeeze", rows, axes=[0]), int64_const(g, 1)), axes=[1])
    c = g.op("Unsqueeze", g.op("Range", int64_const(g, 0), g.op("Squeeze", cols, axes=[0]), int64_const(g, 1)), axes=[0])
    keep = g.op("LessOrEqual", r, c) if upper else g.op("GreaterOrEqual", r, c)
    return g.op("Where", keep, x, g.const(np.array(0, dtype=x.dtype)))


def _slice_last(g, x, axis: int, end):
    return g.op("Slice", x, int64_const(g, [0]), end, int64_const(g, [axis]))


@batch_capable(QR)
@onnx_funcify.register(QR)
def _qr(op, node, g, x):
    """scipy.linalg.qr (PyTensor's QR) from LAPACK-convention Householder reflectors."""
    dtype = output_dtype(node)
    x = g.cast(x, dtype)
    packed, tau, q_full, perm = factorization(g, "qr", x, pivoting=int(op.pivoting))
    rows, cols = _rows_cols(g, x)
    k = g.op("Min", rows, cols)
    rank = x.rank
    r_full = _triangle(g, packed, upper=True)
    pivots = [g.cast(perm, output_dtype(node, len(node.outputs) - 1))] if op.pivoting else []
    if op.mode == "r":
        return (r_full, *pivots) if pivots else r_full
    if op.mode == "raw":
        # R: triu of the first min(m, n) rows (all rows when m < n).
        return (packed, tau, _slice_last(g, r_full, rank - 2, k), *pivots)
    if op.mode == "economic":
        return (_slice_last(g, q_full, rank - 1, k), _slice_last(g, r_full, rank - 2, k), *pivots)
    return (q_full, r_full, *pivots)


@batch_capable(Expm)
@onnx_funcify.register(Expm)
def _expm(op, node, g, x):
    return g.recipe("expm", square(g, x, node, output_dtype(node)))


if BlockDiagonal is not None:

    @onnx_funcify.register(BlockDiagonal)
    def _block_diagonal(op, node, g, *blocks):
        """Each block padded with zero columns to the total width, stacked by rows."""
        dtype = output_dtype(node)
        blocks = [g.cast(b, dtype) for b in blocks]
        widths = [_rows_cols(g, b)[1] for b in blocks]
        rank = node.outputs[0].type.ndim
        zero = g.const(np.array(0, dtype=dtype))
        padded = []
        for i, block in enumerate(blocks):
            before = _sum(g, widths[:i])
            after = _sum(g, widths[i + 1 :])
            pads = g.op("Concat", int64_const(g, [0] * (rank - 1)), before, int64_const(g, [0] * (rank - 1)), after, axis=0)
            padded.append(g.op("Pad", block, pads, zero))
        return g.op("Concat", *padded, axis=rank - 2)


def _sum(g, sizes):
    total = int64_const(g, [0])
    for size in sizes:
        total = g.op("Add", total, size)
    return total
