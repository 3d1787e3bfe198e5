"""Special and elementary functions (dispatch/scalar.py, dispatch/scalar_math.py, C++ recipes).

Each function runs against PyTensor's ``py`` linker (which calls SciPy or
NumPy) on a grid built from the function's own difficulties: cancellation
(tiny arguments of log1p/expm1/erf, the zeros of lgamma and digamma),
overflow and underflow edges, the branch switches of the recipes, poles,
integer and half-integer points, signed zeros, infinities and NaN. float64
must agree to 1e-12 relative (the recipes reach a few ulp), float32 to
1e-6. Every other dtype PyTensor accepts, opsets 13/18/newest, fused
(Composite) graphs and gradients are checked on smaller samples.
"""

from dataclasses import dataclass, field

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytensor.tensor.special
import pytensor.tensor.xlogx
import pytest
import scipy.special

from pytensor_onnx import compat, export_function_onnx, export_onnx, kernels
from pytensor_onnx.testing import compare_onnx_and_py

from helpers import ALL_DTYPES, onnx_function_names, run_model

RNG = np.random.default_rng(20261122)
INF, NAN = np.inf, np.nan


def signed(values):
    values = np.asarray(values, dtype=float)
    return np.concatenate([values, -values])


def log_uniform(lo, hi, n):
    """n values with log10 uniform in [lo, hi]."""
    return 10.0 ** RNG.uniform(lo, hi, n)


def around(points, scales=(1e-15, 1e-12, 1e-9, 1e-6, 1e-3)):
    """Points just off each of ``points`` on both sides."""
    points = np.asarray(points, dtype=float)
    offsets = np.asarray(scales, dtype=float)
    return np.concatenate([points[:, None] + offsets, points[:, None] - offsets]).ravel()


@dataclass
class Case:
    build: object  # tensors -> output
    grid: list  # one array per input (float64 values)
    arity: int = 1
    # (rtol, atol) in float64 where the grid has regions of inherent
    # cancellation shared with SciPy (see the per-case comments).
    atol: float = 0.0
    # Relative tolerance in float64 (the incomplete gamma family: 1e-10,
    # where SciPy's own error reaches ~1e-12).
    rtol: float = 1e-12
    # Values of the inputs used for the other dtypes (integers, float32).
    small: list = field(default_factory=lambda: [np.array([0.0, 0.5, 1.0, 2.0, 3.0, 7.0, 10.0, 100.0])])


def _unary(values):
    return [np.asarray(values, dtype=float)]


TINY = signed(log_uniform(-300, -1, 200))
MODERATE = RNG.uniform(-8, 8, 400)
HUGE = signed(log_uniform(1, 300, 100))
SPECIALS = [0.0, -0.0, INF, -INF, NAN]

