"""GammaIncInv and GammaIncCInv (src/core/recipes/incomplete_gamma_inverse.cc).

The inverses in x of the regularized incomplete gamma functions, against
PyTensor's ``py`` linker (SciPy's gammaincinv/gammainccinv) to 1e-10 relative
in float64 (the issue's target for this family) and 1e-6 in float32. The grid
follows the difficulties of the inverse: targets y in both tails (down to
1e-300 and up to 1 - 1e-16, where the recipe solves for the complement),
tiny shapes a (condition number 1/a, roots underflowing to 0), huge a
(Wilson–Hilferty region, roots near a), the switch at y = 1/2, and SciPy's
special values. Above a ~ 3e5 SciPy itself drifts (7e-11 at a = 8e5, checked
with mpmath), so those points are checked against mpmath instead.
"""

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
FUNCTIONS = {"gammaincinv": pt.gammaincinv, "gammainccinv": pt.gammainccinv}


def log_uniform(lo, hi, n):
    return 10.0 ** RNG.uniform(lo, hi, n)


def _grid():
    a_values = np.array([1e-3, 0.01, 0.1, 0.5, 0.999, 1.0, 1.5, 2.0, 7.5, 10.0, 100.0, 1e3, 1e4, 1e5])
    y_values = np.array([1e-300, 1e-100, 1e-20, 1e-8, 0.01, 0.3, 0.5 - 2**-54, 0.5, 0.5 + 2**-53, 0.7, 0.99,
                         1 - 1e-8, 1 - 2**-52, 1 - 2**-53])
    a_mesh, y_mesh = np.meshgrid(a_values, y_values)
    pairs = [
        (a_mesh.ravel(), y_mesh.ravel()),
        (log_uniform(-3, 5, 150), log_uniform(-300, 0, 150)),
        (log_uniform(-3, 5, 150), 1 - log_uniform(-16, 0, 150)),
        (RNG.uniform(0.5, 50, 100), RNG.uniform(0, 1, 100)),
    ]
    # SciPy's special values: y = 0 and 1, a = 0 and inf, NaN, out of domain.
    # (Not a = 1e-300 with y outside [0, 1]: SciPy returns 0 there for one
    # side, NaN for the other; the recipe gives NaN for both.)
    a_special, y_special = np.meshgrid([0.0, 0.5, 1.0, INF, NAN, -1.0], [0.0, 1.0, 0.5, -0.1, 1.1, NAN])
    pairs.append((a_special.ravel(), y_special.ravel()))
    pairs.append((np.full(5, 1e-300), np.array([0.0, 1e-300, 0.3, 0.9, 1.0])))
    return [np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])]


GRID = _grid()
SMALL = [np.array([0.5, 1.0, 2.0, 3.0, 10.0, 0.1, 100.0, 1.0]), np.array([0.2, 0.5, 0.9, 1e-5, 0.99, 0.7, 0.4, 0.0])]


