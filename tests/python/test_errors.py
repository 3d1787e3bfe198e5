"""Clear errors for what cannot be converted or is called wrongly, and user rules for custom Ops."""

import numpy as np
import onnxruntime as ort
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op

from pytensor_onnx import _core, compile_onnx, export_function_onnx, export_onnx, onnx_funcify, onnx_mode
from pytensor_onnx.testing import assert_same_result, check_model, compare_onnx_and_py, py_function


class UnconvertibleOp(Op):
    """An Op nobody wrote an ONNX rule for."""

    __props__ = ()

    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0].copy()


# -- missing rules ---------------------------------------------------------------


def test_op_without_rule_fails_at_compile_time():
    x = pt.vector("x")
    with pytest.raises(NotImplementedError, match=r"No ONNX conversion for Op UnconvertibleOp") as info:
        pytensor.function([x], UnconvertibleOp()(x) * 2, mode="ONNX")
    message = str(info.value)
    assert "onnx_funcify.register(UnconvertibleOp)" in message  # says how to add one
    assert "def _(op, node, g, *inputs)" in message
    # The note names the node, and says that no rule exists (not "with the ONNX rule ...onnx_funcify").
    (note,) = info.value.__notes__
    assert note == "while converting the node UnconvertibleOp(x) (Op UnconvertibleOp, which has no ONNX rule)"


def test_op_without_rule_fails_at_export():
    x = pt.vector("x")
    with pytest.raises(NotImplementedError, match=r"No ONNX conversion for Op UnconvertibleOp.*Register a rule"):
        export_onnx([x], [pt.exp(UnconvertibleOp()(x))])


def test_unsupported_dtype_is_named():
    z = pt.vector("z", dtype="complex128")
    with pytest.raises(NotImplementedError, match="complex128: ONNX Runtime has no complex tensors"):
        export_onnx([z], [z * 2])


@pytest.mark.parametrize("make", [
    lambda x: pt.abs(pt.cast(x, "complex128")),
    lambda x: pt.real(pt.cast(x, "complex64") * 2),
    lambda x: pt.abs(pt.complex(x, x)),
], ids=["cast", "cast-complex64", "complex"])
def test_complex_values_inside_a_graph_give_the_complex_input_error(make):
    """One error for complex values, whether an input or made inside the graph (a Cast gave a
    ValueError from the builder)."""
    x = pt.vector("x")
    match = r"has dtype complex(64|128): ONNX Runtime has no complex tensors"
    with pytest.raises(NotImplementedError, match=match):
        export_onnx([x], [make(x)])
    with pytest.raises(NotImplementedError, match=match):
        pytensor.function([x], make(x), mode="ONNX")


def test_unknown_onnx_op_in_a_rule_is_reported():
    class MisspelledRuleOp(UnconvertibleOp):
        pass

    @onnx_funcify.register(MisspelledRuleOp)
    def _misspelled(op, node, g, x):
        return g.op("Exponential", x)

    x = pt.vector("x")
    with pytest.raises(NotImplementedError, match="'Exponential' is not an ONNX operator"):
        export_onnx([x], [MisspelledRuleOp()(x)])


# -- rules that break the contract ------------------------------------------------


def _op_with_rule(rule, n_outputs=1):
    class RuleUnderTest(Op):
        __props__ = ()

        def make_node(self, x):
            x = pt.as_tensor_variable(x)
            return Apply(self, [x], [x.type() for _ in range(n_outputs)])

        def perform(self, node, inputs, output_storage):
            for out in output_storage:
                out[0] = inputs[0].copy()

    onnx_funcify.register(RuleUnderTest)(rule)
    return RuleUnderTest()


def test_rule_with_wrong_dtype_is_caught():
    op = _op_with_rule(lambda op, node, g, x: g.cast(x, "float32"))
    x = pt.vector("x")  # float64
    with pytest.raises(TypeError, match="produced dtype float32 .* PyTensor's type says float64"):
        export_onnx([x], [op(x)])


def test_rule_with_wrong_rank_is_caught():
    op = _op_with_rule(lambda op, node, g, x: g.op("Unsqueeze", x, axes=[0]))
    x = pt.vector("x")
    with pytest.raises(TypeError, match="produced rank 2 .* PyTensor's type says rank 1"):
        pytensor.function([x], op(x), mode="ONNX")


def test_rule_with_wrong_number_of_outputs_is_caught():
    op = _op_with_rule(lambda op, node, g, x: [x], n_outputs=2)
    x = pt.vector("x")
    with pytest.raises(TypeError, match="returned 1 values for 2 outputs"):
        export_onnx([x], op(x))


