"""A Scan-heavy workload in ONNX mode against PyTensor's C and Numba modes (one run).

Workload: the log-likelihood of an AR(1) series of 1,000 steps and its gradient
with respect to (phi, sigma), written with Scan as a PyMC time-series model is
(a recurrence accumulating the log-density; its gradient is a reverse Scan with
mit-mot outputs). Also printed:

* the same workload at 100 and 10,000 steps, and the per-step cost (slope);
* the per-iteration cost of an ONNX Runtime Loop whose body does one scalar
  Add, run directly on an InferenceSession: the floor any Scan pays per step
  in ONNX Runtime, since a Loop runs its body graph node by node each step.

Numbers are from one run on a shared machine: treat them as provisional.
"""

from __future__ import annotations

import sys
import timeit

import numpy as np
import onnx
import onnxruntime as ort
import pytensor
import pytensor.tensor as pt
from onnx import TensorProto, helper
from pytensor.compile.mode import Mode

import pytensor_onnx  # noqa: F401  (registers mode ONNX)
from pytensor_onnx.linker import default_session_options

REPEATS = 5


def ar1_logp_and_grad():
    y = pt.vector("y")
    phi = pt.scalar("phi")
    sigma = pt.scalar("sigma")

    def step(yt, prev, total, phi, sigma):
        r = yt - phi * prev
        return total - 0.5 * (r / sigma) ** 2 - pt.log(sigma)

    terms = pytensor.scan(
        step,
        sequences=[y[1:], y[:-1]],
        outputs_info=[pt.constant(np.float64(0.0))],
        non_sequences=[phi, sigma],
        return_updates=False,
    )
    logp = terms[-1] - 0.5 * np.log(2 * np.pi) * (y.shape[0] - 1)
    return [y, phi, sigma], [logp, *pytensor.grad(logp, [phi, sigma])]


def series(n, rng):
    values = np.zeros(n + 1)
    for t in range(1, n + 1):
        values[t] = 0.7 * values[t - 1] + rng.normal() * 0.5
    return values


def per_call_ms(fn, args) -> float:
    fn(*args)  # warm up (and JIT for Numba)
    number = max(1, int(0.2 / max(timeit.timeit(lambda: fn(*args), number=1), 1e-6)))
    return min(timeit.repeat(lambda: fn(*args), number=number, repeat=REPEATS)) / number * 1e3


def bare_loop_us_per_step(steps: int) -> float:
    """Per-iteration time of an ORT Loop whose body is one scalar Add."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]), helper.make_node("Add", ["acc", "one"], ["acc_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc", TensorProto.DOUBLE, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.DOUBLE, [])],
    )
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "true", "zero"], ["total"], body=body)],
        "bare_loop",
        [helper.make_tensor_value_info("n", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("total", TensorProto.DOUBLE, [])],
        initializer=[helper.make_tensor("true", TensorProto.BOOL, [], [True]),
                     helper.make_tensor("zero", TensorProto.DOUBLE, [], [0.0]),
                     helper.make_tensor("one", TensorProto.DOUBLE, [], [1.0])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    session = ort.InferenceSession(model.SerializeToString(), default_session_options(),
                                   providers=["CPUExecutionProvider"])
    run = lambda n: session.run(None, {"n": np.array(n, dtype=np.int64)})  # noqa: E731
    return (per_call_ms(run, [steps]) - per_call_ms(run, [1])) * 1e3 / (steps - 1)


def main() -> int:
    rng = np.random.default_rng(0)
    inputs, outputs = ar1_logp_and_grad()
    # PyTensor's C backend runs Scan through the C VM ("cvm"); its mode "C"
    # (CLinker alone) has no Scan, and FAST_RUN is Numba on PyTensor 3.
    modes = {"ONNX": "ONNX", "C": Mode(linker="cvm", optimizer="fast_run"), "Numba": "NUMBA"}
    functions = {}
    for label, mode in modes.items():
        try:
            functions[label] = pytensor.function(inputs, outputs, mode=mode)
        except Exception as exc:  # a mode this machine lacks
            print(f"{label} mode unavailable: {type(exc).__name__}: {exc}", file=sys.stderr)

    print("AR(1) log-likelihood + gradient (Scan), ms per call; ratio = mode / ONNX")
    timings = {}
    for steps in (100, 1000, 10000):
        args = [series(steps, rng), np.float64(0.6), np.float64(0.4)]
        results = {label: fn(*args) for label, fn in functions.items()}
        for label, got in results.items():
            for a, b in zip(got, results["ONNX"]):
                np.testing.assert_allclose(a, b, rtol=1e-9, err_msg=f"{label} disagrees with ONNX at {steps} steps")
        timings[steps] = {label: per_call_ms(fn, args) for label, fn in functions.items()}
        row = "  ".join(
            f"{label} {ms:8.3f} ms ({ms / timings[steps]['ONNX']:.2f}x)" for label, ms in timings[steps].items()
        )
        print(f"  {steps:6d} steps: {row}")

    print("Per-step cost (slope between 1,000 and 10,000 steps), microseconds:")
    for label in functions:
        slope = (timings[10000][label] - timings[1000][label]) * 1e3 / 9000
        print(f"  {label:6s} {slope:7.3f} us/step")
    onnx_fn = functions["ONNX"]
    model = onnx_fn.maker.linker.onnx_model
    bodies = [attr.g for node in model.graph.node if node.op_type == "Loop" for attr in node.attribute]
    print(f"ONNX model: {len(model.graph.node)} outer nodes; Loop bodies with "
          f"{[len(body.node) for body in bodies]} nodes")
    print(f"Bare ORT Loop (body: one scalar Add): {bare_loop_us_per_step(10000):.3f} us/step -- the floor per step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
