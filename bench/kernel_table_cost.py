"""What the conservative kernel table costs on a newer ONNX Runtime, from one run.

The kernel table (src/core/kernels.cc) lists the dtypes the oldest supported
runtime runs, so exported models load everywhere. Where a newer runtime has
gained a kernel (e.g. int8 Max, int8 Where, int32 Trilu), the exporter still
casts to a wider dtype and back. This script times, on 1e6 elements, the
model the exporter writes against a one-node model that uses the kernel
directly (when the installed runtime has it), and prints the ratio.
"""

import sys
import timeit

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

from pytensor_onnx import _core

N = 1_000_000
REPEATS = 20

# (ONNX op, dtype, number of data inputs, extra attributes)
CASES = [
    ("Max", "int8", 2, {}),
    ("Min", "uint8", 2, {}),
    ("Where", "int8", 2, {}),
    ("BitShift", "uint16", 2, {"direction": "LEFT"}),
]

ONNX_TYPES = {"int8": TensorProto.INT8, "uint8": TensorProto.UINT8, "uint16": TensorProto.UINT16, "bool": TensorProto.BOOL}


def data(dtype, rng):
    info = np.iinfo(dtype)
    high = 4 if dtype == "uint16" else info.max
    return rng.integers(info.min, high, size=N, endpoint=True).astype(dtype)


def direct_model(op, dtype, n_inputs, attrs):
    names = ["a", "b"][:n_inputs]
    inputs = [helper.make_tensor_value_info(name, ONNX_TYPES[dtype], [N]) for name in names]
    node_inputs = list(names)
    if op == "Where":
        inputs.insert(0, helper.make_tensor_value_info("c", TensorProto.BOOL, [N]))
        node_inputs.insert(0, "c")
    graph = helper.make_graph(
        [helper.make_node(op, node_inputs, ["y"], **attrs)], "direct", inputs,
        [helper.make_tensor_value_info("y", ONNX_TYPES[dtype], [N])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8).SerializeToString()


def exported_model(op, dtype, n_inputs, attrs):
    g = _core.GraphBuilder(18)
    values = [g.input(name, dtype, [N]) for name in ["a", "b"][:n_inputs]]
    if op == "Where":
        values.insert(0, g.input("c", "bool", [N]))
    g.output(g.op(op, *values, **attrs), "y")
    return g.serialize(), g.node_types()


def feeds(op, dtype, n_inputs, rng):
    feed = {name: data(dtype, rng) for name in ["a", "b"][:n_inputs]}
    if op == "Where":
        feed["c"] = rng.random(N) < 0.5
    return feed


def per_call_ms(session, feed):
    session.run(None, feed)
    return min(timeit.repeat(lambda: session.run(None, feed), number=1, repeat=REPEATS)) * 1e3


def main() -> int:
    rng = np.random.default_rng(0)
    print(f"onnxruntime {ort.__version__}, {N:.0e} elements, best of {REPEATS}")
    print(f"{'op':<10} {'dtype':<7} {'exported (ms)':>14} {'direct kernel (ms)':>19} {'ratio':>6}  exported nodes")
    for op, dtype, n_inputs, attrs in CASES:
        feed = feeds(op, dtype, n_inputs, rng)
        model, node_types = exported_model(op, dtype, n_inputs, attrs)
        exported = per_call_ms(ort.InferenceSession(model, providers=["CPUExecutionProvider"]), feed)
        try:
            session = ort.InferenceSession(direct_model(op, dtype, n_inputs, attrs), providers=["CPUExecutionProvider"])
            direct = per_call_ms(session, feed)
            ratio = f"{exported / direct:6.2f}"
            direct_text = f"{direct:19.3f}"
        except Exception:  # the installed runtime lacks the kernel: the cast is the only way
            direct_text, ratio = f"{'no kernel':>19}", f"{'-':>6}"
        print(f"{op:<10} {dtype:<7} {exported:14.3f} {direct_text} {ratio}  {' '.join(node_types)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