def test_rule_returning_non_value_is_caught():
    op = _op_with_rule(lambda op, node, g, x: np.ones(3))
    x = pt.vector("x")
    with pytest.raises(TypeError, match="returned ndarray, not a Value"):
        export_onnx([x], [op(x)])


# -- bad arguments to the export API ----------------------------------------------


@pytest.mark.parametrize(
    "inputs, match",
    [
        (np.ones(3), r"inputs must be a PyTensor Variable or a list of Variables, got ndarray"),
        ("x", r"inputs must be a PyTensor Variable or a list of Variables, got str"),
        ([1.0], r"inputs\[0\] must be a PyTensor Variable, got float"),
        ([None], r"inputs\[0\] must be a PyTensor Variable, got NoneType"),
    ],
)
def test_export_non_variable_inputs(inputs, match):
    x = pt.vector("x")
    with pytest.raises(TypeError, match=match):
        export_onnx(inputs, [x * 2])


def test_export_non_variable_outputs():
    x = pt.vector("x")
    with pytest.raises(TypeError, match=r"outputs\[1\] must be a PyTensor Variable, got ndarray"):
        export_onnx([x], [x * 2, np.ones(3)])


def test_export_empty_outputs():
    x = pt.vector("x")
    with pytest.raises(ValueError, match="outputs is empty"):
        export_onnx([x], [])


def test_export_missing_input():
    x = pt.vector("x")
    forgotten = pt.vector("forgotten")
    with pytest.raises(ValueError, match=r"not in inputs: forgotten\. Add them to inputs"):
        export_onnx([x], [x + forgotten])


def test_export_duplicate_input():
    x = pt.vector("x")
    with pytest.raises(ValueError, match="inputs contains the same variable more than once"):
        export_onnx([x, x], [x * 2])


def test_export_constant_as_input():
    c = pt.constant(np.ones(3))
    with pytest.raises(TypeError, match=r"inputs\[0\] is a Constant; graph inputs must be symbolic"):
        export_onnx([c], [c * 2])


def test_export_intermediate_as_input_is_allowed():
    # A non-root variable as input cuts the graph there (as pytensor.function does).
    x = pt.vector("x")
    hidden = pt.exp(x)
    out = hidden * 2
    model = export_onnx([hidden], [out])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {session.get_inputs()[0].name: np.array([1.0, 3.0])})
    assert_same_result(got, np.array([2.0, 6.0]))


@pytest.mark.parametrize("opset", ["18", 18.0, True, None, [18]])
def test_export_opset_type(opset):
    x = pt.vector("x")
    with pytest.raises(TypeError, match=r"opset_version must be an int, got"):
        export_onnx([x], [x * 2], opset_version=opset)


@pytest.mark.parametrize("opset", [-1, 0, 12, _core.MAX_KNOWN_OPSET + 1, 100])
def test_export_opset_range(opset):
    x = pt.vector("x")
    with pytest.raises(ValueError, match=rf"opset_version {opset} is outside the supported range 13\.\.\d+"):
        export_onnx([x], [x * 2], opset_version=opset)


def test_export_function_opset_checked():
    x = pt.vector("x")
    fn = pytensor.function([x], pt.exp(x))
    with pytest.raises(ValueError, match="outside the supported range"):
        export_function_onnx(fn, opset_version=12)
    with pytest.raises(TypeError, match="opset_version must be an int"):
        export_function_onnx(fn, opset_version="17")


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"model_name": ""}, TypeError, "model_name must be a non-empty string"),
        ({"model_name": 3}, TypeError, "model_name must be a non-empty string"),
        ({"doc_string": None}, TypeError, "doc_string must be a string"),
        ({"filename": 5}, TypeError, "filename must be a str or os.PathLike, got int"),
        ({"input_names": "x"}, TypeError, "input_names must be a list of strings, got str"),
        ({"input_names": [1]}, TypeError, r"input_names\[0\] must be a non-empty string, got 1"),
        ({"input_names": ["a", "b"]}, ValueError, "input_names has 2 names for 1 graph inputs"),
        ({"output_names": ["o", "o"]}, ValueError, "output_names must be unique; repeated: o"),
        ({"output_names": ["o1", "o2", "o3"]}, ValueError, "output_names has 3 names for 2 outputs"),
        ({"input_names": ["a"], "output_names": ["a", "b"]}, ValueError, "output name 'a' is already used"),
    ],
)
def test_export_bad_keyword_arguments(kwargs, error, match):
    x = pt.vector("x")
    with pytest.raises(error, match=match):
        export_onnx([x], [x * 2, pt.exp(x)], **kwargs)


