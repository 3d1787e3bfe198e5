"""Rules for PyTensor's NumPy-style linear algebra (``pytensor.tensor.nlinalg``
on 2.38, the ``pytensor.tensor.linalg`` package on 3.3) and the diagonal Ops
of ``pytensor.tensor.basic`` (ExtractDiag, AllocDiag).

Inverse, Det and SLogDet come from one LU recipe with partial pivoting, as
NumPy's LAPACK calls do; see slinalg.py for the conventions.
"""

from __future__ import annotations

import numpy as np
from pytensor.tensor.basic import AllocDiag, ExtractDiag

from pytensor_onnx import compat
from pytensor_onnx.compat import linalg_op_class
from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.blockwise import batch_capable, batched_rule
from pytensor_onnx.dispatch.linalg_kernel import factorization
from pytensor_onnx.dispatch.shape import guarded, int64_const, reshape
from pytensor_onnx.dispatch.slinalg import output_dtype, square

MatrixInverse = linalg_op_class("MatrixInverse")
Det = linalg_op_class("Det")
SLogDet = linalg_op_class("SLogDet")
TensorInv = linalg_op_class("TensorInv")


def _inverse(g, x, node):
    inverse, singular = factorization(g, "matrix_inverse", square(g, x, node, output_dtype(node), "matrix_inverse"))
    # numpy.linalg.inv raises LinAlgError("Singular matrix") where getrf finds
    # an exactly zero pivot; ONNX Runtime fails the run there.
    not_singular = g.op("Not", singular)
    return guarded(g, not_singular, inverse)


@batch_capable(MatrixInverse)
@onnx_funcify.register(MatrixInverse)
def _matrix_inverse(op, node, g, x):
    return _inverse(g, x, node)


@onnx_funcify.register(TensorInv)
def _tensor_inv(op, node, g, a):
    # numpy.linalg.tensorinv: a read as the matrix (prod(a.shape[ind:]), -1),
    # inverted, and reshaped to a.shape[ind:] + a.shape[:ind]. A matrix that
    # is not square fails at run time, as NumPy raises.
    shape = g.op("Shape", a)
    head = g.op("Slice", shape, int64_const(g, [0]), int64_const(g, [op.ind]))
    tail = g.op("Slice", shape, int64_const(g, [op.ind]), int64_const(g, [a.rank]))
    rows = g.op("ReduceProd", tail, keepdims=0)
    inverse = _inverse(g, reshape(g, a, [rows, -1]), node)
    return reshape(g, inverse, [tail, head])


@batch_capable(Det)
@onnx_funcify.register(Det)
def _det(op, node, g, x):
    return factorization(g, "det", square(g, x, node, output_dtype(node), "det"))


@batch_capable(SLogDet)
@onnx_funcify.register(SLogDet)
def _slogdet(op, node, g, x):
    sign, log_abs = factorization(g, "slogdet", square(g, x, node, output_dtype(node), "slogdet"))
    return sign, log_abs


# --------------------------------------------------------------------------
# Diagonals (pytensor.tensor.basic)
# --------------------------------------------------------------------------


def _size(g, x, axis: int):
    """Size of ``axis``: a Python int when static, else a 0-D int64 Value."""
    size = x.shape[axis] if x.shape is not None else None
    if isinstance(size, int):
        return size
    return g.op("Gather", g.op("Shape", x), int64_const(g, axis % x.rank), axis=0)


def _scalar(g, value):
    return int64_const(g, value) if isinstance(value, int) else value


def _diagonal_length(g, rows, cols, offset: int):
    """max(0, min(rows - max(0, -offset), cols - max(0, offset)))."""
    row_start, col_start = max(0, -offset), max(0, offset)
    if isinstance(rows, int) and isinstance(cols, int):
        return max(0, min(rows - row_start, cols - col_start))
    left = g.op("Sub", _scalar(g, rows), int64_const(g, row_start))
    right = g.op("Sub", _scalar(g, cols), int64_const(g, col_start))
    return g.op("Max", g.op("Min", left, right), int64_const(g, 0))


