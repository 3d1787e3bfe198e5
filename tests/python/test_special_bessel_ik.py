"""Ive, Iv and Kve of real order (src/core/recipes/bessel_ik.cc).

Float64 is checked against PyTensor's ``py`` linker (SciPy's ive/kve, AMOS)
to 1e-10 relative on grids built from the method's regions and their
borders: the power series of I (x <= 2 or x^2 <= 16 (nu + 1)), Hankel's
expansion (x >= max(20, nu^2 / 2)), the continued fraction CF1 with the
downward recurrence between them; Temme's series (x <= 2) and Steed's
continued fraction (x > 2) for K with the upward recurrence; negative
orders (the reflection through K, which SciPy evaluates ~1e-11 off next to
the integers: there mpmath at 40 digits is the reference), negative x with
integer orders, tiny and large x and orders up to 200. The special values
are SciPy's except where SciPy is wrong (checked against closed forms and
mpmath in test_scipy_differs).
"""

import mpmath
import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
import scipy.special

from pytensor_onnx import compat, export_function_onnx
from pytensor_onnx.testing import compare_onnx_and_py

from helpers import ALL_DTYPES, compare_binary_on_dtype, onnx_function_names, run_model

RNG = np.random.default_rng(20261125)
INF, NAN = np.inf, np.nan


def _grid():
    n = 250
    parts = [
        # Orders and arguments of statistics' uses (GP kernels, von Mises).
        (RNG.uniform(-30, 30, n), 10 ** RNG.uniform(-5, 3, n)),
        # Integer orders with negative x (PyMC's HSGP: ive(arange(m), a)).
        (RNG.integers(-40, 41, n).astype(float), RNG.uniform(-50, 50, n)),
        # Large orders: series, CF1 + recurrence, Hankel.
        (RNG.uniform(0, 200, n), 10 ** RNG.uniform(-2, 4.3, n)),
        # Half-integer orders (mu = +-1/2) and orders next to integers.
        (RNG.integers(-20, 21, 60) + 0.5, 10 ** RNG.uniform(-3, 2.5, 60)),
        (RNG.integers(-20, 21, 60) + RNG.choice([-1, 1], 60) * 10 ** RNG.uniform(-12, -3, 60),
         10 ** RNG.uniform(-3, 2.5, 60)),
    ]
    # The region borders, on both sides: x = 2, x^2 = 16 (nu + 1),
    # x = max(20, nu^2 / 2).
    nu = RNG.uniform(0, 40, 60)
    border = np.concatenate([np.full(20, 2.0), 4 * np.sqrt(nu[20:40] + 1), np.maximum(20, nu[40:] ** 2 / 2)])
    parts.append((nu, border * (1 + RNG.choice([-1e-9, 0, 1e-9], 60))))
    v, x = (np.concatenate(p) for p in zip(*parts))
    return v, x


V, X = _grid()


def _mp(kind, v, x):
    mpmath.mp.dps = 40
    out = []
    for a, b in zip(v, x):
        a, b = mpmath.mpf(float(a)), mpmath.mpf(float(b))
        value = mpmath.besseli(a, b) * mpmath.exp(-abs(b)) if kind == "ive" else mpmath.besselk(a, b) * mpmath.exp(b)
        out.append(float(mpmath.re(value)))
    return np.array(out)


def _relative(x, y):
    with np.errstate(all="ignore"):
        return np.where(x == y, 0.0, np.abs(x - y) / np.abs(y))


def _graph(op, dtype="float64"):
    v, x = pt.vector("v", dtype=dtype), pt.vector("x", dtype=dtype)
    return [v, x], op(v, x)


def _onnx(op, v, x):
    inputs, out = _graph(op)
    return pytensor.function(inputs, out, mode="ONNX")(v, x)


@pytest.mark.parametrize("kind", ["ive", "kve"])
def test_float64_accuracy(kind):
    op = getattr(pt, kind)
    v, x = (V, X) if kind == "ive" else (V, np.abs(X))
    exact = _mp(kind, v, x)
    with np.errstate(all="ignore"):
        theirs = getattr(scipy.special, kind)(v, x)
    scipy_ok = _relative(theirs, exact) <= 1e-12
    assert scipy_ok.mean() > 0.95
    inputs, out = _graph(op)
    compare_onnx_and_py(inputs, out, [v[scipy_ok], x[scipy_ok]], rtol=1e-10, atol=0)
    # Where SciPy is off (next to integer negative orders, SciPy's
    # reflection loses ~1e-11): mpmath.
    rest = ~scipy_ok
    np.testing.assert_allclose(_onnx(op, v[rest], x[rest]), exact[rest], rtol=1e-12)


