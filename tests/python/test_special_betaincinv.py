"""BetaIncInv: the inverse of the regularized incomplete beta function in x
(src/core/recipes/incomplete_beta_inverse.cc).

Float64 is checked against PyTensor's ``py`` linker (SciPy's betaincinv,
Boost) to 1e-10 relative on grids built from the inverse's difficulties:
the region statistics uses (PyMC's Beta and StudentT quantiles), both tails
of y (down to 1e-250, and 1 - y down to 2^-53), tiny and large parameters
(1e-3 and up to 1e10), skewed pairs whose root is extremely close to 0 or
1, a = b, integer and half-integer parameters, a = 1 and b = 1 (closed
forms), and the special values. SciPy is wrong in places the tests check
against mpmath instead: targets below ~1e-260 with a large parameter
(SciPy's root is off by up to 10%), roots that underflow (SciPy clamps them
to 2.2e-308) and subnormal targets.
"""

import mpmath
import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
import scipy.special
import scipy.stats

from pytensor_onnx import export_function_onnx
from pytensor_onnx.testing import compare_onnx_and_py

from helpers import ALL_DTYPES, onnx_function_names, run_model

RNG = np.random.default_rng(20261125)
INF, NAN = np.inf, np.nan


def _log_uniform(lo, hi, n):
    return 10 ** RNG.uniform(lo, hi, n)


def _grid():
    n = 120
    parts = [
        # Statistics: moderate parameters, any y.
        (_log_uniform(-1, 2, n), _log_uniform(-1, 2, n), RNG.uniform(0, 1, n)),
        # Both tails of y.
        (_log_uniform(-1, 2, n), _log_uniform(-1, 2, n), _log_uniform(-250, -1, n)),
        (_log_uniform(-1, 2, n), _log_uniform(-1, 2, n), 1 - _log_uniform(-16, -1, n)),
        # A tiny parameter against a moderate or large one (roots within
        # 1e-200 of 0 or 1, targets of either side).
        (_log_uniform(-3, -1, n), _log_uniform(-1, 4, n), RNG.uniform(0, 1, n)),
        (_log_uniform(-1, 4, n), _log_uniform(-3, -1, n), RNG.uniform(0, 1, n)),
        # Large parameters, up to 1e10.
        (_log_uniform(3, 10, 60), _log_uniform(3, 10, 60), RNG.uniform(0, 1, 60)),
        (_log_uniform(3, 10, 60), _log_uniform(-1, 2, 60), RNG.uniform(0, 1, 60)),
        # a = b, integers, half-integers, a = 1 and b = 1.
        (np.repeat(_log_uniform(-2, 3, 20), 2), None, RNG.uniform(0, 1, 40)),
        (RNG.integers(1, 30, 60).astype(float), RNG.integers(1, 30, 60).astype(float), RNG.uniform(0, 1, 60)),
        (RNG.integers(1, 30, 60) / 2, RNG.integers(1, 30, 60) / 2, RNG.uniform(0, 1, 60)),
        (np.ones(20), _log_uniform(-3, 12, 20), RNG.uniform(0, 1, 20)),
        (_log_uniform(-3, 12, 20), np.ones(20), RNG.uniform(0, 1, 20)),
    ]
    parts = [(a, a if b is None else b, y) for a, b, y in parts]
    return [np.concatenate(v) for v in zip(*parts)]


GRID = _grid()


def _graph(dtype="float64"):
    inputs = [pt.vector(name, dtype=dtype) for name in "aby"]
    return inputs, pt.betaincinv(*inputs)


def _onnx(a, b, y):
    inputs, out = _graph()
    return pytensor.function(inputs, out, mode="ONNX")(a, b, y)


def _mp_root(a, b, y, start):
    """The root of I_x(a, b) = y by mpmath at 40 digits: Newton from `start`
    (a value near the root), checked by its residual."""
    mpmath.mp.dps = 40
    a, b, y, x = (mpmath.mpf(float(v)) for v in (a, b, y, start))
    log_beta = mpmath.log(mpmath.beta(a, b))
    for _ in range(8):
        density = mpmath.exp((a - 1) * mpmath.log(x) + (b - 1) * mpmath.log1p(-x) - log_beta)
        x -= (mpmath.betainc(a, b, 0, x, regularized=True) - y) / density
    assert abs(mpmath.betainc(a, b, 0, x, regularized=True) - y) <= y * mpmath.mpf(10) ** -30
    return float(x)