def test_export_function_bad_arguments():
    x = pt.vector("x")
    with pytest.raises(TypeError, match="fn must be a compiled pytensor.function, got function"):
        export_function_onnx(lambda v: v)
    fn = pytensor.function([x], pt.exp(x))
    with pytest.raises(ValueError, match="external_data=True needs a filename"):
        export_function_onnx(fn, external_data=True)
    acc = pytensor.shared(np.zeros(2))
    only_updates = pytensor.function([x], [], updates={acc: acc + x})
    with pytest.raises(ValueError, match="fn has no outputs"):
        export_function_onnx(only_updates)


def test_compile_onnx_bad_opset():
    x = pt.vector("x")
    with pytest.raises(ValueError, match="outside the supported range"):
        compile_onnx([x], pt.exp(x), opset_version=99)


@pytest.mark.parametrize("opset", [12, _core.MAX_KNOWN_OPSET + 1])
def test_onnx_mode_bad_opset_fails_when_the_mode_is_made(opset):
    with pytest.raises(ValueError, match="outside the supported range 13"):
        onnx_mode(opset_version=opset)


@pytest.mark.parametrize("opset, match", [(12, "older than the oldest supported opset 13"),
                                          (_core.MAX_KNOWN_OPSET + 1, "newer than the newest opset")])
def test_builder_rejects_opsets_it_does_not_know(opset, match):
    with pytest.raises(NotImplementedError, match=match):
        _core.GraphBuilder(opset)


# -- calling an ONNX-mode function wrongly ---------------------------------------


@pytest.fixture
def float32_fn():
    x = pt.tensor("x", dtype="float32", shape=(None, 3))
    return pytensor.function([x], pt.exp(x).sum(axis=1), mode="ONNX")


def test_call_with_wrong_dtype(float32_fn):
    with pytest.raises(TypeError, match="cannot store a value of dtype float64 without risking loss of precision"):
        float32_fn(np.ones((2, 3)))


def test_call_with_wrong_rank(float32_fn):
    with pytest.raises(TypeError, match="Wrong number of dimensions: expected 2, got 1"):
        float32_fn(np.ones(3, dtype="float32"))


def test_call_with_wrong_static_dim(float32_fn):
    with pytest.raises(TypeError, match=r"shape \(\(None, 3\)\) is not compatible with the data's \(\(2, 4\)\)"):
        float32_fn(np.ones((2, 4), dtype="float32"))


def test_call_with_missing_argument(float32_fn):
    # PyTensor's own message ("Missing required input" before 3.0).
    with pytest.raises(TypeError, match="Missing (required )?input: x"):
        float32_fn()


def test_runtime_shape_mismatch_names_the_inputs():
    x = pt.vector("x")
    y = pt.vector("y")
    fn = pytensor.function([x, y], x + y, mode="ONNX")
    with pytest.raises(RuntimeError, match=r"(?s)ONNX Runtime failed to run the model.*x: dtype float64, shape \(3,\)"
                       r".*y: dtype float64, shape \(4,\)"):
        fn(np.ones(3), np.ones(4))


def test_allow_input_downcast_still_works():
    x = pt.vector("x", dtype="float32")
    fn = pytensor.function([x], x * 2, mode="ONNX", allow_input_downcast=True)
    assert_same_result(fn(np.array([1.5, 2.0])), np.array([3.0, 4.0], dtype="float32"))


# -- the "extend" job: a user's own Op with a user-registered rule ---------------------


class ScaledSoftsign(Op):
    """y = scale * x / (1 + |x|); ``scale`` is a static parameter of the Op."""

    __props__ = ("scale",)

    def __init__(self, scale=1.0):
        self.scale = float(scale)

    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        with np.errstate(invalid="ignore"):  # inf / inf: NaN, as the ONNX rule gives
            output_storage[0][0] = np.asarray(self.scale * x / (1 + np.abs(x)), dtype=x.dtype)


class SoftsignAndSign(Op):
    """Two outputs: softsign(x) and sign(x)."""

    __props__ = ()

    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type(), x.type()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        output_storage[0][0] = x / (1 + np.abs(x))
        output_storage[1][0] = np.sign(x)