CASES = {
    "log1p": Case(
        pt.log1p,
        _unary(np.concatenate([TINY, MODERATE, HUGE, -1 + log_uniform(-16, -1, 50), [-1.0, -2.0, 1e-17], SPECIALS])),
    ),
    "expm1": Case(
        pt.expm1,
        _unary(np.concatenate([TINY, MODERATE, RNG.uniform(-800, 720, 200), [709.7, 709.8, 710.0, -37.0], SPECIALS])),
    ),
    "softplus": Case(
        pt.softplus,
        _unary(np.concatenate([TINY, MODERATE, RNG.uniform(-800, 800, 200), around([-37.0, 18.0, 33.3]), SPECIALS])),
    ),
    "log1mexp": Case(
        pt.log1mexp,
        _unary(np.concatenate([-log_uniform(-300, 3, 300), around([-np.log(2)]), [1.0, -1e-320, -1000.0], SPECIALS])),
    ),
    "sinh": Case(pt.sinh, _unary(np.concatenate([TINY, MODERATE, signed(RNG.uniform(1, 712, 200)), SPECIALS]))),
    "cosh": Case(pt.cosh, _unary(np.concatenate([TINY, MODERATE, signed(RNG.uniform(1, 712, 200)), SPECIALS]))),
    "arcsinh": Case(pt.arcsinh, _unary(np.concatenate([TINY, MODERATE, HUGE, SPECIALS]))),
    "arccosh": Case(
        pt.arccosh,
        _unary(np.concatenate([1 + log_uniform(-16, 0, 100), log_uniform(0, 308, 200), [1.0, 2.0, 0.5, -1.0], SPECIALS])),
    ),
    "arctanh": Case(
        pt.arctanh,
        _unary(np.concatenate([TINY, RNG.uniform(-1, 1, 300), signed(1 - log_uniform(-16, -1, 100)),
                               [1.0, -1.0, 2.0, 0.5, -0.5], SPECIALS])),
    ),
    "arctan": Case(
        pt.arctan,
        _unary(np.concatenate([TINY, MODERATE, HUGE, signed(around([7 / 16, 11 / 16, 19 / 16, 39 / 16])), SPECIALS])),
    ),
    "arcsin": Case(
        pt.arcsin,
        _unary(np.concatenate([TINY, RNG.uniform(-1, 1, 300), signed(1 - log_uniform(-16, -1, 100)), [1.0, -1.0, 2.0],
                               SPECIALS])),
    ),
    "arccos": Case(
        pt.arccos,
        _unary(np.concatenate([TINY, RNG.uniform(-1, 1, 300), signed(1 - log_uniform(-16, -1, 100)), [1.0, -1.0, 2.0],
                               SPECIALS])),
    ),
    "tan": Case(
        pt.tan,
        _unary(np.concatenate([TINY, MODERATE, np.arange(-50, 51) * (np.pi / 2), RNG.uniform(-1e6, 1e6, 100),
                               HUGE, SPECIALS])),
    ),
    "erf": Case(
        pt.erf,
        _unary(np.concatenate([TINY, MODERATE, signed(around([0.5, 50.0])), signed(RNG.uniform(5, 30, 50)),
                               [1e300], SPECIALS])),
    ),
    "erfc": Case(
        pt.erfc,
        # Up to 26.5: beyond, erfc is subnormal (no relative accuracy to speak of).
        _unary(np.concatenate([TINY, MODERATE, signed(around([0.5])), RNG.uniform(-30, 26.5, 200), SPECIALS])),
    ),
    "erfcx": Case(
        pt.erfcx,
        _unary(np.concatenate([TINY, MODERATE, signed(around([0.5, 50.0])), RNG.uniform(-26, 60, 200),
                               log_uniform(1, 308, 100), [-26.6, -27.0], SPECIALS])),
    ),
    "erfinv": Case(
        pt.erfinv,
        _unary(np.concatenate([TINY, RNG.uniform(-1, 1, 400), signed(1 - log_uniform(-16, -1, 100)),
                               signed(around([0.5])), [1.0, -1.0, 1.5, -2.0], SPECIALS])),
        small=[np.array([0.0, 0.25, -0.5, 0.9, 1.0, -1.0, 0.999, 0.1])],
    ),
    "erfcinv": Case(
        pt.erfcinv,
        # Normal q only: SciPy loses accuracy on subnormal q (erfcinv(5e-324)
        # is inf there, 27.213 here); test_subnormal_erfcinv checks those.
        _unary(np.concatenate([log_uniform(-307, -1, 200), RNG.uniform(0, 2, 400), 2 - log_uniform(-16, -1, 100),
                               around([0.5, 1.5]), [0.0, 2.0, -1.0, 3.0, 1.0], SPECIALS])),
        small=[np.array([0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 0.001, 1.999])],
    ),
    "gammaln": Case(
        pt.gammaln,
        _unary(np.concatenate([log_uniform(-300, 305, 200), RNG.uniform(0, 10, 300), around([1.0, 2.0, 8.0]),
                               RNG.uniform(-30, 0, 300), np.arange(-5.5, 5), [0.0, -1.0, -2.0, -1e20, 3e305],
                               SPECIALS])),
        # Below 0 lgamma has zeros (-2.457, -2.747, -3.144, ...) that the
        # reflection formula reaches by cancellation, in SciPy as here.
        atol=1e-14,
    ),
    "gamma": Case(
        pt.gamma,
        _unary(np.concatenate([RNG.uniform(0, 171.6, 300), log_uniform(-300, 0, 100), RNG.uniform(-180, 0, 300),
                               np.arange(-5.5, 5), [171.6, 171.7, -1.0, -2.0, 1e300], SPECIALS])),
        # Below -170.5 Gamma is subnormal: SciPy flushes some of it to zero.
        atol=1e-300,
    ),
    "psi": Case(
        pt.psi,
        _unary(np.concatenate([log_uniform(-300, 300, 200), RNG.uniform(0, 10, 300), around([1.4616321449683623, 8.0]),
                               RNG.uniform(-30, 0, 300), np.arange(-5.5, 5), [-1.0, -2.0], SPECIALS])),
        # Near its negative zeros digamma too is a difference of O(1) terms.
        atol=1e-14,
    ),
    "tri_gamma": Case(
        pt.tri_gamma,
        _unary(np.concatenate([log_uniform(-150, 150, 200), RNG.uniform(0, 10, 300), around([1.0, 8.0]),
                               RNG.uniform(-30, 0, 300), np.arange(-5.5, 5), [-1.0, -2.0], SPECIALS])),
    ),
    "polygamma": Case(
        pt.polygamma,
        [np.repeat(np.arange(0, 7), 100).astype(float),
         np.tile(np.concatenate([RNG.uniform(0, 20, 60), log_uniform(-5, 5, 20), RNG.uniform(-20, 0, 20)]), 7)],
        arity=2,
        atol=1e-14,  # n = 0 is digamma, with its negative zeros
        small=[np.array([0, 1, 2, 3, 1, 2, 4, 1]), np.array([0.5, 1.0, 2.0, 3.0, 7.0, 10.0, 100.0, -0.5])],
    ),
    # SciPy's i0 and i1 overflow from 709.78 (exp(x) first); the recipes
    # stay finite up to 713.98 (test_bessel_near_overflow).
    "i0": Case(
        pt.i0,
        _unary(np.concatenate([TINY, MODERATE, signed(around([8.0])), signed(RNG.uniform(8, 709, 200)),
                               signed([714.0, 1e300]), SPECIALS])),
    ),
    "i1": Case(
        pt.i1,
        _unary(np.concatenate([TINY, MODERATE, signed(around([8.0])), signed(RNG.uniform(8, 709, 200)),
                               signed([714.0, 1e300]), SPECIALS])),
    ),
    # SciPy's ive (AMOS) gives NaN from |x| ~ 1.1e9 on; the recipe's values
    # there are checked against the asymptotic expansion in test_ive_huge.
    "ive_0": Case(lambda x: pt.ive(0, x), _unary(np.concatenate([TINY, MODERATE, signed(around([8.0])),
                                                                 signed(log_uniform(1, 9, 100)), SPECIALS]))),
    "ive_1": Case(lambda x: pt.ive(1, x), _unary(np.concatenate([TINY, MODERATE, signed(around([8.0])),
                                                                 signed(log_uniform(1, 9, 100)), SPECIALS]))),
    # SciPy's iv (AMOS, PyTensor 2.38's Iv) flushes I1(x) ~ x / 2 to 0 below
    # |x| ~ 1e-150: hence the absolute tolerance.
    "iv_1": Case(lambda x: pt.iv(1, x), _unary(np.concatenate([TINY, MODERATE, signed(RNG.uniform(8, 700, 100)),
                                                               SPECIALS])), atol=1e-150),
}


