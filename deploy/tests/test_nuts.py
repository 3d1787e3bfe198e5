"""The JavaScript NUTS sampler (deploy/nuts) against PyMC's own ``pm.sample``, in Node
(onnxruntime-node) and in headless Chromium (onnxruntime-web in Web Workers).

    make deploy-tests
    .venv/bin/python -m pytest deploy/tests/test_nuts.py -q

For the non-centered eight schools, a logistic regression and the hierarchical radon model of
the Python suite (``tests/python/pymc_models.py``), 4 chains in each runtime: every scalar's
posterior mean and standard deviation within 5 Monte-Carlo standard errors of PyMC's (the MCSEs
of both runs combined, by ArviZ), rank-normalized split R-hat <= 1.01, no divergence on the
non-centered model; the sampler's R-hat and bulk ESS equal ArviZ's on the same draws; a seed
gives the same draws; bad input is a clear error, never a hang. PyMC's runs are made once per
module and shared by the Node and Chromium tests.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

DEPLOY = Path(__file__).resolve().parents[1]
REPO = DEPLOY.parent
sys.path.insert(0, str(DEPLOY / "nuts"))
sys.path.insert(0, str(REPO / "tests" / "python"))

import export_jobs  # noqa: E402
from support import node  # noqa: E402

RUNTIMES = ["node", "chromium"]
#: Draws per chain: 4 x 800 after 500 warm-up iterations gives MCSEs of a few percent of a
#: standard deviation, while Chromium (onnxruntime-web, ~0.5 ms a gradient) stays within the CI budget.
#: With 500 draws the radon model's largest R-hat passed 1.01 on 2 seeds of 10 (1.0101, 1.0128);
#: with 800 it stayed below 1.007 on all 10, and mean and sd within 3.5 MCSE of PyMC's.
JS_OPTIONS = {"chains": 4, "tune": 500, "draws": 800, "seed": 20261125}
#: The non-centered eight schools has a divergence in about one run of 4 x 500 draws in five at the
#: default target acceptance 0.8 (eight seeds tried; as with Stan and PyMC, whose eight-schools examples
#: raise it): at 0.9 none or one in the runs tried, so "at most 0.5% divergent" holds on any seed.
OVERRIDES = {"eight_schools_noncentered": {"targetAccept": 0.9}}
PYMC_SAMPLE = {"chains": 4, "tune": 1000, "draws": 1000, "random_seed": 20261125}
MCSE_BOUND = 5.0


def run_jobs(jobs_path: Path, runtime: str, out_name: str | None = None) -> dict:
    out = jobs_path.parent / (out_name or f"out-{runtime}.json")
    command = [node(), str(DEPLOY / "nuts" / "run_nuts.mjs"), str(jobs_path), str(out), runtime]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    if runtime == "chromium" and done.returncode == 3:
        pytest.fail(f"Chromium cannot start here (make deploy-tests installs it with apt): {done.stderr.strip()}")
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def jobs(tmp_path_factory) -> Path:
    return export_jobs.write_jobs(tmp_path_factory.mktemp("nuts"), export_jobs.MODELS, OVERRIDES, **JS_OPTIONS)


_FITS: dict[str, dict] = {}


@pytest.fixture(scope="module")
def fits(jobs):
    def get(runtime):
        if runtime not in _FITS:
            _FITS[runtime] = run_jobs(jobs, runtime)
        return _FITS[runtime]

    return get


@pytest.fixture(scope="module")
def reference() -> dict:
    """PyMC's posterior of each model: {model: {variable: array (chain, draw, ...)}}."""
    import pymc as pm
    from pymc_models import MODELS_BY_NAME

    logging.getLogger("pymc").setLevel(logging.ERROR)
    out = {}
    for name in export_jobs.MODELS:
        with MODELS_BY_NAME[name].build():
            idata = pm.sample(**PYMC_SAMPLE, cores=1, progressbar=False, compute_convergence_checks=False)
        out[name] = {v: idata.posterior[v].values for v in idata.posterior.data_vars}
    return out


def draws_of(fit: dict) -> dict:
    return {name: np.asarray(v["data"], dtype=float).reshape(v["dims"]) for name, v in fit["posterior"].items()}


def scalars(array: np.ndarray):
    """(index, (chain, draw) array) of every scalar of a (chain, draw, ...) array."""
    flat = array.reshape(array.shape[0], array.shape[1], -1)
    for k in range(flat.shape[2]):
        yield np.unravel_index(k, array.shape[2:]) if array.ndim > 2 else (), flat[:, :, k]