def _range(g, start: int, length):
    return g.op("Range", int64_const(g, start), g.op("Add", _scalar(g, length), int64_const(g, start)), int64_const(g, 1))


@onnx_funcify.register(ExtractDiag)
def _extract_diag(op, node, g, x):
    return extract_diagonal(g, x, op.axis1, op.axis2, op.offset)


def extract_diagonal(g, x, axis1: int, axis2: int, offset: int):
    """numpy.diagonal(x, offset, axis1, axis2)."""
    rank = x.rank
    axis1, axis2 = axis1 % rank, axis2 % rank
    rest = [a for a in range(rank) if a not in (axis1, axis2)]
    if [*rest, axis1, axis2] != list(range(rank)):
        x = g.op("Transpose", x, perm=[*rest, axis1, axis2])
    length = _diagonal_length(g, _size(g, x, -2), _size(g, x, -1), offset)
    rows = _range(g, max(0, -offset), length)
    cols = _range(g, max(0, offset), length)
    picked_rows = g.op("Gather", x, rows, axis=rank - 2)  # (..., L, cols)
    index_shape = g.op(
        "Concat", g.op("Slice", g.op("Shape", picked_rows), int64_const(g, [0]), int64_const(g, [rank - 1])),
        int64_const(g, [1]), axis=0,
    )
    index = g.op("Expand", g.op("Unsqueeze", cols, axes=[1]), index_shape)
    return g.op("Squeeze", g.op("GatherElements", picked_rows, index, axis=rank - 1), axes=[rank - 1])


@onnx_funcify.register(AllocDiag)
def _alloc_diag(op, node, g, x):
    return alloc_diagonal(g, x, op.axis1, op.axis2, op.offset)


def alloc_diagonal(g, x, axis1: int, axis2: int, offset: int):
    """Matrices with x on diagonal ``offset``, their axes at ``axis1 < axis2`` of the result."""
    shift = abs(offset)
    rank = x.rank
    length = _size(g, x, -1)
    size = length + shift if isinstance(length, int) else g.op("Add", length, int64_const(g, shift))
    index = _range(g, 0, size)
    rows, cols = g.op("Unsqueeze", index, axes=[1]), g.op("Unsqueeze", index, axes=[0])
    on_diagonal = g.op("Equal", g.op("Sub", cols, rows), int64_const(g, offset))  # (M, M)
    # Row r of the result holds x[r - max(0, -offset)] on the diagonal; the
    # padded copy of x makes every gathered index valid (x may be empty).
    padded = g.op("Pad", x, int64_const(g, [0] * rank + [0] * (rank - 1) + [shift + 1]), g.const(np.array(0, dtype=x.dtype)))
    source = g.op("Min", g.op("Max", g.op("Sub", index, int64_const(g, max(0, -offset))), int64_const(g, 0)), _scalar(g, size))
    by_row = g.op("Unsqueeze", g.op("Gather", padded, source, axis=rank - 1), axes=[rank])  # (..., M, 1)
    result = g.op("Where", on_diagonal, by_row, g.const(np.array(0, dtype=x.dtype)))
    out_rank = rank + 1
    if (axis1, axis2) != (out_rank - 2, out_rank - 1):
        # Result axes: batch axes in order, with the two matrix axes placed at axis1 and axis2.
        batch = iter(range(rank - 1))
        perm = []
        for position in range(out_rank):
            if position == axis1:
                perm.append(rank - 1)
            elif position == axis2:
                perm.append(rank)
            else:
                perm.append(next(batch))
        result = g.op("Transpose", result, perm=perm)
    return result


@batched_rule(ExtractDiag, AllocDiag)
def _batched_diag(op, node, g, x):
    """The core Op's rule with its axes moved past the batch dims."""
    core = op.core_op
    batch = op.batch_ndim(node)
    if isinstance(core, ExtractDiag):
        core_rank = x.rank - batch
        return extract_diagonal(g, x, core.axis1 % core_rank + batch, core.axis2 % core_rank + batch, core.offset)
    return alloc_diagonal(g, x, core.axis1 + batch, core.axis2 + batch, core.offset)


