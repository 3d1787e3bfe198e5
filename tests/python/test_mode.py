"""mode="ONNX", linker "onnx", ONNXLinker settings and compile_onnx."""

import numpy as np
import onnx
import onnxruntime as ort
import pytensor
import pytensor.tensor as pt
import pytest
from helpers import onnx_op_types
from pytensor.compile.mode import Mode, get_mode

import pytensor_onnx
from pytensor_onnx import ONNXLinker, compile_onnx, onnx_mode
from pytensor_onnx.mode import ONNX_REWRITES
from pytensor_onnx.testing import PY_MODE, assert_same_result, compare_onnx_and_py, py_function


@pytest.fixture
def graph(rng):
    x = pt.matrix("x")
    y = pt.vector("y")
    out = pt.special.log_softmax(pt.dot(x, pt.exp(x).T) + y, axis=0)
    return [x, y], out, [rng.normal(size=(3, 2)), rng.normal(size=3)]


def test_mode_string_onnx(graph):
    inputs, out, values = graph
    fn = pytensor.function(inputs, out, mode="ONNX")
    assert isinstance(fn.maker.linker, ONNXLinker)
    assert_same_result(fn(*values), py_function(inputs, out)(*values))


def test_mode_onnx_matches_py_linker(graph):
    inputs, out, values = graph
    compare_onnx_and_py(inputs, out, values)


def test_get_mode_onnx_is_the_registered_mode():
    assert get_mode("ONNX") is pytensor_onnx.ONNX
    assert isinstance(pytensor_onnx.ONNX.linker, ONNXLinker)


def test_linker_string_onnx(graph):
    inputs, out, values = graph
    fn = pytensor.function(inputs, out, mode=Mode(linker="onnx", optimizer=ONNX_REWRITES))
    assert isinstance(fn.maker.linker, ONNXLinker)
    assert_same_result(fn(*values), py_function(inputs, out)(*values))


def test_linker_onnx_with_default_rewrites(graph):
    # The linker's incompatible_rewrites keep C/BLAS/fusion rewrites out even
    # with the standard fast_run optimizer.
    inputs, out, values = graph
    fn = pytensor.function(inputs, out, mode=Mode(linker="onnx", optimizer="fast_run"))
    assert_same_result(fn(*values), py_function(inputs, out)(*values))


def test_linker_exposes_the_model(graph, rng):
    inputs, out, values = graph
    fn = pytensor.function(inputs, out, mode="ONNX")
    model = fn.maker.linker.onnx_model
    assert isinstance(model, onnx.ModelProto)
    onnx.checker.check_model(model, full_check=True)
    assert model.opset_import[0].version == pytensor_onnx.ONNX_OPSET_VERSION
    assert onnx.load_from_string(fn.maker.linker.onnx_model_bytes) == model
    # The model alone computes the function (with the kernel library loaded
    # when it uses its ops).
    options = ort.SessionOptions()
    if any(node.domain == pytensor_onnx.kernels.DOMAIN for node in model.graph.node):
        options.register_custom_ops_library(pytensor_onnx.kernels.library_path())
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feed = {i.name: v for i, v in zip(session.get_inputs(), values, strict=True)}
    (got,) = session.run(None, feed)
    assert_same_result(got, fn(*values))


def test_unlinked_linker_has_no_model():
    with pytest.raises(ValueError, match="has not converted a graph"):
        ONNXLinker().onnx_model


def test_compile_onnx(graph):
    inputs, out, values = graph
    fn = compile_onnx(inputs, out)
    assert isinstance(fn.maker.linker, ONNXLinker)
    assert_same_result(fn(*values), py_function(inputs, out)(*values))


def test_compile_onnx_settings(graph):
    inputs, out, values = graph
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    fn = compile_onnx(inputs, out, opset_version=15, session_options=options, providers=["CPUExecutionProvider"],
                      name="scores")
    assert fn.maker.linker.onnx_model.opset_import[0].version == 15
    assert fn.maker.linker.session.get_providers() == ["CPUExecutionProvider"]
    assert fn.maker.linker.session.get_session_options().intra_op_num_threads == 1
    assert fn.name == "scores"
    assert_same_result(fn(*values), py_function(inputs, out)(*values))


def test_compile_onnx_rejects_mode(graph):
    inputs, out, _ = graph
    with pytest.raises(TypeError, match="compile_onnx chooses the mode"):
        compile_onnx(inputs, out, mode="FAST_RUN")


@pytest.mark.parametrize("opset", [13, 17])
def test_onnx_linker_opset_and_providers(graph, opset):
    inputs, out, values = graph
    linker = ONNXLinker(opset_version=opset, providers=["CPUExecutionProvider"])
    fn = pytensor.function(inputs, out, mode=Mode(linker=linker, optimizer=ONNX_REWRITES))
    assert fn.maker.linker.opset_version == opset
    assert fn.maker.linker.onnx_model.opset_import[0].version == opset
    assert fn.maker.linker.session.get_providers() == ["CPUExecutionProvider"]
    assert_same_result(fn(*values), py_function(inputs, out)(*values))