def _incomplete_gamma_grid():
    """(a, x) pairs from the difficulties of P and Q: both tails, the
    diagonal x ~ a where the series and the continued fraction converge
    slowest, the region boundaries of the recipe (x = 0.5, 1, 1.1, a, a + 1;
    a = 8 where the prefactor changes form), tiny a (Q = 1 - P cancels),
    tiny and huge x, and the special values."""
    pairs = [
        (log_uniform(-3, 5, 400), log_uniform(-3, 5.3, 400)),
        (a := log_uniform(0, 5, 200), a * (1 + RNG.uniform(-0.3, 0.3, 200))),
        (a := log_uniform(-1, 4, 60), a * (1 + RNG.choice([-1e-8, 0, 1e-8], 60))),
        (a := log_uniform(-1, 4, 60), a + 1),
        (log_uniform(-3, 0.5, 108), np.repeat(around([0.5, 1.0, 1.1], (1e-12, 1e-6, 1e-2)), 6)),
        (np.repeat(around([8.0], (1e-12, 1e-3)), 8), log_uniform(-1, 2, 32)),
        (log_uniform(-300, -3, 60), log_uniform(-5, 2, 60)),
        (RNG.uniform(0.01, 50, 60), log_uniform(-300, -3, 60)),
        (RNG.uniform(0.01, 50, 20), log_uniform(2, 300, 20)),
    ]
    special = np.array([0.0, 1.0, 2.5, INF, NAN, -1.0])
    a_special, x_special = np.meshgrid(special, special)
    pairs.append((a_special.ravel(), x_special.ravel()))
    return [np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])]


