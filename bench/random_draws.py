"""Time of random draws in ONNX mode against PyTensor's C and Numba modes, from one run.

Each function draws with a shared RNG and its update (fresh numbers every call):
  * 1e6 normals (Box-Muller on the Squares counter-based generator)
  * 1e5 gammas with shape 0.5 (Marsaglia-Tsang rejection Loop plus the boost)
  * 1e5 poissons with rate 30 (3 inversion chunks of rate 10 in one Loop)
Ratios are per-call times over FAST_RUN's (the C VM; RVs run NumPy's generators, the
pure "C" linker cannot run them). The machine is shared
and noisy: numbers are provisional.
"""

import sys
import timeit

import numpy as np
import pytensor
import pytensor.tensor as pt

import pytensor_onnx  # noqa: F401
from pytensor_onnx.compat import random_draws

REPEATS = 5

CASES = {
    "normal 1e6": lambda rng: random_draws(pt.random.normal, 0.0, 1.0, size=(1_000_000,), rng=rng),
    "gamma(0.5) 1e5": lambda rng: random_draws(pt.random.gamma, 0.5, scale=1.0, size=(100_000,), rng=rng),
    "poisson(30) 1e5": lambda rng: random_draws(pt.random.poisson, 30.0, size=(100_000,), rng=rng),
}


def per_call_ms(fn, number) -> float:
    fn()  # warm up
    return min(timeit.repeat(fn, number=number, repeat=REPEATS)) / number * 1e3


def main() -> int:
    for name, make in CASES.items():
        rows = {}
        for mode in ("FAST_RUN", "ONNX", "NUMBA"):
            rng = pytensor.shared(np.random.default_rng(0))
            next_rng, draws = make(rng)
            try:
                fn = pytensor.function([], draws, updates={rng: next_rng}, mode=mode)
            except Exception as exc:  # mode not installed on this machine
                print(f"{mode} mode unavailable: {type(exc).__name__}", file=sys.stderr)
                continue
            rows[mode] = per_call_ms(fn, number=5)
        base = rows["FAST_RUN"]
        cells = ", ".join(f"{mode} {ms:.2f} ms ({ms / base:.2f}x)" for mode, ms in rows.items())
        print(f"{name}: {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
