"""PyMC log-density + gradient: every PyTensor backend, the exported model, Node and Chromium, from one run.

For three models of the suite (tests/python/pymc_models.py: a hierarchical model
with indexing, a Student-t regression with special functions, a Gaussian process
with a Cholesky) the joint log-density and its gradient are compiled the way PyMC
compiles them (``pm.pytensorf.compile``) in PyTensor's default mode (FAST_RUN, C),
Numba, JAX (where installed) and mode "ONNX", each in a child process (time to
first call, compile included, and per-call time). The model exported by
``pytensor_onnx.pymc.export_logp`` (flat point vector) then runs in Python's
ONNX Runtime, in onnxruntime-node, in onnxruntime-web's WebAssembly backend under
Node, and in headless Chromium (the deployment runners of deploy/, which need
``make deploy-deps``). Issue 12, item 5.

    python bench/pymc_logp.py                 # everything, a Markdown table on stdout
    python bench/pymc_logp.py --no-js         # Python backends only

Timings on a shared, loaded machine are noisy: read ratios, not absolute numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

from backends import _run_child, _time, machine, per_call_seconds

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))  # the model suite
sys.path.insert(0, str(REPO / "deploy"))  # the deployment runners' case format

MODELS = ("radon_hierarchical", "student_t_regression", "gaussian_process")
MODES = ("FAST_RUN", "NUMBA", "JAX", "ONNX", "bare ORT")
JS_RUNTIMES = {"node": "onnxruntime-node", "web": "onnxruntime-web (Node, wasm)", "chromium": "Chromium (wasm)"}
REPEATS = 50


def _quiet():
    import logging

    warnings.filterwarnings("ignore")
    logging.getLogger("pymc").setLevel(logging.ERROR)


def _model_and_point(name: str):
    from export_cases import pymc_point_vector
    from pymc_models import MODELS_BY_NAME

    model = MODELS_BY_NAME[name].build()
    point = pymc_point_vector(model, seed=3)
    names = [v.name for v in model.value_vars]
    return model, point, np.concatenate([np.ravel(point[n]) for n in names])


def measure(name: str, mode: str) -> dict:
    """Child process: time to first call and per-call time of one model in one mode."""
    import time

    import pymc as pm
    import pytensor

    import pytensor_onnx  # noqa: F401  (registers mode "ONNX")

    _quiet()
    if mode == "JAX":
        import jax  # noqa: F401  (raises ImportError when not installed)
    model, point, vector = _model_and_point(name)
    start = time.perf_counter()
    if mode == "bare ORT":
        import onnxruntime as ort

        from pytensor_onnx.linker import default_session_options
        from pytensor_onnx.pymc import export_logp

        exported = export_logp(model, flat=True)
        session = ort.InferenceSession(exported.SerializeToString(), sess_options=default_session_options(),
                                       providers=["CPUExecutionProvider"])
        feed = {session.get_inputs()[0].name: vector}

        def call():
            return session.run(None, feed)
    else:
        logp = model.logp()
        inputs = model.value_vars
        fn = pm.pytensorf.compile(inputs, [logp, *pytensor.grad(logp, inputs)], mode=mode)
        values = [np.asarray(point[v.name], dtype=v.dtype) for v in inputs]

        def call():
            return fn(*values)

    call()
    first = time.perf_counter() - start
    return {"per_call": per_call_seconds(call), "first_call": first}


def run_js(cases_dir: Path) -> dict[str, dict]:
    """{runtime: {case name: best ms}} from the deployment runners, or {runtime: {"error": ...}}."""
    results = {}
    env = {**os.environ, "DEPLOY_REPEATS": str(REPEATS)}
    for runtime in JS_RUNTIMES:
        out = cases_dir / f"{runtime}.json"
        if runtime == "chromium":
            cmd = ["node", str(REPO / "deploy" / "run_browser.mjs"), str(cases_dir), str(out)]
        else:
            cmd = ["node", str(REPO / "deploy" / "run_node.mjs"), str(cases_dir), runtime, str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
        if proc.returncode != 0:
            results[runtime] = {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1][:100]}
            continue
        ran = json.loads(out.read_text())["results"]
        results[runtime] = {case: r.get("bestMs", r.get("error")) for case, r in ran.items()}
    return results


def write_cases(cases_dir: Path) -> None:
    """The three models, exported with a flat point vector, as deployment cases (PyMC's numbers to check)."""
    from export_cases import PYMC_TOL, CaseWriter

    from pytensor_onnx.pymc import export_logp

    _quiet()
    writer = CaseWriter(cases_dir)
    for name in MODELS:
        model, point, vector = _model_and_point(name)
        expected = {"logp": np.asarray(model.compile_logp()(point)), "dlogp": np.asarray(model.compile_dlogp()(point))}
        writer.add(name, lambda path, m=model: export_logp(m, path, flat=True), {"point": vector}, expected,
                   {**PYMC_TOL, "float32_export": False}, group="bench")
    writer.write()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-js", action="store_true", help="skip Node and Chromium")
    parser.add_argument("--child", nargs=2, metavar=("MODEL", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(*args.child)))
        return 0

    print(f"Machine: {machine()}\n")
    js = {}
    if not args.no_js:
        with tempfile.TemporaryDirectory() as tmp:
            write_cases(Path(tmp))
            js = run_js(Path(tmp))
    columns = list(MODES) + [JS_RUNTIMES[r] for r in js]
    print("Log-density + gradient per call (best of 5 repeats in Python, of "
          f"{REPEATS} runs in JavaScript); ratio to the fastest of the row; first call includes compile.\n")
    print("| model | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for name in MODELS:
        results = {mode: _run_child(name, mode, script=__file__) for mode in MODES}
        times = {mode: r["per_call"] for mode, r in results.items() if "per_call" in r}
        for runtime, per_case in js.items():
            value = per_case.get(name, per_case.get("error", "not run"))
            if isinstance(value, (int, float)):
                times[JS_RUNTIMES[runtime]] = value / 1000
            else:
                results[JS_RUNTIMES[runtime]] = {"error": str(value)[:100]}
        fastest = min(times.values()) if times else 1.0
        cells = []
        for column in columns:
            if column in times:
                first = results.get(column, {}).get("first_call")
                cells.append(f"{_time(times[column])} **{times[column] / fastest:.2f}x**"
                             + (f"<br>first {_time(first)}" if first is not None else ""))
            else:
                cells.append(f"— ({results[column]['error']})")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