def test_onnx_linker_session_options_are_used(graph):
    inputs, out, values = graph
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    fn = pytensor.function(inputs, out, mode=onnx_mode(session_options=options))
    used = fn.maker.linker.session.get_session_options()
    assert used.intra_op_num_threads == 2
    assert used.graph_optimization_level == ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    assert_same_result(fn(*values), py_function(inputs, out)(*values))


def test_onnx_linker_clone_keeps_settings():
    options = ort.SessionOptions()
    linker = ONNXLinker(opset_version=16, session_options=options, providers=["CPUExecutionProvider"])
    clone = linker.clone()
    assert (clone.opset_version, clone.session_options, clone.providers) == (16, options, ["CPUExecutionProvider"])
    assert "16" in repr(linker)


def test_default_linker_session_does_not_spin(graph):
    inputs, out, _ = graph
    fn = pytensor.function(inputs, out, mode="ONNX")
    config = fn.maker.linker.session.get_session_options().get_session_config_entry("session.intra_op.allow_spinning")
    assert config == "0"


def test_identical_graphs_share_a_session(graph):
    inputs, out, _ = graph
    first = pytensor.function(inputs, out, mode="ONNX")
    second = pytensor.function(inputs, out, mode="ONNX")
    assert first.maker.linker.session is second.maker.linker.session


def test_several_outputs_and_constant_output(rng):
    x = pt.vector("x")
    outputs = [pt.exp(x), pt.dot(x, x), pt.constant(np.array([1, 2], dtype="int32")), x]
    compare_onnx_and_py([x], outputs, [rng.normal(size=4)])


def test_repeated_calls_and_varying_sizes(rng):
    x = pt.matrix("x")
    fn = pytensor.function([x], pt.special.softmax(x, axis=1), mode="ONNX")
    py_fn = py_function([x], pt.special.softmax(x, axis=1))
    for shape in [(1, 1), (3, 5), (0, 4), (7, 2)]:
        value = rng.normal(size=shape)
        assert_same_result(fn(value), py_fn(value), label=str(shape))


def test_function_results_are_not_aliased(rng):
    # PyTensor's memory contract: outputs of one call are not overwritten by the next.
    x = pt.vector("x")
    fn = pytensor.function([x], pt.exp(x), mode="ONNX")
    first = fn(np.zeros(3))
    fn(np.ones(3))
    assert_same_result(first, np.ones(3))


@pytest.mark.parametrize("size", [3, 100_000])  # (outputs copied, and outputs holding ONNX Runtime's memory)
@pytest.mark.parametrize("allow_gc", [None, True])
def test_a_function_holds_its_last_inputs_and_outputs_as_c_mode_does(size, allow_gc):
    # As PyTensor's C linker, mode ONNX leaves the last call's arrays in the
    # function's storage (letting go of them after every call cost a small
    # call ~0.2 us) unless built with allow_gc=True; free() lets go; the
    # results of successive calls stay distinct arrays either way.
    x = pt.vector("x")
    linker = ONNXLinker() if allow_gc is None else ONNXLinker(allow_gc=True)
    fn = pytensor.function([x], [pt.exp(x), x * 2], mode=Mode(linker=linker, optimizer=get_mode("ONNX").optimizer))
    assert fn.vm.allow_gc is (allow_gc is True)
    zeros, ones = np.zeros(size), np.ones(size)
    first = fn(zeros)
    second = fn(ones)
    assert_same_result(first, [np.ones(size), np.zeros(size)])
    assert_same_result(second, [np.exp(ones), 2 * ones])
    held_input, held_outputs = fn.input_storage[0].storage[0], [c.storage[0] for c in fn.output_storage]
    if allow_gc:
        assert held_input is None and held_outputs == [None, None]
        return
    assert all(h is r for h, r in zip(held_outputs, second, strict=True))
    # (PyTensor 2.38's Function lets go of the inputs after every call anyway.)
    assert held_input is (ones if hasattr(fn, "_clear_input_storage_data") else None)
    fn.free()
    assert fn.input_storage[0].storage[0] is None


def test_input_not_modified(rng):
    x = pt.vector("x")
    fn = pytensor.function([x], [x, pt.exp(x)], mode="ONNX")
    value = rng.normal(size=4)
    original = value.copy()
    out_x, _ = fn(value)
    out_x[:] = 0.0
    assert_same_result(value, original)


