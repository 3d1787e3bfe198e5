"""Special functions on 1e6 float64 elements: mode ONNX (kernels and portable graph) against PyTensor's C and Numba modes.

Issue 9's bench: per function, the time per call of ``pytensor.function`` in
each mode from one run, and each mode's ratio to the fastest of the row. The
arguments are drawn from the part of the domain a model uses (see ARGUMENTS);
where a function's cost depends on them (the Loop-based recipes run until
the slowest element converges) that is stated in docs/semantics.md.

    python bench/special.py                 # every function
    python bench/special.py --only gamma    # functions whose name contains "gamma"
    python bench/special.py --size 100000   # fewer elements

Never used as a test: the machines are shared and noisy; the load average is
printed with the results.
"""

from __future__ import annotations

import argparse
import sys
import timeit

import numpy as np
import pytensor
import pytensor.scalar.math as psm
import pytensor.tensor as pt

import pytensor_onnx  # noqa: F401  (registers mode "ONNX")

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from backends import machine  # noqa: E402

MODES = ("ONNX", "ONNX portable", "C", "NUMBA")


def _uniform(lo, hi):
    return lambda rng, n: rng.uniform(lo, hi, n)


def _log_uniform(lo, hi):
    return lambda rng, n: 10.0 ** rng.uniform(lo, hi, n)


# name -> (function of tensors, argument samplers). Domains: where a
# statistical model evaluates the function (log-densities and their
# gradients), not only easy points.
ARGUMENTS = {
    "tan": (pt.tan, [_uniform(-10, 10)]),
    "arcsin": (pt.arcsin, [_uniform(-1, 1)]),
    "arctan": (pt.arctan, [_uniform(-100, 100)]),
    "arctan2": (pt.arctan2, [_uniform(-10, 10), _uniform(-10, 10)]),
    "sinh": (pt.sinh, [_uniform(-20, 20)]),
    "arcsinh": (pt.arcsinh, [_uniform(-100, 100)]),
    "log1p": (pt.log1p, [_log_uniform(-10, 2)]),
    "expm1": (pt.expm1, [_uniform(-5, 5)]),
    "softplus": (pt.softplus, [_uniform(-40, 40)]),
    "log1mexp": (pt.log1mexp, [lambda rng, n: -(10.0 ** rng.uniform(-5, 2, n))]),
    "erf": (pt.erf, [_uniform(-5, 5)]),
    "erfc": (pt.erfc, [_uniform(-5, 25)]),
    "erfcx": (pt.erfcx, [_uniform(-5, 100)]),
    "erfinv": (pt.erfinv, [_uniform(-1, 1)]),
    "gamma": (pt.gamma, [_uniform(-20, 50)]),
    "gammaln": (pt.gammaln, [_log_uniform(-3, 3)]),
    "psi": (pt.psi, [_log_uniform(-3, 3)]),
    "tri_gamma": (pt.tri_gamma, [_log_uniform(-3, 3)]),
    "i0": (pt.i0, [_uniform(-50, 50)]),
    "i1": (pt.i1, [_uniform(-50, 50)]),
    "gammainc": (pt.gammainc, [_log_uniform(-1, 1), _log_uniform(-1, 1)]),
    "gammaincc": (pt.gammaincc, [_log_uniform(-1, 1), _log_uniform(-1, 1)]),
    "gammaincinv": (pt.gammaincinv, [_log_uniform(-1, 1), _uniform(0, 1)]),
    "betainc": (pt.betainc, [_log_uniform(-1, 1), _log_uniform(-1, 1), _uniform(0, 1)]),
    "owens_t": (pt.owens_t, [_uniform(-5, 5), _uniform(-5, 5)]),
}

# Ops that exist on some PyTensor lines only, or that converted later.
OPTIONAL = {
    "betaincinv": ("BetaIncInv", lambda: pt.betaincinv,
                   [_log_uniform(-1, 1), _log_uniform(-1, 1), _uniform(0, 1)]),
    "j0": ("J0", lambda: pt.j0, [_uniform(-50, 50)]),
    "j1": ("J1", lambda: pt.j1, [_uniform(-50, 50)]),
    "jv": ("Jv", lambda: pt.jv, [_uniform(0, 5), _uniform(0, 50)]),
    "ive": ("Ive", lambda: pt.ive, [_uniform(0, 5), _uniform(0, 50)]),
    "kve": ("Kve", lambda: pt.kve, [_uniform(0, 5), _log_uniform(-2, 2)]),
    "hyp2f1": ("Hyp2F1", lambda: pt.hyp2f1,
               [_uniform(0.5, 3), _uniform(0.5, 3), _uniform(3.5, 6), _uniform(-3, 0.9)]),
}


def functions() -> dict:
    table = dict(ARGUMENTS)
    for name, (op_name, fn, samplers) in OPTIONAL.items():
        if hasattr(psm, op_name):
            table[name] = (fn(), samplers)
    return table


def per_call_seconds(call) -> float:
    once = timeit.timeit(call, number=1)
    number = max(1, int(0.3 / max(once, 1e-7)))
    repeat = 5 if once < 1 else 2
    return min(timeit.repeat(call, number=number, repeat=repeat)) / number


def measure(fn, samplers, size: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    values = [sampler(rng, size) for sampler in samplers]
    inputs = [pt.vector(f"x{i}", dtype="float64") for i in range(len(samplers))]
    output = fn(*inputs)
    results = {}
    for mode in MODES:
        try:
            # mode ONNX with its kernel library, and the portable graph an export holds.
            chosen = pytensor_onnx.onnx_mode(kernels=False) if mode == "ONNX portable" else mode
            compiled = pytensor.function(inputs, output, mode=chosen)
            compiled(*values)
        except Exception as exc:  # a mode without this op (or without Numba) shows why
            results[mode] = f"{type(exc).__name__}"
            continue
        results[mode] = per_call_seconds(lambda compiled=compiled: compiled(*values))
    return results


def _cell(value, fastest) -> str:
    if isinstance(value, str):
        return f"fails ({value})"
    return f"{value * 1e3:.3g} ms ({value / fastest:.2f}x)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="functions whose name contains this")
    parser.add_argument("--size", type=int, default=1_000_000)
    args = parser.parse_args()

    print(f"Machine: {machine()}\n")
    print(f"Per call on {args.size:,} float64 elements (best of the repeats), ratio to the fastest mode of the row.\n")
    print("| function | " + " | ".join(MODES) + " |")
    print("|---|" + "---|" * len(MODES))
    for seed, (name, (fn, samplers)) in enumerate(functions().items()):
        if args.only not in name:
            continue
        results = measure(fn, samplers, args.size, seed)
        times = [v for v in results.values() if not isinstance(v, str)]
        fastest = min(times) if times else 1.0
        print(f"| {name} | " + " | ".join(_cell(results[m], fastest) for m in MODES) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
