"""The Ops PyMC defines itself (pytensor_onnx.pymc's rules): each against the Op's own
perform (PyTensor's ``py`` linker), and the distributions that need them against PyMC."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pm = pytest.importorskip("pymc")

import onnx  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
from scipy import interpolate  # noqa: E402

from helpers import run_model  # noqa: E402
from pytensor_onnx.pymc import export_logp, unsupported_ops  # noqa: E402
from pytensor_onnx.testing import PY_MODE, compare_onnx_and_py  # noqa: E402

RTOL = ATOL = 1e-12


@pytest.mark.parametrize("name", ["i0e", "i1e"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_i0e_i1e_follow_scipy(name, dtype):
    from pymc.distributions import dist_math

    x = pt.vector("x", dtype=dtype)
    values = np.array([0.0, -0.0, 1e-300, 1e-8, 0.5, -0.5, 3.0, -7.5, 8.0, 30.0, -700.0, 1e5, np.inf, -np.inf, np.nan],
                      dtype=dtype)
    rtol = 1e-13 if dtype == "float64" else 1e-6
    compare_onnx_and_py([x], [getattr(dist_math, name)(x)], [values], rtol=rtol, atol=0)


def rice():
    with pm.Model() as model:
        nu = pm.HalfNormal("nu", 2.0)
        sigma = pm.HalfNormal("sigma", 1.0)
        pm.Rice("y", nu=nu, sigma=sigma, observed=np.array([0.2, 1.3, 2.9, 5.0]))
    return model


def von_mises():
    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, 1.0)
        kappa = pm.HalfNormal("kappa", 3.0)
        pm.VonMises("angle", mu=mu, kappa=kappa, shape=3)
        pm.VonMises("y", mu=mu, kappa=kappa, observed=np.array([0.1, -2.5, 3.0]))
    return model


def interpolated():
    x_points = np.linspace(-3.0, 3.0, 25)
    with pm.Model() as model:
        pm.Interpolated("x", x_points, np.exp(-0.5 * x_points**2) * (1.2 + np.sin(x_points)), shape=4)
    return model


def points(model, n=3, seed=1):
    rng = np.random.default_rng(seed)
    start = model.initial_point(random_seed=seed)
    return [{k: np.asarray(v + rng.normal(scale=0.8, size=np.shape(v))) for k, v in start.items()} for _ in range(n)]


@pytest.mark.parametrize("build", [rice, von_mises, interpolated], ids=["Rice", "VonMises", "Interpolated"])
def test_logp_and_gradient_match_pymc(build, tmp_path):
    model = build()
    assert unsupported_ops(model) == []
    path = tmp_path / "model.onnx"
    onnx.checker.check_model(export_logp(model, path), full_check=True)
    logp, dlogp = model.compile_logp(mode=PY_MODE), model.compile_dlogp(mode=PY_MODE)
    onnx_logp, onnx_dlogp = model.compile_logp(mode="ONNX"), model.compile_dlogp(mode="ONNX")
    names = [v.name for v in model.value_vars]
    for point in points(model):
        want_logp, want_grad = logp(point), dlogp(point)
        assert np.isfinite(want_logp)
        got = run_model(str(path), *(point[n] for n in names))
        np.testing.assert_allclose(got[0], want_logp, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(np.concatenate([np.ravel(g) for g in got[1:]]), want_grad, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(onnx_logp(point), want_logp, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(onnx_dlogp(point), want_grad, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("ext", ["extrapolate", "zeros", "const"])
def test_spline_wrapper_follows_the_scipy_spline(k, ext):
    from pymc.distributions.dist_math import SplineWrapper

    knots = np.array([-2.0, -1.2, -0.3, 0.0, 0.4, 1.1, 2.5])
    spline = interpolate.InterpolatedUnivariateSpline(knots, np.cos(knots) + knots**2, k=k, ext=ext)
    x = pt.vector("x")
    op = SplineWrapper(spline)
    values = np.concatenate([knots, [-3.0, -2.0000001, -0.7, 0.1, 0.39999, 2.5000001, 4.0]])
    compare_onnx_and_py([x], [op(x), pt.grad(op(x).sum(), x)], [values], rtol=1e-12, atol=1e-12)


def test_spline_wrapper_that_cannot_convert_is_refused():
    from pymc.distributions.dist_math import SplineWrapper

    spline = interpolate.InterpolatedUnivariateSpline([0.0, 1.0, 2.0], [1.0, 3.0, 2.0], k=1, ext="raise")
    x = pt.vector("x")
    with pytest.raises(NotImplementedError, match="ext='raise'"):
        compare_onnx_and_py([x], [SplineWrapper(spline)(x)], [np.array([0.5])])
    cubic = interpolate.CubicSpline([0.0, 1.0, 2.0], [1.0, 3.0, 2.0])
    with pytest.raises(NotImplementedError, match="SplineWrapper of a CubicSpline"):
        compare_onnx_and_py([x], [SplineWrapper(cubic)(x)], [np.array([0.5])])


def test_batched_diag():
    from pymc.math import BatchedDiag

    d = pt.matrix("d")
    values = np.array([[1.0, -2.0, np.inf], [0.5, np.nan, 3.0]])
    compare_onnx_and_py([d], [BatchedDiag()(d)], [values])
    compare_onnx_and_py([d], [BatchedDiag()(d)], [np.zeros((0, 2))])


def test_log_det_of_pymc5():
    import pymc.math

    if not hasattr(pymc.math, "LogDet"):
        pytest.skip("pymc.math.LogDet is PyMC 5's (PyMC 6 removed it)")
    x = pt.matrix("x")
    rng = np.random.default_rng(3)
    for value in (rng.normal(size=(4, 4)), np.diag([1e-3, 2.0, -5.0])):
        compare_onnx_and_py([x], [pymc.math.LogDet()(x)], [value], rtol=1e-12)


def test_pos_def_matrix_of_pymc5():
    from pymc.distributions import multivariate

    if not hasattr(multivariate, "PosDefMatrix"):
        pytest.skip("PosDefMatrix is PyMC 5's (PyMC 6 checks with a Cholesky)")
    x = pt.matrix("x")
    op = multivariate.PosDefMatrix()
    for value in (np.eye(3), np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([[1.0, 2.0], [2.0, 1.0]]),
                  np.array([[1.0, 9.0], [0.5, 1.0]]), np.array([[1.0, 0.5], [9.0, 1.0]]), -np.eye(2)):
        compare_onnx_and_py([x], [op(x)], [value])
    # SciPy raises ValueError on a NaN entry (PyMC lets it through); the conversion says False.
    fn, _ = compare_onnx_and_py([x], [op(x)], [np.eye(2)])
    assert not fn(np.array([[np.nan, 0.0], [0.0, 1.0]]))[0]


def test_polya_gamma_logp_without_gradient_is_named():
    """PolyaGamma's log-density calls the external ``polyagamma`` package (no gradient in PyMC either):
    its Op is listed as unsupported, by name, and the export says so."""
    with pm.Model() as model:
        pm.PolyaGamma("x", h=1.0, z=0.5)
    assert unsupported_ops(model, gradient=False) == ["_PolyaGammaLogDistFunc"]
    with pytest.raises(NotImplementedError, match="_PolyaGammaLogDistFunc"):
        export_logp(model, gradient=False)


def test_rules_register_when_pymc_is_imported_after_pytensor_onnx():
    """mode ONNX converts I0e in a fresh process that imports pytensor_onnx first and never
    imports pytensor_onnx.pymc."""
    code = (
        "import numpy as np, pytensor, pytensor.tensor as pt, pytensor_onnx\n"
        "from pymc.distributions.dist_math import i0e\n"
        "x = pt.vector('x')\n"
        "f = pytensor.function([x], i0e(x), mode='ONNX')\n"
        "print(float(f(np.array([1.0]))[0]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    from scipy.special import i0e

    np.testing.assert_allclose(float(out.stdout.split()[-1]), i0e(1.0), rtol=1e-14)


def _pymc_op_classes():
    """Every Op class the installed PyMC defines, by name."""
    import importlib
    import pkgutil

    from pytensor.graph.op import Op

    found = {}
    for info in pkgutil.walk_packages(pm.__path__, "pymc."):
        try:
            module = importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 - optional parts of PyMC (JAX samplers, ...)
            continue
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Op) and obj.__module__.startswith("pymc."):
                found[obj.__name__] = obj
    return found


def test_coverage_table_lists_every_op_pymc_defines():
    from pytensor.tensor.random.op import RandomVariable

    from pytensor_onnx import coverage
    from pytensor_onnx.dispatch.basic import onnx_funcify

    listed = {name: entry for entry in coverage.PYMC_OPS for name in entry.names}
    fallback = onnx_funcify.dispatch(object)
    for name, cls in _pymc_op_classes().items():
        has_rule = onnx_funcify.dispatch(cls) is not fallback
        if name in listed:
            entry = listed[name]
        elif name.startswith("Measurable") and name != "MeasurableXTensorFromTensor":
            entry = listed["Measurable*"]
        elif issubclass(cls, RandomVariable) or name.endswith("RV"):
            entry = listed["*RV"]
        else:
            pytest.fail(f"PyMC's Op {name} ({cls.__module__}) is not in pytensor_onnx.coverage.PYMC_OPS")
        draws = "*RV" in entry.names  # random variables: some convert (see the table), PyMC's own do not
        if entry.status in (coverage.CONVERTED, coverage.BASE_CLASS) and not draws:
            assert has_rule, f"{name} is listed as {entry.status!r} but has no rule"
            if entry.status == coverage.CONVERTED:
                assert cls in onnx_funcify.registry, f"{name}: a rule of its own, not a base class's"
        if entry.status == coverage.NOT_CONVERTED and not draws:
            assert not has_rule, f"{name} is listed as not converted but has a rule"