def test_shared_variable_updates_across_calls(rng):
    # Shared variables are graph inputs in execution mode, so updates work; the
    # py-linker twin (its own shared variable) gives the expected state.
    def build(mode):
        x = pt.vector("x")
        state = pytensor.shared(np.zeros(3), name="state")
        fn = pytensor.function([x], pt.exp(state) + x, updates={state: pt.maximum(state, x) + 1.0}, mode=mode)
        return fn, state

    onnx_fn, onnx_state = build("ONNX")
    py_fn, py_state = build(PY_MODE)
    assert any(i.name == "state" for i in onnx_fn.maker.linker.onnx_model.graph.input)
    for step in range(3):
        value = rng.normal(size=3)
        assert_same_result(onnx_fn(value), py_fn(value), label=f"call {step}")
        assert_same_result(onnx_state.get_value(), py_state.get_value(), label=f"state after call {step}")


def test_scalar_typed_inputs_and_outputs_behave_as_in_pytensor():
    import pytensor.scalar as ps

    a = ps.float64("a")
    b = ps.int32("b")
    out = a * 2 + b
    fn = pytensor.function([a, b], out, mode="ONNX")
    got = fn(1.5, 3)
    want = pytensor.function([a, b], out, mode=Mode(linker="py", optimizer=None))(1.5, 3)
    assert type(got) is type(want)  # a NumPy scalar, not a 0-d array
    assert got == want == 6.0


def _scalar_ops(fgraph):
    return sorted(type(node.op.scalar_op).__name__ for node in fgraph.apply_nodes if hasattr(node.op, "scalar_op"))


def test_onnx_rewrites_leave_out_the_algebraic_canonizers(rng):
    # They were most of the rewrite time of deep chains (rewriting.py,
    # EXPENSIVE_REWRITES). With them (fast_run), -(x * 2) becomes one Mul by
    # -2; the ONNX set leaves it as built, and the results stay PyTensor's.
    from pytensor.graph.fg import FunctionGraph

    from pytensor_onnx.export import rewrite_for_export

    x = pt.vector("x")
    out = -(x * 2.0)
    reference = FunctionGraph([x], [out], clone=True)
    pytensor.compile.mode.get_mode("FAST_RUN").excluding("fusion").optimizer.rewrite(reference)
    assert _scalar_ops(reference) == ["Mul"]
    fgraph = FunctionGraph([x], [out], clone=True)
    rewrite_for_export(fgraph)
    assert _scalar_ops(fgraph) == ["Mul", "Neg"]
    compare_onnx_and_py([x], out, [rng.normal(size=5)])


def test_onnx_rewrites_fold_constants_before_merging_them():
    # Folded after merge1 and ShapeOpt, a DimShuffle of a constant shared by
    # many nodes costs a scan of all its clients per replaced input (rewriting.py).
    from pytensor.compile import optdb

    from pytensor_onnx.mode import ONNX

    positions = optdb.__position__
    assert positions["onnx_fold_constants_early"] < positions["merge1"] < positions["ShapeOpt"]
    x = pt.vector("x")
    fn = pytensor.function([x], x * 1.5 + x * 1.5, mode=ONNX)
    assert not any(
        type(node.op).__name__ == "DimShuffle" and isinstance(node.inputs[0], pytensor.graph.basic.Constant)
        for node in fn.maker.fgraph.apply_nodes
    )
    np.testing.assert_allclose(fn(np.arange(3.0)), 3.0 * np.arange(3.0))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_constants_of_another_dtype_are_cast_when_built(dtype, rng):
    # (2 and 1 are int8 constants.) Without PyTensor's constant upcast
    # (mode.py), the rule casts them itself: no Cast node in the model.
    x = pt.vector("x", dtype=dtype)
    out = 2 * x + 1
    fn = compare_onnx_and_py([x], out, [np.arange(-3, 4).astype(dtype)])[0]
    assert "Cast" not in onnx_op_types(fn)


@pytest.mark.parametrize("kernels", [True, False])
def test_all_and_any_of_a_vector_of_conditions_are_and_and_or(kernels):
    # PyMC's check_parameters: pt.all([cond_1, cond_2, ...]). Mode ONNX makes
    # it and(cond_1, cond_2, ...) (rewriting.local_onnx_reduce_vector_of_bools),
    # which fuses with the element-wise work around it: no reduction node.
    a, b, c = pt.scalars("a", "b", "c")
    conds = [a > 0, b > 1, pt.isnan(c) | (c < 3)]
    outputs = [pt.switch(pt.all(conds), a * b, -np.inf), pt.any(conds), pt.all(conds[:1])]
    mode = onnx_mode(kernels=kernels)
    fn = pytensor.function([a, b, c], outputs, mode=mode)
    kinds = onnx_op_types(fn)
    assert not {"ReduceMax", "ReduceMin", "Concat"} & set(kinds), kinds
    reference = py_function([a, b, c], outputs)
    for values in [(1.0, 2.0, 0.0), (1.0, 0.5, 0.0), (-1.0, 0.5, 5.0), (1.0, 2.0, np.nan), (-1.0, 2.0, 4.0)]:
        values = [np.float64(v) for v in values]
        assert_same_result(fn(*values), reference(*values))
