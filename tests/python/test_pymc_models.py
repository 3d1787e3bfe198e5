"""The PyMC model suite (pymc_models.py), end to end.

For each model: the exported log-density and gradient (per-variable and flat
inputs) match PyMC's default mode to 1e-10 at several random points, and
``pm.sample(..., compile_kwargs={"mode": "ONNX"})`` runs. A model whose graph
still holds Ops without rules is a strict xfail naming them (see
``ModelCase.awaits``).
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest

pm = pytest.importorskip("pymc")

import onnx  # noqa: E402

from helpers import run_model  # noqa: E402
from pymc_models import MODELS, MODELS_BY_NAME  # noqa: E402
from pytensor_onnx import kernels  # noqa: E402
from pytensor_onnx.linker import ONNXLinker  # noqa: E402
from pytensor_onnx.pymc import export_logp, read_layout, unsupported_ops  # noqa: E402
from pytensor_onnx.testing import PY_MODE  # noqa: E402

RTOL = ATOL = 1e-10
N_POINTS = 3


@pytest.fixture
def model(request):
    """The model of the test's ``case``, with the xfail of the Ops it still awaits."""
    case = request.getfixturevalue("case")
    built = case.build()
    missing = unsupported_ops(built)
    unexpected = sorted(set(missing) - set(case.awaits))
    if unexpected:
        pytest.fail(f"{case.name} needs Ops that have no ONNX rule and are not in its `awaits`: {unexpected}")
    if missing:
        request.applymarker(pytest.mark.xfail(
            raises=NotImplementedError, strict=True, reason=f"no ONNX rule yet for {', '.join(missing)}"
        ))
    return built


def random_points(model, n, seed):
    """Unconstrained points around the initial point (any real value is valid there)."""
    rng = np.random.default_rng(seed)
    start = model.initial_point(random_seed=seed)
    return [
        {v.name: np.asarray(start[v.name] + rng.normal(scale=0.7, size=np.shape(start[v.name])))
         for v in model.value_vars}
        for _ in range(n)
    ]


@pytest.mark.parametrize("case", MODELS, ids=[c.name for c in MODELS])
def test_logp_and_gradient_match_pymc(case, model, tmp_path):
    per_variable = export_logp(model, tmp_path / "variables.onnx")
    flat = export_logp(model, tmp_path / "flat.onnx", flat=True)
    for exported in (per_variable, flat):
        onnx.checker.check_model(exported, full_check=True)
    # The reference is PyTensor's Python implementations (SciPy): PyTensor
    # 2.38's C code for Psi is accurate to only ~4e-10 relative (measured),
    # which the Student-t gradient shows; 3.3's matches SciPy.
    logp_fn = model.compile_logp(mode=PY_MODE)
    dlogp_fn = model.compile_dlogp(mode=PY_MODE)
    layout = read_layout(flat)
    names = [v.name for v in model.value_vars]
    for point in random_points(model, N_POINTS, seed=5):
        want_logp = logp_fn(point)
        want_grad = dlogp_fn(point)  # flat, in model.value_vars order
        assert np.isfinite(want_logp)

        got = run_model(str(tmp_path / "variables.onnx"), *(point[name] for name in names))
        np.testing.assert_allclose(got[0], want_logp, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(np.concatenate([np.ravel(g) for g in got[1:]]), want_grad, rtol=RTOL, atol=ATOL)

        vector = np.zeros(layout["size"])
        for entry in layout["variables"]:
            vector[entry["offset"]: entry["offset"] + entry["size"]] = np.ravel(point[entry["name"]])
        got_logp, got_grad = run_model(str(tmp_path / "flat.onnx"), vector)
        np.testing.assert_allclose(got_logp, want_logp, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(got_grad, want_grad, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("case", [c for c in MODELS if c.sample], ids=[c.name for c in MODELS if c.sample])
def test_sample_in_onnx_mode(case, model, monkeypatch):
    converted = []
    original = ONNXLinker.fgraph_convert

    def spy(self, fgraph, *args, **kwargs):
        converted.append(len(fgraph.outputs))
        return original(self, fgraph, *args, **kwargs)

    monkeypatch.setattr(ONNXLinker, "fgraph_convert", spy)
    with model, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.getLogger("pymc").setLevel(logging.ERROR)
        trace = pm.sample(
            draws=20, tune=20, chains=1, cores=1, random_seed=1, progressbar=False,
            compile_kwargs={"mode": "ONNX"}, return_inferencedata=False, compute_convergence_checks=False,
        )
    assert converted, "pm.sample did not compile anything in mode ONNX"
    for rv in model.free_RVs:
        draws = trace.get_values(rv.name)
        assert len(draws) == 20
        assert np.all(np.isfinite(draws)), rv.name


def test_sample_in_onnx_mode_follows_the_default_mode():
    """Same seed, same trajectory: ONNX mode's logp and gradient steer NUTS as PyMC's own do."""
    model = MODELS_BY_NAME["radon_hierarchical"].build()
    draws = {}
    for mode in ("ONNX", None):
        with model, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            logging.getLogger("pymc").setLevel(logging.ERROR)
            trace = pm.sample(
                draws=15, tune=15, chains=1, cores=1, random_seed=3, progressbar=False,
                compile_kwargs={"mode": mode} if mode else None, return_inferencedata=False,
                compute_convergence_checks=False,
            )
        draws[mode] = np.concatenate([np.ravel(trace.get_values(rv.name)) for rv in model.free_RVs])
    np.testing.assert_allclose(draws["ONNX"], draws[None], rtol=1e-7, atol=1e-9)


def test_gaussian_process_factor_and_solves_are_stages_of_kernel_nodes():
    # The Cholesky factor of the kernel matrix and the solves by it are stages
    # of the Elemwise kernel nodes that run the element-wise work around them
    # (src/core/passes/merge_kernel_stages.h): ONNX Runtime pays per node and
    # per value handed between nodes. (On PyTensor 3 the log-density and
    # gradient is one node: bench/results.md.) The results: PyMC's.
    import pytensor.tensor as pt

    model = MODELS_BY_NAME["gaussian_process"].build()
    logp = model.logp()
    outputs = [logp, *pt.grad(logp, model.value_vars)]
    fn = pm.pytensorf.compile(model.value_vars, outputs, mode="ONNX")
    nodes = [n for n in fn.maker.linker.onnx_model.graph.node if n.domain == kernels.DOMAIN]
    assert {n.op_type for n in nodes} <= {"Elemwise_float64", "Elemwise_bool", "Check_int64"}, nodes
    stages = [stage for n in nodes if n.op_type.startswith("Elemwise_") for stage in kernels.elemwise_stages(n)]
    kinds = [stage.get("linalg") for stage in stages]
    # (PyMC 5's graph factors the kernel matrix twice: two fused programs make it.)
    assert kinds.count("Cholesky") >= 1 and kinds.count("SolveTriangular") == 4, kinds
    reference = pm.pytensorf.compile(model.value_vars, outputs, mode=PY_MODE)
    for point in random_points(model, N_POINTS, seed=7):
        values = [point[v.name] for v in model.value_vars]
        for got, want in zip(fn(*values), reference(*values), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
