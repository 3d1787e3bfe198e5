"""export_onnx and export_function_onnx: the model they write and what it computes."""

import shutil

import numpy as np
import onnx
import onnxruntime as ort
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.scalar.basic import Composite

import pytensor_onnx
from pytensor_onnx import _core, export_function_onnx, export_onnx
from pytensor_onnx.testing import assert_same_result, check_model, compare_onnx_and_py, py_function

from helpers import run_model


def py_results(inputs, outputs, *values):
    return py_function(inputs, outputs)(*values)


def dim_entries(value_info):
    return [
        ("value", d.dim_value) if d.HasField("dim_value") else ("param", d.dim_param) if d.HasField("dim_param")
        else ("unknown", None)
        for d in value_info.type.tensor_type.shape.dim
    ]


@pytest.fixture
def dense_graph():
    """softmax(x @ W + b) with baked weights, plus a reduction; only ops with rules today."""
    rng = np.random.default_rng(7)
    x = pt.matrix("x")
    W = pytensor.shared(rng.normal(size=(4, 3)), name="W")
    b = pytensor.shared(rng.normal(size=3), name="b")
    logits = pt.dot(x, W) + b
    probs = pt.special.softmax(logits, axis=-1)
    probs.name = "probs"
    total = pt.exp(x).sum(axis=1)
    total.name = "total"
    return x, [probs, total], rng.normal(size=(5, 4))


def test_export_graph_matches_pytensor(dense_graph):
    x, outputs, x_value = dense_graph
    compare_onnx_and_py([x], outputs, [x_value])


def test_export_returns_model_proto_that_runs(dense_graph):
    x, outputs, x_value = dense_graph
    model = export_onnx([x], outputs)
    assert isinstance(model, onnx.ModelProto)
    check_model(model)
    assert model.opset_import[0].domain == ""
    assert model.opset_import[0].version == pytensor_onnx.ONNX_OPSET_VERSION == 18
    assert model.producer_name == "pytensor-onnx"
    assert model.producer_version == pytensor_onnx.__version__
    for got, want in zip(run_model(model, x_value), py_results([x], outputs, x_value), strict=True):
        assert_same_result(got, want)


def test_export_single_variable_arguments():
    x = pt.vector("x")
    model = export_onnx(x, pt.exp(x))
    assert [i.name for i in model.graph.input] == ["x"]
    assert len(model.graph.output) == 1
    (got,) = run_model(model, np.array([0.0, 1.0]))
    assert_same_result(got, np.exp([0.0, 1.0]))


def test_export_writes_file(dense_graph, tmp_path):
    x, outputs, x_value = dense_graph
    path = tmp_path / "model.onnx"  # a PathLike, not a str
    model = export_onnx([x], outputs, filename=path)
    assert path.is_file()
    assert onnx.load(path) == model
    assert not (tmp_path / "model.onnx.data").exists()
    check_model(onnx.load(path))
    for got, want in zip(run_model(str(path), x_value), py_results([x], outputs, x_value), strict=True):
        assert_same_result(got, want)


