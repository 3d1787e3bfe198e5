"""MatrixInverse, Det, SLogDet, TensorInv and the diagonal Ops (dispatch/linalg/, tensor_basic.py): parity
with PyTensor (NumPy's LAPACK) for float32 and float64, batch dims, opsets,
sizes, singular matrices."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from helpers import FLOAT_DTYPES, compare_raises, onnx_op_types, sample
from linalg_cases import BATCH_SHAPES, LINALG_OPSETS, compare, general, spd, stack
from pytensor_onnx import compat
from pytensor_onnx.testing import compare_onnx_and_py

N = 5


def slogdet(x):
    """PyTensor's SLogDet Op (pt.linalg.slogdet on 3.3 builds sign(det), log|det|
    and leaves the Op to a rewrite, so the reference would overflow)."""
    from pytensor.tensor.blockwise import Blockwise

    return Blockwise(compat.linalg_op_class("SLogDet")())(x)


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_inverse_det_slogdet(dtype, batch, opset, rng):
    x = stack("x", dtype, batch, (N, N))
    sign, logdet = slogdet(x)
    outputs = [pt.linalg.inv(x), pt.linalg.det(x), sign, logdet]
    compare([x], outputs, [general(rng, N, batch, dtype)], dtype, opset)


@pytest.mark.parametrize("static", [False, True])
@pytest.mark.parametrize("n", [0, 1, 2, 7])
def test_inverse_det_slogdet_sizes(n, static, rng):
    x = stack("x", "float64", (2,), (n, n), static=static)
    sign, logdet = slogdet(x)
    compare([x], [pt.linalg.inv(x), pt.linalg.det(x), sign, logdet], [general(rng, n, (2,))], "float64")


def test_det_of_integer_matrices_is_float64(rng):
    Det = compat.linalg_op_class("Det")
    x = pt.matrix("x", dtype="int32")
    compare([x], [Det()(x)], [rng.integers(-3, 4, size=(4, 4)).astype("int32")], "float64")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_singular_det_and_slogdet(dtype):
    x = pt.tensor3("x", dtype=dtype)
    sign, logdet = slogdet(x)
    values = np.stack([np.ones((3, 3)), np.diag([1.0, 0.0, 2.0]), np.eye(3)]).astype(dtype)
    _, (det, sign_value, logdet_value) = compare([x], [pt.linalg.det(x), sign, logdet], [values], dtype)
    assert (det[:2] == 0).all() and (sign_value[:2] == 0).all() and np.isneginf(logdet_value[:2]).all()


def test_singular_inverse_fails_like_numpy():
    # numpy.linalg.inv raises LinAlgError("Singular matrix").
    x = pt.matrix("x")
    compare_raises([x], [pt.linalg.inv(x)], [np.ones((3, 3))], np.linalg.LinAlgError, "Singular", onnx_fails="check")


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape, ind", [((6, 2, 3), 1), ((2, 3, 6), 2), ((2, 3, 3, 2), 2), ((4, 4), 1)])
def test_tensorinv(shape, ind, dtype, opset, rng):
    # numpy.linalg.tensorinv: the matrix (prod(shape[ind:]), -1), inverted
    # and reshaped to shape[ind:] + shape[:ind].
    a = pt.tensor("a", dtype=dtype, shape=(None,) * len(shape))
    n = int(np.prod(shape[ind:]))
    value = general(rng, n, (), dtype).reshape(shape)
    compare([a], [pt.linalg.tensorinv(a, ind=ind)], [value], dtype, opset)


def test_tensorinv_of_a_non_square_or_singular_tensor_fails_like_numpy():
    a = pt.tensor3("a")
    compare_raises([a], [pt.linalg.tensorinv(a, ind=1)], [np.ones((4, 2, 3))], np.linalg.LinAlgError, "must be square", onnx_fails=("MatrixInverse_float64", "check"))
    compare_raises([a], [pt.linalg.tensorinv(a, ind=1)], [np.ones((6, 2, 3))], np.linalg.LinAlgError, "Singular", onnx_fails="check")


def test_slogdet_of_large_determinants(rng):
    # log|det| far beyond the float64 range of det itself.
    x = pt.matrix("x")
    value = general(rng, 64) * 1e8
    sign, logdet = slogdet(x)
    compare([x], [sign, logdet, pt.linalg.det(x)], [value], "float64")


def test_accuracy_at_n_256(rng):
    x = pt.matrix("x")
    sign, logdet = slogdet(x)
    compare([x], [pt.linalg.inv(x), sign, logdet], [general(rng, 256)], "float64", rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------
# Diagonals
# --------------------------------------------------------------------------


def static_or_not(name, shape, static, dtype="float64"):
    """``static``: the shape as PyTensor's type (the rules read constant
    positions then, tensor_basic.py); else every dim unknown."""
    return pt.tensor(name, shape=shape if static else (None,) * len(shape), dtype=dtype)


def no_index_arithmetic(fn):
    kinds = onnx_op_types(fn)
    assert not {"GatherElements", "Range", "Pad", "Where"} & set(kinds), kinds


@pytest.mark.parametrize("static", [False, True], ids=["dynamic", "static"])
@pytest.mark.parametrize("offset", [0, 1, -2, 5])
@pytest.mark.parametrize("axes", [(0, 1), (1, 0), (0, 2), (-1, -2)])
def test_extract_diag(axes, offset, static, rng):
    x = static_or_not("x", (3, 4, 5), static)
    out = pt.diagonal(x, offset=offset, axis1=axes[0], axis2=axes[1])
    fn, _ = compare_onnx_and_py([x], [out], [rng.normal(size=(3, 4, 5))], optimize=False)
    if static:
        no_index_arithmetic(fn)


@pytest.mark.parametrize("static", [False, True], ids=["dynamic", "static"])
@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
def test_trace_and_diag_of_matrix(dtype, static, rng):
    x = static_or_not("x", (4, 3), static, dtype)
    value = rng.normal(size=(4, 3)) > 0 if dtype == "bool" else (rng.normal(size=(4, 3)) * 10).astype(dtype)
    outputs = [pt.diag(x), pt.diag(x, k=1), pt.diag(x, k=-3)]
    if dtype != "bool":
        outputs.append(pt.linalg.trace(x))
    fn, _ = compare_onnx_and_py([x], outputs, [value])
    if static:
        no_index_arithmetic(fn)


@pytest.mark.parametrize("static", [False, True], ids=["dynamic", "static"])
@pytest.mark.parametrize("offset", [0, 2, -1])
@pytest.mark.parametrize("shape", [(4,), (0,), (2, 3)])
def test_alloc_diag(shape, offset, static, rng):
    v = static_or_not("v", shape, static)
    outputs = [pt.diag(v, k=offset)] if len(shape) == 1 else [
        pt.basic.alloc_diag(v, offset=offset, axis1=0, axis2=2),
        pt.basic.alloc_diag(v, offset=offset, axis1=1, axis2=2),
        pt.basic.alloc_diag(v, offset=offset, axis1=0, axis2=1),
    ]
    fn, _ = compare_onnx_and_py([v], outputs, [rng.normal(size=shape)], optimize=False)
    if static:
        no_index_arithmetic(fn)
    compare_onnx_and_py([v], outputs, [rng.normal(size=shape)])


@pytest.mark.parametrize("dtype", ["float32", "int8", "bool"])
def test_static_diagonals_of_every_dtype_and_batched(dtype, rng):
    # The static forms (a Gather of constant positions, a ScatterND into
    # constant zeros) of a stack of matrices (Blockwise) and of other dtypes.
    x = pt.tensor("x", shape=(2, 3, 3), dtype=dtype)
    v = pt.tensor("v", shape=(2, 3), dtype=dtype)
    outputs = [
        pt.vectorize(lambda m: pt.diagonal(m, offset=1), signature="(m,n)->(k)")(x),
        pt.vectorize(lambda d: pt.diag(d, k=-1), signature="(n)->(m,m)")(v),
        pt.diagonal(x, axis1=1, axis2=2),
    ]
    values = [sample(rng, (2, 3, 3), dtype), sample(rng, (2, 3), dtype)]
    fn, _ = compare_onnx_and_py([x, v], outputs, values)
    no_index_arithmetic(fn)


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_diagonal_ops_and_block_diag_at_each_opset(dtype, opset, rng):
    # ExtractDiag, AllocDiag, trace and BlockDiagonal, batched and not, at the
    # oldest, default and newest opsets (their rules use Gather/ScatterND/Pad,
    # whose signatures changed between opsets).
    x, v = stack("x", dtype, (2,), (3, 4)), stack("v", dtype, (2,), (3,))
    a, b = pt.matrix("a", dtype=dtype), pt.matrix("b", dtype=dtype)
    outputs = [
        pt.diagonal(x, offset=1, axis1=-2, axis2=-1),
        pt.trace(x[0]),
        pt.basic.alloc_diag(v, offset=-1, axis1=1, axis2=2),
        pt.linalg.block_diag(a, b),
        pt.vectorize(pt.diag, "(n)->(n,n)")(v),
    ]
    values = [rng.normal(size=s).astype(dtype) for s in [(2, 3, 4), (2, 3), (2, 2), (1, 3)]]
    compare([x, v, a, b], outputs, values, dtype, opset)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_products_built_from_graphs(dtype, rng):
    # Einsum, kron, tensordot, outer and matrix_power are PyTensor graphs
    # (OpFromGraph or Dot/Blockwise/reshape graphs): they convert through
    # the rules of their parts.
    x, y = stack("x", dtype, (2,), (3, 4)), stack("y", dtype, (), (4, 3))
    v = stack("v", dtype, (), (3,))
    outputs = [
        pt.einsum("bij,jk->bki", x, y),
        pt.linalg.kron(y, y[:2, :2]),
        pt.tensordot(x, y, axes=[[1, 2], [1, 0]]),
        pt.outer(v, v),
        pt.linalg.matrix_power(y[:3, :3], 3),
    ]
    values = [rng.normal(size=(2, 3, 4)).astype(dtype), rng.normal(size=(4, 3)).astype(dtype), rng.normal(size=3).astype(dtype)]
    compare([x, y, v], outputs, values, dtype)
