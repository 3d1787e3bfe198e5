"""ONNX Runtime intra-op threads and spinning, measured on the workloads of bench/backends.py.

Every combination runs the same exported model in bare ``InferenceSession.run``; the
rounds are interleaved (one timing of each combination per round, best of all rounds)
so load from other processes hits every combination alike. The defaults of
``pytensor_onnx.linker.default_session_options`` were chosen from this table
(see docs/usage.md, "Execution mode").

    python bench/session_options.py
"""

from __future__ import annotations

import itertools
import os
import sys
import timeit

import onnxruntime as ort

import pytensor_onnx

sys.path.insert(0, os.path.dirname(__file__))
from backends import chain, logistic_regression, machine, mlp, tiny  # noqa: E402

ROUNDS = 9


def session(model_bytes: bytes, threads: int, spinning: bool):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    options.log_severity_level = 3
    return ort.InferenceSession(model_bytes, sess_options=options, providers=["CPUExecutionProvider"])


def main() -> int:
    print(f"Machine: {machine()}\n")
    combos = list(itertools.product((1, 2), (False, True)))
    print("| workload | " + " | ".join(f"{t} thread{'s' * (t > 1)}, spin {'on' if s else 'off'}" for t, s in combos) + " |")
    print("|---|" + "---|" * len(combos))
    for name, build in (("tiny 2x+1", tiny), ("1e6 f64 chain", chain), ("MLP f32 batch 1024", mlp),
                        ("logistic logp+grad", logistic_regression)):
        inputs, outputs, _, values = build()
        try:
            model = pytensor_onnx.export_onnx(inputs, outputs).SerializeToString()
        except NotImplementedError as exc:
            print(f"| {name} | " + " | ".join(["does not convert: " + str(exc).splitlines()[0][:60]] * len(combos)) + " |")
            continue
        calls = []
        for threads, spinning in combos:
            sess = session(model, threads, spinning)
            feed = {i.name: v for i, v in zip(sess.get_inputs(), values, strict=True)}
            sess.run(None, feed)
            once = timeit.timeit(lambda s=sess, f=feed: s.run(None, f), number=1)
            number = max(1, int(0.05 / max(once, 1e-7)))
            calls.append((sess, feed, number))
        best = [float("inf")] * len(combos)
        for _ in range(ROUNDS):
            for i, (sess, feed, number) in enumerate(calls):
                t = timeit.timeit(lambda s=sess, f=feed: s.run(None, f), number=number) / number
                best[i] = min(best[i], t)
        fastest = min(best)
        print(f"| {name} | " + " | ".join(f"{t * 1e3:.3g} ms ({t / fastest:.2f}x)" for t in best) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
