"""Conversion speed: PyTensor nodes converted to ONNX per second on a large generated graph.

Times fgraph_to_onnx (rules + C++ builder + passes) and serialization
separately, from one run; not a test.
"""

import sys
import time

import numpy as np
import pytensor.tensor as pt
from pytensor.graph.fg import FunctionGraph

import pytensor_onnx
from pytensor_onnx.dispatch import fgraph_to_onnx

N_LAYERS = 2000
CHAIN_OPS = 1000


def build_graph():
    rng = np.random.default_rng(0)
    x = pt.matrix("x")
    h = x
    for i in range(N_LAYERS):
        c = pt.constant(rng.normal(size=4))
        h = pt.maximum(h * c + float(i % 7), h / 3.0) - pt.exp(-h)
    return FunctionGraph([x], [h.sum(axis=1)], clone=False)


def main() -> int:
    fgraph = build_graph()
    n_nodes = len(fgraph.apply_nodes)
    t0 = time.perf_counter()
    converted = fgraph_to_onnx(fgraph, optimize=False)
    t1 = time.perf_counter()
    converted.builder.optimize()
    t2 = time.perf_counter()
    data = converted.builder.serialize()
    t3 = time.perf_counter()
    print(f"{n_nodes} PyTensor nodes -> {converted.builder.num_nodes} ONNX nodes, {len(data) / 1e6:.2f} MB")
    print(f"rules + builder : {t1 - t0:7.3f} s  ({n_nodes / (t1 - t0):10.0f} PyTensor nodes/s)")
    print(f"C++ passes      : {t2 - t1:7.3f} s")
    print(f"serialization   : {t3 - t2:7.3f} s")
    print(f"total           : {t3 - t0:7.3f} s  ({n_nodes / (t3 - t0):10.0f} PyTensor nodes/s)")

    # End to end, PyTensor's rewrites included (most of the time: they are
    # what export_onnx spends its time in on deep chains).
    x = pt.vector("x")
    y = x
    for i in range(CHAIN_OPS):
        y = (y * 1.0001 + 0.5) if i % 2 else pt.exp(-y)
    t0 = time.perf_counter()
    pytensor_onnx.export_onnx([x], [y])
    print(f"export_onnx of a {CHAIN_OPS}-op element-wise chain: {time.perf_counter() - t0:7.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
