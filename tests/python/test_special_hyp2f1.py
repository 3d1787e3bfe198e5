"""Hyp2F1: the Gauss hypergeometric function 2F1(a, b; c; z) (src/core/recipes/hyp2f1.cc).

Float64 is checked against PyTensor's ``py`` linker (SciPy's hyp2f1, Cephes)
to 1e-10 relative on grids built from the function's difficulties: the
region statistics uses (c > 0, moderate a and b, z in [-1, 1)), z < -1 down
to -1e8 (Pfaff's transformation and the 1 - w connection formula), z close
to 1 (the connection formula in 1 - z), c - a - b an integer (its limit form
with digamma series), integer parameters, a = c and b = c, polynomials
(a or b a non-positive integer), c a non-positive integer, z = 0, 1, > 1,
and the special values. Where SciPy itself is wrong (b - a an integer with
z far below -1, large parameters) the tests compare with mpmath at 40
digits instead. The recipe returns NaN where its own error estimate
exceeds 1e-11 (cancellation for large parameters, c - a - b within ~1e-5
of an integer without being one): those points are checked to be NaN, and
the share of NaN in those regions is bounded so that NaN cannot hide a
broken branch.
"""

import mpmath
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


def uniform(lo, hi, n):
    return RNG.uniform(lo, hi, n)


def _mp(a, b, c, z):
    """mpmath at 40 digits; NaN where it has no real value (poles, non-finite inputs, z > 1)."""
    mpmath.mp.dps = 40
    out = []
    for args in zip(a, b, c, z):
        try:
            value = mpmath.hyp2f1(*(mpmath.mpf(float(v)) for v in args))
            out.append(float(value) if mpmath.im(value) == 0 else NAN)
        except (ValueError, ZeroDivisionError):
            out.append(NAN)
    return np.array(out)


def _scipy_grid():
    """Points where SciPy is accurate (checked against mpmath when the grid was designed)."""
    n = 150
    quads = []
    # Statistics: c > 0, moderate a and b, z in [-1, 1).
    quads.append((uniform(-10, 10, n), uniform(-10, 10, n), uniform(0.01, 10, n), uniform(-1, 1, n)))
    quads.append((uniform(-3, 3, n), uniform(-3, 3, n), uniform(0.1, 5, n), uniform(-1, 0.9, n)))
    # z < -1 down to -1e8; z close to 1 (1 - z down to 1e-15).
    quads.append((uniform(-10, 10, n), uniform(-10, 10, n), uniform(0.01, 10, n), -(10 ** uniform(0, 8, n))))
    quads.append((uniform(-10, 10, n), uniform(-10, 10, n), uniform(0.01, 10, n), 1 - 10 ** uniform(-15, -1, n)))
    # c - a - b an integer in -6..6 with z in [1/2, 1).
    a, b = uniform(-10, 10, n), uniform(-10, 10, n)
    c = a + b + RNG.integers(-6, 7, n)
    quads.append((a[c > 0], b[c > 0], c[c > 0], uniform(0.5, 1, n)[c > 0]))
    # Integer parameters (c - a - b and b - a integers everywhere).
    ints = [RNG.integers(1, 6, n).astype(float) for _ in range(2)]
    quads.append((ints[0], ints[1], RNG.integers(1, 8, n).astype(float), uniform(-20, 1, n)))
    # Half-integer parameters.
    halves = [RNG.integers(1, 12, n) / 2 for _ in range(3)]
    quads.append((*halves, uniform(-5, 1, n)))
    # Region switches: x = 1/2 and 0.9 on both sides, z = -1.
    k = 60
    edges = np.array([0.5, 0.9, -1.0, 1 / 3])[RNG.integers(0, 4, k)] * (1 + RNG.choice([-1e-12, 0, 1e-12], k))
    quads.append((uniform(-5, 5, k), uniform(-5, 5, k), uniform(0.1, 6, k), edges))
    # a = c, b = c, a = b.
    a = uniform(-5, 5, 40)
    quads.append((a, uniform(-5, 5, 40), a, uniform(-1, 0.99, 40)))
    quads.append((uniform(-5, 5, 40), a, a, uniform(-1, 0.99, 40)))
    quads.append((a, a, uniform(0.1, 6, 40), uniform(-1, 0.99, 40)))
    # Polynomials of low degree (any z), c non-positive integers that the
    # polynomial ends before, and those it does not (inf).
    deg = -RNG.integers(0, 9, n).astype(float)
    # (z > 1 with alternating terms: test_hard_regions_against_mpmath.)
    quads.append((deg, uniform(-5, 5, n), uniform(0.1, 6, n), uniform(-3, 1, n)))
    quads.append((uniform(-5, 5, 30), -(np.arange(30.0) % 7), uniform(0.1, 6, 30), uniform(-10, 10, 30)))
    quads.append((np.array([-2.0, -3, -1, -4, -2, -3, 1.5, 2.0]), np.array([1.5, -5, 2, 0.5, 2, 1, 1, -2]),
                  np.array([-5.0, -4, -3, -6, -1, -2, -1, -3]), np.array([0.5, 0.5, -2, 3, 0.5, -0.3, 0.2, 0.7])))
    return [np.concatenate([q[i] for q in quads]) for i in range(4)]


