"""Jv, J0 and J1: the Bessel function of the first kind (src/core/recipes/bessel_jy.cc).

Float64 is checked against mpmath at 40 digits on grids built from the
recipe's regions and their borders: the power series (x <= 2 or
x^2 <= 4 (v + 1)), Hankel's expansion (x >= max(20, v^2 / 2)), Hankel at the
fractional order plus the upward recurrence (x >= max(20, |v|)) and Steed's
method with CF1 and the downward recurrence elsewhere; negative non-integer
orders (the reflection through Y), negative integer orders and negative x
with integer orders. Where J_v oscillates (x >= |v|) the error is measured
against the envelope sqrt(J_v^2 + Y_v^2): next to a zero only absolute
accuracy is possible for any method that evaluates a phase (SciPy's too).
Parity with PyTensor's ``py`` linker (SciPy's jv, AMOS) is checked wherever
SciPy itself is accurate; where it is not (huge x, subnormal x, infinite
orders) test_scipy_differs checks closed forms and mpmath.
"""

import mpmath
import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
import scipy.special

from pytensor_onnx import export_function_onnx
from pytensor_onnx.testing import compare_onnx_and_py

from helpers import ALL_DTYPES, compare_binary_on_dtype, onnx_function_names, run_model

RNG = np.random.default_rng(20261126)
INF, NAN = np.inf, np.nan


def _grid():
    n = 150
    parts = [
        # Small and moderate orders over many decades of x.
        (RNG.uniform(-30, 30, n), 10 ** RNG.uniform(-5, 3, n)),
        # Integer orders with negative x.
        (RNG.integers(-40, 41, n).astype(float), RNG.uniform(-60, 60, n)),
        # Large orders: series, Steed below the order, the recurrence from
        # Hankel between the order and its square, Hankel beyond.
        (RNG.uniform(0, 200, n), 10 ** RNG.uniform(-2, 4.3, n)),
        (RNG.uniform(-200, 0, n), 10 ** RNG.uniform(-2, 4.3, n)),
        # Half-integer orders (closed forms) and orders next to integers.
        (RNG.integers(-20, 21, 40) + 0.5, 10 ** RNG.uniform(-3, 2.5, 40)),
        (RNG.integers(-20, 21, 40) + RNG.choice([-1, 1], 40) * 10 ** RNG.uniform(-12, -3, 40),
         10 ** RNG.uniform(-3, 2.5, 40)),
        # Around the turning point x = v, where J stops decaying.
        (v := RNG.uniform(5, 150, 60), v * RNG.uniform(0.9, 1.1, 60)),
    ]
    # The region borders, on both sides: x = 2, x^2 = 4 (v + 1), x = 20,
    # x = |v| (above 20), x = v^2 / 2.
    nu = RNG.uniform(0, 40, 100)
    border = np.concatenate([
        np.full(20, 2.0), 2 * np.sqrt(nu[20:40] + 1), np.full(20, 20.0),
        np.maximum(20, nu[60:80]), np.maximum(20, nu[80:] ** 2 / 2),
    ])
    parts.append((nu, border * (1 + RNG.choice([-1e-9, 0, 1e-9], 100))))
    v, x = (np.concatenate(p) for p in zip(*parts))
    return v, x


V, X = _grid()


def _mp(v, x):
    """J_v(x) and, where it oscillates (x >= |v|), its envelope sqrt(J^2 + Y^2) (0 elsewhere)."""
    mpmath.mp.dps = 40
    value, envelope = [], []
    for a, b in zip(v, x):
        a, b = mpmath.mpf(float(a)), mpmath.mpf(float(b))
        value.append(float(mpmath.re(mpmath.besselj(a, b))))
        if abs(b) >= abs(a):
            order, arg = abs(a), abs(b)
            envelope.append(float(mpmath.sqrt(mpmath.besselj(order, arg) ** 2 + mpmath.bessely(order, arg) ** 2)))
        else:
            envelope.append(0.0)
    return np.array(value), np.array(envelope)


EXACT, ENVELOPE = _mp(V, X)