_GAMMAINC_GRID = _incomplete_gamma_grid()
_GAMMAINC_SMALL = [np.array([0.0, 0.5, 1.0, 2.0, 3.0, 7.0, 10.0, 100.0]), np.array([1.0, 0.5, 0.0, 3.0, 2.0, 1.0, 12.0, 90.0])]
for _name, _fn in [("gammainc", pt.gammainc), ("gammaincc", pt.gammaincc), ("gammau", pt.gammau),
                   ("gammal", pt.gammal)]:
    # SciPy flushes results below ~1e-300 to 0 (the recipes keep the
    # subnormals): hence the absolute tolerance.
    CASES[_name] = Case(_fn, _GAMMAINC_GRID, arity=2, rtol=1e-10, atol=1e-300, small=_GAMMAINC_SMALL)


if compat.NdtriExp is not None:  # PyTensor 3.x only
    # (Not -log(2) itself: SciPy gives 0 there, the exact value is 2.9e-17.)
    CASES["ndtri_exp"] = Case(
        pt.ndtri_exp,
        _unary(np.concatenate([-log_uniform(-300, 300, 300), RNG.uniform(-50, 0, 200), around([np.log(0.25), np.log(0.75)]),
                               [-729.0, -730.0, -1e308, 1.0, 0.0, -0.0, -INF, NAN]])),
        small=[np.array([-0.0, -0.5, -1.0, -2.0, -0.1, -7.0, -10.0, -100.0])],
    )


def _integer_inputs(name):
    return name == "polygamma"


def _graph(name, dtypes):
    case = CASES[name]
    inputs = [pt.tensor(f"x{i}", dtype=dtype, shape=(None,)) for i, dtype in enumerate(dtypes)]
    return inputs, case.build(*inputs)


def _float64_dtypes(name):
    case = CASES[name]
    return ["int64", "float64"] if _integer_inputs(name) else ["float64"] * case.arity