def _special_grid():
    """Every combination of special arguments where SciPy's answer is defined by its rules."""
    p = np.array([0.0, 1.0, 2.0, 0.5, -1.0, -2.0, -2.5, 3.5])
    zs = np.array([0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -3.0, 0.95, 1e-300, -1e300, INF])
    a, b, c, z = (v.ravel() for v in np.meshgrid(p, p, p, zs, indexing="ij"))
    # Left out, see test_scipy_differs: z = -1e300 (SciPy's Pfaff step
    # rounds w to 1), polynomials summing to exactly 0 (SciPy: NaN or 0,
    # depending on its path) and c = -2.5, a = b = 1/2, z = 1/2 (SciPy
    # -6e-16 where the value cancels to ~0).
    with np.errstate(all="ignore"):
        want = scipy.special.hyp2f1(a, b, c, z)
    keep = (z != -1e300) & ~np.isnan(want) & ~((c == -2.5) & (a == 0.5) & (b == 0.5))
    # z = +inf: kept where SciPy's z > 1 rule gives inf; its limits of
    # polynomials (and of (1 - z)^(c - a - b) times one) are NaN here.
    poly = ((a <= 0) & (a == np.floor(a))) | ((b <= 0) & (b == np.floor(b)))
    # -inf at z != 1: SciPy's sign of a divergent value (its Euler step
    # multiplies the inf of a pole of c by (1 - z)^(c - a - b)); the recipe
    # returns +inf there (test_scipy_differs).
    keep &= (want != -INF) | (z == 1.0)
    # a = c = -1: SciPy 1.18 sums the series cut at its zero term, 1 + b z;
    # SciPy 1.17 (PyMC 5's line) returns (1 - z)^-b there
    # (test_a_equal_c_minus_one).
    keep &= ~((a == -1.0) & (c == -1.0))
    # z = 1, divergent: SciPy's sign where it is that of the limit
    # (mpmath's); it is not for some negative a or b (test_scipy_differs).
    at_one = np.flatnonzero(keep & (z == 1.0) & np.isinf(want))
    keep[at_one] = _mp(a[at_one], b[at_one], c[at_one], z[at_one]) == want[at_one]
    keep &= (z != INF) | ((want == INF) & ~poly)
    # NaN and infinite inputs: SciPy answers with whichever branch fires
    # first; the recipe with NaN except z = 0 and a = 0 or b = 0 (1).
    s = np.array([NAN, INF, -INF, 1.5])
    na, nb, nc, nz = (v.ravel() for v in np.meshgrid(s, [0.0, 2.5], [3.0, s[0]], [0.0, 0.5], indexing="ij"))
    return [np.concatenate([u[keep], v]) for u, v in zip((a, b, c, z), (na, nb, nc, nz))]


GRID = _scipy_grid()
SPECIAL = _special_grid()
SMALL = [np.array([0.5, 1.0, 2.0, 1.5, -0.7, 3.0, 1.0, 2.0]), np.array([1.0, 2.5, 0.3, 1.5, 2.0, -1.2, 1.0, 3.0]),
         np.array([1.5, 3.0, 4.0, 2.5, 1.2, 5.0, 2.0, 4.0]), np.array([0.3, -0.5, 0.8, -3.0, 0.95, -0.9, 0.0, 0.6])]


def _graph(dtypes):
    inputs = [pt.tensor(name, dtype=dtype, shape=(None,)) for name, dtype in zip("abcz", dtypes)]
    return inputs, pt.hyp2f1(*inputs)


def _relative(x, y):
    with np.errstate(all="ignore"):
        return np.abs(x - y) / np.abs(y)