def test_export_without_filename_writes_nothing(dense_graph, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x, outputs, _ = dense_graph
    export_onnx([x], outputs)
    assert list(tmp_path.iterdir()) == []


def test_export_external_data(tmp_path):
    rng = np.random.default_rng(3)
    x = pt.matrix("x")
    big = pytensor.shared(rng.normal(size=(64, 32)), name="big")  # 16 KiB: external
    small = pytensor.shared(rng.normal(size=3), name="small")  # 24 bytes: stays inline
    outputs = [pt.dot(x, big), pt.exp(small).sum() + x.sum()]
    path = tmp_path / "weights.onnx"
    model = export_onnx([x], outputs, filename=str(path), external_data=True)

    data_path = tmp_path / "weights.onnx.data"
    assert data_path.is_file()
    assert data_path.stat().st_size >= big.get_value().nbytes
    assert path.stat().st_size < big.get_value().nbytes  # the weights are not in the .onnx file
    stored = onnx.load(str(path), load_external_data=False)
    locations = {t.name: t.data_location for t in stored.graph.initializer}
    assert onnx.TensorProto.EXTERNAL in locations.values()
    external = [t for t in stored.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    assert all(dict((e.key, e.value) for e in t.external_data)["location"] == "weights.onnx.data" for t in external)
    assert any(t.data_location == onnx.TensorProto.DEFAULT for t in stored.graph.initializer)
    # The returned model has the data loaded.
    assert any(np.array_equal(onnx.numpy_helper.to_array(t), big.get_value()) for t in model.graph.initializer)
    onnx.checker.check_model(str(path), full_check=True)

    x_value = rng.normal(size=(2, 64))
    want = py_results([x], outputs, x_value)
    for got, expected in zip(run_model(str(path), x_value), want, strict=True):
        assert_same_result(got, expected)

    # The pair of files is relocatable: the model refers to its data by a relative name.
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.move(str(path), moved / "weights.onnx")
    shutil.move(str(data_path), moved / "weights.onnx.data")
    for got, expected in zip(run_model(str(moved / "weights.onnx"), x_value), want, strict=True):
        assert_same_result(got, expected)


def test_export_external_data_needs_filename():
    x = pt.vector("x")
    with pytest.raises(ValueError, match="external_data=True needs a filename"):
        export_onnx([x], [pt.exp(x)], external_data=True)


def test_model_name_and_doc_string_are_stored(tmp_path):
    x = pt.vector("x")
    path = tmp_path / "named.onnx"
    model = export_onnx([x], [pt.exp(x)], filename=path, model_name="my_model", doc_string="exp of a vector")
    for m in (model, onnx.load(path)):
        assert m.graph.name == "my_model"
        assert m.doc_string == "exp of a vector"


def test_default_model_names():
    x = pt.vector("x")
    assert export_onnx([x], [pt.exp(x)]).graph.name == "pytensor_graph"
    fn = pytensor.function([x], pt.exp(x))
    assert export_function_onnx(fn).graph.name == "pytensor_function"


# -- input and output names ---------------------------------------------------


def test_names_come_from_variables():
    x = pt.vector("features")
    y = pt.vector("offset")
    out = pt.exp(x) + y
    out.name = "score"
    model = export_onnx([x, y], [out])
    assert [i.name for i in model.graph.input] == ["features", "offset"]
    assert [o.name for o in model.graph.output] == ["score"]


def test_unnamed_and_clashing_names_get_unique_defaults():
    x = pt.vector("x")
    x_again = pt.vector("x")  # same name, different variable
    unnamed = pt.vector()
    out_a = x + x_again
    out_a.name = "x"  # clashes with an input
    out_b = pt.exp(unnamed)
    model = export_onnx([x, x_again, unnamed], [out_a, out_b])
    input_names = [i.name for i in model.graph.input]
    output_names = [o.name for o in model.graph.output]
    assert input_names == ["x", "input_1", "input_2"]
    assert output_names == ["output_0", "output_1"]
    check_model(model)
    values = [np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([0.5])]
    for got, want in zip(run_model(model, *values), py_results([x, x_again, unnamed], [out_a, out_b], *values),
                         strict=True):
        assert_same_result(got, want)


def test_explicit_input_and_output_names():
    x = pt.vector("x")
    y = pt.vector("y")
    model = export_onnx([x, y], [x + y, x * y], input_names=["left", "right"], output_names=["sum", "product"])
    assert [i.name for i in model.graph.input] == ["left", "right"]
    assert [o.name for o in model.graph.output] == ["sum", "product"]
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    result = session.run(["product"], {"left": np.array([2.0]), "right": np.array([5.0])})
    assert_same_result(result[0], np.array([10.0]))


def test_output_that_is_an_input_and_repeated_outputs():
    x = pt.vector("x")
    e = pt.exp(x)
    outputs = [x, e, e]
    model = export_onnx([x], outputs)
    check_model(model)
    assert len(model.graph.output) == 3
    value = np.array([0.0, -1.0, 2.0])
    for got, want in zip(run_model(model, value), py_results([x], outputs, value), strict=True):
        assert_same_result(got, want)


# -- opset and ir_version -----------------------------------------------------


def min_ir_version(opset):
    """The oldest IR version whose ONNX release introduced ``opset`` (onnx.helper.VERSION_TABLE)."""
    candidates = [ir for _release, ir, ai_onnx, *_ in onnx.helper.VERSION_TABLE if ai_onnx >= opset]
    return min(candidates)


@pytest.mark.parametrize("opset", range(_core.MIN_OPSET, _core.MAX_KNOWN_OPSET + 1))
def test_ir_version_is_derived_from_opset(opset):
    x = pt.vector("x")
    model = export_onnx([x], [pt.exp(x)], opset_version=opset)
    assert model.opset_import[0].version == opset
    assert model.ir_version == _core.ir_version_for_opset(opset)
    newest_known = max(row[2] for row in onnx.helper.VERSION_TABLE)
    if opset <= newest_known:
        assert model.ir_version == min_ir_version(opset)
    else:
        # The installed onnx (an older one, CI leg "pymc5") does not know this
        # opset; the newest leg cross-checks it. The IR version never goes back.
        assert model.ir_version >= min_ir_version(newest_known)


# -- dims -------------------------------------------------------------------


def test_unknown_dims_get_distinct_names_per_input():
    x = pt.matrix("x")
    y = pt.matrix("y")
    z = pt.tensor3("z")
    outputs = [x.sum(axis=1), y.sum(axis=0), z.sum()]
    model = export_onnx([x, y, z], outputs)
    params = [name for i in model.graph.input for kind, name in dim_entries(i)]
    assert [kind for i in model.graph.input for kind, _ in dim_entries(i)] == ["param"] * 7
    assert len(set(params)) == 7, f"unknown dims share names: {params}"
    # Inputs of unrelated sizes run (no dim is claimed equal to another).
    values = [np.ones((2, 3)), np.ones((4, 5)), np.ones((1, 6, 7))]
    for got, want in zip(run_model(model, *values), py_results([x, y, z], outputs, *values), strict=True):
        assert_same_result(got, want)


def test_unknown_dims_of_broadcast_output_are_not_named_after_one_input():
    x = pt.vector("x")
    y = pt.vector("y")
    model = export_onnx([x, y], [x + y])
    (out,) = model.graph.output
    (entry,) = dim_entries(out)
    input_params = {name for i in model.graph.input for _, name in dim_entries(i)}
    # x + y has the broadcast size of two unknown dims: naming it after either is a false claim.
    assert entry[0] == "unknown" or entry[1] not in input_params


def test_static_dims_are_static():
    x = pt.tensor("x", shape=(None, 3))
    row = pt.row("row")  # shape (1, None)
    W = pytensor.shared(np.ones((3, 2)), name="W", shape=(3, 2))
    outputs = [pt.dot(x, W), row * 2.0]
    model = export_onnx([x, row], outputs)
    x_dims, row_dims = (dim_entries(i) for i in model.graph.input)
    assert x_dims[0][0] == "param" and x_dims[1] == ("value", 3)
    assert row_dims[0] == ("value", 1) and row_dims[1][0] == "param"
    dot_dims = dim_entries(model.graph.output[0])
    assert dot_dims[0] == ("param", x_dims[0][1])  # the batch dim flows through
    assert dot_dims[1] == ("value", 2)
    values = [np.ones((4, 3)), np.arange(5.0).reshape(1, 5)]
    for got, want in zip(run_model(model, *values), py_results([x, row], outputs, *values), strict=True):
        assert_same_result(got, want)


def test_scalar_input():
    s = pt.scalar("s")
    model = export_onnx([s], [pt.exp(s)])
    assert dim_entries(model.graph.input[0]) == []
    (got,) = run_model(model, np.array(1.5))
    assert_same_result(got, np.exp(np.array(1.5)))


# -- optimize ---------------------------------------------------------------


def test_optimize_false_gives_the_same_results(dense_graph):
    x, outputs, x_value = dense_graph
    plain = export_onnx([x], outputs, optimize=False)
    optimized = export_onnx([x], outputs)
    check_model(plain)
    assert len(optimized.graph.node) <= len(plain.graph.node)
    want = py_results([x], outputs, x_value)
    for got, expected in zip(run_model(plain, x_value), want, strict=True):
        assert_same_result(got, expected)


# -- export_function_onnx ---------------------------------------------------


def test_export_function_default_mode_bakes_current_shared_values():
    rng = np.random.default_rng(11)
    x = pt.matrix("x")
    W = pytensor.shared(rng.normal(size=(3, 4)), name="W")
    b = pytensor.shared(rng.normal(size=4), name="b")
    out = pt.special.softmax(pt.dot(x, W) + b, axis=-1)
    fn = pytensor.function([x], out)  # the default mode (Numba in PyTensor 3)
    assert fn.maker.linker is not None
    x_value = rng.normal(size=(6, 3))

    model = export_function_onnx(fn)
    check_model(model)
    assert [i.name for i in model.graph.input] == ["x"]  # W and b are initializers
    weights = [onnx.numpy_helper.to_array(t) for t in model.graph.initializer]
    # Compare flattened: the builder may fold a broadcasting Unsqueeze into the bias.
    assert any(np.array_equal(w.ravel(), W.get_value().ravel()) for w in weights)
    assert any(np.array_equal(w.ravel(), b.get_value()) for w in weights)
    (got,) = run_model(model, x_value)
    assert_same_result(got, py_results([x], out, x_value), rtol=1e-10)
    assert_same_result(got, fn(x_value), rtol=1e-10)

    # New values are baked into the next export; the first model keeps the old ones.
    W.set_value(rng.normal(size=(3, 4)))
    (new,) = run_model(export_function_onnx(fn), x_value)
    assert_same_result(new, fn(x_value), rtol=1e-10)
    assert not np.allclose(new, got)


def all_nodes(fgraph):
    """The Apply nodes of ``fgraph`` and of every inner graph, at any depth."""
    for node in fgraph.toposort():
        yield node
        inner = getattr(node.op, "fgraph", None)
        if inner is not None:
            yield from all_nodes(inner)


def test_export_function_fast_run_with_fused_elemwise():
    # Numba's FAST_RUN fuses exp(dot + b) and relu into Composite scalar ops
    # (PyTensor 3.3 also wraps them with the reductions in FusedElemwise, an
    # OpFromGraph).
    rng = np.random.default_rng(12)
    x = pt.matrix("x")
    W = pytensor.shared(rng.normal(size=(3, 4)), name="W")
    b = pytensor.shared(rng.normal(size=4), name="b")
    outputs = [pt.special.softmax(pt.maximum(pt.dot(x, W) + b, 0), axis=-1), pt.exp(pt.dot(x, W) + b)]
    fn = pytensor.function([x], outputs, mode="FAST_RUN")
    assert any(isinstance(getattr(node.op, "scalar_op", None), Composite) for node in all_nodes(fn.maker.fgraph))
    x_value = rng.normal(size=(5, 3))
    model = export_function_onnx(fn)
    check_model(model)
    want = py_results([x], outputs, x_value)
    for got, expected in zip(run_model(model, x_value), want, strict=True):
        assert_same_result(got, expected)


def test_export_function_uses_values_after_updates():
    x = pt.vector("x")
    acc = pytensor.shared(np.zeros(3), name="acc")
    fn = pytensor.function([x], acc * x, updates={acc: acc + x})
    fn(np.ones(3))
    fn(np.full(3, 2.0))  # acc is now [3, 3, 3]
    model = export_function_onnx(fn)
    assert len(model.graph.output) == 1  # updates are not outputs of the model
    x_value = np.array([1.0, 2.0, 3.0])
    (got,) = run_model(model, x_value)
    assert_same_result(got, np.array([3.0, 6.0, 9.0]))
    # Exporting did not advance the function's state.
    assert_same_result(acc.get_value(), np.full(3, 3.0))


def test_export_function_compiled_in_onnx_mode(tmp_path):
    x = pt.vector("x")
    scale = pytensor.shared(np.array([1.0, 2.0]), name="scale")
    fn = pytensor.function([x], pt.exp(x) * scale, mode="ONNX")
    scale.set_value(np.array([3.0, 4.0]))
    path = tmp_path / "fn.onnx"
    model = export_function_onnx(fn, path, opset_version=15, model_name="scaled_exp")
    assert path.is_file() and onnx.load(path) == model
    assert model.opset_import[0].version == 15 and model.graph.name == "scaled_exp"
    assert [i.name for i in model.graph.input] == ["x"]
    x_value = np.array([0.0, 1.0])
    (got,) = run_model(str(path), x_value)
    assert_same_result(got, fn(x_value))
    assert_same_result(got, np.exp(x_value) * np.array([3.0, 4.0]))


def test_export_leaves_pytensor_config_as_it_was():
    # export_onnx runs its rewrites without recording creation stacks; the
    # setting is PyTensor's global config and must come back, errors or not.
    import pytensor

    before = pytensor.config.traceback__limit
    x = pt.vector("x")
    export_onnx([x], [pt.exp(x) * 2])
    assert pytensor.config.traceback__limit == before

    from pytensor.graph.basic import Apply
    from pytensor.graph.op import Op

    class NoRuleOp(Op):
        def make_node(self, v):
            return Apply(self, [v], [v.type()])

        def perform(self, node, inputs, outputs):
            outputs[0][0] = inputs[0]

    with pytest.raises(NotImplementedError, match="NoRuleOp"):
        export_onnx([x], [NoRuleOp()(x) * 2])
    assert pytensor.config.traceback__limit == before