def _error(got, exact, envelope):
    with np.errstate(all="ignore"):
        return np.where(got == exact, 0.0, np.abs(got - exact) / np.maximum(np.abs(exact), envelope))


def _graph(op, dtype="float64"):
    v, x = pt.vector("v", dtype=dtype), pt.vector("x", dtype=dtype)
    return [v, x], op(v, x)


def _onnx(v, x):
    inputs, out = _graph(pt.jv)
    return pytensor.function(inputs, out, mode="ONNX")(v, x)


def test_float64_accuracy_against_mpmath():
    got = _onnx(V, X)
    error = _error(got, EXACT, ENVELOPE)
    worst = np.argmax(error)
    assert error.max() <= 1e-10, (V[worst], X[worst], got[worst], EXACT[worst])
    # Away from the zeros the error is relative, and far below the bound.
    away = np.abs(EXACT) >= 0.1 * ENVELOPE
    assert away.mean() > 0.8
    assert np.max(_error(got[away], EXACT[away], 0.0)) <= 1e-10


def test_float64_parity_with_pytensor():
    # PyTensor's py linker (SciPy's jv) where SciPy is accurate and J is not
    # next to a zero (there both are only absolutely accurate).
    with np.errstate(all="ignore"):
        theirs = scipy.special.jv(V, X)
    keep = (_error(theirs, EXACT, 0.0) <= 1e-12) & (np.abs(EXACT) >= 0.1 * ENVELOPE)
    assert keep.mean() > 0.75
    inputs, out = _graph(pt.jv)
    compare_onnx_and_py(inputs, out, [V[keep], X[keep]], rtol=1e-10, atol=0)


SPECIAL_V = np.array([0.0, 1.0, 2.0, 0.5, -0.5, -1.0, -2.0, -1.5, 2.5, 100.0, 1e4, 1e-12, -3.000001, NAN])
SPECIAL_X = np.array([0.0, -0.0, 1.0, -1.0, -2.5, 2.0, 20.0, 700.0, -700.0, 1e-300, INF, -INF, NAN])


def test_special_values():
    # 0, +-0, +-inf and NaN arguments, and orders at the integers, the
    # half-integers, next to them, huge and NaN: SciPy's values.
    v, x = (a.ravel() for a in np.meshgrid(SPECIAL_V, SPECIAL_X, indexing="ij"))
    inputs, out = _graph(pt.jv)
    compare_onnx_and_py(inputs, out, [v, x], rtol=1e-12, atol=0)


def test_scipy_differs():
    # Huge x: SciPy returns one value for every nonzero order (wrong, e.g.
    # J_2(1e100) = -3.07e-51, SciPy 7.38e-51); Hankel's leading term
    # sqrt(2 / (pi x)) cos(x - v pi / 2 - pi / 4) is exact to double
    # precision there, with cos x taken to 400 digits.
    v = np.array([0.0, 1.0, 2.0, 0.5, -1.5, -3.000001, 1e-12, 100.0])
    for x in [1e100, 1e300]:
        mpmath.mp.dps = 400
        big = mpmath.mpf(x)
        want = [float(mpmath.sqrt(2 / (mpmath.pi * big)) * mpmath.cos(big - mpmath.mpf(a) * mpmath.pi / 2 - mpmath.pi / 4))
                for a in v]
        np.testing.assert_allclose(_onnx(v, np.full(v.size, x)), want, rtol=1e-12)
    assert scipy.special.jv(2.0, 1e100) == scipy.special.jv(0.5, 1e100)
    # Subnormal and tiny x: J_v(x) ~ (x / 2)^v / Gamma(v + 1).
    x = np.array([5e-324, 5e-324])
    got = _onnx(np.array([0.5, 1e-12]), x)
    want = [np.sqrt(2 / np.pi) * np.sqrt(5e-324), np.exp(1e-12 * (np.log(5e-324) - np.log(2))) / scipy.special.gamma(1 + 1e-12)]
    # (4e-14: the prefactor exp(v log(x / 2)) at log x = -744.4.)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert scipy.special.jv(0.5, 5e-324) == 0 and scipy.special.jv(1e-12, 5e-324) == 0
    # Infinite orders: J_v(x) -> 0 as v -> +inf for any finite x (SciPy: NaN
    # for x >= 20); J_-v has no limit (it is cos(v pi) J_v - sin(v pi) Y_v
    # with |Y_v| -> inf): NaN (SciPy: 0 for small x).
    x = np.array([0.5, 20.0, 700.0, 1e10])
    np.testing.assert_array_equal(_onnx(np.full(4, INF), x), np.zeros(4))
    assert np.isnan(_onnx(np.full(4, -INF), x)).all()
    assert np.isnan(scipy.special.jv(INF, 700.0)) and scipy.special.jv(-INF, 0.5) == 0


