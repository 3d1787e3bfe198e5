"""PyMC log-density + gradient of every model of the suite: mode ONNX against PyTensor's backends, one run.

For each model of ``tests/python/pymc_models.py`` the joint log-density and its
gradient are compiled as PyMC compiles them (``pm.pytensorf.compile``) in
PyTensor's C and Numba modes, in mode "ONNX" (the kernel library's nodes) and
in mode "ONNX" with ``kernels=False`` (the portable graph an export holds), all
in one process per model, and called at a perturbed initial point. The table
gives per-call times (best of 5 repeats), the ONNX modes' ratios to the fastest
PyTensor backend of the row, their node counts, and the geometric mean of the
ratios. Issue 21, item 6.

PyTensor's Numba backend compiles with LLVM's fast-math flags by default
(``numba__fastmath``: reassociated sums, reciprocals for divisions,
contractions, approximate functions), so its float64 results are not C's or
the py linker's bits, which mode ONNX keeps (NumPy's pairwise sums, IEEE
divisions). Column "NUMBA exact" is Numba with ``numba__fastmath=False``, for
that comparison; it is not one of the peers the ratios are taken against.

    python bench/pymc_suite.py                # every model
    python bench/pymc_suite.py --only eight   # models whose name contains "eight"

Timings on a shared, loaded machine are noisy: read ratios, not absolute numbers.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import warnings
from pathlib import Path

from backends import _time, machine, per_call_seconds

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))  # the model suite

PEERS = ("C", "NUMBA")
EXACT_PEERS = ("C", "NUMBA exact")  # (the backends whose float64 results are IEEE's, as mode ONNX's)
ONNX_MODES = ("ONNX", "ONNX portable")


def logp_and_gradient(name: str):
    """Model `name` of the suite, its value variables, [log-density, *gradients]
    and values at a perturbed initial point."""
    import logging

    import numpy as np
    import pytensor.tensor as pt

    from pymc_models import MODELS_BY_NAME

    warnings.filterwarnings("ignore")
    logging.getLogger("pymc").setLevel(logging.ERROR)
    model = MODELS_BY_NAME[name].build()
    inputs = model.value_vars
    logp = model.logp()
    outputs = [logp, *pt.grad(logp, inputs)]
    rng = np.random.default_rng(0)
    point = model.initial_point()
    values = [
        np.asarray(point[v.name] + rng.normal(scale=0.1, size=np.shape(point[v.name])), dtype=v.dtype) for v in inputs
    ]
    return model, inputs, outputs, values


def measure(name: str) -> dict:
    import numpy as np
    import pymc as pm
    import pytensor

    import pytensor_onnx

    model, inputs, outputs, values = logp_and_gradient(name)
    modes = {
        # PyTensor 2.38's FAST_RUN is its C backend; 3.x names it "C".
        "C": "C" if "C" in pytensor.compile.mode.predefined_modes else "FAST_RUN",
        "NUMBA": "NUMBA",
        "NUMBA exact": "NUMBA",
        "ONNX": pytensor_onnx.onnx_mode(kernels=True),
        "ONNX portable": pytensor_onnx.onnx_mode(kernels=False),
    }
    results = {}
    reference = None
    for label, mode in modes.items():
        try:
            with model, pytensor.config.change_flags(numba__fastmath=label != "NUMBA exact"):
                fn = pm.pytensorf.compile(inputs, outputs, mode=mode)
            fn.trust_input = True
            got = fn(*values)
        except Exception as exc:  # a backend missing here (Numba not installed, ...)
            results[label] = {"error": f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:80]}"}
            continue
        if reference is None:
            reference = got
        else:
            error = max(float(np.max(np.abs(g - r) / (1 + np.abs(r)))) for g, r in zip(got, reference))
            results.setdefault(label, {})["max_rel_diff"] = error
        entry = results.setdefault(label, {})
        entry["per_call"] = per_call_seconds(lambda: fn(*values))
        if label.startswith("ONNX"):
            entry["nodes"] = len(fn.maker.linker.onnx_model.graph.node)
        else:
            entry["nodes"] = len(fn.maker.fgraph.apply_nodes)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child)))
        return 0
    from pymc_models import MODELS

    print(f"Machine: {machine()}\n")
    print("Per call (best of 5 repeats, trust_input); ratio = mode ONNX / fastest of C and Numba; "
          "nodes: PyTensor apply nodes (C, Numba) or ONNX nodes.\n")
    columns = (*PEERS, "NUMBA exact", *ONNX_MODES)
    print("| model | " + " | ".join(columns) + " | ONNX ratio | portable ratio |")
    print("|---|" + "---|" * (len(columns) + 2))
    ratios = {mode: [] for mode in ONNX_MODES}
    exact_ratios = []  # mode ONNX against the fastest of EXACT_PEERS
    for case in MODELS:
        if args.only not in case.name:
            continue
        proc = subprocess.run([sys.executable, __file__, "--child", case.name], capture_output=True, text=True,
                              timeout=1800)
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            print(f"| {case.name} | failed: {(proc.stderr.strip().splitlines() or ['?'])[-1][:100]} |")
            continue
        results = json.loads(lines[-1])
        peers = [results[p]["per_call"] for p in PEERS if "per_call" in results.get(p, {})]
        fastest = min(peers) if peers else math.nan
        exact = [results[p]["per_call"] for p in EXACT_PEERS if "per_call" in results.get(p, {})]
        if exact and "per_call" in results.get("ONNX", {}):
            exact_ratios.append(results["ONNX"]["per_call"] / min(exact))
        cells = []
        for column in columns:
            r = results.get(column, {})
            cells.append(f"{_time(r['per_call'])} ({r['nodes']})" if "per_call" in r else r.get("error", "-"))
        row_ratios = []
        for mode in ONNX_MODES:
            r = results.get(mode, {})
            ratio = r["per_call"] / fastest if "per_call" in r else math.nan
            ratios[mode].append(ratio)
            row_ratios.append(f"{ratio:.2f}x")
        print(f"| {case.name} | " + " | ".join(cells) + " | " + " | ".join(row_ratios) + " |")
    for mode, values in ratios.items():
        finite = [v for v in values if math.isfinite(v)]
        if finite:
            geo = math.exp(sum(map(math.log, finite)) / len(finite))
            print(f"\n{mode}: geometric mean {geo:.2f}x, worst {max(finite):.2f}x over {len(finite)} models")
    if exact_ratios:
        geo = math.exp(sum(map(math.log, exact_ratios)) / len(exact_ratios))
        print(f"\nONNX against the fastest of C and NUMBA exact (IEEE float64, no fast-math): geometric mean "
              f"{geo:.2f}x, worst {max(exact_ratios):.2f}x over {len(exact_ratios)} models")
    return 0


if __name__ == "__main__":
    sys.exit(main())
