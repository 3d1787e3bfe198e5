"""What the installed ONNX stack supports, found by asking it.

Below ``export``, ``linker`` and ``mode`` (imports nothing of theirs), so all
of them and the tests can use it.
"""

from __future__ import annotations

import functools

from pytensor_onnx import _core


def _probe_model(opset: int) -> bytes:
    """A one-node model (Add) at ``opset``, with the IR version that opset came with; built by onnx.helper only."""
    from onnx import TensorProto, helper

    ir_version = min(ir for _release, ir, ai_onnx, *_ in helper.VERSION_TABLE if ai_onnx >= opset)
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "a"], ["b"])],
        "opset_probe",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version)
    return model.SerializeToString()


@functools.cache
def newest_onnx_opset() -> int:
    """The newest default-domain opset the installed ``onnx`` package (its checker) knows."""
    import onnx.defs

    return int(onnx.defs.onnx_opset_version())


@functools.cache
def newest_runtime_opset() -> int:
    """The newest opset (up to what this exporter writes) the installed ONNX Runtime loads and runs."""
    import numpy as np
    import onnxruntime as ort

    newest_known = min(_core.MAX_KNOWN_OPSET, newest_onnx_opset())
    for opset in range(newest_known, _core.MIN_OPSET - 1, -1):
        try:
            session = ort.InferenceSession(_probe_model(opset), providers=["CPUExecutionProvider"])
            (out,) = session.run(None, {"a": np.ones(1, dtype="float32")})
        except Exception:  # ORT raises its own exception types for unknown opsets
            continue
        if out[0] == 2.0:
            return opset
    raise RuntimeError(
        f"ONNX Runtime {ort.__version__} loads no opset in {_core.MIN_OPSET}..{newest_known}; "
        "pytensor-onnx needs onnxruntime >= 1.21"
    )
