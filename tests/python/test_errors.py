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


def test_op_without_rule_fails_at_export():
    x = pt.vector("x")
    with pytest.raises(NotImplementedError, match=r"No ONNX conversion for Op UnconvertibleOp.*Register a rule"):
        export_onnx([x], [pt.exp(UnconvertibleOp()(x))])


def test_unsupported_dtype_is_named():
    z = pt.vector("z", dtype="complex128")
    with pytest.raises(NotImplementedError, match="complex128: ONNX Runtime has no complex tensors"):
        export_onnx([z], [z * 2])


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
