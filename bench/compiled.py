"""Compiled kernel programs against interpreted ones and PyTensor's backends, from one run.

Mode ONNX compiles the program of each element-wise and ScalarLoop kernel
node with llvmlite (``pytensor_onnx/compiled_kernels.py``); with
``PYTENSOR_ONNX_COMPILE_KERNELS=0`` the kernels interpret them. For every
workload this script times mode ONNX both ways and PyTensor's C and Numba
modes, each in its own process (the switch is read when functions are built),
and prints per-call times (best of 5 repeats) with the ratio to the fastest
PyTensor backend of the row.

    python bench/compiled.py                 # every workload, a Markdown table
    python bench/compiled.py --only normal   # workloads whose name contains "normal"

Timings on a shared, loaded machine are noisy: read ratios, not absolute numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import warnings

from backends import _time, machine, per_call_seconds

MODES = ("C", "NUMBA", "ONNX interpreted", "ONNX compiled")


def _normal(n):
    def build():
        import numpy as np
        import pymc as pm
        import pytensor

        obs = np.random.default_rng(0).normal(size=n)
        with pm.Model() as model:
            mu = pm.Normal("mu")
            sigma = pm.HalfNormal("sigma")
            pm.Normal("y", mu, sigma, observed=obs)
        logp = model.logp()
        point = model.initial_point()
        values = [np.asarray(point[v.name]) for v in model.value_vars]
        return model.value_vars, [logp, *pytensor.grad(logp, model.value_vars)], values

    return build


def _student_t(n):
    def build():
        import numpy as np
        import pymc as pm
        import pytensor

        obs = np.random.default_rng(1).standard_t(4, size=n)
        with pm.Model() as model:
            nu = pm.Gamma("nu", 2.0, 0.1)
            sigma = pm.HalfNormal("sigma")
            pm.StudentT("y", nu=nu, mu=0.0, sigma=sigma, observed=obs)
        logp = model.logp()
        point = model.initial_point()
        values = [np.asarray(point[v.name]) for v in model.value_vars]
        return model.value_vars, [logp, *pytensor.grad(logp, model.value_vars)], values

    return build


def _chain():
    import numpy as np
    import pytensor.tensor as pt

    x, y = pt.dvector("x"), pt.dvector("y")
    out = pt.exp(-x * x) * 3.0 + pt.sqrt(pt.abs(y)) - x / (1.0 + y * y)
    rng = np.random.default_rng(0)
    return [x, y], [out], [rng.standard_normal(1_000_000), rng.standard_normal(1_000_000)]


def _censored_gamma():
    import pytensor

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))
    import numpy as np
    from pymc_models import MODELS_BY_NAME

    model = MODELS_BY_NAME["censored_gamma_survival"].build()
    logp = model.logp()
    point = model.initial_point()
    values = [np.asarray(point[v.name]) for v in model.value_vars]
    return model.value_vars, [logp, *pytensor.grad(logp, model.value_vars)], values


def _gammaln():
    import numpy as np
    import pytensor.tensor as pt

    x = pt.dvector("x")
    return [x], [pt.gammaln(x)], [np.random.default_rng(2).uniform(0.1, 50, 100_000)]


WORKLOADS = {
    "PyMC Normal logp+grad, 1e2 observations": _normal(100),
    "PyMC Normal logp+grad, 1e4 observations": _normal(10_000),
    "PyMC Normal logp+grad, 1e6 observations": _normal(1_000_000),
    "PyMC StudentT logp+grad, 1e4 observations": _student_t(10_000),
    "censored Gamma survival logp+grad (ScalarLoop)": _censored_gamma,
    "1e6-element f64 elementwise chain": _chain,
    "gammaln, 1e5 elements (one special function)": _gammaln,
}


def measure(workload: str, mode_name: str) -> dict:
    import logging

    import numpy as np
    import pytensor

    import pytensor_onnx

    warnings.filterwarnings("ignore")
    logging.getLogger("pymc").setLevel(logging.ERROR)
    inputs, outputs, values = WORKLOADS[workload]()
    mode = {"C": "C" if "C" in pytensor.compile.mode.predefined_modes else "FAST_RUN", "NUMBA": "NUMBA"}.get(
        mode_name, pytensor_onnx.onnx_mode(kernels=True)
    )
    try:
        fn = pytensor.function(inputs, outputs, mode=mode, trust_input=True)
        got = fn(*values)
    except Exception as exc:  # a backend that cannot run it (no BLAS, ...)
        return {"error": f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:60]}"}
    checksum = float(sum(np.sum(np.asarray(g, dtype=float)) for g in got))
    return {"seconds": per_call_seconds(lambda: fn(*values)), "checksum": checksum}


def run_child(workload: str, mode_name: str) -> dict:
    env = dict(os.environ)
    env["PYTENSOR_ONNX_COMPILE_KERNELS"] = "0" if mode_name == "ONNX interpreted" else "1"
    proc = subprocess.run([sys.executable, __file__, "--child", workload, mode_name], capture_output=True, text=True,
                          env=env)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1][:80]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "MODE"))
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(*args.child)))
        return
    print(f"Machine: {machine()}\n")
    print("| workload | " + " | ".join(MODES) + " |")
    print("|---" * (len(MODES) + 1) + "|")
    for workload in WORKLOADS:
        if args.only.lower() not in workload.lower():
            continue
        results = {mode: run_child(workload, mode) for mode in MODES}
        peers = [results[m]["seconds"] for m in ("C", "NUMBA") if "seconds" in results[m]]
        fastest = min(peers) if peers else None
        cells = []
        for mode in MODES:
            r = results[mode]
            if "error" in r:
                cells.append(f"fails ({r['error']})")
            elif fastest:
                cells.append(f"{_time(r['seconds'])} ({r['seconds'] / fastest:.2f}x)")
            else:
                cells.append(_time(r["seconds"]))
        print(f"| {workload} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
