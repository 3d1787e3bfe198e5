"""Gradients PyTensor builds with ScalarLoop: mode ONNX against PyTensor's C and Numba modes, one run.

The derivatives of the regularized incomplete gamma and beta functions in their
shape parameters (what a censored Gamma, Beta or Student-t likelihood's
gradient evaluates) are ScalarLoops: a series per element that runs until it
converges. Per size, the time per call of ``pytensor.function`` in each mode
and mode ONNX's ratio to the faster of C and Numba. Issue 21.

    python bench/scalar_loops.py                  # 30 and 10,000 elements
    python bench/scalar_loops.py --sizes 100000

Never used as a test: the machines are shared and noisy; the load average is
printed with the results.
"""

from __future__ import annotations

import argparse
import sys
import timeit

import numpy as np
import pytensor
import pytensor.tensor as pt

import pytensor_onnx  # noqa: F401  (registers mode "ONNX")

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from backends import _time, machine  # noqa: E402

PEERS = ("C", "NUMBA")


def gradients():
    """name -> (inputs, gradient): k and x of a model's range (shapes 0.5-20,
    arguments 0.1-30; the beta's third argument in (0, 1))."""
    k, x = pt.dvector("k"), pt.dvector("x")
    return {
        "d/dk gammainc(k, x)": ([k, x], pytensor.grad(pt.gammainc(k, x).sum(), k)),
        "d/dk log gammaincc(k, x)": ([k, x], pytensor.grad(pt.log(pt.gammaincc(k, x)).sum(), k)),
        "d/da betainc(a, b, z)": ([k, x], pytensor.grad(pt.betainc(k, k * 0.5 + 1.0, pt.sigmoid(x - 10.0)).sum(), k)),
    }


def per_call(fn, values) -> float:
    once = timeit.timeit(lambda: fn(*values), number=1)
    number = max(1, int(0.2 / max(once, 1e-7)))
    return min(timeit.repeat(lambda: fn(*values), number=number, repeat=5)) / number


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="30,10000")
    args = parser.parse_args()
    c_mode = "C" if "C" in pytensor.compile.mode.predefined_modes else "FAST_RUN"
    print(f"Machine: {machine()}\n")
    print("| gradient | elements | C | Numba | mode ONNX | ONNX ratio |")
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for size in (int(s) for s in args.sizes.split(",")):
        values = [rng.uniform(0.5, 20.0, size), rng.uniform(0.1, 30.0, size)]
        for name, (inputs, grad) in gradients().items():
            times = {}
            for label, mode in (("C", c_mode), ("NUMBA", "NUMBA"), ("ONNX", "ONNX")):
                try:
                    fn = pytensor.function(inputs, grad, mode=mode)
                    fn.trust_input = True
                    times[label] = per_call(fn, values)
                except Exception as exc:  # (a backend missing here)
                    times[label] = f"{type(exc).__name__}"
            peers = [t for p, t in times.items() if p in PEERS and isinstance(t, float)]
            ratio = f"{times['ONNX'] / min(peers):.2f}x" if peers and isinstance(times["ONNX"], float) else "-"
            cells = [_time(t) if isinstance(t, float) else t for t in times.values()]
            print(f"| {name} | {size} | " + " | ".join(cells) + f" | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
