"""Rules for the Sylvester and Lyapunov solvers (``pytensor.tensor.linalg.solvers.linear_control``
on 3.3, ``pytensor.tensor._linalg.solve.linear_control`` on 2.38), the real
Schur decomposition they are built on in PyTensor, and the Blockwise form of
BlockDiagonal.

``solve_discrete_lyapunov`` and ``solve_continuous_lyapunov`` are PyTensor
graphs around ``SolveSylvester`` (an OpFromGraph wrapped in Blockwise), so they
convert through the rule for ``SolveSylvester``.
"""

from __future__ import annotations

import numpy as np

from pytensor_onnx.compat import linalg_op_class
from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.blockwise import batch_capable, batched_rule
from pytensor_onnx.dispatch.linalg.constructors import _block_diagonal
from pytensor_onnx.dispatch.linalg.utils import same_sizes, square
from pytensor_onnx.dispatch.utils import dim_size, int64_const, int64_vector, output_dtype, swap_last_axes

BlockDiagonal = linalg_op_class("BlockDiagonal")
KroneckerProduct = linalg_op_class("KroneckerProduct")
SolveSylvester = linalg_op_class("SolveSylvester")
TRSYL = linalg_op_class("TRSYL")
Schur = linalg_op_class("Schur")


def _size_1d(g, x, axis: int):
    """Size of ``axis`` of ``x`` as a 1-D int64 Value."""
    return int64_vector(g, [dim_size(g, x, axis)])


def _batch_shape(g, x, core_rank: int):
    return g.op("Slice", g.op("Shape", x), int64_const(g, [0]), int64_const(g, [x.rank - core_rank]), int64_const(g, [0]))


@batched_rule(BlockDiagonal)
def _batched_block_diagonal(op, node, g, *blocks):
    """Blocks broadcast to their common batch dims, then the core rule (which
    pads and stacks along the last two axes of any rank)."""
    zero = g.const(np.zeros((), dtype=np.int8))
    batch = g.op("Shape", _sum_all(g, [g.op("Expand", zero, _batch_shape(g, b, 2)) for b in blocks]))
    blocks = [g.op("Expand", b, g.op("Concat", batch, _size_1d(g, b, -2), _size_1d(g, b, -1), axis=0)) for b in blocks]
    return _block_diagonal(op.core_op, node, g, *blocks)


@batched_rule(KroneckerProduct)
def _batched_kron(op, node, g, a, b):
    """numpy.kron of the core arrays of each batch entry: the core axes of a
    and b interleaved (a's core padded to b's rank, or the reverse, as kron
    does), multiplied with broadcasting, and merged pairwise."""
    batch = op.batch_ndim(node)
    dtype = output_dtype(node)
    a, b = g.cast(a, dtype), g.cast(b, dtype)
    rank = max(a.rank, b.rank) - batch
    a, b = (_pad_core(g, x, batch, rank) for x in (a, b))
    product = g.op("Mul", g.op("Unsqueeze", a, axes=[batch + 2 * i + 1 for i in range(rank)]),
                   g.op("Unsqueeze", b, axes=[batch + 2 * i for i in range(rank)]))
    core = g.op("Mul", _core_shape(g, a, batch), _core_shape(g, b, batch))
    return g.op("Reshape", product, g.op("Concat", _batch_shape(g, product, 2 * rank), core, axis=0))


def _pad_core(g, x, batch: int, rank: int):
    """``x`` with leading core axes of size 1 up to ``rank`` core axes."""
    missing = rank - (x.rank - batch)
    return g.op("Unsqueeze", x, axes=list(range(batch, batch + missing))) if missing else x


def _core_shape(g, x, batch: int):
    return g.op("Slice", g.op("Shape", x), int64_const(g, [batch]), int64_const(g, [x.rank]), int64_const(g, [0]))


def _sum_all(g, values):
    total = values[0]
    for value in values[1:]:
        total = g.op("Add", total, value)
    return total