@onnx_funcify.register(ScaledSoftsign)
def _scaled_softsign(op, node, g, x):
    # Built from Abs/Add/Div (every float dtype), not ONNX Softsign (float32-only in ONNX Runtime).
    one = g.const(np.array(1, dtype=x.dtype))
    scale = g.const(np.array(op.scale, dtype=x.dtype))
    return g.op("Mul", scale, g.op("Div", x, g.op("Add", one, g.op("Abs", x))))


@onnx_funcify.register(SoftsignAndSign)
def _softsign_and_sign(op, node, g, x):
    one = g.const(np.array(1, dtype=x.dtype))
    return [g.op("Div", x, g.op("Add", one, g.op("Abs", x))), g.op("Sign", x)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_user_rule_end_to_end(rng, dtype):
    x = pt.matrix("x", dtype=dtype)
    out = pt.special.softmax(ScaledSoftsign(scale=2.5)(x) + x, axis=-1)
    value = np.concatenate([rng.normal(size=(3, 4)) * 5, [[0.0, -0.0, np.inf, -np.inf]]]).astype(dtype)
    compare_onnx_and_py([x], [out, ScaledSoftsign(scale=-1)(x)], [value])


def test_user_rule_with_several_outputs(rng):
    x = pt.vector("x")
    soft, sign = SoftsignAndSign()(x)
    compare_onnx_and_py([x], [soft, sign * 3.0], [np.array([-2.0, 0.0, 0.5, 7.0])])


def test_user_rule_exported_model_runs_without_pytensor_ops(tmp_path):
    x = pt.vector("x")
    path = tmp_path / "softsign.onnx"
    model = export_onnx([x], [ScaledSoftsign(scale=3.0)(x)], filename=path)
    check_model(model)
    assert {n.op_type for n in model.graph.node} <= {"Abs", "Add", "Div", "Mul"}
    value = np.array([-4.0, 0.0, 1.0])
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {"x": value})
    want = py_function([x], ScaledSoftsign(scale=3.0)(x))(value)
    assert_same_result(got, want)


def test_rule_for_a_base_class_covers_subclasses(rng):
    class Base(Op):
        __props__ = ()

        def make_node(self, x):
            x = pt.as_tensor_variable(x)
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = np.exp(inputs[0])

    class Derived(Base):
        pass

    onnx_funcify.register(Base)(lambda op, node, g, x: g.op("Exp", x))
    x = pt.vector("x")
    compare_onnx_and_py([x], [Derived()(x)], [rng.normal(size=3)])


def test_user_rule_appears_in_coverage():
    from pytensor_onnx.coverage import coverage_table, supported_ops

    assert ScaledSoftsign in supported_ops()
    assert ScaledSoftsign not in supported_ops(builtin_only=True)
    assert "ScaledSoftsign" in coverage_table()
    assert "ScaledSoftsign" not in coverage_table(builtin_only=True)


def test_named_recipes_from_python():
    from pytensor_onnx import _core

    names = dict(_core.recipes())
    assert "cos_float64" in names and names["cos_float64"]
    g = _core.GraphBuilder(18)
    x = g.input("x", "float64", [3])
    y = g.recipe("cos_float64", x)
    assert y.dtype == "float64" and y.shape == (3,)
    with pytest.raises(ValueError, match="no recipe named 'nope'"):
        g.recipe("nope", x)
    with pytest.raises(TypeError, match="must be a Value"):
        g.recipe("cos_float64", 1.0)


# -- the rows of docs/errors.md not covered above ----------------------------------
# (docs/errors.md names the test of every row; keep the two in step.)


def test_export_shared_variable_as_input():
    w = pytensor.shared(np.ones(2), name="w")
    with pytest.raises(TypeError, match=r"inputs\[0\] is the shared variable w; shared variables are baked"):
        export_onnx([w], [w * 2])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"optimize": "yes"}, "optimize must be a bool, got str"),
        ({"float32": 1}, "float32 must be a bool, got 1"),
        ({"inline_functions": None}, "inline_functions must be a bool, got NoneType"),
        ({"external_data": "auto"}, r"external_data must be None \(automatic\), True or False, got 'auto'"),
        ({"metadata": {"a": 1}}, "metadata must map non-empty strings to strings; got 'a': 1"),
        ({"metadata": ["a"]}, "metadata must be a mapping of strings to strings, got list"),
        ({"input_docs": "x"}, "input_docs must be a mapping by name or a list of strings, got str"),
    ],
)
def test_export_bad_option_types(kwargs, match):
    x = pt.vector("x")
    with pytest.raises(TypeError, match=match):
        export_onnx([x], [x * 2], **kwargs)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"input_docs": {"zz": "a"}}, "input_docs names zz, which are not among x"),
        ({"output_docs": ["a", "b"]}, "output_docs has 2 entries for 1 names"),
        ({"external_data": True}, "external_data=True needs a filename"),
    ],
)
def test_export_bad_option_values(kwargs, match):
    x = pt.vector("x")
    with pytest.raises(ValueError, match=match):
        export_onnx([x], [x * 2], **kwargs)


