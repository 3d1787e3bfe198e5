"""Decompositions (``pytensor.tensor.linalg.decomposition`` on 3.3; ``slinalg``
and ``nlinalg`` on 2.38): Cholesky, LU, QR, the symmetric eigendecomposition
(recipes in src/core/recipes/linalg_spectral.cc) and SVD. Conventions: see
utils.py.
"""

from __future__ import annotations

import numpy as np

from pytensor_onnx import compat
from pytensor_onnx.compat import eigh_driver, linalg_op_class
from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.blockwise import batch_capable
from pytensor_onnx.dispatch.linalg.utils import fold_triangle, nan_where, rows_cols, square, tall, triangle
from pytensor_onnx.dispatch.linalg_kernel import factorization
from pytensor_onnx.dispatch.utils import as_int64_value, dim_size, int64_const, int64_range, output_dtype, swap_last_axes


Cholesky = linalg_op_class("Cholesky")
LUFactor = linalg_op_class("LUFactor")
LU = linalg_op_class("LU")
PivotToPermutations = linalg_op_class("PivotToPermutations")
QR = linalg_op_class("QR")
Eig = linalg_op_class("Eig")
Eigh = linalg_op_class("Eigh")
EighGrad = linalg_op_class("EighGrad")
Eigvalsh = linalg_op_class("Eigvalsh")
EigvalshGrad = linalg_op_class("EigvalshGrad")
SVD = linalg_op_class("SVD")


@batch_capable(Cholesky)
@onnx_funcify.register(Cholesky)
def _cholesky(op, node, g, x):
    # PyTensor returns NaN everywhere where potrf fails (on_error="raise" is
    # a separate CheckAndRaise node).
    return factorization(g, "cholesky", square(g, x, node, output_dtype(node), "cholesky"), lower=int(op.lower))

@batch_capable(LUFactor)
@onnx_funcify.register(LUFactor)
def _lu_factor(op, node, g, a):
    a = square(g, a, node, output_dtype(node), "lu_factor")
    packed, pivots, _, singular = factorization(g, "lu_factor", a)
    # getrf's info > 0 (an exactly zero pivot): PyTensor returns NaN factors.
    return nan_where(g, singular, packed, core_rank=2), g.cast(pivots, output_dtype(node, 1))

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
    n_value = as_int64_value(g, dim_size(g, a, -1))
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
    p_transposed = swap_last_axes(g, p_matrix)
    if op.permute_l:
        return g.op("MatMul", p_transposed, lower), upper
    if op.p_indices:
        # p = argsort(perm): p[perm[i]] = i.
        positions = g.op("Expand", index, g.op("Shape", perm))
        inverse = g.op("ScatterElements", g.op("Mul", positions, int64_const(g, 0)), perm, positions, axis=-1)
        return g.cast(inverse, output_dtype(node)), lower, upper
    return g.cast(p_transposed, output_dtype(node)), lower, upper

def _slice_last(g, x, axis: int, end):
    return g.op("Slice", x, int64_const(g, [0]), end, int64_const(g, [axis]))

@batch_capable(QR)
@onnx_funcify.register(QR)
def _qr(op, node, g, x):
    """scipy.linalg.qr (PyTensor's QR) from LAPACK-convention Householder reflectors."""
    dtype = output_dtype(node)
    x = g.cast(x, dtype)
    packed, tau, q_full, perm = factorization(g, "qr", x, pivoting=int(op.pivoting))
    rows, cols = rows_cols(g, x)
    k = g.op("Min", rows, cols)
    rank = x.rank
    r_full = triangle(g, packed, upper=True)
    pivots = [g.cast(perm, output_dtype(node, len(node.outputs) - 1))] if op.pivoting else []
    if op.mode == "r":
        return (r_full, *pivots) if pivots else r_full
    if op.mode == "raw":
        # R: triu of the first min(m, n) rows (all rows when m < n).
        return (packed, tau, _slice_last(g, r_full, rank - 2, k), *pivots)
    if op.mode == "economic":
        return (_slice_last(g, q_full, rank - 1, k), _slice_last(g, r_full, rank - 2, k), *pivots)
    return (q_full, r_full, *pivots)

