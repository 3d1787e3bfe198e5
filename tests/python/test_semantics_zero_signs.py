"""Signed zeros where a value is selected: mode ONNX's kernels keep the bits
of what they select, as NumPy does; ONNX Runtime's own ``Where`` gives +0.0
where it selects a -0.0 of its X input (docs/semantics.md, "Selections and
signed zeros"), which the exported (portable) models inherit."""

import numpy as np
import onnxruntime as ort
import pytensor.tensor as pt
import pytest
from onnx import TensorProto, helper

from pytensor_onnx.testing import compare_onnx_and_py, py_function


def _where_model(dtype):
    inputs = [
        helper.make_tensor_value_info("c", TensorProto.BOOL, [4]),
        helper.make_tensor_value_info("x", dtype, [4]),
        helper.make_tensor_value_info("y", dtype, [4]),
    ]
    graph = helper.make_graph([helper.make_node("Where", ["c", "x", "y"], ["out"])], "where", inputs,
                              [helper.make_tensor_value_info("out", dtype, [4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)], ir_version=8)


@pytest.mark.parametrize(("dtype", "np_dtype"), [(TensorProto.DOUBLE, np.float64), (TensorProto.FLOAT, np.float32)])
def test_onnx_runtime_where_loses_the_sign_of_a_selected_negative_zero_of_x(dtype, np_dtype):
    # ONNX Runtime selects X where the condition holds (0 elsewhere), Y where
    # it does not (0 elsewhere), and merges the two as `x != 0 ? x : y`: a
    # -0.0 of X fails `x != 0` and the +0.0 of Y's selection is taken. A
    # -0.0 of Y survives. Should this test fail, ONNX Runtime selects bits
    # now, and the fuzzer can hold exported models to zero signs too
    # (tests/python/fuzz/check.py, `zero_signs`).
    session = ort.InferenceSession(_where_model(dtype).SerializeToString(), providers=["CPUExecutionProvider"])
    c = np.array([True, True, False, False])
    x = np.array([-0.0, 1.0, -0.0, 1.0], dtype=np_dtype)
    y = np.array([2.0, -0.0, -0.0, 3.0], dtype=np_dtype)
    (got,) = session.run(None, {"c": c, "x": x, "y": y})
    want = np.where(c, x, y)
    np.testing.assert_array_equal(got, want)  # equal values: -0.0 == +0.0
    assert list(np.signbit(want)) == [True, False, True, False]
    assert list(np.signbit(got)) == [False, False, True, False]


def _assert_same_zero_signs(got, want):
    got, want = np.asarray(got), np.asarray(want)
    zeros = want == 0
    assert np.all(got[zeros] == 0)
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_mode_onnx_keeps_the_signs_of_selected_zeros(dtype):
    x = pt.vector("x", dtype=dtype)
    y = pt.vector("y", dtype=dtype)
    i = pt.scalar("i", dtype="int64")
    c = pt.vector("c", dtype="bool")
    outputs = [
        pt.switch(c, x, y),
        pt.switch(c, x, 7.0),  # (a constant branch)
        pt.clip(i, x, x),  # (the fuzz finding: clip(1, -0.0, -0.0) is -0.0)
        -x,
        pt.abs(x),
        x * -1.0,
    ]
    # (Not maximum and minimum: IEEE lets max(-0.0, +0.0) be either zero, and
    # NumPy's result depends on its loop: its SIMD loops pick by operand order.)
    values = [
        np.array([-0.0, 0.0, -0.0, 1.0, -0.0], dtype=dtype),
        np.array([0.0, -0.0, -0.0, -0.0, 2.0], dtype=dtype),
        np.array(1),
        np.array([True, True, False, False, True]),
    ]
    fn, results = compare_onnx_and_py([x, y, i, c], outputs, values)
    assert any(node.domain == "pytensor_onnx.kernels" for node in fn.maker.linker.onnx_model.graph.node)
    py = py_function([x, y, i, c], outputs)
    wants = py(*values)
    assert any(np.any(np.signbit(w) & (np.asarray(w) == 0)) for w in wants)  # there are -0.0s to keep
    for got, want in zip(results, wants, strict=True):
        _assert_same_zero_signs(got, want)