SPECIAL_V = np.array([0.0, 1.0, 2.0, 0.5, -0.5, -1.0, -2.0, -1.5, 2.5, 100.0, 1e4, INF, -INF, NAN])
SPECIAL_X = np.array([0.0, -0.0, 1.0, -1.0, -2.5, INF, -INF, NAN, 1e-300, 700.0, -700.0])


@pytest.mark.parametrize("kind", ["ive", "kve"])
def test_special_values(kind):
    v, x = (a.ravel() for a in np.meshgrid(SPECIAL_V, SPECIAL_X, indexing="ij"))
    # ive(-1.5, 1e-300): SciPy NaN (AMOS overflow), the recipe -inf
    # (test_scipy_differs).
    keep = ~((kind == "ive") & (v == -1.5) & (x == 1e-300))
    inputs, out = _graph(getattr(pt, kind))
    compare_onnx_and_py(inputs, out, [v[keep], x[keep]], rtol=1e-12, atol=0)


def test_scipy_differs():
    # Where AMOS gives NaN, inf or 0 and the value is a float64 number:
    # x beyond ~1e9 (Hankel: 1 / sqrt(2 pi x) (1 - (4 v^2 - 1) / (8 x))),
    # the smallest subnormal x (closed forms of the half-integer orders;
    # K_0(x) = -log(x / 2) - euler_gamma + O(x^2 log x)), and I_-1.5 at
    # tiny x (its limit, -inf).
    x = np.array([1e10, 1e100, 1e300])
    for v in [0.0, 2.5, -7.0]:
        got = _onnx(pt.ive, np.full(3, v), x)
        np.testing.assert_allclose(got, (1 - (4 * v * v - 1) / (8 * x)) / np.sqrt(2 * np.pi * x), rtol=1e-14)
        got = _onnx(pt.kve, np.full(3, v), x)
        np.testing.assert_allclose(got, (1 + (4 * v * v - 1) / (8 * x)) * np.sqrt(np.pi / (2 * x)), rtol=1e-14)
        assert np.isnan(scipy.special.ive(v, x)).all() and np.isnan(scipy.special.kve(v, x)).all()
    tiny = np.array([5e-324, 5e-324])
    got = _onnx(pt.ive, np.array([0.5, -0.5]), tiny)
    # (5e-14: the series prefactor exp(v log(x / 2) - x) at log x = -744.4.)
    np.testing.assert_allclose(got, _mp("ive", [0.5, -0.5], tiny), rtol=1e-13)
    got = _onnx(pt.kve, np.array([0.5, 0.0]), tiny)
    np.testing.assert_allclose(got, _mp("kve", [0.5, 0.0], tiny), rtol=1e-13)  # exp(mu log(2 / x)) likewise
    assert scipy.special.kve(0.0, 5e-324) == INF and np.isnan(scipy.special.ive(-0.5, 5e-324))
    assert _onnx(pt.ive, np.array([-1.5]), np.array([1e-300]))[0] == -INF
    assert np.isnan(scipy.special.ive(-1.5, 1e-300))


def test_float32_accuracy():
    inputs, out = _graph(lambda v, x: [pt.ive(v, x), pt.kve(v, x)], "float32")
    v, x = V[:500].astype("float32"), np.abs(X[:500]).astype("float32")
    got_i, got_k = pytensor.function(inputs, out, mode="ONNX")(v, x)
    assert got_i.dtype == got_k.dtype == "float32"
    with np.errstate(all="ignore"):
        want_i = scipy.special.ive(v.astype("float64"), x.astype("float64")).astype("float32")
        want_k = scipy.special.kve(v.astype("float64"), x.astype("float64")).astype("float32")
    tiny = np.finfo("float32").tiny
    for got, want in [(got_i, want_i), (got_k, want_k)]:
        normal = ~(np.abs(want) < tiny)  # float32 subnormals keep fewer digits
        np.testing.assert_allclose(got[normal], want[normal], rtol=1e-6, atol=0)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_input_dtype(dtype):
    compare_binary_on_dtype(lambda v, x: [pt.ive(v, x), pt.kve(v, x)], dtype, [[0.0, 2.5, -1.5, 3.0], [0.5, 3.0, 1.25, 2.0]], [[0, 2, 5, 3], [1, 3, 7, 2]], "ive/kve")


@pytest.mark.parametrize("opset", [13, 18, None])
def test_opsets(opset):
    inputs, out = _graph(lambda v, x: [pt.ive(v, x), pt.kve(v, x)])
    values = [np.array([0.3, 2.0, -1.5, 30.0, 0.0]), np.array([0.5, 3.0, 1.2, 40.0, 25.0])]
    compare_onnx_and_py(inputs, out, values, opset_version=opset, rtol=1e-12, atol=0)