def disagreements(js: dict, pymc: dict, bound: float = MCSE_BOUND) -> list[str]:
    """Scalars whose posterior mean or sd differ by more than ``bound`` combined MCSEs."""
    import arviz_stats as azs

    wrong = []
    for name, ref in pymc.items():
        if name not in js:
            wrong.append(f"{name}: not in the JavaScript draws ({sorted(js)})")
            continue
        if js[name].shape[2:] != ref.shape[2:]:
            wrong.append(f"{name}: shape {js[name].shape[2:]}, PyMC's {ref.shape[2:]}")
            continue
        for (index, a), (_, b) in zip(scalars(js[name]), scalars(ref), strict=True):
            for what, stat in (("mean", np.mean), ("sd", np.std)):
                mcse = np.hypot(float(azs.mcse(a, method=what)), float(azs.mcse(b, method=what)))
                diff = abs(stat(a) - stat(b))
                if not diff <= bound * mcse:
                    wrong.append(f"{name}{[int(i) for i in index]} {what}: {stat(a):.4f} vs PyMC {stat(b):.4f} "
                                 f"({diff / mcse:.1f} MCSE)")
    return wrong


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("model", export_jobs.MODELS)
def test_posterior_matches_pymc(runtime, model, fits, reference):
    fit = fits(runtime)[model]
    assert "error" not in fit, fit.get("error")
    js = draws_of(fit)
    for array in js.values():
        assert array.shape[:2] == (JS_OPTIONS["chains"], JS_OPTIONS["draws"])
    wrong = disagreements(js, reference[model])
    assert not wrong, f"{runtime}, {model}: differs from pm.sample:\n  " + "\n  ".join(wrong)
    worst = {name: max(d["rhat"]) for name, d in fit["diagnostics"].items()}
    assert max(worst.values()) <= 1.01, f"R-hat above 1.01: {worst}"
    if model == "eight_schools_noncentered":
        # Rare, not absent: a wrong gradient or log-density makes most
        # transitions diverge. (0 of 3,200 draws at this seed until the export
        # computed its float32 constants as FAST_RUN does, 1 of 3,200 since:
        # the trajectories follow the last bit of the log-density.)
        assert fit["stats"]["divergences"] <= 0.005 * JS_OPTIONS["chains"] * JS_OPTIONS["draws"]
    stats = fit["stats"]
    assert len(stats["stepSize"]) == 4 and all(s > 0 for s in stats["stepSize"])
    assert np.asarray(stats["treeDepth"]).shape == (4, JS_OPTIONS["draws"])
    assert 0.6 < np.mean(stats["acceptance"]) < 1


def test_disagreements_can_fail(reference):
    """The comparison catches a shifted posterior, a too-narrow one and a missing variable."""
    ref = reference["logistic_regression"]
    assert disagreements(ref, ref) == []
    shifted = {**ref, "intercept": ref["intercept"] + 0.1}
    assert any("intercept[] mean" in w for w in disagreements(shifted, ref))
    narrow = {**ref, "beta": ref["beta"] * 0.8 + 0.2 * ref["beta"].mean(axis=(0, 1))}
    assert any(w.startswith("beta[") and " sd:" in w for w in disagreements(narrow, ref))
    assert any("not in the JavaScript draws" in w for w in disagreements({"beta": ref["beta"]}, ref))


def test_diagnostics_equal_arviz(fits):
    """R-hat (rank-normalized split) and bulk ESS computed in JavaScript are ArviZ's on the same draws."""
    import arviz_stats as azs

    fit = fits("node")["radon_hierarchical"]
    for name, array in draws_of(fit).items():
        rhat = [float(azs.rhat(a, method="rank")) for _, a in scalars(array)]
        ess = [float(azs.ess(a, method="bulk")) for _, a in scalars(array)]
        np.testing.assert_allclose(fit["diagnostics"][name]["rhat"], rhat, rtol=1e-10, err_msg=name)
        np.testing.assert_allclose(fit["diagnostics"][name]["essBulk"], ess, rtol=1e-8, err_msg=name)


def _tiny_jobs(path: Path, seeds) -> Path:
    job = export_jobs.export_model("eight_schools_noncentered", path)
    jobs = [{**job, "name": f"seed{k}_{seed}", "options": {"chains": 2, "tune": 60, "draws": 40, "seed": seed}}
            for k, seed in enumerate(seeds)]
    (path / "jobs.json").write_text(json.dumps({"jobs": jobs}))
    return path / "jobs.json"


def test_same_seed_same_draws(tmp_path):
    fits = run_jobs(_tiny_jobs(tmp_path, [7, 7, 8]), "node")
    a, b, c = (draws_of(fits[k]) for k in ("seed0_7", "seed1_7", "seed2_8"))
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
        assert not np.array_equal(a[name], c[name])
    # Chains of one run start from different points and move differently.
    assert not np.array_equal(a["mu"][0], a["mu"][1])


# -------------------------------------------------------------------------------------------------
# Bad input: each a rejected promise whose message names the cause (in Node and in the page).