def _onnx(a, b, c, z):
    inputs, out = _graph(["float64"] * 4)
    return pytensor.function(inputs, out, mode="ONNX")(a, b, c, z)


def test_float64_accuracy():
    # Against SciPy where SciPy agrees with mpmath to 1e-12 (or mpmath has
    # no value: SciPy's rules for poles and z >= 1), against mpmath at the
    # other points (SciPy's own error reaches 1e-7 for 1 - z below ~1e-9
    # and 3e-10 for z ~ -5e3 with large parameters).
    inputs, out = _graph(["float64"] * 4)
    exact = _mp(*GRID)
    with np.errstate(all="ignore"):
        theirs = scipy.special.hyp2f1(*GRID)
    scipy_ok = ~np.isfinite(exact) | (_relative(theirs, exact) <= 1e-12)
    assert scipy_ok.mean() > 0.97
    compare_onnx_and_py(inputs, out, [v[scipy_ok] for v in GRID], rtol=1e-10, atol=1e-300)
    rest = _onnx(*(v[~scipy_ok] for v in GRID))
    np.testing.assert_allclose(rest, exact[~scipy_ok], rtol=1e-10)


def test_special_values():
    inputs, out = _graph(["float64"] * 4)
    # (Zero signs: SciPy's exact zeros here, e.g. 2F1(2, -2.5; 1; 1) through
    # 1 / Gamma(-1), come out -0.0 of its own formulas; the kernel's are +0.0.)
    compare_onnx_and_py(inputs, out, SPECIAL, rtol=1e-10, atol=1e-300, zero_signs=False)
    # The same grid holds every rule at least once.
    got = _onnx(*SPECIAL)
    a, b, c, z = SPECIAL
    assert np.isinf(got[(z == 2.0) & (a == 0.5) & (b == 0.5)]).all()              # z > 1
    assert (got[(z == 0.0)] == 1.0).all()
    assert np.isinf(got[(c == -1.0) & (a == 0.5) & (b == 0.5) & (z == 0.5)]).all()  # c a pole
    # z = 1 with c - a - b <= 0: infinite, with the sign of the divergent
    # term (Gamma(c) Gamma(a + b - c) / (Gamma(a) Gamma(b)) < 0 here).
    assert (got[(z == 1.0) & (a == 2.0) & (b == 1.0) & (c == -2.5)] == -INF).all()


def test_float32_accuracy():
    # SciPy's hyp2f1 has no float32 loop: PyTensor evaluates float32 inputs
    # in float64 and rounds, as the recipe does.
    inputs, out = _graph(["float32"] * 4)
    values = [v.astype("float32") for v in GRID]
    got = pytensor.function(inputs, out, mode="ONNX")(*values)
    assert got.dtype == "float32"
    with np.errstate(all="ignore"):
        want = scipy.special.hyp2f1(*(v.astype("float64") for v in values)).astype("float32")
    # Rounding to float32 moves points of the integer c - a - b grid within
    # ~1e-7 of an integer, where the connection formula cancels like
    # 1 / (c - a - b - m): the float32 recipe accepts float64 results good
    # to 1e-8 (not 1e-11), so these points still get their value.
    a, b, c, z = (v.astype("float64") for v in values)
    d = c - a - b
    near_integer = (np.abs(d - np.round(d)) < 1e-5) & (d != np.round(d)) & (z > 0.99)
    assert near_integer.sum() >= 3  # the grid holds such points
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-37)
    # The float64 recipe refuses some of them (its tolerance is 1e-11).
    assert np.isnan(_onnx(a[near_integer], b[near_integer], c[near_integer], z[near_integer])).any()


def test_hard_regions_against_mpmath():
    # Regions where SciPy's own error reaches 1e-8 (large parameters,
    # b - a an integer far below z = -1) and polynomials of higher degree:
    # every finite result within 1e-10 of mpmath, NaN only where the
    # estimate says the float64 evaluation cannot be trusted.
    n = 60
    big = (uniform(-50, 50, n), uniform(-50, 50, n), uniform(0.01, 100, n), uniform(-1, 0.99, n))
    a = uniform(0.1, 10, n)
    shifted = (a, a + RNG.integers(0, 5, n), uniform(0.01, 10, n), -(10 ** uniform(0, 8, n)))
    poly = (-RNG.integers(0, 30, n).astype(float), uniform(-10, 10, n), uniform(0.01, 10, n), uniform(-10, 10, n))
    for quad, max_nan in [(big, 0.15), (shifted, 0.2), (poly, 0.15)]:
        got = _onnx(*quad)
        want = _mp(*quad)
        finite = np.isfinite(got)
        assert finite.mean() >= 1 - max_nan, finite.mean()
        np.testing.assert_allclose(got[finite], want[finite], rtol=1e-10)