@pytest.mark.parametrize("name", sorted(CASES))
def test_float64_accuracy(name):
    case = CASES[name]
    dtypes = _float64_dtypes(name)
    inputs, out = _graph(name, dtypes)
    values = [np.asarray(v, dtype=d) for v, d in zip(case.grid, dtypes)]
    compare_onnx_and_py(inputs, out, values, rtol=case.rtol, atol=case.atol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_accuracy(name):
    case = CASES[name]
    dtypes = ["int32", "float32"] if _integer_inputs(name) else ["float32"] * case.arity
    inputs, out = _graph(name, dtypes)
    with np.errstate(over="ignore"):
        values = [np.asarray(v, dtype=d) for v, d in zip(case.grid, dtypes)]
    # Where float32 over- or underflows, SciPy's float32 loops and a float64
    # result rounded to float32 may differ by the last subnormal bits.
    compare_onnx_and_py(inputs, out, values, rtol=1e-6, atol=max(case.atol, 1e-37))


def _dtype_values(name, dtypes):
    case = CASES[name]
    values = []
    for v, dtype in zip(case.small, dtypes):
        if dtype == "bool":
            values.append(np.resize([False, True], v.shape))
        elif dtype.startswith("uint"):
            values.append(np.abs(v).astype(dtype))
        else:
            values.append(v.astype(dtype))
    return values


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_input_dtype(name, dtype):
    dtypes = [dtype if dtype != "bool" and not dtype.startswith("float") else "int8", dtype] if _integer_inputs(name) \
        else [dtype] * CASES[name].arity
    if _integer_inputs(name) and dtype.startswith("float"):
        dtypes[0] = "int64"
    try:
        inputs, out = _graph(name, dtypes)
    except TypeError as error:  # PyTensor rejects the dtype itself
        pytest.skip(f"PyTensor has no {name} for {dtypes}: {error}")
    rtol = 1e-6 if out.dtype != "float64" else 1e-12
    if name == "softplus" and dtype == "bool":
        rtol = 1e-3  # PyTensor's Python Softplus computes bools in float16 precision
    compare_onnx_and_py(inputs, out, _dtype_values(name, dtypes), rtol=rtol, atol=1e-14)


@pytest.mark.parametrize("opset", [13, 18, None])
@pytest.mark.parametrize("name", sorted(CASES))
def test_opsets(name, opset):
    dtypes = _float64_dtypes(name)
    inputs, out = _graph(name, dtypes)
    values = [np.asarray(v, dtype=d) for v, d in zip(CASES[name].small, dtypes)]
    compare_onnx_and_py(inputs, out, values, opset_version=opset, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["psi", "gammainc"])
def test_kernels_give_scipys_bits(name):
    # PyTensor's default mode (Numba) and its Python code evaluate psi and
    # gammainc with SciPy; the kernels call SciPy's functions (handed over
    # from scipy.special.cython_special), so mode ONNX gives those bits, where
    # Boost's differ in the last ones (13% of the psi grid, 56% of gammainc's).
    case = CASES[name]
    inputs, out = _graph(name, ["float64"] * case.arity)
    fn = pytensor.function(inputs, out, mode="ONNX")
    assert any(n.domain == kernels.DOMAIN for n in fn.maker.linker.onnx_model.graph.node)
    with np.errstate(all="ignore"):
        want = getattr(scipy.special, name)(*case.grid)
    np.testing.assert_array_equal(fn(*case.grid), want)


def test_shapes_zero_d_empty_and_broadcast():
    x = pt.dscalar("x")
    compare_onnx_and_py([x], [pt.gammaln(x), pt.erfc(x), pt.psi(x)], [np.float64(2.5)])
    v = pt.dvector("v")
    compare_onnx_and_py([v], [pt.gammaln(v), pt.softplus(v), pt.tan(v)], [np.zeros(0)])
    m = pt.dmatrix("m")
    compare_onnx_and_py([m, v], [pt.arctan2(m, v), pt.polygamma(2, m)], [RNG.uniform(-3, 3, (3, 4)),
                                                                          RNG.uniform(-3, 3, 4)])


def test_fused_composite_export():
    # FAST_RUN fuses the element-wise chain into one Composite; its inner
    # scalar ops use the same recipes.
    x = pt.dvector("x")
    y = pt.gammaln(x) * 2 + pt.erf(x) - pt.log1p(pt.exp(-x)) + pt.arcsinh(x) * pt.psi(x)
    fn = pytensor.function([x], y, mode="FAST_RUN")
    assert any(type(n.op.scalar_op).__name__ == "Composite" for n in fn.maker.fgraph.apply_nodes
               if hasattr(n.op, "scalar_op"))
    model = export_function_onnx(fn)
    values = RNG.uniform(0.1, 20, 50)
    want = (2 * scipy.special.gammaln(values) + scipy.special.erf(values) - np.log1p(np.exp(-values))
            + np.arcsinh(values) * scipy.special.psi(values))
    np.testing.assert_allclose(run_model(model, values)[0], want, rtol=1e-13)
    assert {"gammaln_float64", "erf_float64", "digamma_float64"} <= set(onnx_function_names(model))


def test_incomplete_gamma_in_a_fused_composite():
    a, x = pt.dvector("a"), pt.dvector("x")
    y = pt.log(pt.gammaincc(a, x)) * 2 + pt.gammainc(a + 1, x * 2)
    fn = pytensor.function([a, x], y, mode="FAST_RUN")
    assert any(type(n.op.scalar_op).__name__ == "Composite" for n in fn.maker.fgraph.apply_nodes
               if hasattr(n.op, "scalar_op"))
    model = export_function_onnx(fn)
    av, xv = RNG.uniform(0.1, 30, 50), RNG.uniform(0.01, 40, 50)
    want = 2 * np.log(scipy.special.gammaincc(av, xv)) + scipy.special.gammainc(av + 1, xv * 2)
    np.testing.assert_allclose(run_model(model, av, xv)[0], want, rtol=1e-10)
    assert {"gammainc_float64", "gammaincc_float64"} <= set(onnx_function_names(model))


def test_each_recipe_is_one_function_per_model():
    x, y = pt.dvector("x"), pt.dvector("y")
    outs = [pt.gammaln(x), pt.gammaln(y), pt.gammaln(x + y), pt.gammaln(pt.cast(x, "float32"))]
    model = export_onnx([x, y], outs)
    names = onnx_function_names(model)
    assert names.count("gammaln_float64") == 1
    # float32 is computed by the float64 function between two casts.
    assert "gammaln_float32" not in names
    calls = [n for n in model.graph.node if n.op_type == "gammaln_float64"]
    assert len(calls) == 4 and all(n.domain == "pytensor_onnx" for n in calls)
    inlined = export_onnx([x, y], outs, inline_functions=True)
    assert not inlined.functions and not any(n.domain == "pytensor_onnx" for n in inlined.graph.node)
    values = [RNG.uniform(0.1, 5, 7), RNG.uniform(0.1, 5, 7)]
    for got, want in zip(run_model(inlined, *values), run_model(model, *values), strict=True):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError, match="inline_functions must be a bool"):
        export_onnx([x, y], outs, inline_functions="yes")