def test_export_to_a_missing_directory_fails_before_converting(tmp_path):
    x = pt.vector("x")
    target = tmp_path / "absent" / "m.onnx"
    # The check comes first: even a graph that cannot be converted fails on the path.
    with pytest.raises(FileNotFoundError, match="the directory to write the model in does not exist"):
        export_onnx([x], [UnconvertibleOp()(x)], target)
    assert not target.parent.exists()


def test_export_to_a_directory(tmp_path):
    x = pt.vector("x")
    with pytest.raises(IsADirectoryError, match="filename is a directory"):
        export_onnx([x], [x * 2], tmp_path)


def test_export_without_write_permission(tmp_path, monkeypatch):
    # The tests may run as root, who may write anywhere: deny through os.access,
    # which is what the check asks.
    import os

    monkeypatch.setattr(os, "access", lambda path, mode, **kwargs: False)
    x = pt.vector("x")
    with pytest.raises(PermissionError, match="no permission to write the model there"):
        export_onnx([x], [x * 2], tmp_path / "m.onnx")


def test_export_function_missing_directory(tmp_path):
    x = pt.vector("x")
    fn = pytensor.function([x], pt.exp(x))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        export_function_onnx(fn, tmp_path / "absent" / "m.onnx")


def test_export_too_large_without_filename(monkeypatch):
    import pytensor_onnx.export as export_module

    monkeypatch.setattr(export_module, "PROTOBUF_LIMIT", 1000)
    monkeypatch.setattr(export_module, "_GRAPH_HEADROOM", 0)
    x = pt.vector("x")
    w = pytensor.shared(np.ones(1000), name="w")
    with pytest.raises(ValueError, match="more than one protobuf message can .* pass a filename"):
        export_onnx([x], [x * w])


# -- making the mode ----------------------------------------------------------------


def test_onnx_mode_bad_session_options():
    with pytest.raises(TypeError, match="session_options must be an onnxruntime.SessionOptions or None, got dict"):
        onnx_mode(session_options={"intra_op_num_threads": 1})


def test_onnx_mode_providers_as_a_string():
    with pytest.raises(TypeError, match="providers must be a list of provider names .* got str"):
        onnx_mode(providers="CPUExecutionProvider")


def test_onnx_mode_unknown_provider():
    # ONNX Runtime itself only warns and falls back to the CPU provider.
    with pytest.raises(ValueError, match=r"providers\[1\]: 'NoSuchExecutionProvider' is not available .*CPUExecutionProvider"):
        onnx_mode(providers=["CPUExecutionProvider", "NoSuchExecutionProvider"])


def test_onnx_mode_provider_pair_is_checked():
    assert onnx_mode(providers=[("CPUExecutionProvider", {})]).linker.providers == [("CPUExecutionProvider", {})]
    with pytest.raises(TypeError, match=r"providers\[0\] must be a provider name or a \(name, options dict\) pair"):
        onnx_mode(providers=[("CPUExecutionProvider", "fast")])


def test_onnx_mode_optimize_type():
    with pytest.raises(TypeError, match="optimize must be a bool, got str"):
        onnx_mode(optimize="no")


def test_compile_onnx_rejects_a_mode():
    x = pt.vector("x")
    with pytest.raises(TypeError, match="compile_onnx chooses the mode"):
        compile_onnx([x], x * 2, mode="FAST_RUN")


def test_compile_onnx_bad_providers():
    x = pt.vector("x")
    with pytest.raises(ValueError, match="is not available in this onnxruntime build"):
        compile_onnx([x], x * 2, providers=["NoSuchExecutionProvider"])


def test_compile_onnx_unsupported_op():
    x = pt.vector("x")
    with pytest.raises(NotImplementedError, match="No ONNX conversion for Op UnconvertibleOp"):
        compile_onnx([x], UnconvertibleOp()(x))


# -- calling a compiled function --------------------------------------------------