def test_j0_j1():
    # Their own table recipes (special.cc). Against mpmath: relative accuracy
    # up to |x| = 8, next to the zeros there too (2.405, 3.832, 5.520, 7.016,
    # and doubles around them), envelope-relative beyond, where the phase is
    # evaluated.
    x = pt.dvector("x")
    zeros = np.array([2.404825557695773, 3.8317059702075125, 5.520078110286311, 7.015586669815619, 8.653727912911013])
    values = np.concatenate([
        RNG.uniform(-60, 60, 300), 10 ** RNG.uniform(-300, 8, 200), -(10 ** RNG.uniform(-8, 8, 50)),
        np.nextafter(zeros, 0), zeros, np.nextafter(zeros, 10), -zeros, [8.0, np.nextafter(8.0, 9), 1e300],
    ])
    j0, j1 = pytensor.function([x], [pt.j0(x), pt.j1(x)], mode="ONNX")(values)
    mpmath.mp.dps = 40
    for order, got in [(0, j0), (1, j1)]:
        exact = np.array([float(mpmath.besselj(order, mpmath.mpf(float(v)))) for v in values])
        envelope = np.where(np.abs(values) > 8, np.sqrt(2 / (np.pi * np.abs(values))), 0.0)
        error = _error(got, exact, envelope)
        worst = np.argmax(error)
        assert error.max() <= 1e-13, (order, values[worst], got[worst], exact[worst])
    # Parity with PyTensor (SciPy's Cephes j0, j1) and the special values.
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, 5e-324])
    # SciPy's j0/j1 (Cephes) take the phase less accurately as |x| grows:
    # 1e-12 of the amplitude off at 1e5, up to 6e-9 at 1e8 (SciPy 1.17,
    # against mpmath); the comparison above covers those arguments.
    keep = np.abs(values) <= 1e5
    compare_onnx_and_py([x], [pt.j0(x), pt.j1(x)], [np.concatenate([values[keep], specials])], rtol=1e-10, atol=1e-15)
    # In a FAST_RUN-fused Composite, exported.
    fn = pytensor.function([x], pt.j0(x) * 2 + pt.j1(x) * pt.exp(-x), mode="FAST_RUN")
    model = export_function_onnx(fn)
    got = run_model(model, values[keep])[0]
    with np.errstate(all="ignore"):
        want = scipy.special.j0(values[keep]) * 2 + scipy.special.j1(values[keep]) * np.exp(-values[keep])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-15)


