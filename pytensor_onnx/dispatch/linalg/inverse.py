"""Inverses (``pytensor.tensor.linalg.inverse`` on 3.3, ``nlinalg`` on 2.38):
MatrixInverse and TensorInv from one LU recipe with partial pivoting, as
NumPy's LAPACK calls do; MatrixPinv from the SVD recipe.
"""

from __future__ import annotations

from pytensor_onnx.compat import linalg_op_class
from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.blockwise import batch_capable
from pytensor_onnx.dispatch.linalg.utils import square, tall
from pytensor_onnx.dispatch.linalg_kernel import factorization
from pytensor_onnx.dispatch.utils import check, int64_const, output_dtype, reshape


MatrixInverse = linalg_op_class("MatrixInverse")
TensorInv = linalg_op_class("TensorInv")
MatrixPinv = linalg_op_class("MatrixPinv")


def _inverse(g, x, node):
    inverse, singular = factorization(g, "matrix_inverse", square(g, x, node, output_dtype(node), "matrix_inverse"))
    # numpy.linalg.inv raises LinAlgError("Singular matrix") where getrf finds
    # an exactly zero pivot; ONNX Runtime fails the run there.
    not_singular = g.op("Not", singular)
    return check(g, not_singular, inverse)

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

@batch_capable(MatrixPinv)
@onnx_funcify.register(MatrixPinv)
def _matrix_pinv(op, node, g, x):
    # numpy.linalg.pinv's default cutoff (rcond=1e-15 of the largest singular value).
    x = g.cast(x, output_dtype(node))
    hermitian = bool(getattr(op, "hermitian", False))
    if hermitian:
        x = square(g, x, node, output_dtype(node))
    return g.recipe("pinv", x, rcond=1e-15, hermitian=int(hermitian), tall=tall(x))
