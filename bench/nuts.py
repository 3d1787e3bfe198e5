"""NUTS outside Python against pm.sample: effective samples per second.

For the models the sampler's tests use (tests/python/pymc_models.py: non-centered eight
schools, a logistic regression, the hierarchical radon model), 4 chains of 1000 warm-up
iterations and 1000 draws each:

- the JavaScript sampler (deploy/nuts) in Node with onnxruntime-node (chains one after another
  in one thread) and in headless Chromium with onnxruntime-web (WebAssembly; 4 chains in
  ``navigator.hardwareConcurrency`` Web Workers);
- ``pm.sample`` (PyMC's own NUTS) with PyTensor's default mode (C) and with mode "ONNX"
  (``compile_kwargs={"mode": "ONNX"}``), ``cores=1`` and ``cores=2``.

Reports, per model and runtime, the wall time of the whole run (compilation or session
creation, warm-up and draws) and the smallest bulk ESS over the model's scalars divided by it.
Needs ``make deploy-deps``.

    python bench/nuts.py                  # Markdown table on stdout
    python bench/nuts.py --draws 500      # shorter
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from backends import machine

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "deploy" / "nuts"))
sys.path.insert(0, str(REPO / "tests" / "python"))

import export_jobs  # noqa: E402


def min_bulk_ess(posterior: dict) -> float:
    import arviz_stats as azs

    worst = np.inf
    for array in posterior.values():
        flat = array.reshape(array.shape[0], array.shape[1], -1)
        for k in range(flat.shape[2]):
            worst = min(worst, float(azs.ess(flat[:, :, k], method="bulk")))
    return worst


def js_runs(names, runtimes, **options) -> dict:
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        jobs = export_jobs.write_jobs(Path(tmp), names, **options)
        for runtime in runtimes:
            result_path = Path(tmp) / f"{runtime}.json"
            subprocess.run(["node", str(REPO / "deploy" / "nuts" / "run_nuts.mjs"), str(jobs), str(result_path),
                            runtime], check=True, capture_output=True, text=True)
            for name, fit in json.loads(result_path.read_text()).items():
                if "error" in fit:
                    raise RuntimeError(f"{runtime}, {name}: {fit['error']}")
                posterior = {v: np.asarray(d["data"]).reshape(d["dims"]) for v, d in fit["posterior"].items()}
                out[(name, runtime)] = (fit["seconds"], min_bulk_ess(posterior), fit["stats"]["divergences"])
    return out


def pymc_run(name, mode, cores, *, tune, draws, chains, seed):
    import pymc as pm
    from pymc_models import MODELS_BY_NAME

    with MODELS_BY_NAME[name].build():
        start = time.perf_counter()
        kwargs = {} if mode == "FAST_RUN" else {"compile_kwargs": {"mode": mode}}
        idata = pm.sample(tune=tune, draws=draws, chains=chains, cores=cores, random_seed=seed, progressbar=False,
                          compute_convergence_checks=False, **kwargs)
        seconds = time.perf_counter() - start
    posterior = {v: idata.posterior[v].values for v in idata.posterior.data_vars}
    return seconds, min_bulk_ess(posterior), int(idata.sample_stats["diverging"].sum())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("models", nargs="*", default=list(export_jobs.MODELS))
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    logging.getLogger("pymc").setLevel(logging.ERROR)
    import pytensor_onnx  # noqa: F401  (registers mode "ONNX")

    options = dict(tune=args.tune, draws=args.draws, chains=4, seed=args.seed)
    rows = js_runs(args.models, ["node", "chromium"], **options)
    for name in args.models:
        for mode in ("FAST_RUN", "ONNX"):
            for cores in (1, 2):
                rows[(name, f"pm.sample {mode}, cores={cores}")] = pymc_run(name, mode, cores, **options)
    print(f"Machine: {machine()}\n")
    print(f"4 chains x ({args.tune} warm-up + {args.draws} draws), seed {args.seed}; "
          "ESS = smallest bulk ESS over the model's scalars\n")
    print("| model | runtime | wall s | min bulk ESS | ESS/s | divergences |")
    print("|---|---|---|---|---|---|")
    for (name, runtime), (seconds, ess, divergences) in rows.items():
        print(f"| {name} | {runtime} | {seconds:.1f} | {ess:.0f} | {ess / seconds:.0f} | {divergences} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