def test_call_with_too_many_arguments(float32_fn):
    with pytest.raises(TypeError, match="Too many parameter"):
        float32_fn(np.ones((2, 3), dtype="float32"), np.ones((2, 3), dtype="float32"))


def test_call_with_unknown_keyword(float32_fn):
    with pytest.raises(TypeError, match="Unknown input.*: y"):
        float32_fn(y=np.ones((2, 3), dtype="float32"))


def test_call_with_non_numeric_data(float32_fn):
    # PyTensor's own conversion error (2.38 wraps it in "Bad input argument").
    with pytest.raises(ValueError, match="could not convert string to float|Bad input argument"):
        float32_fn("abc")


def test_call_with_none():
    # PyTensor 3.x rejects None itself; 2.38 passes it to the linker, which says so.
    fn = pytensor.function([_x], _x * 2, mode="ONNX")
    with pytest.raises(TypeError, match="isnan|input x is None; pass an array"):
        fn(None)


_x = pt.vector("x")
_m = pt.matrix("m")
_i = pt.scalar("i", dtype="int64")
_iv = pt.vector("iv", dtype="int64")
_jv = pt.vector("jv", dtype="int64")

BAD_INDICES = {
    "scalar": ([_x, _i], _x[_i], [np.ones(3), np.int64(5)]),
    "negative scalar": ([_x, _i], _x[_i], [np.ones(3), np.int64(-4)]),
    # ONNX Runtime words this failure as it words a failed data check of a
    # rule ("idx=1 must be within the inclusive range [-1,0]"): the linker
    # tells them apart by the failed node, not by the message.
    "scalar past a length-1 axis": ([_x, _i], _x[_i], [np.ones(1), np.int64(1)]),
    "vector": ([_x, _iv], _x[_iv], [np.ones(3), np.array([0, 7])]),
    "second axis": ([_m, _iv], _m[:, _iv], [np.ones((2, 3)), np.array([0, 3])]),
    "pairs": ([_m, _iv, _jv], _m[_iv, _jv], [np.ones((2, 3)), np.array([0, 1]), np.array([0, 5])]),
    "set_subtensor": ([_x, _iv], pt.set_subtensor(_x[_iv], 2.0), [np.ones(3), np.array([0, 7])]),
    "inc_subtensor": ([_x, _i], pt.inc_subtensor(_x[_i], 2.0), [np.ones(3), np.int64(-9)]),
    "set pairs": ([_m, _iv, _jv], pt.set_subtensor(_m[_iv, _jv], 0.0), [np.ones((2, 3)), np.array([2, 1]),
                                                                            np.array([0, 1])]),
}


@pytest.mark.parametrize("case", list(BAD_INDICES))
def test_call_with_out_of_range_index(case):
    from pytensor_onnx.linker import ONNXIndexError

    inputs, output, values = BAD_INDICES[case]
    with pytest.raises(IndexError, match="out of bounds"):  # what PyTensor's linkers raise
        py_function(inputs, output)(*values)
    fn = pytensor.function(inputs, output, mode="ONNX")
    with pytest.raises(IndexError, match=r"(?s)index out of bounds\nONNX Runtime failed to run the model.*Inputs given") as info:
        fn(*values)
    assert isinstance(info.value, ONNXIndexError) and isinstance(info.value, RuntimeError)


def test_failed_data_check_of_a_rule_is_no_index_error():
    # A max over no element: NumPy raises ValueError, the rule's data check
    # stops the run (a RuntimeError, not one of the user's indices).
    from pytensor_onnx.dispatch.utils import DATA_CHECK

    x = pt.dvector("x")
    fn = pytensor.function([x], pt.max(x), mode="ONNX")
    assert any(node.name.startswith(DATA_CHECK) for node in fn.maker.linker.onnx_model.graph.node)
    with pytest.raises(RuntimeError, match=f"Name:'{DATA_CHECK}") as info:
        fn(np.ones(0))
    assert not isinstance(info.value, IndexError)


def test_exported_model_with_out_of_range_index():
    # Outside mode ONNX the error is ONNX Runtime's own.
    model = export_onnx([_x, _iv], [_x[_iv]])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception, match="out of data bounds") as info:
        session.run(None, {"x": np.ones(3), "iv": np.array([0, 7])})
    assert type(info.value).__module__.startswith("onnxruntime")


