"""Export the models the NUTS tests and benchmark sample, and the jobs file run_nuts.mjs reads.

    python deploy/nuts/export_jobs.py --out DIR [--draws N --tune N --seed S] [MODEL ...]

For each model of the Python suite named (``tests/python/pymc_models.py``; default: the three the
tests sample) writes ``<name>.logp.onnx`` (``export_logp(flat=True)``) and ``<name>.det.onnx``
(``export_deterministics(flat=True)``: the constrained values and ``pm.Deterministic``\\ s), and
``jobs.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "python"))

#: The models the tests sample: non-centered eight schools, a logistic regression, a hierarchical model.
MODELS = ("eight_schools_noncentered", "logistic_regression", "radon_hierarchical")


def export_model(name: str, out: Path) -> dict:
    """Writes the two models of suite model ``name``; returns its job (without options)."""
    from pymc_models import MODELS_BY_NAME

    from pytensor_onnx.pymc import export_deterministics, export_logp

    model = MODELS_BY_NAME[name].build()
    export_logp(model, out / f"{name}.logp.onnx", flat=True, model_name=f"{name}_logp")
    job = {"name": name, "logp": f"{name}.logp.onnx"}
    try:
        export_deterministics(model, out / f"{name}.det.onnx", flat=True, model_name=f"{name}_det")
        job["deterministics"] = f"{name}.det.onnx"
    except ValueError:  # nothing transformed and no deterministics: the values are the draws
        pass
    return job


def write_jobs(out: Path, names=MODELS, overrides=None, **options) -> Path:
    """Exports the models ``names`` into ``out`` and writes their jobs, sampled with ``options``
    (those of nuts.mjs's sample()) updated by ``overrides[name]``."""
    out.mkdir(parents=True, exist_ok=True)
    overrides = overrides or {}
    jobs = [{**export_model(name, out), "options": {**options, **overrides.get(name, {})}} for name in names]
    path = out / "jobs.json"
    path.write_text(json.dumps({"jobs": jobs}, indent=1))
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("models", nargs="*", default=list(MODELS))
    args = parser.parse_args(argv)
    logging.getLogger("pymc").setLevel(logging.ERROR)
    path = write_jobs(args.out, args.models, draws=args.draws, tune=args.tune, chains=args.chains, seed=args.seed)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
