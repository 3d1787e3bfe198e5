"""BetaInc: the regularized incomplete beta function I_x(a, b) (src/core/recipes/incomplete_beta.cc).

Float64 is checked against PyTensor's ``py`` linker (SciPy's betainc, Boost's
ibeta) to 1e-10 relative (the recipe measures ~5e-13 at worst) on grids
built from the function's difficulties: tiny a or b (the mass piles up at 0
or 1 and I = 1 - O(b) cancels), huge a and b with x around the mean (the
peak, where x^a (1 - x)^b / B(a, b) is a difference of huge logarithms and
the continued fraction is slowest), huge a with small b and x a few 1/a
below 1 (where the classical continued fraction loses a x (1 - x) ulp), x
near 0 and 1, the recipe's region switches (b x = 1, x = 0.95, x = a / (a + b),
a or b = 8 where Stirling takes over), integer and half-integer parameters,
a == b, random points and the special values.
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

RNG = np.random.default_rng(20261123)
INF, NAN = np.inf, np.nan


def log_uniform(lo, hi, n):
    return 10.0 ** RNG.uniform(lo, hi, n)


def near_mean(a, b, spread):
    """x around the mean a / (a + b), in units of the standard deviation."""
    mean, sd = a / (a + b), np.sqrt(a * b / (a + b) ** 3)
    return np.clip(mean + sd * RNG.normal(0, spread, len(a)), 0, 1)


def _grid():
    n = 120
    triples = []
    tiny, moderate = log_uniform(-300, -3, n), log_uniform(-2, 3, n)
    triples.append((tiny, moderate, RNG.uniform(0, 1, n)))                       # tiny a
    triples.append((moderate, tiny, RNG.uniform(0, 1, n)))                       # tiny b
    triples.append((log_uniform(-1, 3, n), log_uniform(-300, -3, n), 1 - log_uniform(-16, -1, n)))
    triples.append((log_uniform(-300, -3, n), log_uniform(-1, 3, n), log_uniform(-300, -1, n)))
    big_a, big_b = log_uniform(3, 7, n), log_uniform(3, 7, n)
    triples.append((big_a, big_b, near_mean(big_a, big_b, 2)))                   # the peak
    small = log_uniform(-1, 1, n)
    triples.append((big_a, small, near_mean(big_a, small, 3)))
    triples.append((small, big_b, near_mean(small, big_b, 3)))
    # huge a, small b, x = 1 - k / a: BFRAC's territory.
    k = RNG.uniform(1, 40, n)
    triples.append((big_a, small, 1 - k / big_a))
    triples.append((moderate, log_uniform(-2, 3, n), log_uniform(-300, -2, n)))  # x near 0
    triples.append((moderate, log_uniform(-2, 3, n), 1 - log_uniform(-16, -2, n)))  # x near 1
    halves = RNG.integers(1, 80, (2, n)) / RNG.choice([1, 2], (2, n))
    triples.append((halves[0], halves[1], RNG.uniform(0, 1, n)))
    same = log_uniform(-3, 6, n)
    triples.append((same, same, np.clip(0.5 + RNG.normal(0, 1, n) / np.sqrt(same + 1), 0, 1)))
    triples.append((log_uniform(-3, 4, n), log_uniform(-3, 4, n), RNG.uniform(0, 1, n)))
    # Region switches: b x = 1, x = 0.95, a or b = 8, x = a / (a + b).
    a = log_uniform(-1, 2, 40)
    b = log_uniform(0.1, 2, 40)
    triples.append((a, b, np.minimum(1 / b * (1 + RNG.choice([-1e-12, 0, 1e-12], 40)), 1)))
    triples.append((a, b, 0.95 + RNG.choice([-1e-12, 0, 1e-12], 40)))
    triples.append((8 + RNG.choice([-1e-12, 0, 1e-12], 40), b, RNG.uniform(0, 1, 40)))
    triples.append((a, 8 + RNG.choice([-1e-12, 0, 1e-12], 40), RNG.uniform(0, 1, 40)))
    triples.append((a, b, a / (a + b) * (1 + RNG.choice([-1e-12, 0, 1e-12], 40))))
    special = np.array([0.0, 1e-300, 0.5, 1.0, 2.5, 1e10, INF, NAN, -1.0])
    xs = np.array([0.0, 1e-300, 0.3, 0.5, 1 - 1e-12, 1.0, 1.5, -0.5, NAN])  # 1 - 1e-16: test_scipy_misses
    sa, sb, sx = (v.ravel() for v in np.meshgrid(special, special, xs))
    keep = ~((sa == 1e-300) & (sb == 1e-300))  # see test_tiny_a_and_b
    triples.append((sa[keep], sb[keep], sx[keep]))
    return [np.concatenate([t[i] for t in triples]) for i in range(3)]


GRID = _grid()
SMALL = [np.array([0.5, 1.0, 2.0, 3.0, 7.0, 10.0, 1.0, 4.0]), np.array([1.0, 0.5, 3.0, 2.0, 1.0, 12.0, 1.0, 4.0]),
         np.array([0.0, 0.5, 1.0, 0.25, 0.75, 0.5, 0.0, 1.0])]


def _graph(dtypes):
    inputs = [pt.tensor(name, dtype=dtype, shape=(None,)) for name, dtype in zip("abx", dtypes)]
    return inputs, pt.betainc(*inputs)


def test_float64_accuracy():
    inputs, out = _graph(["float64"] * 3)
    # SciPy flushes results below ~1e-300 to 0 (the recipe keeps subnormals).
    compare_onnx_and_py(inputs, out, GRID, rtol=1e-10, atol=1e-300)


def test_float32_accuracy():
    # SciPy's betainc has a float32 loop (Boost in single precision, ~1e-5
    # relative in the hard regions), which PyTensor's py linker calls for
    # float32 inputs: the reference is SciPy in float64 on the same float32
    # values, rounded. (compare_onnx_and_py runs float32 on SMALL in
    # test_every_input_dtype.)
    inputs, out = _graph(["float32"] * 3)
    with np.errstate(over="ignore"):
        values = [v.astype("float32") for v in GRID]
    fn = pytensor.function(inputs, out, mode="ONNX")
    got = fn(*values)
    assert got.dtype == "float32"
    want = scipy.special.betainc(*(v.astype("float64") for v in values)).astype("float32")
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-37)


def test_scipy_misses():
    # Where SciPy 1.17/1.18 (Boost's ibeta) is wrong, against mpmath at 40
    # digits: both parameters tiny (I_x(a, b) -> b / (a + b); SciPy gives
    # ~1e-299 for a = 2e-266, b = 3e-296 where the value is 1.4e-30), and
    # x = 1 - 2^-53 with a = b = 1/2 (the arcsine law, 2 asin(sqrt(x)) / pi:
    # SciPy is 2.8e-9 off).
    a = np.array([2.31897e-266, 1e-300, 3e-20, 1e-5, 1e-200, 0.5, 0.5])
    b = np.array([3.35713e-296, 1e-300, 1e-30, 2e-5, 1e-5, 0.5, 1.5])
    x = np.array([0.7871031607789767, 0.5, 1e-10, 0.9, 0.3, 1 - 2**-53, 1 - 2**-53])
    mpmath.mp.dps = 40
    want = np.array([float(mpmath.betainc(mpmath.mpf(a_), mpmath.mpf(b_), 0, mpmath.mpf(x_), regularized=True))
                     for a_, b_, x_ in zip(a, b, x)])
    av, bv, xv = pt.dvector("a"), pt.dvector("b"), pt.dvector("x")
    fn = pytensor.function([av, bv, xv], pt.betainc(av, bv, xv), mode="ONNX")
    np.testing.assert_allclose(fn(a, b, x), want, rtol=1e-12)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_input_dtype(dtype):
    dtypes = [dtype] * 3
    try:
        inputs, out = _graph(dtypes)
    except TypeError as error:  # PyTensor rejects the dtype itself
        pytest.skip(f"PyTensor has no betainc for {dtype}: {error}")
    if dtype == "bool":
        values = [np.resize([False, True], 8) for _ in range(3)]
    else:
        values = [np.abs(v).astype(dtype) for v in SMALL]
    rtol = 1e-6 if out.dtype != "float64" else 1e-12
    compare_onnx_and_py(inputs, out, values, rtol=rtol, atol=1e-14)


@pytest.mark.parametrize("opset", [13, 18, None])
def test_opsets(opset):
    inputs, out = _graph(["float64"] * 3)
    compare_onnx_and_py(inputs, out, SMALL, opset_version=opset, rtol=1e-12, atol=1e-14)


def test_zero_d_empty_and_broadcast():
    a, b, x = pt.dscalar("a"), pt.dscalar("b"), pt.dscalar("x")
    compare_onnx_and_py([a, b, x], [pt.betainc(a, b, x)], [np.float64(2.5), np.float64(0.5), np.float64(0.3)],
                        rtol=1e-12)
    v = pt.dvector("v")
    compare_onnx_and_py([v], [pt.betainc(v, v, v)], [np.zeros(0)])
    m, c = pt.dmatrix("m"), pt.dcol("c")
    compare_onnx_and_py([m, c, v], [pt.betainc(m, c, v)],
                        [RNG.uniform(0.1, 9, (3, 4)), RNG.uniform(0.1, 9, (3, 1)), RNG.uniform(0, 1, 4)], rtol=1e-12)


def test_in_a_fused_composite():
    a, b, x = pt.dvector("a"), pt.dvector("b"), pt.dvector("x")
    y = pt.betainc(a, b, x) * 2 + pt.exp(pt.betainc(b + 1, a, 1 - x))
    fn = pytensor.function([a, b, x], y, mode="FAST_RUN")
    assert any(type(n.op.scalar_op).__name__ == "Composite" for n in fn.maker.fgraph.apply_nodes
               if hasattr(n.op, "scalar_op"))
    model = export_function_onnx(fn)
    av, bv, xv = RNG.uniform(0.1, 30, 50), RNG.uniform(0.1, 30, 50), RNG.uniform(0.01, 0.99, 50)
    want = 2 * scipy.special.betainc(av, bv, xv) + np.exp(scipy.special.betainc(bv + 1, av, 1 - xv))
    np.testing.assert_allclose(run_model(model, av, bv, xv)[0], want, rtol=1e-10)
    assert onnx_function_names(model).count("betainc_float64") == 1


# Gradients: PyTensor builds d/da and d/db from ScalarLoop graphs
# (pytensor_onnx/dispatch/scalar_loop.py) around BetaInc; d/dx is the
# density. Points on both sides of the flip at x = a / (a + b), with small,
# moderate and large parameters.
_GA = np.array([0.5, 1.0, 2.0, 5.0, 0.2, 30.0, 1.5, 10.0, 3.0, 7.0, 0.05, 100.0, 250.0])
_GB = np.array([0.5, 3.0, 2.0, 0.7, 4.0, 10.0, 1.5, 200.0, 3.0, 0.9, 2.0, 80.0, 1.5])
_GX = np.array([0.1, 0.3, 0.5, 0.9, 0.05, 0.75, 0.99, 0.02, 0.6, 0.5, 0.4, 0.56, 0.995])


@pytest.mark.parametrize("wrt", [0, 1, 2])
def test_gradient(wrt):
    a, b, x = pt.dvector("a"), pt.dvector("b"), pt.dvector("x")
    out = pt.betainc(a, b, x)
    grad = pytensor.grad(out.sum(), [a, b, x][wrt])
    compare_onnx_and_py([a, b, x], [out, grad], [_GA, _GB, _GX], rtol=1e-9)