def test_scipy_differs():
    # Where SciPy is wrong, against mpmath (40 digits) or the exact value:
    # z below about -2^53 with b - a an integer (SciPy's Pfaff step rounds
    # z / (z - 1) to 1 and returns inf or NaN), z = -inf (SciPy NaN when
    # b - a is an integer; the limit is 0 for a, b > 0), 1 - z = 2^-53 with
    # c - a - b = 0 (SciPy inf).
    a = np.array([1.0, 1.0, 2.0, 0.5, 1.0, 1.0])
    b = np.array([1.0, 2.0, 3.5, 0.5, 1.0, 1.0])
    c = np.array([2.0, 0.5, 2.0, 3.5, 2.0, 2.0])
    z = np.array([-1e300, -1e300, -1e20, -1e300, -INF, 1 - 2**-53])
    want = _mp(a[:4], b[:4], c[:4], z[:4])
    mpmath.mp.dps = 40
    # F(1, 1; 2; z) = -log(1 - z) / z.
    want = np.concatenate([want, [0.0, float(-mpmath.log(mpmath.mpf(2) ** -53) / (1 - mpmath.mpf(2) ** -53))]])
    got = _onnx(a, b, c, z)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    with np.errstate(all="ignore"):
        theirs = scipy.special.hyp2f1(a, b, c, z)
    assert not np.isfinite(theirs[[0, 1, 4, 5]]).any()  # so this test documents a real difference
    # z = +inf for polynomials: NaN (SciPy: the sign of the leading term
    # times inf, or a signed 0 via its Euler step).
    got = _onnx(np.array([1.0, 2.0, 1.0]), np.array([-1.0, -2.0, 1.0]), np.array([2.0, 0.5, 1.0]), np.full(3, INF))
    assert np.isnan(got).all()
    # z = 1, c - a - b < 0: the sign of the limit (mpmath's), where SciPy
    # gives +inf.
    a, b, c = np.array([-2.5, 3.5, -2.5]), np.array([3.5, -2.5, 3.5]), np.array([1.0, 0.5, 0.5])
    np.testing.assert_array_equal(_onnx(a, b, c, np.ones(3)), _mp(a, b, c, np.ones(3)))
    np.testing.assert_array_equal(_mp(a, b, c, np.ones(3)), [-INF] * 3)
    np.testing.assert_array_equal(scipy.special.hyp2f1(a, b, c, 1.0), [INF] * 3)
    # A pole of c at z > 1: +inf, where SciPy's sign is -inf.
    got = _onnx(np.array([1.0]), np.array([1.0]), np.array([-1.0]), np.array([2.0]))
    np.testing.assert_array_equal(got, [INF])
    np.testing.assert_array_equal(scipy.special.hyp2f1(1.0, 1.0, -1.0, 2.0), -INF)


def test_a_equal_c_minus_one():
    # F(-1, b; -1; z) is 0/0 from the second term on: the recipe gives
    # SciPy 1.18's 1 + b z (the limit c -> -1 with a = -1), which older
    # SciPy (1.17) replaced by (1 - z)^-b (the limit along a = c).
    b = np.array([1.0, 2.0, 0.5, -2.5, 3.5])
    z = np.array([0.5, -0.5, 2.0, -3.0, 0.95])
    got = _onnx(np.full(5, -1.0), b, np.full(5, -1.0), z)
    np.testing.assert_allclose(got, 1 + b * z, rtol=1e-15)


def test_nan_where_inaccurate():
    # c - a - b = 1e-9 off an integer at z near 1 (the connection formula
    # cancels like 1 / (c - a - b - m); the series does not reach z = 0.99),
    # and a large-parameter series that cancels: NaN, not a wrong number
    # (SciPy's values here are off by 1e-7 and more, checked with mpmath).
    a = np.array([1.0, 1.5, -40.5])
    b = np.array([1.0, 2.0, -45.25])
    c = np.array([2.0 + 1e-9, 3.5 + 2e-9, 2.0])
    z = np.array([0.999, 0.9999, -0.95])
    got = _onnx(a, b, c, z)
    assert np.isnan(got).all(), got