def test_float64_accuracy():
    a, b, y = GRID
    with np.errstate(all="ignore"):
        theirs = scipy.special.betaincinv(a, b, y)
    # SciPy's root where it is a normal double; it clamps underflowing roots
    # to the smallest normal one and gives NaN for some deep lower tails.
    normal = theirs > 1.0001 * np.finfo(float).tiny
    assert normal.mean() > 0.95
    inputs, out = _graph()
    compare_onnx_and_py(inputs, out, [a[normal], b[normal], y[normal]], rtol=1e-10, atol=0)
    got = _onnx(a[~normal], b[~normal], y[~normal])
    # Underflow: the power law (y a B(a, b))^(1/a), an upper bound of the
    # root, is below 1e-300 there.
    log_power_law = (np.log(y) + np.log(a) + scipy.special.betaln(a, b))[~normal] / a[~normal]
    tiny = log_power_law < np.log(1e-300)
    assert (got[tiny] < 1e-300).all()
    # The others (SciPy NaN): mpmath's root.
    rest = np.flatnonzero(~tiny)
    assert 0 < rest.size <= 6
    want = [_mp_root(a[~normal][i], b[~normal][i], y[~normal][i], got[i]) for i in rest]
    np.testing.assert_allclose(got[rest], want, rtol=1e-10)


def test_pymc_quantiles():
    # PyMC's Beta icdf, betaincinv(alpha, beta, p), and StudentT icdf,
    # which takes betaincinv(nu / 2, 1 / 2, 2 p) for each tail.
    nu, p = pt.dvector("nu"), pt.dvector("p")
    lower = -pt.sqrt(nu) * pt.sqrt(1.0 / pt.betaincinv(nu * 0.5, 0.5, 2.0 * p) - 1.0)
    upper = pt.sqrt(nu) * pt.sqrt(1.0 / pt.betaincinv(nu * 0.5, 0.5, 2.0 * (1 - p)) - 1.0)
    t_icdf = pt.switch(pt.lt(p, 0.5), lower, upper)
    nus = _log_uniform(0, 2, 40)
    ps = np.concatenate([RNG.uniform(0.01, 0.99, 30), [1e-10, 1e-5, 0.5, 1 - 1e-5, 1 - 1e-10, 0.25, 0.75, 0.1, 0.9, 0.3]])
    _, (got,) = compare_onnx_and_py([nu, p], [t_icdf], [nus, ps], rtol=1e-10, atol=0)
    np.testing.assert_allclose(got, scipy.stats.t.ppf(ps, nus), rtol=1e-9)


def test_scipy_differs():
    # Targets below ~1e-260 with a large parameter: SciPy's root is off (its
    # forward function underflows); the recipe's is mpmath's.
    a = np.array([448.80156009088614, 2780.113781507985, 9958.352058634388])
    b = np.array([26.26933608470996, 15.385996877288196, 29.319069141707555])
    y = np.array([1.4314650737953013e-289, 2.232579400399501e-292, 3.408665819624176e-288])
    got = _onnx(a, b, y)
    want = np.array([_mp_root(*v) for v in zip(a, b, y, got)])
    np.testing.assert_allclose(got, want, rtol=1e-10)
    assert (np.abs(scipy.special.betaincinv(a, b, y) / want - 1) > 1e-8).all()
    # Roots that underflow: 0 (SciPy 2.2e-308, about the smallest normal
    # double), on both sides of y = 1/2 (0.99^(1/a) = e^-1005 for a = 1e-5).
    got = _onnx(np.array([0.5, 1e-5, 1e-5]), np.array([2.0, 1e5, 0.5]), np.array([1e-300, 0.5, 0.99]))
    np.testing.assert_array_equal(got, [0.0, 0.0, 0.0])
    # A subnormal target: I_x(1, 1/2) = 1 - sqrt(1 - x) ~ x / 2.
    np.testing.assert_array_equal(_onnx(np.array([1.0]), np.array([0.5]), np.array([5e-324])), [1e-323])


def test_special_values():
    special = np.array([0.0, 1.0, 0.5, 2.0, 1e-5, 1e4, INF, -1.0, NAN])
    ys = np.array([0.0, 1.0, 0.5, 0.01, 0.99, 1e-300, -0.1, 1.1, NAN])
    a, b, y = (v.ravel() for v in np.meshgrid(special, special, ys, indexing="ij"))
    with np.errstate(all="ignore"):
        want = scipy.special.betaincinv(a, b, y)
    # Where the root underflows SciPy gives ~2.2e-308 (test_scipy_differs).
    clamped = (want > 0) & (want <= np.finfo(float).tiny)
    # SciPy NaN at a = 2, b = 1e4, y = 1e-300, where the root is
    # sqrt(2 y / (b (b + 1))) to double precision (I_x(2, b) ~ b (b + 1) x^2 / 2).
    scipy_nan = (a == 2.0) & (b == 1e4) & (y == 1e-300)
    assert np.isnan(want[scipy_nan]).all()
    keep = ~clamped & ~scipy_nan
    inputs, out = _graph()
    compare_onnx_and_py(inputs, out, [a[keep], b[keep], y[keep]], rtol=1e-10, atol=0)
    assert (_onnx(a[clamped], b[clamped], y[clamped]) == 0).all()
    np.testing.assert_allclose(_onnx(a[scipy_nan], b[scipy_nan], y[scipy_nan]), np.sqrt(2e-300 / (1e4 * 10001)),
                               rtol=1e-12)