@batch_capable(Eigh)
@onnx_funcify.register(Eigh)
def _eigh(op, node, g, a, *b):
    """Ascending eigenvalues and eigenvectors, from a Jacobi recipe. Each
    eigenvector is determined up to its sign only; LAPACK's sign is an
    artefact of its algorithm, and the recipe's may differ (products such as
    v diag(w) v^T, |v|, and gradients of sign-invariant costs agree)."""
    dtype = output_dtype(node)
    a = square(g, a, node, dtype, None if b else "eigh")
    operands = [a, *(square(g, x, node, dtype) for x in b)]
    w, v = factorization(
        g, "eigh", *operands, lower=int(compat.eigh_lower(op)), kernel_attrs={"driver": compat.eigh_driver(op)}
    )
    return w, v

@batch_capable(Eig)
@onnx_funcify.register(Eig)
def _eig(op, node, g, x):
    raise NotImplementedError(
        f"{op}: PyTensor's Eig always returns complex eigenvalues and eigenvectors, and ONNX Runtime has no "
        "complex tensors. For symmetric matrices use pt.linalg.eigh (real results), which converts."
    )

if EighGrad is not None:

    @batch_capable(EighGrad)
    @onnx_funcify.register(EighGrad)
    def _eigh_grad(op, node, g, x, w, v, gw, gv):
        """PyTensor 2.38's EighGrad: with F[m, n] = 1 / (w_n - w_m) off the
        diagonal and C = v^T gv, g = v (diag(gw) + (C * F)^T) v^T, then the
        read triangle of g plus the transpose of the other. Leading batch
        dims (Blockwise) broadcast through."""
        dtype = output_dtype(node)
        x, w, v, gw, gv = (g.cast(t, dtype) for t in (x, w, v, gw, gv))
        diff = g.op("Sub", g.op("Unsqueeze", w, axes=[-2]), g.op("Unsqueeze", w, axes=[-1]))  # [m, n] = w_n - w_m
        n = dim_size(g, w, -1)
        index = int64_range(g, 0, n)
        on_diagonal = g.op("Equal", g.op("Unsqueeze", index, axes=[1]), g.op("Unsqueeze", index, axes=[0]))
        zero, one = g.const(np.array(0, dtype=dtype)), g.const(np.array(1, dtype=dtype))
        f = g.op("Where", on_diagonal, zero, g.op("Div", one, g.op("Where", on_diagonal, one, diff)))
        c = g.op("MatMul", swap_last_axes(g, v), gv)
        inner = g.op("Add", g.op("Mul", g.op("Unsqueeze", gw, axes=[-1]), g.cast(on_diagonal, dtype)),
                     swap_last_axes(g, g.op("Mul", c, f)))
        full = g.op("MatMul", g.op("MatMul", v, inner), swap_last_axes(g, v))
        return fold_triangle(g, full, compat.eigh_lower(op))

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
        dtype = output_dtype(node)
        a, b, gw = (g.cast(t, dtype) for t in (a, b, gw))
        w, v = factorization(g, "eigh", a, b, lower=int(op.lower))
        v_t = swap_last_axes(g, v)
        g_a = g.op("MatMul", g.op("Mul", v, g.op("Unsqueeze", gw, axes=[0])), v_t)
        g_b = g.op("Neg", g.op("MatMul", g.op("Mul", v, g.op("Unsqueeze", g.op("Mul", gw, w), axes=[0])), v_t))
        return fold_triangle(g, g_a, op.lower), fold_triangle(g, g_b, op.lower)

@batch_capable(SVD)
@onnx_funcify.register(SVD)
def _svd(op, node, g, x):
    """numpy.linalg.svd from a one-sided Jacobi recipe: singular values
    descending as LAPACK's; singular vectors up to sign (see ``_eigh``), and
    where singular values are zero (or for the extra columns of
    full_matrices) some orthonormal completion."""
    dtype = output_dtype(node, len(node.outputs) - 1 if not op.compute_uv else 1)
    x = g.cast(x, dtype)
    outputs = factorization(
        g, "svd", x, full_matrices=int(op.full_matrices), compute_uv=int(op.compute_uv), tall=tall(x)
    )
    return outputs
