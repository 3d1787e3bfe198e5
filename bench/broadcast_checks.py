"""What the run-time broadcast checks cost (pytensor_onnx/dispatch/broadcast.py), one run.

The same functions are compiled twice in one process, with the checks (as
shipped) and without (``broadcast.ENABLED = False``, for measurement only),
and timed alternately: per-call time (best of 5 repeats, trust_input) and the
ratio with/without. Workloads: tiny graphs of two unknown-length inputs
(``x + y`` on 4-vectors, a 50-step element-wise chain), the same chain on
1e6-vectors, and the PyMC suite's log-density + gradient
(tests/python/pymc_models.py) in mode ONNX and in the portable form.

    python bench/broadcast_checks.py [--no-pymc]

Timings on a shared, loaded machine are noisy: read ratios, not absolute numbers.
"""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytensor
import pytensor.tensor as pt

from backends import _time, machine, per_call_seconds

import pytensor_onnx
from pytensor_onnx.dispatch import broadcast

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))  # the model suite

MODES = {"ONNX": pytensor_onnx.onnx_mode(kernels=True), "ONNX portable": pytensor_onnx.onnx_mode(kernels=False)}


def chain(x, y, steps=50):
    out = x
    for i in range(steps):
        out = pt.exp(-out) * y + i if i % 2 else out * 0.5 + y
    return out


def tiny_workloads():
    x, y = pt.vector("x"), pt.vector("y")
    small = [np.linspace(0, 1, 4), np.linspace(1, 2, 4)]
    large = [np.linspace(0, 1, 1_000_000), np.linspace(1, 2, 1_000_000)]
    yield "x + y, 4-vectors", [x, y], [x + y], small
    yield "50-step chain, 4-vectors", [x, y], [chain(x, y)], small
    yield "50-step chain, 1e6-vectors", [x, y], [chain(x, y)], large


def pymc_workloads():
    import logging

    from pymc_models import MODELS

    logging.getLogger("pymc").setLevel(logging.ERROR)
    for case in MODELS:
        model = case.build()
        inputs = model.value_vars
        logp = model.logp()
        rng = np.random.default_rng(0)
        point = model.initial_point()
        values = [
            np.asarray(point[v.name] + rng.normal(scale=0.1, size=np.shape(point[v.name])), dtype=v.dtype)
            for v in inputs
        ]
        yield case.name, inputs, [logp, *pt.grad(logp, inputs)], values


def compiled(inputs, outputs, mode, checks: bool):
    broadcast.ENABLED = checks
    try:
        fn = pytensor.function(inputs, outputs, mode=mode)
    finally:
        broadcast.ENABLED = True
    fn.trust_input = True
    return fn


def main() -> int:
    warnings.filterwarnings("ignore")
    print(f"Machine: {machine()}\n")
    print("| workload | mode | with checks | without | ratio | ONNX nodes (checks) |")
    print("|---|---|---|---|---|---|")
    ratios = []
    workloads = list(tiny_workloads())
    if "--no-pymc" not in sys.argv:
        workloads += list(pymc_workloads())
    for name, inputs, outputs, values in workloads:
        for label, mode in MODES.items():
            with_checks = compiled(inputs, outputs, mode, True)
            without = compiled(inputs, outputs, mode, False)
            for got, want in zip(with_checks(*values), without(*values)):
                np.testing.assert_array_equal(got, want)
            times = {True: [], False: []}
            for _ in range(3):  # alternate, so load changes hit both
                times[True].append(per_call_seconds(lambda: with_checks(*values)))
                times[False].append(per_call_seconds(lambda: without(*values)))
            best = {k: min(v) for k, v in times.items()}
            ratio = best[True] / best[False]
            ratios.append(ratio)
            nodes = [len(f.maker.linker.onnx_model.graph.node) for f in (with_checks, without)]
            print(f"| {name} | {label} | {_time(best[True])} | {_time(best[False])} | {ratio:.3f} | "
                  f"{nodes[0]} ({nodes[0] - nodes[1]:+d}) |")
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"\nwith / without checks: geometric mean {geo:.3f}, worst {max(ratios):.3f} over {len(ratios)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
