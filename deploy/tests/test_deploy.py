"""Exported models outside Python: onnxruntime-node, onnxruntime-web (WebAssembly) under
Node, and onnxruntime-web in headless Chromium (the example page), each compared with
PyTensor's numbers.

    make deploy-tests                      # installs node deps and chromium, then runs this
    .venv/bin/python -m pytest deploy/tests -q

``export_cases.py`` writes the models and PyTensor's results once per session; the
runners (``run_node.mjs``, ``run_browser.mjs``) only run them and report what they got;
this file judges. DEPLOY_CASES=all adds every unary element-wise op in five dtypes
(slow to export: minutes); the default is the models and one graph per dispatch module
(float64 and exported as float32).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

DEPLOY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(DEPLOY))

import export_cases  # noqa: E402
from support import node  # noqa: E402

DEFAULT_SELECTION = ["mlp", "pymc", "example", "op_module"]
RUNTIMES = ["node", "web", "chromium"]


@pytest.fixture(scope="session")
def cases_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cases")
    only = None if os.environ.get("DEPLOY_CASES") == "all" else DEFAULT_SELECTION
    assert export_cases.main(["--out", str(out), *(["--only", *only] if only else [])]) == 0
    return out


@pytest.fixture(scope="session")
def cases(cases_dir) -> dict:
    return {c["name"]: c for c in json.loads((cases_dir / "cases.json").read_text())["cases"]}


_RESULTS: dict[str, dict] = {}


def run(runtime: str, cases_dir: Path) -> dict:
    """The runner's report for one runtime (run once per session)."""
    if runtime not in _RESULTS:
        out = cases_dir / f"results-{runtime}.json"
        if runtime == "chromium":
            command = [node(), str(DEPLOY / "run_browser.mjs"), str(cases_dir), str(out)]
        else:
            command = [node(), str(DEPLOY / "run_node.mjs"), str(cases_dir), runtime, str(out)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
        if runtime == "chromium" and done.returncode == 3:
            pytest.fail(f"Chromium cannot start here (make deploy-tests installs it with apt): {done.stderr.strip()}")
        assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"
        _RESULTS[runtime] = json.loads(out.read_text())
    return _RESULTS[runtime]


def mismatch(case: dict, result: dict) -> str | None:
    """Why ``result`` is not PyTensor's answer for ``case`` (None when it is)."""
    if "error" in result:
        return f"raised: {result['error']}"
    if sorted(result["outputs"]) != sorted(case["expected"]):
        return f"outputs {sorted(result['outputs'])}, expected {sorted(case['expected'])}"
    for name, encoded in case["expected"].items():
        expected = export_cases.decode(encoded)
        got = result["outputs"][name]
        want_dtype = "float32" if case.get("float32_export") and expected.dtype == np.float64 else str(expected.dtype)
        if got["dtype"] != want_dtype:
            return f"{name}: dtype {got['dtype']}, expected {want_dtype}"
        if list(got["dims"]) != list(expected.shape):
            return f"{name}: shape {got['dims']}, expected {list(expected.shape)}"
        if case.get("random"):
            continue  # different generators: only the dtype and shape can agree
        actual = np.array([float(v) if isinstance(v, str) and expected.dtype.kind == "f" else v
                           for v in got["data"]]).astype(expected.dtype).reshape(expected.shape)
        if expected.dtype.kind in "fc":
            try:
                np.testing.assert_allclose(actual, expected, rtol=case["rtol"], atol=case["atol"], equal_nan=True)
            except AssertionError as exc:
                return f"{name}: {str(exc).strip().splitlines()[-3:]}"
        elif not np.array_equal(actual, expected):
            return f"{name}: {actual.ravel()[:8]} != {expected.ravel()[:8]}"
    return None


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_models_match_pytensor(runtime, cases, cases_dir):
    """Every exported case runs and gives PyTensor's numbers within the case's tolerance
    (float64 1e-12, PyMC logp/gradient 1e-10, float32 exports 2e-5 relative)."""
    results = run(runtime, cases_dir)["results"]
    assert sorted(results) == sorted(cases)
    # The models the issue names must be there (an export that started failing would drop them).
    assert {"mlp_float64", "mlp_float32_export", "pymc_logp_float64", "pymc_logp_float32",
            "pymc_logp_variables", "example_regression"} <= set(cases)
    wrong = {name: why for name, case in cases.items() if (why := mismatch(case, results[name])) is not None}
    assert not wrong, f"{len(wrong)} of {len(cases)} cases differ from PyTensor in {runtime}:\n" + "\n".join(
        f"  {name}: {why}" for name, why in sorted(wrong.items()))


def test_mismatch_detects_wrong_numbers(cases):
    """The comparison can fail: a perturbed, a wrong-dtype and a raising result are caught."""
    case = cases["pymc_logp_float64"]
    outputs = {k: dict(v) for k, v in case["expected"].items()}
    assert mismatch(case, {"outputs": outputs}) is None
    outputs["logp"] = {**outputs["logp"], "data": [outputs["logp"]["data"][0] * (1 + 1e-8)]}
    assert "logp" in mismatch(case, {"outputs": outputs})
    assert "dtype" in mismatch(cases["mlp_float32_export"], {"outputs": cases["mlp_float32_export"]["expected"]})
    assert "raised" in mismatch(case, {"error": "boom"})


def example_model_values(points, point):
    import model as example_model

    pm_model = example_model.build()
    pm_model.set_data("xy", np.asarray(points, dtype="float64").reshape(-1, 2))
    named = {"intercept": point[0], "slope": point[1], "sigma_log__": point[2]}
    return float(pm_model.compile_logp()(named)), np.asarray(pm_model.compile_dlogp()(named))


def test_example_page_in_chromium(cases_dir):
    """The example page loads its model in Chromium, draws the posterior, recomputes it
    when a point is added by a click, and its numbers are PyTensor's."""
    page = run("chromium", cases_dir)["page"]
    assert page["consoleErrors"] == []
    first, after = page["first"], page["afterClick"]
    assert first["updates"] >= 1 and len(after["points"]) == len(first["points"]) + 1
    assert after["mean"] != first["mean"]
    # The grid's log-densities: cell (i, j) is intercept -1.5 + 4 (i + .5) / 32, slope -2.5 + 6.5 (j + .5) / 32.
    grid = np.array(first["logps"]).reshape(32, 32)
    for i, j in [(0, 0), (13, 17), (31, 5)]:
        point = [-1.5 + 4 * (i + 0.5) / 32, -2.5 + 6.5 * (j + 0.5) / 32, np.log(first["sigma"])]
        logp, _ = example_model_values(first["points"], point)
        np.testing.assert_allclose(grid[i, j], logp, rtol=1e-10)
    logp, dlogp = example_model_values(after["points"], [0.3, 0.8, -0.5])
    np.testing.assert_allclose(page["probe"]["logp"], logp, rtol=1e-10)
    np.testing.assert_allclose(page["probe"]["dlogp"], dlogp, rtol=1e-10, atol=1e-12)
