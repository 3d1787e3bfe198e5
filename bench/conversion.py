"""Conversion speed: how fast PyTensor graphs become ONNX models, from one run.

For deep element-wise chains (500 / 2,000 / 20,000 ops) and a wide graph of
about 50k nodes it times export_onnx end to end and each of its steps:

  setup        FunctionGraph over the outputs (PyTensor clones the graph)
  rewrites     PyTensor's graph rewrites (the ONNX rewrite set, export_onnx's)
  rules        onnx_funcify rules in Python, each building its nodes through
               the C++ GraphBuilder (the two interleave; not separable)
  passes       the C++ graph passes (GraphBuilder.optimize)
  serialize    the ModelProto bytes, and the onnx.ModelProto export_onnx returns

Then the time to first call of a ~1k-node function in mode ONNX, with the
same split plus ONNX Runtime's session creation. Nodes/s counts the PyTensor
nodes of the graph as built (before rewriting). Not a test: the numbers are
as noisy as the machine.

    python bench/conversion.py [--quick]   (--quick skips the 20,000-op chain)
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pytensor
import pytensor.tensor as pt

import pytensor_onnx
from pytensor_onnx.dispatch import fgraph_to_onnx
from pytensor_onnx.export import build_fgraph, rewrite_for_export

CHAINS = (500, 2000, 20000)
WIDE_BRANCHES = 8400


def deep_chain(n_ops: int):
    """``n_ops`` element-wise steps, each reading the previous one."""
    x = pt.vector("x")
    y = x
    for i in range(n_ops):
        y = (y * 1.0001 + 0.5) if i % 2 else pt.exp(-y)
    return [x], [y]


def wide_graph(n_branches: int):
    """``n_branches`` short independent branches of one input, summed pairwise."""
    x = pt.matrix("x")
    terms = [pt.tanh(x * float(i % 97 + 1) + float(i)) for i in range(n_branches)]
    while len(terms) > 1:
        terms = [a + b for a, b in zip(terms[::2], terms[1::2])] + terms[len(terms) - len(terms) % 2:]
    return [x], [terms[0].sum(axis=1)]


def n_nodes(outputs) -> int:
    return len(pytensor.graph.fg.FunctionGraph(outputs=outputs, clone=False).apply_nodes)


def timed_export(inputs, outputs) -> dict:
    """export_onnx's steps, each timed (the same calls export_onnx makes)."""
    times = {}
    t = time.perf_counter()
    fgraph, shared_values = build_fgraph(inputs, outputs)
    times["setup"] = time.perf_counter() - t
    t = time.perf_counter()
    rewrite_for_export(fgraph)
    times["rewrites"] = time.perf_counter() - t
    nodes_after = len(fgraph.apply_nodes)
    t = time.perf_counter()
    converted = fgraph_to_onnx(fgraph, shared_as_initializers=True, initializer_values=shared_values, optimize=False)
    times["rules"] = time.perf_counter() - t
    t = time.perf_counter()
    converted.builder.optimize()
    times["passes"] = time.perf_counter() - t
    t = time.perf_counter()
    import onnx

    data = converted.builder.serialize()
    onnx.load_from_string(data)
    times["serialize"] = time.perf_counter() - t
    times["_onnx_nodes"] = converted.builder.num_nodes
    times["_after"] = nodes_after
    times["_bytes"] = len(data)
    return times


STEPS = ("setup", "rewrites", "rules", "passes", "serialize")


def report_export(label: str, inputs, outputs) -> None:
    nodes = n_nodes(outputs)
    t = time.perf_counter()
    pytensor_onnx.export_onnx(inputs, outputs)
    total = time.perf_counter() - t
    steps = timed_export(inputs, outputs)
    split = "  ".join(f"{k} {steps[k]:6.3f}" for k in STEPS)
    print(
        f"{label:<22} {nodes:6d} nodes -> {steps['_after']:6d} after rewrites -> {steps['_onnx_nodes']:6d} ONNX | "
        f"export_onnx {total:7.3f} s = {nodes / total:8.0f} nodes/s | {split}",
        flush=True,
    )


def report_first_call() -> None:
    import onnxruntime as ort

    from pytensor_onnx.linker import default_session_options

    inputs, outputs = deep_chain(333)
    nodes = n_nodes(outputs)
    value = np.linspace(-1, 1, 8)
    t = time.perf_counter()
    fn = pytensor.function(inputs, outputs, mode="ONNX")
    fn(value)
    total = time.perf_counter() - t
    # The same steps, apart, on a fresh copy of the graph (the mode's own
    # session cache would otherwise answer the session creation).
    inputs, outputs = deep_chain(333)
    steps = timed_export(inputs, outputs)
    fgraph, _ = build_fgraph(inputs, outputs)
    rewrite_for_export(fgraph)
    data = fgraph_to_onnx(fgraph).builder.serialize()
    t = time.perf_counter()
    ort.InferenceSession(data, sess_options=default_session_options(), providers=["CPUExecutionProvider"])
    session = time.perf_counter() - t
    split = "  ".join(f"{k} {steps[k]:6.3f}" for k in STEPS[1:])
    print(
        f"time to first call, mode ONNX, {nodes}-node chain: {total:6.3f} s | {split}  session {session:6.3f} "
        f"(+ pytensor.function's own setup)",
        flush=True,
    )


def main(argv) -> int:
    quick = "--quick" in argv
    for n_ops in CHAINS[:2] if quick else CHAINS:
        report_export(f"chain of {n_ops} ops", *deep_chain(n_ops))
    report_export(f"wide, {WIDE_BRANCHES} branches", *wide_graph(WIDE_BRANCHES))
    report_first_call()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