def test_call_with_mismatched_shapes_of_a_matrix_product():
    a, b = pt.matrix("a"), pt.matrix("b")
    fn = pytensor.function([a, b], pt.dot(a, b), mode="ONNX")
    with pytest.raises(RuntimeError, match=r"(?s)MatMul.*a: dtype float64, shape \(2, 3\).*b: dtype float64, shape \(4, 2\)"):
        fn(np.ones((2, 3)), np.ones((4, 2)))


def test_call_with_a_shape_that_cannot_be_reshaped():
    fn = pytensor.function([_x], _x.reshape((2, 2)), mode="ONNX")
    with pytest.raises(RuntimeError, match=r"(?s)Reshape.*x: dtype float64, shape \(3,\)"):
        fn(np.ones(3))


# -- registering rules --------------------------------------------------------------


def test_register_for_a_class_that_is_not_an_op():
    with pytest.raises(TypeError, match="onnx_funcify.register takes a pytensor Op class, got dict"):
        onnx_funcify.register(dict)(lambda op, node, g, x: x)


def test_register_something_that_is_not_a_function():
    class NeedsARule(UnconvertibleOp):
        pass

    with pytest.raises(TypeError, match="the ONNX rule for NeedsARule must be a function .* got str"):
        onnx_funcify.register(NeedsARule, "Exp")
    with pytest.raises(TypeError, match="the ONNX rule for NeedsARule must be a function .* got int"):
        onnx_funcify.register(NeedsARule)(3)


def test_rule_with_wrong_signature_names_the_node():
    op = _op_with_rule(lambda op, node, g: g)
    x = pt.vector("x")
    with pytest.raises(TypeError, match="takes 3 positional arguments but 4 were given") as info:
        export_onnx([x], [op(x)])
    assert any(note.startswith("while converting the node RuleUnderTest(x)") for note in info.value.__notes__)


def test_exception_inside_a_rule_keeps_its_type_and_names_the_node():
    def rule(op, node, g, x):
        raise KeyError("no such setting")

    op = _op_with_rule(rule)
    x = pt.vector("x")
    with pytest.raises(KeyError, match="no such setting") as info:
        pytensor.function([x], op(x) + 1, mode="ONNX")
    (note,) = info.value.__notes__
    assert "RuleUnderTest(x)" in note and "with the ONNX rule" in note and "rule" in note


def test_rule_with_unknown_attribute():
    op = _op_with_rule(lambda op, node, g, x: g.op("Exp", x, bogus=3))
    x = pt.vector("x")
    with pytest.raises(ValueError, match="Exp has no attribute 'bogus'") as info:
        export_onnx([x], [op(x)])
    assert type(info.value).__name__ == "OnnxBuildError"


def test_rule_with_wrong_number_of_onnx_inputs():
    op = _op_with_rule(lambda op, node, g, x: g.op("Exp", x, x))
    x = pt.vector("x")
    with pytest.raises(ValueError, match="Exp takes 1 inputs at opset 18, got 2"):
        export_onnx([x], [op(x)], opset_version=18)


def test_rule_passing_a_python_number_to_g_op():
    op = _op_with_rule(lambda op, node, g, x: g.op("Add", x, 1.0))
    x = pt.vector("x")
    with pytest.raises(TypeError, match=r"Add: input 1 must be a Value \(use g.const\(array\) for constants\)"):
        export_onnx([x], [op(x)])


# -- pytensor_onnx.pymc -------------------------------------------------------------


@pytest.fixture
def pymc_model():
    import pymc as pm

    with pm.Model() as model:
        mu = pm.Normal("mu")
        pm.Normal("y", mu, 1, observed=np.ones(3))
    return model


def test_pymc_export_outside_a_model_context():
    from pytensor_onnx.pymc import export_logp

    with pytest.raises(TypeError, match="No model on context stack"):
        export_logp()


@pytest.mark.parametrize("entry", ["export_logp", "export_deterministics", "export_posterior_predictive",
                                   "unsupported_ops"])
def test_pymc_model_of_the_wrong_type(entry):
    import pytensor_onnx.pymc as onnx_pymc

    with pytest.raises(TypeError, match="model must be a pymc.Model, got str"):
        getattr(onnx_pymc, entry)("model")


@pytest.mark.parametrize("flag", ["flat", "gradient", "jacobian", "float32"])
def test_pymc_flags_must_be_bools(pymc_model, flag):
    from pytensor_onnx.pymc import export_logp

    with pytest.raises(TypeError, match=f"{flag} must be a bool, got 'yes'"):
        export_logp(pymc_model, **{flag: "yes"})


