"""Throughput of a 1e6-element elementwise chain: ONNX mode vs PyTensor's C mode.

Reports the time per call and the ratio from one run; never used as a test.
"""

import sys
import timeit

import numpy as np
import pytensor
import pytensor.tensor as pt

import pytensor_onnx  # noqa: F401

SIZE = 1_000_000
REPEATS = 5
NUMBER = 20


def per_call_ms(fn) -> float:
    fn()
    return min(timeit.repeat(fn, number=NUMBER, repeat=REPEATS)) / NUMBER * 1e3


def main() -> int:
    x = pt.vector("x", dtype="float64")
    y = pt.vector("y", dtype="float64")
    out = pt.exp(-x * x) * 3.0 + pt.sqrt(pt.abs(y)) - x / (1.0 + y * y)
    rng = np.random.default_rng(0)
    xv, yv = rng.standard_normal(SIZE), rng.standard_normal(SIZE)

    rows = {}
    for mode in ("ONNX", "C", "NUMBA"):
        try:
            fn = pytensor.function([x, y], out, mode=mode)
            fn(xv, yv)
        except Exception as exc:
            print(f"{mode} mode unavailable: {type(exc).__name__}", file=sys.stderr)
            continue
        rows[mode] = per_call_ms(lambda fn=fn: fn(xv, yv))
    base = rows["C"]
    print(f"exp(-x*x)*3 + sqrt(|y|) - x/(1+y*y) on {SIZE:,} float64 elements (best of {REPEATS})")
    print(f"{'mode':10s} {'ms/call':>10s} {'Melem/s':>10s} {'vs C':>8s}")
    for name, ms in rows.items():
        print(f"{name:10s} {ms:10.3f} {SIZE / ms / 1e3:10.1f} {ms / base:7.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