def _graph(name, dtype):
    a, y = pt.vector("a", dtype=dtype), pt.vector("y", dtype=dtype)
    return [a, y], FUNCTIONS[name](a, y)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_float64_accuracy(name):
    inputs, out = _graph(name, "float64")
    # Roots below 1e-300: SciPy flushes some subnormal roots to 0.
    compare_onnx_and_py(inputs, out, GRID, rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_float32_accuracy(name):
    inputs, out = _graph(name, "float32")
    values = [v.astype("float32") for v in GRID]
    compare_onnx_and_py(inputs, out, values, rtol=1e-6, atol=1e-37)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_tiny_shapes(name):
    # The condition number of the inverse is about 1/a: SciPy and the recipe
    # both lose accuracy like 1e-16 / a, hence the looser tolerance below a = 1e-3.
    a = log_uniform(-6, -3, 60)
    y = np.concatenate([log_uniform(-30, 0, 30), 1 - log_uniform(-16, 0, 30)])
    inputs, out = _graph(name, "float64")
    compare_onnx_and_py(inputs, out, [a, y], rtol=1e-9, atol=1e-300)


# (gammaincinv only: mpmath's gammainc does not converge for the
# gammainccinv roots at these shapes.)
@pytest.mark.parametrize("name", ["gammaincinv"])
def test_huge_shapes_against_mpmath(name):
    mpmath = pytest.importorskip("mpmath")
    a = np.array([8.1483047721e5, 6.5951556708e5])
    y = np.array([2.88333241996517e-08, 0.9999970150862554])
    inputs, out = _graph(name, "float64")
    got = pytensor.function(inputs, out, mode="ONNX")(a, y)
    with mpmath.workdps(40):
        for ai, yi, xi in zip(a, y, got):
            forward = mpmath.gammainc(ai, 0, xi, regularized=True)
            if name == "gammainccinv":
                forward = 1 - forward
            # The residual relative to the slope: the root's relative error.
            density = mpmath.exp((ai - 1) * mpmath.log(xi) - xi - mpmath.loggamma(ai))
            assert abs(float((forward - yi) / (density * xi))) < 1e-13, (ai, yi, xi)


# Both functions in one graph per case: each recipe holds 14 forward
# evaluations, so every model of them is large.
def _both(dtype):
    a, y = pt.vector("a", dtype=dtype), pt.vector("y", dtype=dtype)
    return [a, y], [pt.gammaincinv(a, y), pt.gammainccinv(a, y)]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_input_dtype(dtype):
    try:
        inputs, outs = _both(dtype)
    except TypeError as error:  # PyTensor rejects the dtype itself
        pytest.skip(f"PyTensor has no gammaincinv for {dtype}: {error}")
    if dtype == "bool":
        values = [np.array([True, True, False, True]), np.array([False, True, False, True])]
    elif dtype.startswith(("int", "uint")):
        values = [np.array([1, 2, 3, 0], dtype=dtype), np.array([0, 1, 1, 0], dtype=dtype)]
    else:
        values = [v.astype(dtype) for v in SMALL]
    rtol = 1e-12 if outs[0].dtype == "float64" else 1e-6
    # Mode ONNX builds the graph export_onnx builds; the exported models are
    # checked by every other test of this file, one function per model:
    # ONNX Runtime 1.21 takes ~25 s to load the function form of both.
    compare_onnx_and_py(inputs, outs, values, rtol=rtol, check_export=False)


@pytest.mark.parametrize("opset", [13, 18, None])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_opsets(name, opset):
    inputs, out = _graph(name, "float64")
    compare_onnx_and_py(inputs, out, SMALL, opset_version=opset, rtol=1e-12)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_zero_d_and_broadcast(name):
    a, y = pt.dscalar("a"), pt.dmatrix("y")
    out = FUNCTIONS[name](a, y)
    compare_onnx_and_py([a, y], out, [np.float64(2.5), RNG.uniform(0, 1, (3, 4))], rtol=1e-12)
    compare_onnx_and_py([a, y], out, [np.float64(2.5), np.zeros((0, 4))])


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_in_a_fused_composite(name):
    # PyMC's Gamma icdf: gammaincinv(alpha, q) / beta, fused by FAST_RUN.
    alpha, q = pt.dvector("alpha"), pt.dvector("q")
    # (One call: ONNX Runtime 1.21 takes ~45 s to load a model calling it twice.)
    y = FUNCTIONS[name](alpha + 1, q) / 2.5 + alpha * 2
    fn = pytensor.function([alpha, q], y, mode="FAST_RUN")
    assert any(type(n.op.scalar_op).__name__ == "Composite" for n in fn.maker.fgraph.apply_nodes
               if hasattr(n.op, "scalar_op"))
    model = export_function_onnx(fn)
    av, qv = RNG.uniform(0.1, 30, 40), RNG.uniform(0.001, 0.999, 40)
    reference = getattr(scipy.special, name)
    want = reference(av + 1, qv) / 2.5 + av * 2
    np.testing.assert_allclose(run_model(model, av, qv)[0], want, rtol=1e-10)
    assert f"{name}_float64" in onnx_function_names(model)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_gradient_in_y(name):
    # PyTensor defines the gradient in y only (in a it is not implemented).
    a, y = pt.dvector("a"), pt.dvector("y")
    out = FUNCTIONS[name](a, y)
    grad = pytensor.grad(out.sum(), y)
    compare_onnx_and_py([a, y], [out, grad], [RNG.uniform(0.2, 20, 20), RNG.uniform(0.01, 0.99, 20)], rtol=1e-10)
