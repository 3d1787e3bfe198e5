"""Mode ONNX against the exported model in bare ONNX Runtime, in one process, interleaved.

bench/backends.py runs each backend in its own process, minutes apart, so on a loaded
machine its ONNX / bare-ORT ratios carry the load's drift. Here the candidates alternate
round by round in one process (best of all rounds):
  * mode ONNX (``pytensor.function(..., mode="ONNX")``),
  * the exported model (``export_onnx``) in a bare ``InferenceSession.run``,
  * the model mode ONNX converts with its shared variables fed as session inputs on every
    call (what mode ONNX did before baking them as initializers), when there are any.

    python bench/interleaved.py
"""

from __future__ import annotations

import os
import sys
import timeit

import onnxruntime as ort
import pytensor

import pytensor_onnx
from pytensor_onnx.linker import default_session_options

sys.path.insert(0, os.path.dirname(__file__))
from backends import chain, logistic_regression, machine, mlp  # noqa: E402

ROUNDS = 20


def session(model_bytes: bytes):
    return ort.InferenceSession(model_bytes, sess_options=default_session_options(), providers=["CPUExecutionProvider"])


def candidates(build):
    inputs, outputs, _, values = build()
    fn = pytensor.function(inputs, outputs, mode="ONNX")
    exported = session(pytensor_onnx.export_onnx(inputs, outputs).SerializeToString())
    feed = {i.name: v for i, v in zip(exported.get_inputs(), values, strict=True)}
    calls = {
        "mode ONNX": lambda: fn(*values),
        "exported model, bare ORT": lambda: exported.run(None, feed),
    }
    shared = [var.get_value(borrow=True) for var in fn.maker.fgraph.inputs[len(inputs):]]
    if shared:
        fed = session(fn.maker.linker.onnx_model_bytes)
        linker = fn.maker.linker
        fed_feed = linker.model_feed(dict(zip(linker._input_names, [*values, *shared], strict=True)))
        calls["weights fed as inputs"] = lambda: fed.run(None, fed_feed)
    return calls


def main() -> int:
    print(f"Machine: {machine()}\n")
    workloads = (
        ("MLP 784-256-256-10 f32, batch 1024", mlp),
        ("1e6-element f64 chain", chain),
        ("logistic regression logp+grad, 1e4 x 20 f64", logistic_regression),
    )
    for name, build in workloads:
        calls = candidates(build)
        best = dict.fromkeys(calls, float("inf"))
        for _ in range(ROUNDS):
            for label, call in calls.items():
                best[label] = min(best[label], timeit.timeit(call, number=3) / 3)
        reference = best["exported model, bare ORT"]
        print(name)
        for label, t in best.items():
            print(f"  {label:28s} {t * 1e3:8.2f} ms  {t / reference:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
