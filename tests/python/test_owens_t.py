"""Owens_t (src/core/recipes/owens_t.cc): Owen's T function T(h, a).

Against PyTensor's ``py`` linker (SciPy's owens_t) to 1e-10 relative in
float64 and 1e-6 in float32, on a grid from the function's difficulties: h
from 0 to the underflow (T ~ exp(-h^2/2)), a near 0 (T ~ a), around the
reflection at |a| = 1, huge and infinite a (T -> erfc(|h|/sqrt 2)/4), the
sign symmetries and SciPy's special values. Where SciPy itself is inaccurate
(measured with mpmath: 2e-12 at h = 5, a = 1e-5; 1e-7 at h >= 5, a = 1e-10)
the recipe is checked against mpmath instead.
"""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
import scipy.special

from pytensor_onnx import export_function_onnx
from pytensor_onnx.testing import compare_onnx_and_py

from helpers import ALL_DTYPES, onnx_function_names, run_model

RNG = np.random.default_rng(20261124)
INF, NAN = np.inf, np.nan


def signed(values):
    values = np.asarray(values, dtype=float)
    return np.concatenate([values, -values])


def _grid():
    h_values = signed([0.0, 1e-300, 1e-10, 0.1, 0.5, 1.0, 2.0, 5.0, 8.0, 10.0, 20.0, 30.0, 37.0])
    # (Not a = 1e-10 with h >= 5: SciPy is off by 1e-7 there, see the mpmath test.)
    a_values = signed([0.0, 1e-300, 1e-5, 0.1, 0.5, 0.99, 1.0, 1.01, 2.0, 10.0, 1e3, 1e10, 1e308, INF])
    h_mesh, a_mesh = np.meshgrid(h_values, a_values)
    pairs = [
        (h_mesh.ravel(), a_mesh.ravel()),
        (RNG.uniform(-12, 12, 300), 10.0 ** RNG.uniform(-4, 4, 300) * RNG.choice([-1, 1], 300)),
        (10.0 ** RNG.uniform(-5, 1.4, 200), RNG.uniform(-3, 3, 200)),
        (RNG.uniform(0, 8, 100), RNG.uniform(0.9, 1.1, 100)),
        (np.array([NAN, 1.0, NAN, INF, -INF, INF, INF]), np.array([1.0, NAN, NAN, 1.0, -2.0, INF, NAN])),
        (signed([0.1, 1.0, 2.0]), np.full(6, 1e-10)),
        (np.full(6, 0.1), np.array([7e8, 1e10, 4.95e7 * np.sqrt(2) / 0.1, 1e49, 1e99, -1e60])),
    ]
    return [np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])]


GRID = _grid()
SMALL = [np.array([0.5, 1.0, -2.0, 3.0, 0.0, 0.1, 10.0, 1.0]), np.array([0.2, 1.0, 0.9, -1e-5, 5.0, 0.7, 0.4, 30.0])]


def _graph(dtype):
    h, a = pt.vector("h", dtype=dtype), pt.vector("a", dtype=dtype)
    return [h, a], pt.owens_t(h, a)


def test_float64_accuracy():
    inputs, out = _graph("float64")
    compare_onnx_and_py(inputs, out, GRID, rtol=1e-10, atol=1e-300)


def test_float32_accuracy():
    inputs, out = _graph("float32")
    with np.errstate(over="ignore"):
        values = [v.astype("float32") for v in GRID]
    compare_onnx_and_py(inputs, out, values, rtol=1e-6, atol=1e-37)


def test_against_mpmath_where_scipy_drifts():
    mpmath = pytest.importorskip("mpmath")
    h = np.array([-5.350600732081146, 36.999785382916585, 37.5, 5.0, 0.5, 5.0, 10.0, 30.0])
    a = np.array([1.117012401306092e-05, 0.3438197850574962, 3.0, 1e-5, 1e5, 1e-10, -1e-10, 1e-10])
    inputs, out = _graph("float64")
    got = pytensor.function(inputs, out, mode="ONNX")(h, a)
    with mpmath.workdps(30):
        for hi, ai, ti in zip(h, a, got):
            hm, am = mpmath.mpf(hi), mpmath.mpf(ai)
            # The integrand's Gaussian factor has width 1/|h|: split there.
            cut = min(am, 12 / abs(hm))
            points = [cut * k / 24 for k in range(25)] + ([am] if am > cut else [])
            want = mpmath.quad(lambda x: mpmath.exp(-hm * hm * (1 + x * x) / 2) / (1 + x * x), points) / (2 * mpmath.pi)
            assert abs(float((ti - want) / want)) < 1e-13, (hi, ai, ti, want)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_input_dtype(dtype):
    try:
        inputs, out = _graph(dtype)
    except TypeError as error:  # PyTensor rejects the dtype itself
        pytest.skip(f"PyTensor has no owens_t for {dtype}: {error}")
    if dtype == "bool":
        values = [np.array([True, True, False, True]), np.array([False, True, False, True])]
    elif dtype.startswith(("int", "uint")):
        values = [np.array([1, 2, 3, 0], dtype=dtype), np.array([0, 1, 5, 2], dtype=dtype)]
    else:
        values = [v.astype(dtype) for v in SMALL]
    rtol = 1e-12 if out.dtype == "float64" else 1e-6
    compare_onnx_and_py(inputs, out, values, rtol=rtol)


@pytest.mark.parametrize("opset", [13, 18, None])
def test_opsets(opset):
    inputs, out = _graph("float64")
    compare_onnx_and_py(inputs, out, SMALL, opset_version=opset, rtol=1e-12)


def test_zero_d_and_broadcast():
    h, a = pt.dscalar("h"), pt.dmatrix("a")
    compare_onnx_and_py([h, a], [pt.owens_t(h, a)], [np.float64(1.5), RNG.uniform(-3, 3, (3, 4))], rtol=1e-12)
    compare_onnx_and_py([h, a], [pt.owens_t(h, a)], [np.float64(1.5), np.zeros((0, 4))])


def test_in_a_fused_composite():
    # Owen's T next to other element-wise ops, fused by FAST_RUN.
    z, alpha = pt.dvector("z"), pt.dvector("alpha")
    y = pt.exp(z) * 2 * pt.owens_t(z, alpha) + pt.erfc(-z / np.sqrt(2))
    fn = pytensor.function([z, alpha], y, mode="FAST_RUN")
    assert any(type(n.op.scalar_op).__name__ == "Composite" for n in fn.maker.fgraph.apply_nodes
               if hasattr(n.op, "scalar_op"))
    model = export_function_onnx(fn)
    zv, av = RNG.uniform(-3, 3, 40), RNG.uniform(-5, 5, 40)
    want = np.exp(zv) * 2 * scipy.special.owens_t(zv, av) + scipy.special.erfc(-zv / np.sqrt(2))
    np.testing.assert_allclose(run_model(model, zv, av)[0], want, rtol=1e-10)
    assert "owens_t_float64" in set(onnx_function_names(model))


def test_gradient():
    h, a = pt.dvector("h"), pt.dvector("a")
    out = pt.owens_t(h, a)
    grads = pytensor.grad(out.sum(), [h, a])
    compare_onnx_and_py([h, a], [out, *grads], [RNG.uniform(-4, 4, 20), RNG.uniform(-4, 4, 20)], rtol=1e-10)