def test_pymc_data_inputs_must_be_a_list(pymc_model):
    from pytensor_onnx.pymc import export_logp

    with pytest.raises(TypeError, match="data_inputs must be a list of pm.Data names"):
        export_logp(pymc_model, data_inputs="x")


def test_pymc_var_names_must_be_a_list(pymc_model):
    from pytensor_onnx.pymc import export_deterministics, export_posterior_predictive

    with pytest.raises(TypeError, match="var_names must be a list of variable names, got str"):
        export_posterior_predictive(pymc_model, var_names="y")
    with pytest.raises(TypeError, match=r"var_names\[0\] must be a variable name \(str\), got 3"):
        export_deterministics(pymc_model, var_names=[3])


def test_pymc_var_names_unknown(pymc_model):
    from pytensor_onnx.pymc import export_posterior_predictive

    with pytest.raises(ValueError, match=r"var_names: \['mu'\] are not observed variables \(those are: \['y'\]\)"):
        export_posterior_predictive(pymc_model, var_names=["mu"])


def test_pymc_nothing_to_export():
    import pymc as pm

    from pytensor_onnx.pymc import export_deterministics, export_posterior_predictive

    with pm.Model() as model:
        pm.Normal("mu")
    with pytest.raises(ValueError, match="the model has no transformed variables or deterministics to export"):
        export_deterministics(model)
    with pytest.raises(ValueError, match="the model has no observed variables"):
        export_posterior_predictive(model)


def test_pymc_export_bad_opset_and_path(pymc_model, tmp_path):
    from pytensor_onnx.pymc import export_logp

    with pytest.raises(ValueError, match="opset_version 12 is outside the supported range"):
        export_logp(pymc_model, opset_version=12)
    with pytest.raises(FileNotFoundError, match="the directory to write the model in does not exist"):
        export_logp(pymc_model, tmp_path / "absent" / "logp.onnx")


def test_pymc_read_layout_of_another_model():
    from pytensor_onnx.pymc import read_layout

    x = pt.vector("x")
    with pytest.raises(ValueError, match="it was not exported by pytensor_onnx.pymc"):
        read_layout(export_onnx([x], [x * 2]))
    with pytest.raises(TypeError, match="model must be an onnx.ModelProto or a path, got int"):
        read_layout(3)


def test_the_errors_table_names_tests_that_exist():
    """Every test docs/errors.md cites exists (in this file unless a file is named)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    table = (root / "docs" / "errors.md").read_text()
    cited = re.findall(r"`(?:(test_\w+\.py)::)?(test_\w+)`", table)
    assert len(cited) > 60
    missing = []
    for filename, name in cited:
        source = (Path(__file__).parent / (filename or "test_errors.py")).read_text()
        if not re.search(rf"^def {name}\(", source, re.MULTILINE):
            missing.append(f"{filename or 'test_errors.py'}::{name}")
    assert not missing, missing


def _failing_functions(**mode_kwargs):
    from pytensor.raise_op import Assert

    x = pt.vector("x")
    mode = onnx_mode(**mode_kwargs)
    checked = pytensor.function([x], Assert("x must be positive")(x, pt.all(x > 0)), mode=mode)
    indexed = pytensor.function([x], x[pt.arange(3)], mode=mode)  # out of bounds for a shorter x
    return checked, indexed


def test_failed_runs_leave_stderr_to_the_exception(capfd):
    """ONNX Runtime's red [E:onnxruntime:...] line is not printed for a failed run in the sessions
    pytensor_onnx creates: the exception says what went wrong."""
    checked, indexed = _failing_functions()
    capfd.readouterr()
    with pytest.raises(AssertionError, match="x must be positive"):
        checked(np.array([-1.0]))
    # The rule's index check: a Gather read out of range in the portable
    # form, the kernel library's Check node in mode ONNX.
    with pytest.raises(RuntimeError, match="out of data bounds|Check: condition 1 is false"):
        indexed(np.ones(2))
    err = capfd.readouterr().err
    assert "onnxruntime" not in err, err
    assert checked.maker.linker.session.get_session_options().log_severity_level == 4


def test_user_session_options_keep_their_log_level(capfd):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    checked, _ = _failing_functions(session_options=options)
    assert checked.maker.linker.session.get_session_options().log_severity_level == 3
    capfd.readouterr()
    with pytest.raises(AssertionError, match="x must be positive"):
        checked(np.array([-1.0]))
    assert "[E:onnxruntime" in capfd.readouterr().err