def _sylvester_by_kronecker(g, node, a, b, c):
    """X with A X + X B = C, from the (m n) x (m n) linear system
    (A kron I_n + I_m kron B^T) vec(X) = vec(C) (row-major vec), solved by the
    LU recipe with partial pivoting. Leading batch dims broadcast."""
    dtype = output_dtype(node)
    a, b = square(g, a, node, dtype), square(g, b, node, dtype)
    c = g.cast(c, dtype)
    c = same_sizes(g, c, -2, a, -1, "C's rows must match A's size", node)
    c = same_sizes(g, c, -1, b, -1, "C's columns must match B's size", node)
    m, n = _size_1d(g, a, -1), _size_1d(g, b, -1)
    eye_m, eye_n = _eye(g, m, dtype), _eye(g, n, dtype)
    # K[..., i, j, k, l] = A[i, k] I_n[j, l] + I_m[i, k] B[l, j]
    a4 = g.op("Unsqueeze", a, axes=[-1, -3])  # (..., m, 1, m, 1)
    i_n4 = g.op("Unsqueeze", eye_n, axes=[0, 2])  # (1, n, 1, n)
    i_m4 = g.op("Unsqueeze", eye_m, axes=[1, 3])  # (m, 1, m, 1)
    b4 = g.op("Unsqueeze", swap_last_axes(g, b), axes=[-2, -4])  # (..., 1, n, 1, n)
    k4 = g.op("Add", g.op("Mul", a4, i_n4), g.op("Mul", i_m4, b4))
    mn = g.op("Mul", m, n)
    k = g.op("Reshape", k4, g.op("Concat", _batch_shape(g, k4, 4), mn, mn, axis=0))
    rhs = g.op("Reshape", c, g.op("Concat", _batch_shape(g, c, 2), mn, axis=0))
    x = g.recipe("solve", k, rhs, assume_a="gen", lower=0, b_ndim=1)
    return g.op("Reshape", x, g.op("Concat", _batch_shape(g, x, 1), m, n, axis=0))


def _eye(g, size, dtype: str):
    index = g.op("Range", int64_const(g, 0), g.op("Squeeze", size, axes=[0]), int64_const(g, 1))
    return g.cast(g.op("Equal", g.op("Unsqueeze", index, axes=[1]), g.op("Unsqueeze", index, axes=[0])), dtype)


if SolveSylvester is not None:

    @batch_capable(SolveSylvester)
    @onnx_funcify.register(SolveSylvester)
    def _solve_sylvester(op, node, g, a, b, c):
        """scipy.linalg.solve_sylvester (A X + X B = C). PyTensor (as SciPy)
        goes through two real Schur decompositions and LAPACK's trsyl
        (Bartels-Stewart, O(m^3 + n^3)); the conversion solves the equivalent
        Kronecker system of size m n instead (O(m^3 n^3) work, (m n)^2
        memory: meant for the small state spaces of Lyapunov equations). Both
        are backward stable; results agree to rounding for well-conditioned
        equations. Where A and -B share an eigenvalue the equation is singular:
        trsyl returns a perturbed solution, the conversion what the LU solve
        gives (inf or NaN)."""
        return _sylvester_by_kronecker(g, node, a, b, c)


if TRSYL is not None:

    @batch_capable(TRSYL)
    @onnx_funcify.register(TRSYL)
    def _trsyl(op, node, g, a, b, c):
        """LAPACK's trsyl as PyTensor calls it (A X + X B = C with A, B in real
        Schur form, scale 1); the Kronecker solve does not need the Schur form."""
        return _sylvester_by_kronecker(g, node, a, b, c)


@batch_capable(Schur)
@onnx_funcify.register(Schur)
def _schur(op, node, g, a):
    """scipy.linalg.schur(a, output="real"): A = Z T Z^T with Z orthogonal and
    T quasi-upper-triangular, its 2x2 blocks (complex eigenvalue pairs) in
    LAPACK's standard form (equal diagonal entries, off-diagonal entries of
    opposite sign), from a recipe of Householder reduction to Hessenberg form
    and Francis double-shift QR sweeps.

    T and Z are not unique. The sweeps follow the strategy of LAPACK's
    dlahqr (its shifts, deflation test and sweep starts), which SciPy's gees
    runs for n < 75, so T's diagonal (the order of the eigenvalues and the
    place of the 2x2 blocks) comes out as SciPy's; T and Z themselves agree
    with SciPy's in most cases but not all: within a 2x2 block the Schur
    vectors can differ by a reflection (a plain transcription of dlahqr's
    documented steps differs from SciPy in the same cases: some detail of
    LAPACK's implementation is not reproduced), and for n >= 75 LAPACK switches to its
    multishift QR, whose order differs. What is determined agrees with SciPy
    to rounding: A == Z T Z^T, Z^T Z == I, the structure of T and its
    eigenvalues. Matrices with a non-finite entry, or whose iteration does not
    converge, give NaN as PyTensor does. PyTensor defines no gradient for Schur.
    """
    dtype = output_dtype(node)
    if dtype.startswith("complex") or node.inputs[0].type.dtype.startswith("complex"):
        raise NotImplementedError(
            f"{op}: the complex Schur form (output='complex', or a complex input) has complex results, and "
            "ONNX Runtime has no complex tensors. Use schur(a, output='real') (real input), which converts."
        )
    if op.sort is not None:
        raise NotImplementedError(
            f"{op}: sorting the Schur form (sort={op.sort!r}) reorders its blocks with LAPACK's trexc swaps, "
            "which have no ONNX conversion. Use sort=None (the default), which converts."
        )
    t, z = g.recipe("schur", square(g, a, node, dtype))
    return t, z
