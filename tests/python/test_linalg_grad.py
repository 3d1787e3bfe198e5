"""Gradients through the linear-algebra Ops (the graphs pytensor.grad builds,
rewritten as mode ONNX rewrites them) and a multivariate normal
log-density with its gradient, end to end."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import pytensor_onnx

from helpers import FLOAT_DTYPES
from linalg_cases import BATCH_SHAPES, compare, general, lower_triangular, spd, stack
from pytensor_onnx import compat
from pytensor_onnx.testing import assert_same_result

N = 4


def _weights(rng, shape, dtype):
    return pt.constant(rng.normal(size=shape).astype(dtype))


@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_grad_cholesky(dtype, batch, rng):
    x = stack("x", dtype, batch, (N, N))
    cost = (pt.linalg.cholesky(x) * _weights(rng, (*batch, N, N), dtype)).sum()
    compare([x], [cost, pytensor.grad(cost, x)], [spd(rng, N, batch, dtype)], dtype)


@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("lower", [True, False])
def test_grad_solve_triangular(lower, dtype, batch, rng):
    a, b = stack("a", dtype, batch, (N, N)), stack("b", dtype, batch, (N, 2))
    x = pt.linalg.solve_triangular(a, b, lower=lower)
    cost = (x * _weights(rng, (*batch, N, 2), dtype)).sum()
    a_value = lower_triangular(rng, N, batch, dtype)
    a_value = a_value if lower else np.swapaxes(a_value, -1, -2).copy()
    b_value = rng.normal(size=(*batch, N, 2)).astype(dtype)
    compare([a, b], [cost, *pytensor.grad(cost, [a, b])], [a_value, b_value], dtype)


@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("assume_a", ["gen", "pos"])
def test_grad_solve(assume_a, dtype, batch, rng):
    a = stack("a", dtype, batch, (N, N))
    b = stack("b", dtype, batch, (N,))
    x = pt.linalg.solve(a, b, assume_a=assume_a, b_ndim=1)
    cost = (x * _weights(rng, (*batch, N), dtype)).sum()
    a_value = spd(rng, N, batch, dtype) if assume_a == "pos" else general(rng, N, batch, dtype)
    compare([a, b], [cost, *pytensor.grad(cost, [a, b])], [a_value, rng.normal(size=(*batch, N)).astype(dtype)], dtype)


@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_grad_cho_solve(dtype, batch, rng):
    a, b = stack("a", dtype, batch, (N, N)), stack("b", dtype, batch, (N,))
    x = pt.linalg.cho_solve((pt.linalg.cholesky(a), True), b, b_ndim=1)
    cost = (x * _weights(rng, (*batch, N), dtype)).sum()
    try:
        pytensor.grad(cost, [a, b])
    except NotImplementedError:
        # PyTensor 2.38's CholeskySolve has no gradient: there is no graph to
        # convert on that line (3.x has one, so it must not fail there).
        assert not compat.LINALG_IS_PACKAGE
        pytest.skip("this PyTensor's CholeskySolve has no gradient (2.38): no graph to convert")
    values = [spd(rng, N, batch, dtype), rng.normal(size=(*batch, N)).astype(dtype)]
    compare([a, b], [cost, *pytensor.grad(cost, [a, b])], values, dtype)


@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_grad_det_slogdet_inverse(dtype, batch, rng):
    x = stack("x", dtype, batch, (N, N))
    _, logdet = pt.linalg.slogdet(x)
    costs = [pt.linalg.det(x).sum(), logdet.sum(), (pt.linalg.inv(x) * _weights(rng, (*batch, N, N), dtype)).sum()]
    outputs = [*costs, *(pytensor.grad(c, x) for c in costs)]
    compare([x], outputs, [general(rng, N, batch, dtype)], dtype)


# --------------------------------------------------------------------------
# Multivariate normal log-density
# --------------------------------------------------------------------------


def _mvnormal_logp(value, mu, cov):
    """log N(value | mu, cov) written as statistical models do: a Cholesky,
    a triangular solve and the log-determinant from the factor's diagonal."""
    chol = pt.linalg.cholesky(cov)
    k = value.shape[-1]
    delta = value - mu
    z = pt.linalg.solve_triangular(chol, delta.T, lower=True)
    quad = (z**2).sum(axis=0)
    logdet = pt.log(pt.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1)
    return (-0.5 * k * np.log(2 * np.pi) - logdet - 0.5 * quad).sum()


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_mvnormal_logp_and_gradient(dtype, rng):
    k, n = 6, 20
    # Static shapes: PyTensor proves the broadcasts valid (no Assert nodes).
    value = pt.tensor("value", dtype=dtype, shape=(n, k))
    mu = pt.tensor("mu", dtype=dtype, shape=(k,))
    cov = pt.tensor("cov", dtype=dtype, shape=(k, k))
    logp = _mvnormal_logp(value, mu, cov)
    grads = pytensor.grad(logp, [mu, cov])
    cov_value = spd(rng, k, (), dtype)
    values = [rng.normal(size=(n, k)).astype(dtype), rng.normal(size=k).astype(dtype), cov_value]
    _, results = compare([value, mu, cov], [logp, *grads], values, dtype)
    # Against SciPy's density, independently of PyTensor.
    from scipy.stats import multivariate_normal

    want = multivariate_normal(values[1], cov_value).logpdf(values[0]).sum()
    np.testing.assert_allclose(results[0], want, rtol=1e-10 if dtype == "float64" else 1e-4)


def test_pymc_mvnormal_logp_and_gradient_export(rng):
    pm = pytest.importorskip("pymc")
    k = 5
    cov_value = spd(rng, k)
    observed = rng.multivariate_normal(np.zeros(k), cov_value, size=30)
    correlation = spd(rng, k)
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 1, shape=k)
        sigma = pm.HalfNormal("sigma", 1.0)
        pm.MvNormal("y", mu=mu, cov=sigma**2 * correlation + 0.1 * np.eye(k), observed=observed)
    logp = model.logp()
    dlogp = pt.grad(logp, model.value_vars)
    point = model.initial_point()
    inputs = model.value_vars
    values = [point[v.name] + rng.normal(scale=0.1, size=point[v.name].shape) for v in inputs]
    with model:
        # PyMC's compile turns the parameter checks into -inf switches.
        fn = pm.pytensorf.compile(inputs, [logp, *dlogp], mode="ONNX")
        reference = pm.pytensorf.compile(inputs, [logp, *dlogp])
    want = reference(*values)
    for got, expected in zip(fn(*values), want, strict=True):
        assert_same_result(got, expected, rtol=1e-10, atol=1e-10)
    # The model the function runs, on nothing but ONNX Runtime.
    import onnxruntime as ort

    options = ort.SessionOptions()
    if pytensor_onnx.kernels.DOMAIN in {node.domain for node in fn.maker.linker.onnx_model.graph.node}:
        pytensor_onnx.kernels.register(options)  # the kernel library's ops
    session = ort.InferenceSession(
        fn.maker.linker.onnx_model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    # (Its small float64 inputs and outputs may be one input and one output:
    # the linker gathers and splits them.)
    feed = fn.maker.linker.model_feed({v.name: np.asarray(value) for v, value in zip(inputs, values, strict=True)})
    outputs = session.run(None, feed)
    outputs = fn.maker.linker.function_outputs(dict(zip([o.name for o in session.get_outputs()], outputs)))
    for got, expected in zip(outputs, want, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)