# --------------------------------------------------------------------------
# Spectral decompositions (recipes in src/core/recipes/linalg_spectral.cc)
# --------------------------------------------------------------------------

Eig = linalg_op_class("Eig")
Eigh = linalg_op_class("Eigh")
EighGrad = linalg_op_class("EighGrad")
SVD = linalg_op_class("SVD")
MatrixPinv = linalg_op_class("MatrixPinv")
Lstsq = linalg_op_class("Lstsq")


def _tall(x) -> int:
    """1 when the matrices are (or may be) at least as tall as wide (see the svd recipe)."""
    rows, cols = (x.shape[-2], x.shape[-1]) if x.shape is not None else (None, None)
    return int(not (isinstance(rows, int) and isinstance(cols, int)) or rows >= cols)


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
        n = _size(g, w, -1)
        index = _range(g, 0, n)
        on_diagonal = g.op("Equal", g.op("Unsqueeze", index, axes=[1]), g.op("Unsqueeze", index, axes=[0]))
        zero, one = g.const(np.array(0, dtype=dtype)), g.const(np.array(1, dtype=dtype))
        f = g.op("Where", on_diagonal, zero, g.op("Div", one, g.op("Where", on_diagonal, one, diff)))
        c = g.op("MatMul", _transpose(g, v), gv)
        inner = g.op("Add", g.op("Mul", g.op("Unsqueeze", gw, axes=[-1]), g.cast(on_diagonal, dtype)),
                     _transpose(g, g.op("Mul", c, f)))
        full = g.op("MatMul", g.op("MatMul", v, inner), _transpose(g, v))
        return _fold_triangle(g, full, compat.eigh_lower(op))


def _transpose(g, x):
    perm = list(range(x.rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return g.op("Transpose", x, perm=perm)


def _fold_triangle(g, x, lower: bool):
    """tril(x) + triu(x, 1)^T (lower) or triu(x) + tril(x, -1)^T (upper): the
    gradient with respect to the triangle an Op reads."""
    n = _size(g, x, -1)
    index = _range(g, 0, n)
    rows, cols = g.op("Unsqueeze", index, axes=[1]), g.op("Unsqueeze", index, axes=[0])
    zero = g.const(np.array(0, dtype=x.dtype))
    keep = g.op("GreaterOrEqual", rows, cols) if lower else g.op("LessOrEqual", rows, cols)
    strict_other = g.op("Less", rows, cols) if lower else g.op("Greater", rows, cols)
    return g.op("Add", g.op("Where", keep, x, zero), _transpose(g, g.op("Where", strict_other, x, zero)))


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
        g, "svd", x, full_matrices=int(op.full_matrices), compute_uv=int(op.compute_uv), tall=_tall(x)
    )
    return outputs


@batch_capable(MatrixPinv)
@onnx_funcify.register(MatrixPinv)
def _matrix_pinv(op, node, g, x):
    # numpy.linalg.pinv's default cutoff (rcond=1e-15 of the largest singular value).
    x = g.cast(x, output_dtype(node))
    hermitian = bool(getattr(op, "hermitian", False))
    if hermitian:
        x = square(g, x, node, output_dtype(node))
    return g.recipe("pinv", x, rcond=1e-15, hermitian=int(hermitian), tall=_tall(x))


@onnx_funcify.register(Lstsq)
def _lstsq(op, node, g, a, b, rcond):
    if a.rank != 2 or b.rank != 2:
        raise NotImplementedError(f"{op}: ONNX conversion takes a matrix a and a matrix b (got ranks {a.rank}, {b.rank})")
    dtype = output_dtype(node)
    a, b = g.cast(a, dtype), g.cast(b, dtype)
    b = _same_rows(g, a, b, node)
    x, residuals, rank, s = g.recipe("lstsq", a, b, g.cast(rcond, dtype), tall=_tall(a))
    return x, residuals, g.cast(rank, output_dtype(node, 2)), s


def _same_rows(g, a, b, node):
    from pytensor_onnx.dispatch.slinalg import same_sizes

    return same_sizes(g, b, -2, a, -2, "b's rows must match a's", node)