def test_constant_and_broadcast_orders():
    # A constant order other than 0 and 1, an order vector against a column
    # of x (PyMC's HSGP periodic kernel: 2 ive(arange(m), 1 / ls^2)), 0-d
    # and empty inputs.
    x, col = pt.dvector("x"), pt.dcol("col")
    outs = [pt.ive(2, x), pt.kve(2.5, x), pt.ive(np.arange(6.0), col), pt.kve(-np.arange(6.0) / 2, col)]
    compare_onnx_and_py([x, col], outs, [RNG.uniform(-20, 20, 5), RNG.uniform(0.01, 30, (4, 1))], rtol=1e-12, atol=0)
    v, s = pt.dscalar("v"), pt.dscalar("s")
    compare_onnx_and_py([v, s], [pt.ive(v, s), pt.kve(v, s)], [np.float64(1.7), np.float64(0.3)], rtol=1e-12)
    compare_onnx_and_py([x], [pt.ive(x, x), pt.kve(x, x)], [np.zeros(0)])


def test_pymc_rational_quadratic_psd():
    # pm.gp.cov.RatQuad's power spectral density: (z / 2)^nu kv(nu, z) with
    # a symbolic order nu = alpha - D / 2.
    alpha, z = pt.dscalar("alpha"), pt.dvector("z")
    nu = alpha - 0.5
    out = pt.power(z / 2.0, nu) * pt.kv(nu, z)
    compare_onnx_and_py([alpha, z], [out], [np.float64(2.3), RNG.uniform(0.01, 20, 8)], rtol=1e-11)


def test_gradients():
    # d/dx ive = (ive(v - 1) + ive(v + 1)) / 2 - sign(x) ive(v), and the
    # like for kve: orders v +- 1, negative ones included; I1's gradient
    # needs ive(2, x).
    v, x = pt.dvector("v"), pt.dvector("x")
    out = pt.ive(v, x) + pt.kve(v, x)
    grad = pytensor.grad(out.sum(), x)
    values = [np.array([0.3, 2.0, -1.5, 5.0, 0.0, 1.0, 12.0]), np.array([0.5, 3.0, 1.2, 40.0, 2.5, 0.01, 7.0])]
    compare_onnx_and_py([v, x], [out, grad], values, rtol=1e-11, atol=0)
    compare_onnx_and_py([x], [pytensor.grad(pt.i1(x).sum(), x)], [RNG.uniform(-30, 30, 10)], rtol=1e-11, atol=0)


def test_one_function_each_in_export():
    v, x = pt.dvector("v"), pt.dvector("x")
    fn = pytensor.function([v, x], [pt.ive(v, x) + pt.ive(v + 1, x / 2), pt.kve(v, x)], mode="FAST_RUN")
    model = export_function_onnx(fn)
    vs, xs = np.array([0.3, 2.0, 4.5]), np.array([0.5, 3.0, 30.0])
    got = run_model(model, vs, xs)
    np.testing.assert_allclose(got[0], scipy.special.ive(vs, xs) + scipy.special.ive(vs + 1, xs / 2), rtol=1e-12)
    np.testing.assert_allclose(got[1], scipy.special.kve(vs, xs), rtol=1e-12)
    names = onnx_function_names(model)
    assert names.count("ive_float64") == 1 and names.count("kve_float64") == 1


@pytest.mark.skipif(compat.Iv is None, reason="PyTensor 3.3 has no Iv Op (pt.iv is built from ive there)")
def test_iv_op():
    # PyTensor 2.38's Iv: SciPy's iv, including inf at x = 0 for negative
    # non-integer orders and values up to where I_v overflows (x ~ 714).
    v, x = (a.ravel() for a in np.meshgrid([0.0, 2.0, -1.5, 3.7, -4.0], [0.0, 1e-3, -2.0, 5.0, 712.0], indexing="ij"))
    inputs, out = _graph(pt.iv)
    compare_onnx_and_py(inputs, out, [v, x], rtol=1e-12, atol=0)


def test_iv_on_every_line():
    # pt.iv: the Iv Op (PyTensor 2.38) or ive times exp(|x|) (3.x).
    inputs, out = _graph(pt.iv)
    v, x = np.array([2.0, -1.5, 3.7, -4.0, 0.5]), np.array([1e-3, 2.0, 5.0, -30.0, 700.0])
    compare_onnx_and_py(inputs, out, [v, x], rtol=1e-12, atol=0)
