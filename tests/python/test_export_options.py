"""Export options deployment needs: float32 export, external data, metadata, names and docs."""

from __future__ import annotations

import numpy as np
import onnx
import pytensor
import pytensor.tensor as pt
import pytest

import pytensor_onnx
from helpers import run_model
from pytensor_onnx import export_function_onnx, export_onnx
from pytensor_onnx import export as export_module


def mlp(dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    x = pt.tensor("x", shape=(None, 4), dtype=dtype)
    w1 = pytensor.shared(rng.normal(size=(4, 8)).astype(dtype), name="w1")
    w2 = pytensor.shared(rng.normal(size=(8, 3)).astype(dtype), name="w2")
    hidden = pt.tanh(x @ w1)
    probabilities = pt.special.softmax(hidden @ w2, axis=-1)
    probabilities.name = "probabilities"
    return x, probabilities


def all_tensor_types(model: onnx.ModelProto) -> set[int]:
    """Every element type a model mentions: values, initializers, Cast targets and tensor attributes."""
    types = set()

    def graph_types(graph):
        for info in [*graph.input, *graph.output, *graph.value_info]:
            types.add(info.type.tensor_type.elem_type)
        for init in graph.initializer:
            types.add(init.data_type)
        for node in graph.node:
            for attr in node.attribute:
                if node.op_type == "Cast" and attr.name == "to":
                    types.add(attr.i)
                if attr.type == onnx.AttributeProto.TENSOR:
                    types.add(attr.t.data_type)
                if attr.type == onnx.AttributeProto.GRAPH:
                    graph_types(attr.g)

    graph_types(model.graph)
    return types


def test_float32_export_of_a_float64_graph(rng):
    x, probabilities = mlp("float64")
    model = export_onnx([x], [probabilities], float32=True)
    onnx.checker.check_model(model, full_check=True)
    assert onnx.TensorProto.DOUBLE not in all_tensor_types(model)
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    meta = {p.key: p.value for p in model.metadata_props}
    assert "pytensor_onnx.float32" in meta

    batch = rng.normal(size=(16, 4))
    want = pytensor.function([x], probabilities)(batch)
    (got,) = run_model(model, batch.astype("float32"))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert np.max(np.abs(got - want)) > 0  # really computed in float32


def test_float32_export_keeps_integers_and_removes_float_casts(rng):
    x = pt.vector("x", dtype="float32")
    n = pt.vector("n", dtype="int64")
    wide = pt.cast(x, "float64") * 0.1 + n  # float64 arithmetic on a float32 input
    rounded = pt.cast(pt.floor(wide), "int32")
    model = export_onnx([x, n], [wide, rounded], float32=True)
    onnx.checker.check_model(model, full_check=True)
    assert [o.type.tensor_type.elem_type for o in model.graph.output] == [onnx.TensorProto.FLOAT, onnx.TensorProto.INT32]
    cast_targets = [a.i for node in model.graph.node if node.op_type == "Cast" for a in node.attribute]
    # n to float and the floor to int32 remain; x's cast to float64 became a no-op and went.
    assert sorted(cast_targets) == [onnx.TensorProto.FLOAT, onnx.TensorProto.INT32]
    x_value = rng.normal(size=5).astype("float32")
    n_value = np.arange(5, dtype="int64")
    got_wide, got_rounded = run_model(model, x_value, n_value)
    np.testing.assert_allclose(got_wide, x_value.astype("float64") * 0.1 + n_value, rtol=1e-6)
    np.testing.assert_array_equal(got_rounded, np.floor(got_wide).astype("int32"))


def test_float32_export_of_a_function_and_a_float32_graph_unchanged(rng):
    x, probabilities = mlp("float32")
    plain = export_onnx([x], [probabilities])
    demoted = export_onnx([x], [probabilities], float32=True)
    assert [n.op_type for n in plain.graph.node] == [n.op_type for n in demoted.graph.node]
    x64, probabilities64 = mlp("float64")
    fn = pytensor.function([x64], probabilities64)
    model = export_function_onnx(fn, float32=True)
    assert onnx.TensorProto.DOUBLE not in all_tensor_types(model)
    with pytest.raises(TypeError, match="float32 must be a bool"):
        export_onnx([x], [probabilities], float32="yes")


def test_metadata_producer_and_pytensor_version():
    x, probabilities = mlp()
    model = export_onnx([x], [probabilities], metadata={"purpose": "test", "classes": "a,b,c"})
    assert model.producer_name == "pytensor-onnx"
    assert model.producer_version == pytensor_onnx.__version__
    meta = {p.key: p.value for p in model.metadata_props}
    assert meta == {"pytensor_version": pytensor.__version__, "purpose": "test", "classes": "a,b,c"}
    with pytest.raises(TypeError, match="metadata must map"):
        export_onnx([x], [probabilities], metadata={"n": 3})
    with pytest.raises(TypeError, match="metadata must be a mapping"):
        export_onnx([x], [probabilities], metadata=[("a", "b")])


def test_input_and_output_docs():
    x, probabilities = mlp()
    model = export_onnx([x], [probabilities], input_docs={"x": "a batch of 4 features"},
                        output_docs=["class probabilities"])
    assert model.graph.input[0].doc_string == "a batch of 4 features"
    assert model.graph.output[0].doc_string == "class probabilities"
    with pytest.raises(ValueError, match="input_docs names y"):
        export_onnx([x], [probabilities], input_docs={"y": "?"})
    with pytest.raises(ValueError, match="output_docs has 2 entries for 1 names"):
        export_onnx([x], [probabilities], output_docs=["a", "b"])


def test_function_export_names_and_docs():
    x, probabilities = mlp()
    fn = pytensor.function([x], [probabilities, probabilities.argmax(axis=-1)])
    default = export_function_onnx(fn)
    assert [i.name for i in default.graph.input] == ["x"]
    # The variables' names where they have valid ones (PyTensor names argmax's output "argmax").
    assert [o.name for o in default.graph.output] == ["probabilities", "argmax"]
    named = export_function_onnx(fn, input_names=["features"], output_names=["p", "label"],
                                 output_docs={"label": "most likely class"})
    assert [i.name for i in named.graph.input] == ["features"]
    assert [o.name for o in named.graph.output] == ["p", "label"]
    assert named.graph.output[1].doc_string == "most likely class"
    with pytest.raises(ValueError, match="output_names has 1 names for 2 outputs"):
        export_function_onnx(fn, output_names=["p"])


def big_graph(rng):
    x = pt.matrix("x")
    weights = pytensor.shared(rng.normal(size=(256, 64)), name="weights")  # 128 KiB
    return x, pt.dot(x, weights), weights


def test_external_data_is_automatic_beyond_the_protobuf_limit(rng, tmp_path, monkeypatch):
    # Lower the 2 GiB limit so a small model "needs" external data.
    monkeypatch.setattr(export_module, "PROTOBUF_LIMIT", 100_000)
    monkeypatch.setattr(export_module, "_GRAPH_HEADROOM", 1000)
    x, out, weights = big_graph(rng)
    path = tmp_path / "big.onnx"
    export_onnx([x], [out], path)
    data = tmp_path / "big.onnx.data"
    assert data.is_file() and data.stat().st_size >= weights.get_value().nbytes
    assert path.stat().st_size < weights.get_value().nbytes
    onnx.checker.check_model(str(path), full_check=True)
    x_value = rng.normal(size=(3, 256))
    (got,) = run_model(str(path), x_value)
    np.testing.assert_allclose(got, x_value @ weights.get_value(), rtol=1e-12)

    # Without a file to put the data next to, a clear error (not protobuf's).
    with pytest.raises(ValueError, match="pass a filename"):
        export_onnx([x], [out])
    # external_data=False is obeyed (here the real limit is far away).
    inline = tmp_path / "inline.onnx"
    export_onnx([x], [out], inline, external_data=False)
    assert not (tmp_path / "inline.onnx.data").exists()
    assert inline.stat().st_size > weights.get_value().nbytes


def test_small_models_stay_in_one_file(rng, tmp_path):
    x, out, _ = big_graph(rng)
    export_onnx([x], [out], tmp_path / "small.onnx")
    assert [p.name for p in tmp_path.iterdir()] == ["small.onnx"]
    with pytest.raises(TypeError, match="external_data must be None"):
        export_onnx([x], [out], tmp_path / "m.onnx", external_data="yes")


def test_float32_with_external_data(rng, tmp_path):
    x, out, weights = big_graph(rng)
    path = tmp_path / "f32.onnx"
    export_onnx([x], [out], path, float32=True, external_data=True)
    assert (tmp_path / "f32.onnx.data").stat().st_size >= weights.get_value().nbytes // 2
    stored = onnx.load(str(path), load_external_data=False)
    assert {t.data_type for t in stored.graph.initializer} == {onnx.TensorProto.FLOAT}
    x_value = rng.normal(size=(2, 256)).astype("float32")
    (got,) = run_model(str(path), x_value)
    np.testing.assert_allclose(got, x_value @ weights.get_value().astype("float32"), rtol=1e-4, atol=1e-4)