def test_exact_zeros():
    # Terminating series that sum to exactly 0: F(1, -1; 1; 1) = 0,
    # F(2, 2; 1; -1) = 0 (Pfaff: F(2, -1; 1; 1/2) / 4 = 0).
    got = _onnx(np.array([1.0, 2.0, -2.0]), np.array([-1.0, 2.0, -1.0]), np.array([1.0, 1.0, -2.0]),
                np.array([1.0, -1.0, 1.0]))
    np.testing.assert_array_equal(got, [0.0, 0.0, 0.0])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_input_dtype(dtype):
    dtypes = [dtype] * 4
    try:
        inputs, out = _graph(dtypes)
    except TypeError as error:  # PyTensor rejects the dtype itself
        pytest.skip(f"PyTensor has no hyp2f1 for {dtype}: {error}")
    if dtype == "bool":
        values = [np.resize([False, True], 8) for _ in range(4)]
        values[3] = np.zeros(8, bool)  # z in {0, 1}: 1 is a pole for c = a + b
    elif dtype.startswith(("int", "uint")):
        values = [np.array([1, 2, 3, 1, 2, 4, 0, 3]), np.array([1, 1, 2, 3, 2, 1, 5, 2]),
                  np.array([2, 4, 6, 5, 3, 7, 2, 6]), np.array([0, -1, -3, 0, -2, -10, 1, 1])]
        if dtype.startswith("uint"):
            values[3] = np.abs(values[3]) % 2
        values = [v.astype(dtype) for v in values]
    else:
        values = [v.astype(dtype) for v in SMALL]
    rtol = 1e-6 if out.dtype != "float64" else 1e-12
    compare_onnx_and_py(inputs, out, values, rtol=rtol, atol=1e-14)


@pytest.mark.parametrize("opset", [13, 18, None])
def test_opsets(opset):
    inputs, out = _graph(["float64"] * 4)
    compare_onnx_and_py(inputs, out, SMALL, opset_version=opset, rtol=1e-12, atol=1e-14)


def test_zero_d_empty_and_broadcast():
    a, b, c, z = (pt.dscalar(n) for n in "abcz")
    compare_onnx_and_py([a, b, c, z], [pt.hyp2f1(a, b, c, z)],
                        [np.float64(1.5), np.float64(0.5), np.float64(2.5), np.float64(-0.7)], rtol=1e-12)
    v = pt.dvector("v")
    compare_onnx_and_py([v], [pt.hyp2f1(v, v, v + 1, v)], [np.zeros(0)])
    m, col = pt.dmatrix("m"), pt.dcol("col")
    compare_onnx_and_py([m, col, v], [pt.hyp2f1(m, col, 3.5, v)],
                        [RNG.uniform(0.1, 3, (3, 4)), RNG.uniform(0.1, 3, (3, 1)), RNG.uniform(-5, 0.99, 4)],
                        rtol=1e-10)


def test_one_function_in_export():
    a, b, c, z = (pt.dvector(n) for n in "abcz")
    y = pt.hyp2f1(a, b, c, z) + pt.hyp2f1(b, a, c + 1, z / 2)
    fn = pytensor.function([a, b, c, z], y, mode="FAST_RUN")
    model = export_function_onnx(fn)
    av, bv, cv, zv = SMALL
    want = scipy.special.hyp2f1(av, bv, cv, zv) + scipy.special.hyp2f1(bv, av, cv + 1, zv / 2)
    np.testing.assert_allclose(run_model(model, av, bv, cv, zv)[0], want, rtol=1e-10)
    assert onnx_function_names(model).count("hyp2f1_float64") == 1


def test_gradient():
    # d/da, d/db, d/dc: PyTensor's Grad2F1Loop (a ScalarLoop, converted by
    # pytensor_onnx/dispatch/scalar_loop.py; NaN where its series does not
    # converge, |z| >= 1, as in PyTensor); d/dz: a b / c * Hyp2F1(a + 1,
    # b + 1, c + 1, z). One function for all four.
    a, b, c, z = (pt.dvector(n) for n in "abcz")
    out = pt.hyp2f1(a, b, c, z)
    grads = pytensor.grad(out.sum(), [a, b, c, z])
    compare_onnx_and_py([a, b, c, z], [out, *grads], SMALL, rtol=1e-9, atol=1e-12)