def _bad_jobs(path: Path) -> Path:
    import onnx
    import pymc as pm
    import pytensor.tensor as pt

    from pytensor_onnx import export_onnx
    from pytensor_onnx.pymc import LAYOUT_KEY, export_logp

    jobs = []
    point = pt.vector("point", shape=(3,))
    export_onnx([point], [-(point**2).sum(), -2 * point], path / "no_layout.onnx")
    jobs.append({"name": "no_layout", "logp": "no_layout.onnx"})

    with pm.Model() as model:
        pm.Normal("x", 0.0, 1.0, shape=3)
    proto = export_logp(model, flat=True)
    for prop in proto.metadata_props:
        if prop.key == LAYOUT_KEY:
            layout = json.loads(prop.value)
            layout["variables"][0].update(shape=[4], size=4)
            layout["size"] = 4
            prop.value = json.dumps(layout)
    onnx.save(proto, path / "mismatch.onnx")
    jobs.append({"name": "mismatch", "logp": "mismatch.onnx"})

    with pm.Model() as model:
        x = pm.Normal("x", 0.0, 1.0)
        pm.Potential("wall", pt.switch(x > 1.0, -np.inf, 0.0))
    export_logp(model, path / "wall.onnx", flat=True)
    jobs.append({"name": "infinite_start", "logp": "wall.onnx", "options": {"init": [2.0]}})

    with pm.Model() as model:
        x = pm.Normal("x", 0.0, 1.0)
        pm.Potential("pin", pt.switch(pt.eq(x, 0.5), 0.0, -np.inf))
    export_logp(model, path / "pin.onnx", flat=True)
    jobs.append({"name": "diverges", "logp": "pin.onnx", "options": {"init": [0.5]}})
    jobs.append({"name": "not_a_model", "logp": "jobs.json"})
    for job in jobs:
        job["options"] = {"chains": 2, "tune": 50, "draws": 20, **job.get("options", {})}
    (path / "jobs.json").write_text(json.dumps({"jobs": jobs}))
    return path / "jobs.json"


BAD_INPUT = {
    "no_layout": "has no 'pytensor_onnx.pymc.layout' metadata",
    "mismatch": "the layout does not match the model",
    "infinite_start": "the log-density is -Infinity at the starting point",
    "diverges": "the sampler diverges everywhere",
    "not_a_model": "not an ONNX model",
}


@pytest.fixture(scope="module")
def bad_jobs(tmp_path_factory) -> Path:
    return _bad_jobs(tmp_path_factory.mktemp("bad"))


@pytest.mark.parametrize("runtime", ["node", "web", "chromium"])
def test_bad_input_is_a_clear_error(runtime, bad_jobs):
    out = run_jobs(bad_jobs, runtime, f"bad-{runtime}.json")
    for name, message in BAD_INPUT.items():
        assert message in out[name].get("error", ""), f"{name}: {out[name]}"


# -------------------------------------------------------------------------------------------------
# The example page samples its regression (examples/web: the Sample button's code path).

EXAMPLE_OPTIONS = {"chains": 4, "tune": 500, "draws": 800, "seed": 11}


def test_example_page_samples(tmp_path):
    """The page samples in its workers (progress bar full, animation frames kept coming, trace
    plots drawn, an R-hat/ESS row per variable) and its draws are PyMC's posterior."""
    import pymc as pm

    sys.path.insert(0, str(REPO / "examples" / "web"))
    import model as example_model

    example_model.export()  # the page's models, as make example-web writes them
    jobs = tmp_path / "jobs.json"
    jobs.write_text(json.dumps({"jobs": [{"name": "example", "options": EXAMPLE_OPTIONS}]}))
    out = run_jobs(jobs, "example")["example"]
    assert "error" not in out, out["error"]
    assert out["pageErrors"] == []
    np.testing.assert_allclose(out["points"], example_model.initial_data())
    assert out["progress"] == 1 and out["ink"] and out["frames"] > 10
    assert [row.split("\t")[0] for row in out["table"]] == ["intercept", "slope", "sigma"]
    with example_model.build():
        idata = pm.sample(**PYMC_SAMPLE, cores=1, progressbar=False, compute_convergence_checks=False)
    reference = {v: idata.posterior[v].values for v in ("intercept", "slope", "sigma")}
    js = draws_of(out)
    assert js["sigma"].shape == (4, EXAMPLE_OPTIONS["draws"]) and (js["sigma"] > 0).all()
    wrong = disagreements(js, reference)
    assert not wrong, "the page's draws differ from pm.sample:\n  " + "\n  ".join(wrong)
    assert max(max(d["rhat"]) for d in out["diagnostics"].values()) <= 1.01


def test_sampler_units():
    """deploy/tests/nuts_unit.mjs (node --test): the generator, Stan's warm-up windows, NUTS on a
    badly scaled normal written in JavaScript (no ONNX Runtime), the divergence-streak guard, option
    checks, the metadata reader, normal quantiles."""
    done = subprocess.run([node(), "--test", str(DEPLOY / "tests" / "nuts_unit.mjs")], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout and "# pass 7" in done.stdout
