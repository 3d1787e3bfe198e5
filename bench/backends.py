"""Mode ONNX against PyTensor's other backends on the workloads of issue 13, from one run.

For every workload and backend (PyTensor's C, Numba and JAX modes where installed,
mode "ONNX", and the exported model run by a bare ``InferenceSession.run``) a child
process builds the function, times its first call (compile included) and then its
per-call time (best of several repeats), and reports its peak memory. Each pair
runs in its own process so peak memory and compile caches do not leak between them.

    python bench/backends.py                  # everything, a Markdown table on stdout
    python bench/backends.py --only mlp       # workloads whose name contains "mlp"

Timings on a shared, loaded machine are noisy: read ratios, not absolute numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import time

BACKENDS = ("C", "NUMBA", "JAX", "ONNX", "bare ORT")


# -- workloads: each returns (inputs, outputs, updates, argument values) --------------------


def tiny():
    import numpy as np
    import pytensor.tensor as pt

    x = pt.vector("x", dtype="float64")
    return [x], [2 * x + 1], None, [np.arange(4.0)]


def chain():
    import numpy as np
    import pytensor.tensor as pt

    x = pt.vector("x", dtype="float64")
    y = pt.vector("y", dtype="float64")
    out = pt.exp(-x * x) * 3.0 + pt.sqrt(pt.abs(y)) - x / (1.0 + y * y)
    rng = np.random.default_rng(0)
    return [x, y], [out], None, [rng.standard_normal(1_000_000), rng.standard_normal(1_000_000)]


def _mlp_parameters(rng):
    import numpy as np
    import pytensor

    sizes = (784, 256, 256, 10)
    params = []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        W = (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype("float32")
        params += [pytensor.shared(W, name=f"W{i}"), pytensor.shared(np.zeros(n_out, "float32"), name=f"b{i}")]
    return params


def _mlp_logits(x, params):
    import pytensor.tensor as pt

    h = x
    for i in range(0, len(params), 2):
        h = pt.dot(h, params[i]) + params[i + 1]
        if i + 2 < len(params):
            h = pt.maximum(h, 0)
    return h


def mlp():
    import numpy as np
    import pytensor.tensor as pt
    from pytensor.tensor.special import softmax

    rng = np.random.default_rng(0)
    x = pt.matrix("x", dtype="float32")
    params = _mlp_parameters(rng)
    probs = softmax(_mlp_logits(x, params), axis=-1)
    return [x], [probs], None, [rng.standard_normal((1024, 784)).astype("float32")]


def mlp_training_step():
    import numpy as np
    import pytensor
    import pytensor.tensor as pt
    from pytensor.tensor.special import log_softmax

    rng = np.random.default_rng(0)
    x = pt.matrix("x", dtype="float32")
    labels = pt.vector("labels", dtype="int64")
    params = _mlp_parameters(rng)
    logp = log_softmax(_mlp_logits(x, params), axis=-1)
    loss = -pt.mean(logp[pt.arange(labels.shape[0]), labels])
    grads = pytensor.grad(loss, params)
    lr = np.float32(0.01)
    updates = {p: p - lr * g for p, g in zip(params, grads)}
    values = [rng.standard_normal((1024, 784)).astype("float32"), rng.integers(0, 10, 1024)]
    return [x, labels], [loss], updates, values


def logistic_regression():
    import numpy as np
    import pytensor
    import pytensor.tensor as pt

    rng = np.random.default_rng(0)
    X = pytensor.shared(rng.standard_normal((10_000, 20)), name="X")
    y = pytensor.shared(rng.integers(0, 2, 10_000).astype("float64"), name="y")
    w = pt.vector("w", dtype="float64")
    p = pt.sigmoid(pt.dot(X, w))
    logp = pt.sum(y * pt.log(p) + (1 - y) * pt.log(1 - p))
    return [w], [logp, pytensor.grad(logp, w)], None, [rng.standard_normal(20) * 0.1]


def pymc_logp_grad():
    import numpy as np
    import pymc as pm
    import pytensor

    rng = np.random.default_rng(0)
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 10)
        sigma = pm.HalfNormal("sigma", 5)
        pm.Normal("y", mu, sigma, observed=rng.normal(1.0, 2.0, 10_000))
    logp = model.logp()
    inputs = model.value_vars
    point = model.initial_point()
    values = [np.asarray(point[v.name], dtype=v.dtype) for v in inputs]
    return inputs, [logp, *pytensor.grad(logp, inputs)], None, values


WORKLOADS = {
    "tiny y = 2x+1, 4 elements f64": tiny,
    "1e6-element f64 elementwise chain": chain,
    "MLP 784-256-256-10 f32, batch 1024": mlp,
    "MLP training step (grad + SGD updates)": mlp_training_step,
    "logistic regression logp+grad, 1e4 x 20 f64": logistic_regression,
    "PyMC Normal model logp+grad, 1e4 observations": pymc_logp_grad,
}


# -- one (workload, backend) pair, in a child process -----------------------------------------


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def per_call_seconds(call) -> float:
    import timeit

    once = timeit.timeit(call, number=1)
    number = max(1, int(0.2 / max(once, 1e-7)))
    return min(timeit.repeat(call, number=number, repeat=5)) / number


def measure(workload: str, backend: str) -> dict:
    import pytensor

    import pytensor_onnx

    if backend == "JAX":
        import jax  # noqa: F401  (raises ImportError when not installed)
    baseline = _rss_mb()
    inputs, outputs, updates, values = WORKLOADS[workload]()
    start = time.perf_counter()
    if backend == "bare ORT":
        if updates:
            raise NotImplementedError("an exported model has no state to update")
        import onnxruntime as ort

        from pytensor_onnx.linker import default_session_options

        model = pytensor_onnx.export_onnx(inputs, outputs)
        session = ort.InferenceSession(
            model.SerializeToString(), sess_options=default_session_options(), providers=["CPUExecutionProvider"]
        )
        feed = {i.name: v for i, v in zip(session.get_inputs(), values, strict=True)}

        def call():
            return session.run(None, feed)
    else:
        fn = pytensor.function(inputs, outputs, updates=updates, mode=backend)

        def call():
            return fn(*values)

    call()
    first = time.perf_counter() - start
    per_call = per_call_seconds(call)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"per_call": per_call, "first_call": first, "peak_mb": peak - baseline}


# -- the parent: run every pair, print the table ----------------------------------------------


def _run_child(workload: str, backend: str, script: str = __file__) -> dict:
    """``script --child workload backend`` in a fresh process: its JSON result, or {"error": ...}."""
    cmd = [sys.executable, script, "--child", workload, backend]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        lines = proc.stderr.strip().splitlines() or ["no output"]
        # The exception line (a traceback's last line may be a bare class name).
        errors = [line for line in lines if re.match(r"\w+(Error|Exception)\b", line)]
        return {"error": (errors or lines)[-1][:100]}
    return json.loads(lines[-1])


def _time(seconds: float) -> str:
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def machine() -> str:
    import numpy
    import onnxruntime
    import pytensor

    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; Python {platform.python_version()}, "
        f"PyTensor {pytensor.__version__}, NumPy {numpy.__version__}, ONNX Runtime {onnxruntime.__version__}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run only workloads whose name contains this")
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "BACKEND"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(*args.child)))
        return 0

    print(f"Machine: {machine()}\n")
    print("Per call (best of 5 repeats), ratio to the fastest backend of the row; first call includes compile; "
          "peak memory is the child's peak RSS above its RSS after imports.\n")
    print("| workload | " + " | ".join(BACKENDS) + " |")
    print("|---|" + "---|" * len(BACKENDS))
    for workload in WORKLOADS:
        if args.only.lower() not in workload.lower():
            continue
        results = {backend: _run_child(workload, backend) for backend in BACKENDS}
        times = [r["per_call"] for r in results.values() if "per_call" in r]
        fastest = min(times) if times else 1.0
        cells = []
        for r in results.values():
            if "error" in r:
                cells.append(f"— ({r['error']})")
            else:
                cells.append(
                    f"{_time(r['per_call'])} **{r['per_call'] / fastest:.2f}x**<br>"
                    f"first {_time(r['first_call'])}, {r['peak_mb']:.0f} MB"
                )
        print(f"| {workload} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
