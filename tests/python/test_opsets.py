"""One representative graph exports and runs at every opset from 13 to the newest ONNX Runtime loads."""

import numpy as np
import onnx
import onnxruntime as ort
import pytensor
import pytensor.tensor as pt
import pytest

from pytensor_onnx import _core, export_onnx
from pytensor_onnx.runtime import newest_onnx_opset, newest_runtime_opset
from pytensor_onnx.testing import compare_onnx_and_py

REQUIRED_OPSETS = (13, 15, 17, 18)


def all_opsets():
    return list(range(_core.MIN_OPSET, newest_runtime_opset() + 1))


def test_required_opsets_are_within_range():
    newest = newest_runtime_opset()
    assert _core.MIN_OPSET == 13
    assert all(op in all_opsets() for op in REQUIRED_OPSETS)
    assert newest >= 18, f"ONNX Runtime {ort.__version__} is too old for the default opset 18"


def representative_graph(dtype):
    x = pt.matrix("x", dtype=dtype)
    w = pt.matrix("w", dtype=dtype)
    b = pt.vector("b", dtype=dtype)
    hidden = pt.maximum(pt.dot(x, w) + b, 0)  # MatMul, Add, Max
    outputs = [
        pt.special.softmax(hidden, axis=-1),  # Softmax: one-axis semantics from 13
        pt.special.log_softmax(hidden, axis=0),
        hidden.max(axis=0),  # ReduceMax: axes attribute -> input at 18
        pt.log(pt.exp(x).sum(axis=1)),  # ReduceSum: axes input from 13
        pt.sqrt(pt.abs(x.T))[None, :, :],  # Transpose, Unsqueeze: axes input from 13
        pt.switch(x > 0, x, -x * 2),  # Greater, Where
        hidden.max(axis=1, keepdims=True).dimshuffle(0),  # Unsqueeze, then Squeeze of the static size-1 axis
    ]
    return [x, w, b], outputs


def representative_values(rng, dtype):
    return [
        rng.normal(size=(4, 3)).astype(dtype),
        rng.normal(size=(3, 5)).astype(dtype),
        rng.normal(size=5).astype(dtype),
    ]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("opset", [*REQUIRED_OPSETS, "newest"])
def test_representative_graph_runs_at_opset(rng, opset, dtype):
    opset = newest_runtime_opset() if opset == "newest" else opset
    inputs, outputs = representative_graph(dtype)
    fn, _ = compare_onnx_and_py(inputs, outputs, representative_values(rng, dtype), opset_version=opset)
    model = fn.maker.linker.onnx_model
    assert [(imp.domain, imp.version) for imp in model.opset_import if imp.domain in ("", "ai.onnx")] == [("", opset)]


@pytest.mark.parametrize("opset", range(_core.MIN_OPSET, _core.MAX_KNOWN_OPSET + 1))
def test_every_opset_exports_and_runs(rng, opset):
    if opset > newest_runtime_opset():
        # The model is still written (and checked where the installed onnx
        # knows the opset); only running it needs a newer runtime.
        inputs, outputs = representative_graph("float64")
        model = export_onnx(inputs, outputs, opset_version=opset)
        if opset <= newest_onnx_opset():
            onnx.checker.check_model(model, full_check=True)
        assert model.opset_import[0].version == opset
        return
    inputs, outputs = representative_graph("float64")
    compare_onnx_and_py(inputs, outputs, representative_values(rng, "float64"), opset_version=opset)


def test_default_opset_is_18(rng):
    inputs, outputs = representative_graph("float64")
    assert export_onnx(inputs, outputs).opset_import[0].version == 18
    fn = pytensor.function(inputs, outputs, mode="ONNX")
    assert fn.maker.linker.onnx_model.opset_import[0].version == 18


def test_reduce_axes_form_follows_opset():
    # The builder writes ReduceMax's axes as an attribute before 18 and as an input from 18.
    x = pt.matrix("x")
    for opset, axes_as_input in [(17, False), (18, True)]:
        model = export_onnx([x], [x.max(axis=0)], opset_version=opset)
        reduce_max_nodes = [n for n in model.graph.node if n.op_type == "ReduceMax"]
        assert reduce_max_nodes, opset
        for node in reduce_max_nodes:
            assert (len(node.input) == 2) == axes_as_input, opset
            assert any(a.name == "axes" for a in node.attribute) != axes_as_input, opset