# Gradients: PyTensor's gradient graphs of these ops are made of the same
# ops (psi -> tri_gamma -> polygamma, erf -> exp, ...).
GRADIENTS = {
    "log1p": (pt.log1p, RNG.uniform(-0.9, 5, 20)),
    "expm1": (pt.expm1, RNG.uniform(-5, 5, 20)),
    "softplus": (pt.softplus, RNG.uniform(-40, 40, 20)),
    "log1mexp": (pt.log1mexp, -RNG.uniform(0.01, 10, 20)),
    "tan": (pt.tan, RNG.uniform(-1.5, 1.5, 20)),
    "arcsin": (pt.arcsin, RNG.uniform(-0.99, 0.99, 20)),
    "arccos": (pt.arccos, RNG.uniform(-0.99, 0.99, 20)),
    "arctan": (pt.arctan, RNG.uniform(-9, 9, 20)),
    "sinh": (pt.sinh, RNG.uniform(-9, 9, 20)),
    "cosh": (pt.cosh, RNG.uniform(-9, 9, 20)),
    "arcsinh": (pt.arcsinh, RNG.uniform(-9, 9, 20)),
    "arccosh": (pt.arccosh, RNG.uniform(1.01, 9, 20)),
    "arctanh": (pt.arctanh, RNG.uniform(-0.99, 0.99, 20)),
    "erf": (pt.erf, RNG.uniform(-4, 4, 20)),
    "erfc": (pt.erfc, RNG.uniform(-4, 4, 20)),
    "erfcx": (pt.erfcx, RNG.uniform(-4, 30, 20)),
    "erfinv": (pt.erfinv, RNG.uniform(-0.99, 0.99, 20)),
    "erfcinv": (pt.erfcinv, RNG.uniform(0.01, 1.99, 20)),
    "gamma": (pt.gamma, RNG.uniform(0.1, 20, 20)),
    "i0": (pt.i0, RNG.uniform(-20, 20, 20)),
    "gammaln": (pt.gammaln, RNG.uniform(0.1, 50, 20)),
    "psi": (pt.psi, RNG.uniform(0.1, 50, 20)),
    "tri_gamma": (pt.tri_gamma, RNG.uniform(0.1, 50, 20)),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradient(name):
    fn, values = GRADIENTS[name]
    x = pt.dvector("x")
    grad = pytensor.grad(fn(x).sum(), x)
    compare_onnx_and_py([x], [fn(x), grad], [values], rtol=1e-11)


def test_arctan2_gradient_and_signed_zeros():
    y, x = pt.dvector("y"), pt.dvector("x")
    out = pt.arctan2(y, x)
    gy, gx = pytensor.grad(out.sum(), [y, x])
    zeros = np.array([0.0, -0.0, 0.0, -0.0, INF, -INF, INF, -INF, 1.0, -1.0, NAN, 0.0])
    others = np.array([0.0, 0.0, -0.0, -0.0, INF, INF, -INF, -INF, -0.0, -0.0, 1.0, NAN])
    fn, (result,) = compare_onnx_and_py([y, x], [out], [zeros, others])
    np.testing.assert_array_equal(np.signbit(result), np.signbit(np.arctan2(zeros, others)))
    compare_onnx_and_py([y, x], [gy, gx], [RNG.uniform(-3, 3, 9), RNG.uniform(-3, 3, 9)])


def test_polygamma_gradient():
    x = pt.dvector("x")
    out = pt.polygamma(2, x)
    compare_onnx_and_py([x], [pytensor.grad(out.sum(), x)], [RNG.uniform(0.1, 9, 20)], rtol=1e-11)


def test_error_functions_at_large_arguments():
    # Found by the differential fuzzer (erf of 5e10 from an int64): exp(-x^2)
    # was computed as exp(-hi^2) * exp(-(2 hi lo + lo^2)) of a split x, which
    # is 0 * inf = NaN for |x| above ~2e5 whenever the low part's term is a
    # large negative number; erf/erfc/erfcx gave NaN at half of such points.
    x = pt.dvector("x")
    big = np.logspace(0, 300, 6001)
    values = np.concatenate([big, -big, 5e10 + np.arange(200.0), [1e15, 2.18776162e05, 3.09029543e05]])
    fn = pytensor.function([x], [pt.erf(x), pt.erfc(x), pt.erfcx(x)], mode="ONNX")
    erf, erfc, erfcx = fn(values)
    np.testing.assert_allclose(erf, scipy.special.erf(values), rtol=1e-15, atol=0)
    np.testing.assert_allclose(erfc, scipy.special.erfc(values), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(erfcx, scipy.special.erfcx(values), rtol=1e-12, atol=0)


def test_subnormal_erfcinv():
    # Against mpmath: the root of log erfc(x) = log q for q below 2.2e-308.
    import mpmath

    mpmath.mp.dps = 40
    q = np.array([5e-324, 1e-320, 3.2e-316, 1e-310, 2e-308])
    want = [float(mpmath.findroot(lambda v: mpmath.log(mpmath.erfc(v)) - mpmath.log(mpmath.mpf(v_q)), 27))
            for v_q in q]
    x = pt.dvector("x")
    fn = pytensor.function([x], pt.erfcinv(x), mode="ONNX")
    np.testing.assert_allclose(fn(q), want, rtol=1e-15)


# x log x and x log y with 0 where x is 0: scalar ops XlogX/XlogY0 on
# PyTensor 2.38, graphs of special.xlogy on 3.x.
_XLOGY = getattr(pytensor.tensor.special, "xlogy", None) or pytensor.tensor.xlogx.xlogy0


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint8"])
def test_xlogx_and_xlogy0(dtype):
    x, y = pt.vector("x", dtype=dtype), pt.vector("y", dtype=dtype)
    if dtype.startswith("float"):
        xs = np.array([0.0, 0.0, 0.0, 1e-300, 0.5, 2.0, -1.0, 3.0, NAN, INF, 0.0], dtype=dtype)
        ys = np.array([0.0, NAN, INF, 1e-300, 0.3, 3.0, 2.0, -1.0, 1.0, 2.0, -1.0], dtype=dtype)
    else:
        xs, ys = np.array([0, 0, 1, 2, 7], dtype=dtype), np.array([0, 5, 0, 3, 9], dtype=dtype)
    rtol = 1e-12 if dtype in ("float64", "int64") else 1e-6
    compare_onnx_and_py([x, y], [pytensor.tensor.xlogx.xlogx(x), _XLOGY(x, y)], [xs, ys], rtol=rtol)
    gx = pytensor.grad(pytensor.tensor.xlogx.xlogx(x).sum(), x) if dtype.startswith("float") else None
    if gx is not None:
        compare_onnx_and_py([x], [gx], [RNG.uniform(0.1, 5, 10).astype(dtype)], rtol=rtol)


def test_ive_broadcasts_a_constant_order():
    x = pt.dvector("x")
    out = pt.ive(np.zeros((2, 1)), x)
    compare_onnx_and_py([x], [out], [RNG.uniform(-20, 20, 5)], rtol=1e-12)


def test_ive_huge():
    # sqrt(2 pi x) ive(v, x) = 1 - (4v^2 - 1) / (8x) + O(1/x^2).
    x = pt.dvector("x")
    values = np.array([2e9, 1e12, 1e20, 1e100, 1e300])
    fn = pytensor.function([x], [pt.ive(0, x), pt.ive(1, x)], mode="ONNX")
    got0, got1 = fn(values)
    scale = 1 / np.sqrt(2 * np.pi * values)
    np.testing.assert_allclose(got0, scale * (1 + 1 / (8 * values)), rtol=1e-14)
    np.testing.assert_allclose(got1, scale * (1 - 3 / (8 * values)), rtol=1e-14)


def test_bessel_near_overflow():
    import mpmath

    mpmath.mp.dps = 30
    x = pt.dvector("x")
    values = np.array([709.5, 711.0, 713.0, 713.9, -713.9])
    got0, got1 = pytensor.function([x], [pt.i0(x), pt.i1(x)], mode="ONNX")(values)
    np.testing.assert_allclose(got0, [float(mpmath.besseli(0, v)) for v in values], rtol=1e-13)
    np.testing.assert_allclose(got1, [float(mpmath.besseli(1, v)) for v in values], rtol=1e-13)
