"""BLAS ops (dispatch/blas.py), built directly (graphs taken as built) and
from FAST_RUN-compiled functions, on float32 and float64."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.blas import BatchedDot, Dot22, Dot22Scalar, Gemm, Gemv

from pytensor_onnx import compat, export_function_onnx
from pytensor_onnx.testing import assert_same_result, check_model, compare_onnx_and_py, py_function

from helpers import FLOAT_DTYPES, run_model
from linalg_cases import LINALG_OPSETS


def matrix(name, dtype):
    return pt.tensor(name, dtype=dtype, shape=(None, None))


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_dot22_and_dot22_scalar(dtype, opset, rng):
    x, y = matrix("x", dtype), matrix("y", dtype)
    a = pt.scalar("a", dtype=dtype)
    values = [rng.normal(size=(3, 4)).astype(dtype), rng.normal(size=(4, 2)).astype(dtype), np.asarray(-1.5, dtype)]
    compare_onnx_and_py([x, y, a], [Dot22()(x, y), Dot22Scalar()(x, y, a)], values, optimize=False, opset_version=opset)


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("beta", [0.0, 1.0, -0.5])
def test_gemm(dtype, beta, opset, rng):
    z, x, y = matrix("z", dtype), matrix("x", dtype), matrix("y", dtype)
    a = pt.scalar("a", dtype=dtype)
    b = pt.scalar("b", dtype=dtype)
    z_value = rng.normal(size=(3, 2)).astype(dtype)
    z_value[0, 0] = np.nan  # never read where beta == 0
    values = [z_value, rng.normal(size=(3, 4)).astype(dtype), rng.normal(size=(4, 2)).astype(dtype), np.asarray(2.0, dtype)]
    gemm = Gemm(inplace=False)
    # beta as a run-time input and as a constant.
    outputs = [gemm(z, a, x, y, b), gemm(z, a, x, y, pt.constant(beta, dtype=dtype)), gemm(z, pt.constant(1.0, dtype=dtype), x, y, b)]
    _, results = compare_onnx_and_py([z, x, y, a, b], outputs, [*values[:3], values[3], np.asarray(beta, dtype)], optimize=False, opset_version=opset)
    assert np.isnan(results[0][0, 0]) == (beta != 0)


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("beta", [0.0, 1.0, 2.5])
def test_gemv(dtype, beta, opset, rng):
    y, x = pt.tensor("y", dtype=dtype, shape=(None,)), pt.tensor("x", dtype=dtype, shape=(None,))
    A = matrix("A", dtype)
    alpha = pt.scalar("alpha", dtype=dtype)
    beta_var = pt.scalar("beta", dtype=dtype)
    y_value = rng.normal(size=3).astype(dtype)
    y_value[1] = np.inf
    values = [y_value, np.asarray(0.5, dtype), rng.normal(size=(3, 4)).astype(dtype), rng.normal(size=4).astype(dtype), np.asarray(beta, dtype)]
    _, result = compare_onnx_and_py([y, alpha, A, x, beta_var], [Gemv(inplace=False)(y, alpha, A, x, beta_var)], values, optimize=False, opset_version=opset)
    assert np.isfinite(result[0][1]) == (beta == 0)


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_ger(dtype, opset, rng):
    if compat.Ger is None:
        # compat finds no Ger only where PyTensor has none (3.3 removed it):
        # there is no Op to convert on this line, so nothing to test here.
        assert not hasattr(pytensor.tensor.blas, "Ger")
        pytest.skip("this PyTensor has no Ger Op (removed in 3.x): nothing to convert")
    A = matrix("A", dtype)
    x, y = pt.tensor("x", dtype=dtype, shape=(None,)), pt.tensor("y", dtype=dtype, shape=(None,))
    alpha = pt.scalar("alpha", dtype=dtype)
    values = [rng.normal(size=(3, 2)).astype(dtype), np.asarray(-2.0, dtype), rng.normal(size=3).astype(dtype), rng.normal(size=2).astype(dtype)]
    compare_onnx_and_py([A, alpha, x, y], [compat.Ger(destructive=False)(A, alpha, x, y)], values, optimize=False, opset_version=opset)


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_batched_dot(dtype, opset, rng):
    x, y = pt.tensor("x", dtype=dtype, shape=(None, None, None)), pt.tensor("y", dtype=dtype, shape=(None, None, None))
    values = [rng.normal(size=(2, 3, 4)).astype(dtype), rng.normal(size=(2, 4, 5)).astype(dtype)]
    compare_onnx_and_py([x, y], [BatchedDot()(x, y)], values, optimize=False, opset_version=opset)


def test_export_of_a_c_mode_function_with_blas_ops(rng):
    # PyTensor's C mode (the default before 3.0) turns dot + scaled updates into BLAS ops.
    x = pt.matrix("x")
    W = pytensor.shared(rng.normal(size=(4, 3)), name="W")
    v = pt.vector("v")
    outputs = [pt.dot(x, W) * 2.0 + x[:, :3], pt.dot(W.T, v)]
    fn = pytensor.function([x, v], outputs, mode=pytensor.compile.mode.Mode(linker="cvm", optimizer="fast_run"))
    blas_ops = {type(node.op) for node in fn.maker.fgraph.apply_nodes} & {Dot22, Dot22Scalar, Gemm, Gemv, compat.Ger}
    assert blas_ops, "the C mode rewrites introduced no BLAS op"
    values = [rng.normal(size=(5, 4)), rng.normal(size=4)]
    model = export_function_onnx(fn)
    check_model(model)
    want = py_function([x, v], outputs)(*values)
    for got, expected in zip(run_model(model, *values), want, strict=True):
        assert_same_result(got, expected)