def test_nan_above_the_tested_parameters():
    # Parameters above 1e10 (unless the other one is 1: closed forms): NaN,
    # not a root of unknown accuracy.
    got = _onnx(np.array([1e11, 0.5, 1e12, 1.0]), np.array([2.0, 1e15, 1.0, 1e300]), np.full(4, 0.5))
    assert np.isnan(got[:2]).all()
    np.testing.assert_allclose(got[2:], [0.5 ** 1e-12, -np.expm1(np.log(0.5) / 1e300)], rtol=1e-15)


def test_float32_accuracy():
    inputs, out = _graph("float32")
    a, b, y = (v[:600].astype("float32") for v in GRID)
    got = pytensor.function(inputs, out, mode="ONNX")(a, b, y)
    assert got.dtype == "float32"
    want = scipy.special.betaincinv(*(v.astype("float64") for v in (a, b, y))).astype("float32")
    normal = want >= np.finfo("float32").tiny  # float32 subnormals keep fewer digits
    np.testing.assert_allclose(got[normal], want[normal], rtol=1e-6, atol=0)
    assert (got[~normal] < np.finfo("float32").tiny).all()


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_input_dtype(dtype):
    try:
        inputs, out = _graph(dtype)
    except TypeError as error:  # PyTensor rejects the dtype itself
        pytest.skip(f"PyTensor has no betaincinv for {dtype}: {error}")
    if dtype == "bool":
        values = [np.array([True, True, False]), np.array([True, False, True]), np.array([False, True, True])]
    elif dtype.startswith(("int", "uint")):
        values = [np.array([1, 2, 5, 3]), np.array([1, 3, 2, 7]), np.array([0, 1, 1, 0])]
        values = [v.astype(dtype) for v in values]
    else:
        values = [np.array([0.5, 2.0, 5.0, 0.3]), np.array([0.5, 3.0, 2.0, 7.0]), np.array([0.1, 0.5, 0.9, 0.25])]
        values = [v.astype(dtype) for v in values]
    if out.dtype == "float64":
        compare_onnx_and_py(inputs, out, values, rtol=1e-12, atol=0)
        return
    # float32: PyTensor calls SciPy's single-precision loop, 6e-6 off at
    # (0.3, 7, 0.25); the recipe computes in float64 and rounds, so it is
    # checked against SciPy's float64 root too.
    _, (got,) = compare_onnx_and_py(inputs, [out], values, rtol=2e-5, atol=0)
    want = scipy.special.betaincinv(*(v.astype("float64") for v in values))
    np.testing.assert_allclose(got, want.astype(out.dtype), rtol=1e-6)


def test_opsets_broadcast_and_gradient():
    # The gradient in y (PyTensor's, through betaincinv and betaln): one
    # model per opset, with a broadcast column of a and a 0-d b.
    a, b, y = pt.dcol("a"), pt.dscalar("b"), pt.dvector("y")
    out = pt.betaincinv(a, b, y)
    grad = pytensor.grad(out.sum(), y)
    values = [np.array([[0.5], [2.0], [10.0]]), np.float64(3.5), np.array([0.3, 0.01, 0.99, 0.5])]
    for opset in [13, 18, None]:
        compare_onnx_and_py([a, b, y], [out, grad], values, opset_version=opset, rtol=1e-11, atol=0)
    v = pt.dvector("v")
    compare_onnx_and_py([v], [pt.betaincinv(v, v, v)], [np.zeros(0)])


def test_one_function_in_export():
    a, b, y = (pt.dvector(n) for n in "aby")
    fn = pytensor.function([a, b, y], pt.betaincinv(a, b, y) + pt.betaincinv(b, a, y / 2), mode="FAST_RUN")
    model = export_function_onnx(fn)
    av, bv, yv = np.array([0.5, 2.0, 4.5]), np.array([1.5, 3.0, 0.2]), np.array([0.1, 0.6, 0.95])
    want = scipy.special.betaincinv(av, bv, yv) + scipy.special.betaincinv(bv, av, yv / 2)
    np.testing.assert_allclose(run_model(model, av, bv, yv)[0], want, rtol=1e-11)
    names = onnx_function_names(model)
    assert names.count("betaincinv_float64") == 1 and names.count("betainc_xy_float64") == 1