def test_float32_accuracy():
    inputs, out = _graph(lambda v, x: [pt.jv(v, x), pt.j0(x), pt.j1(x)], "float32")
    v, x = V.astype("float32"), X.astype("float32")
    got = pytensor.function(inputs, out, mode="ONNX")(v, x)
    assert all(g.dtype == "float32" for g in got)
    # Float32 rounds v and x, so the reference takes the rounded values.
    v64, x64 = v.astype("float64"), x.astype("float64")
    exact, envelope = _mp(v64, x64)
    # Float32 subnormals (and the values that underflow to them) keep fewer
    # digits; beyond float32's largest value the result is +-inf.
    info = np.finfo("float32")
    normal = (np.abs(exact) >= info.tiny) & (np.abs(exact) <= info.max)
    assert normal.mean() > 0.7
    assert _error(got[0][normal], exact[normal], envelope[normal]).max() <= 1e-6
    tiny = np.abs(exact) < info.tiny
    assert np.all(np.abs(got[0][tiny]) < 2 * info.tiny)
    huge = np.abs(exact) > info.max
    np.testing.assert_array_equal(got[0][huge], np.sign(exact[huge]) * np.inf)
    amplitude = np.minimum(1.0, np.sqrt(2 / (np.pi * np.abs(x64))))  # J0, J1 envelopes
    for g, fn in [(got[1], scipy.special.j0), (got[2], scipy.special.j1)]:
        assert _error(g, fn(x64).astype("float32"), amplitude).max() <= 1e-6


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_input_dtype(dtype):
    compare_binary_on_dtype(lambda v, x: [pt.jv(v, x), pt.j0(x), pt.j1(x)], dtype, [[0.0, 2.5, -1.5, 3.0], [0.5, 3.0, 1.25, 25.0]], [[0, 2, 5, 3], [1, 3, 7, 100]], "jv/j0/j1")


@pytest.mark.parametrize("opset", [13, 18, None])
def test_opsets(opset):
    inputs, out = _graph(lambda v, x: [pt.jv(v, x), pt.j0(x), pt.j1(x)])
    values = [np.array([0.3, 2.0, -1.5, 30.0, 0.0, -4.0]), np.array([0.5, 3.0, 1.2, 40.0, 25.0, -7.5])]
    compare_onnx_and_py(inputs, out, values, opset_version=opset, rtol=1e-12, atol=0)


def test_constant_and_broadcast_orders():
    # A constant order, an order vector against a column of x, 0-d and empty
    # inputs.
    x, col = pt.dvector("x"), pt.dcol("col")
    outs = [pt.jv(2, x), pt.jv(-2.5, x), pt.jv(np.arange(6.0), col), pt.jv(-np.arange(6.0) / 2, col)]
    compare_onnx_and_py([x, col], outs, [RNG.uniform(0.01, 40, 5), RNG.uniform(0.01, 30, (4, 1))], rtol=1e-12, atol=0)
    v, s = pt.dscalar("v"), pt.dscalar("s")
    compare_onnx_and_py([v, s], [pt.jv(v, s), pt.j0(s), pt.j1(s)], [np.float64(1.7), np.float64(12.3)], rtol=1e-12)
    compare_onnx_and_py([x], [pt.jv(x, x), pt.j0(x), pt.j1(x)], [np.zeros(0)])


def test_gradients():
    # d/dx J_v = (J_v-1 - J_v+1) / 2, J0' = -J1, J1' = (J0 - J2) / 2 (or
    # J0 - J1 / x, as the installed PyTensor writes it).
    v, x = pt.dvector("v"), pt.dvector("x")
    out = pt.jv(v, x) + pt.j0(x) * pt.j1(x)
    grad = pytensor.grad(out.sum(), x)
    values = [np.array([0.3, 2.0, -1.5, 5.0, 0.0, 1.0, 12.0, 40.0]), np.array([0.5, 3.0, 1.2, 40.0, 2.5, 0.01, 7.0, 35.0])]
    compare_onnx_and_py([v, x], [out, grad], values, rtol=1e-10, atol=1e-14)


def test_one_function_in_export():
    v, x = pt.dvector("v"), pt.dvector("x")
    fn = pytensor.function([v, x], [pt.jv(v, x) + pt.jv(v + 1, x / 2), pt.j0(x)], mode="FAST_RUN")
    model = export_function_onnx(fn)
    vs, xs = np.array([0.3, 2.0, 4.5]), np.array([0.5, 3.0, 30.0])
    got = run_model(model, vs, xs)
    np.testing.assert_allclose(got[0], scipy.special.jv(vs, xs) + scipy.special.jv(vs + 1, xs / 2), rtol=1e-12)
    np.testing.assert_allclose(got[1], scipy.special.j0(xs), rtol=1e-12)
    assert onnx_function_names(model).count("jv_float64") == 1
