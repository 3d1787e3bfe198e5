"""pytensor_onnx.pymc: the export functions, their layout metadata and their errors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pm = pytest.importorskip("pymc")

import onnx  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
from pytensor.graph.basic import Apply  # noqa: E402
from pytensor.graph.op import Op  # noqa: E402

from helpers import run_model  # noqa: E402
from pymc_models import MODELS_BY_NAME  # noqa: E402
from pytensor_onnx.testing import PY_MODE  # noqa: E402
from pytensor_onnx.pymc import (  # noqa: E402
    LAYOUT_KEY,
    export_deterministics,
    export_logp,
    export_posterior_predictive,
    read_layout,
    unsupported_ops,
)


def small_model(**model_kwargs):
    """Convertible today: a normal mean, a log-transformed scale, a vector, a Dirichlet (simplex transform)."""
    with pm.Model(**model_kwargs) as model:
        mu = pm.Normal("mu", 0.0, 2.0)
        sigma = pm.HalfNormal("sigma", 1.0)
        effects = pm.Normal("effects", mu, sigma, shape=(2, 3))
        w = pm.Dirichlet("w", a=np.ones(3))
        pm.Deterministic("scaled", effects * w)
        pm.Normal("y", effects.sum(axis=0) @ w, 1.0, observed=np.array([0.3]))
    return model


def point_of(model, seed=0):
    rng = np.random.default_rng(seed)
    start = model.initial_point(random_seed=seed)
    return {k: np.asarray(v + rng.normal(scale=0.5, size=np.shape(v))) for k, v in start.items()}


def session_outputs(model_proto, feeds):
    import onnxruntime as ort

    session = ort.InferenceSession(model_proto.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, feeds), strict=True))


def test_per_variable_inputs_outputs_and_layout(tmp_path):
    model = small_model()
    path = tmp_path / "m.onnx"
    proto = export_logp(model, path)
    assert [i.name for i in proto.graph.input] == ["mu", "sigma_log__", "effects", "w_simplex__"]
    assert [o.name for o in proto.graph.output] == [
        "logp", "dlogp_mu", "dlogp_sigma_log__", "dlogp_effects", "dlogp_w_simplex__",
    ]
    docs = {i.name: i.doc_string for i in proto.graph.input}
    assert docs["sigma_log__"] == "log-transformed value of sigma ~ HalfNormalRV"
    assert docs["mu"] == "value of mu ~ NormalRV"
    assert "joint log-density" in proto.graph.output[0].doc_string

    layout = read_layout(str(path))
    assert layout == read_layout(proto)
    assert layout["format"] == "pytensor-onnx.pymc.logp"
    assert layout["input"] == "variables"
    assert layout["size"] == 1 + 1 + 6 + 2
    assert layout["dtype"] == "float64"
    by_name = {v["name"]: v for v in layout["variables"]}
    assert by_name["sigma_log__"] == {
        "name": "sigma_log__", "rv": "sigma", "distribution": "HalfNormalRV", "transform": "log",
        "shape": [], "size": 1, "dtype": "float64", "input": "sigma_log__", "gradient": "dlogp_sigma_log__",
    }
    assert by_name["effects"]["shape"] == [2, 3] and by_name["effects"]["transform"] is None
    assert by_name["w_simplex__"]["shape"] == [2] and by_name["w_simplex__"]["transform"] == "simplex"
    meta = {p.key: p.value for p in proto.metadata_props}
    assert meta["pymc_version"] == pm.__version__
    assert json.loads(meta[LAYOUT_KEY]) == layout

    point = point_of(model)
    got = session_outputs(proto, {name: point[name] for name in by_name})
    np.testing.assert_allclose(got["logp"], model.compile_logp(mode=PY_MODE)(point), rtol=1e-12)
    grads = model.compile_dlogp(mode=PY_MODE)(point)
    np.testing.assert_allclose(
        np.concatenate([got[f"dlogp_{v.name}"].ravel() for v in model.value_vars]), grads, rtol=1e-12, atol=1e-12
    )


def test_flat_layout_offsets_follow_value_vars():
    model = small_model()
    proto = export_logp(model, flat=True)
    assert [i.name for i in proto.graph.input] == ["point"]
    assert [o.name for o in proto.graph.output] == ["logp", "dlogp"]
    layout = read_layout(proto)
    assert layout["input"] == "flat" and layout["flat_input"] == "point"
    assert [(v["name"], v["offset"], v["size"]) for v in layout["variables"]] == [
        ("mu", 0, 1), ("sigma_log__", 1, 1), ("effects", 2, 6), ("w_simplex__", 8, 2),
    ]
    assert all("input" not in v for v in layout["variables"])
    # The static sizes are in the ONNX types too.
    dims = [d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim]
    assert dims == [10]

    point = point_of(model, seed=1)
    vector = np.concatenate([np.ravel(point[v["name"]]) for v in layout["variables"]])
    logp, dlogp = run_model(proto, vector)
    np.testing.assert_allclose(logp, model.compile_logp(mode=PY_MODE)(point), rtol=1e-12)
    np.testing.assert_allclose(dlogp, model.compile_dlogp(mode=PY_MODE)(point), rtol=1e-12, atol=1e-12)


def test_logp_only_and_without_jacobian():
    model = small_model()
    proto = export_logp(model, gradient=False, jacobian=False)
    assert [o.name for o in proto.graph.output] == ["logp"]
    layout = read_layout(proto)
    assert layout["jacobian"] is False and layout["outputs"]["gradient"] is None
    assert all("gradient" not in v for v in layout["variables"])
    point = point_of(model, seed=2)
    (logp,) = run_model(proto, *(point[v.name] for v in model.value_vars))
    want = model.compile_logp(jacobian=False, mode=PY_MODE)(point)
    np.testing.assert_allclose(logp, want, rtol=1e-12)
    assert not np.isclose(want, model.compile_logp(mode=PY_MODE)(point))  # the Jacobian term is really left out


@pytest.mark.parametrize("check_bounds", [True, False])
def test_parameter_checks_follow_check_bounds(check_bounds):
    # A scale parameter that can go negative: PyMC returns -inf with checks, the bare formula without.
    with pm.Model(check_bounds=check_bounds) as model:
        s = pm.Normal("s", 1.0, 1.0)
        pm.Normal("y", 0.0, s, observed=np.array([0.5, -0.2]))
    proto = export_logp(model, gradient=False)
    assert read_layout(proto)["check_bounds"] is check_bounds
    for value in (0.7, -0.7):
        (logp,) = run_model(proto, np.asarray(value))
        # Default mode: PyMC's rewrite turning parameter checks into -inf
        # runs there (unrewritten, the check raises).
        want = model.compile_logp()({"s": np.asarray(value)})
        if np.isinf(want):
            assert logp == want
        else:
            np.testing.assert_allclose(logp, want, rtol=1e-12)
    assert bool(np.isinf(model.compile_logp()({"s": np.asarray(-0.7)}))) is check_bounds


def test_float32_export_of_the_logp():
    model = small_model()
    proto = export_logp(model, flat=True, float32=True)
    assert proto.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    assert {o.type.tensor_type.elem_type for o in proto.graph.output} == {onnx.TensorProto.FLOAT}
    layout = read_layout(proto)
    assert layout["float32"] is True and layout["dtype"] == "float32"
    assert {v["dtype"] for v in layout["variables"]} == {"float32"}
    point = point_of(model, seed=3)
    vector = np.concatenate([np.ravel(point[v["name"]]) for v in layout["variables"]])
    logp, dlogp = run_model(proto, vector.astype("float32"))
    assert logp.dtype == np.float32 and dlogp.dtype == np.float32
    np.testing.assert_allclose(logp, model.compile_logp(mode=PY_MODE)(point), rtol=1e-5)
    np.testing.assert_allclose(dlogp, model.compile_dlogp(mode=PY_MODE)(point), rtol=1e-4, atol=1e-4)


def regression_on_data(columns: bool):
    """A regression whose data are pm.Data: one (n, 2) matrix, or two vectors (whose lengths PyTensor cannot
    know to be equal, so its logp checks that they broadcast: an Assert)."""
    xy = np.array([[0.0, 0.1], [1.0, 0.9], [2.0, 2.2]])
    with pm.Model() as model:
        slope = pm.Normal("slope", 0.0, 1.0)
        sigma = pm.HalfNormal("sigma", 1.0)
        if columns:
            data = pm.Data("xy", xy)
            x, y = data[:, 0], data[:, 1]
        else:
            x, y = pm.Data("x", xy[:, 0]), pm.Data("y", xy[:, 1])
        pm.Normal("obs", slope * x, sigma, observed=y)
    return model


@pytest.mark.parametrize("columns", [True, False], ids=["matrix", "vectors"])
def test_data_inputs_are_fed_at_run_time(columns):
    model = regression_on_data(columns)
    assert unsupported_ops(model) == []
    names = ["xy"] if columns else ["x", "y"]
    proto = export_logp(model, flat=True, data_inputs=names)
    assert [i.name for i in proto.graph.input] == ["point", *names]
    layout = read_layout(proto)
    assert layout["data"] == [{"name": n, "shape": [None] * (2 if columns else 1), "dtype": "float64"}
                              for n in names]
    vector = np.array([0.8, -0.3])
    new_x, new_y = np.linspace(-1, 1, 5), np.array([-1.0, -0.4, 0.1, 0.4, 1.2])
    feeds = [np.stack([new_x, new_y], axis=1)] if columns else [new_x, new_y]
    logp, dlogp = run_model(proto, vector, *feeds)
    with model:
        pm.set_data(dict(zip(names, feeds)))
    point = {"slope": np.asarray(0.8), "sigma_log__": np.asarray(-0.3)}
    np.testing.assert_allclose(logp, model.compile_logp(mode=PY_MODE)(point), rtol=1e-12)
    np.testing.assert_allclose(dlogp, model.compile_dlogp(mode=PY_MODE)(point), rtol=1e-12)
    if not columns:
        # x and y of different lengths: PyMC's logp asserts they broadcast; so does the exported model.
        with pytest.raises(Exception, match="(?i)assert|broadcast|shape|dimension"):
            run_model(proto, vector, new_x, new_y[:4])


def test_unknown_data_input():
    with pytest.raises(ValueError, match="'z' is not a pm.Data container"):
        export_logp(small_model(), data_inputs=["z"])


def test_model_from_context_and_no_free_variables():
    model = small_model()
    with model:
        assert [i.name for i in export_logp(gradient=False).graph.input][0] == "mu"
    with pm.Model() as empty:
        pm.Normal("y", 0.0, 1.0, observed=np.array([1.0]))
    with pytest.raises(ValueError, match="no free random variables"):
        export_logp(empty)


class Mystery(Op):
    """An Op no ONNX rule converts."""

    __props__ = ()

    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = np.asarray(inputs[0] * 2)

    def grad(self, inputs, output_grads):  # PyTensor 2.38
        return [2 * output_grads[0]]

    def pullback(self, inputs, outputs, output_grads):  # PyTensor 3.3
        return [2 * output_grads[0]]


def test_unconvertible_op_is_named_with_its_variable_at_export_time():
    with pm.Model() as model:
        a = pm.Normal("a", 0.0, 1.0)
        pm.Normal("b", 0.0, 1.0)
        pm.Potential("odd_penalty", -Mystery()(a) ** 2)
    with pytest.raises(NotImplementedError) as info:
        export_logp(model)
    message = str(info.value)
    assert "pm.Potential odd_penalty: no ONNX rule for Mystery" in message
    assert " b " not in message and "a ~" not in message  # only the culprit is named
    assert unsupported_ops(model) == ["Mystery"]
    assert unsupported_ops(small_model()) == []


def test_deterministics_give_constrained_values():
    model = small_model()
    point = point_of(model, seed=4)
    proto = export_deterministics(model)
    assert [o.name for o in proto.graph.output] == ["sigma", "w", "scaled"]
    got = session_outputs(proto, {v.name: point[v.name] for v in model.value_vars})
    want = model.compile_fn(model.replace_rvs_by_values([model["sigma"], model["w"], model["scaled"]]),
                            inputs=model.value_vars, on_unused_input="ignore", point_fn=True, mode=PY_MODE)(point)
    for name, value in zip(["sigma", "w", "scaled"], want, strict=True):
        np.testing.assert_allclose(got[name], value, rtol=1e-12)
    layout = read_layout(proto)
    assert [(o["name"], o["kind"]) for o in layout["outputs"]] == [
        ("sigma", "free_rv"), ("w", "free_rv"), ("scaled", "deterministic"),
    ]

    flat = export_deterministics(model, flat=True, var_names=["scaled"])
    vector = np.concatenate([np.ravel(point[v.name]) for v in model.value_vars])
    (scaled,) = run_model(flat, vector)
    np.testing.assert_allclose(scaled, want[2], rtol=1e-12)
    with pytest.raises(ValueError, match="'mu'"):
        export_deterministics(model, var_names=["mu"])


def test_posterior_predictive_of_a_regression():
    """One draw of y given posterior values; statistical check over many draws."""
    import onnxruntime as ort

    x = np.linspace(-1, 1, 4)
    with pm.Model() as model:
        slope = pm.Normal("slope", 0.0, 1.0)
        sigma = pm.HalfNormal("sigma", 1.0)
        pm.Normal("y", slope * x, sigma, observed=np.zeros(4))
    proto = export_posterior_predictive(model)
    names = [i.name for i in proto.graph.input]
    assert names[:2] == ["slope", "sigma"] and len(names) == 3  # the third: the generator's [seed, counter]
    assert [o.name for o in proto.graph.output] == ["y_draw"]
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    draws = np.array([session.run(None, {"slope": np.asarray(2.0), "sigma": np.asarray(0.5),
                                         names[2]: np.array([seed, 0], dtype=np.uint64)})[0]
                      for seed in range(400)])
    assert draws.shape == (400, 4)
    np.testing.assert_allclose(draws.mean(axis=0), 2.0 * x, atol=0.1)
    np.testing.assert_allclose(draws.std(axis=0), 0.5, rtol=0.15)


def test_posterior_predictive_of_a_hierarchical_model():
    """Hyperpriors reach the observed variable only through another free variable
    (PyTensor 2.38 failed to replace such nested variables): every free variable is
    an input, the draw depends on theta alone."""
    import onnxruntime as ort

    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, 1.0)
        sigma = pm.HalfNormal("sigma", 1.0)
        theta = pm.Normal("theta", mu, sigma, shape=3)
        pm.Normal("y", theta, 0.5, observed=np.zeros(3))
    proto = export_posterior_predictive(model)
    onnx.checker.check_model(proto, full_check=True)
    names = [i.name for i in proto.graph.input]
    assert names[:3] == ["mu", "sigma", "theta"]
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    theta_value = np.array([-50.0, 0.0, 50.0])
    draws = np.array([session.run(None, {"mu": np.asarray(1e6), "sigma": np.asarray(1e6), "theta": theta_value,
                                         names[3]: np.array([seed, 0], dtype=np.uint64)})[0]
                      for seed in range(400)])
    np.testing.assert_allclose(draws.mean(axis=0), theta_value, atol=0.1)
    np.testing.assert_allclose(draws.std(axis=0), 0.5, rtol=0.15)


def test_import_without_pymc_says_how_to_install():
    code = "import sys; sys.modules['pymc'] = None\nimport pytensor_onnx.pymc"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode != 0
    assert "pip install pytensor-onnx[pymc]" in result.stderr


def test_suite_models_build():
    # The suite's models stay valid PyMC models (the model tests build them too; this names a broken one).
    for name, case in MODELS_BY_NAME.items():
        model = case.build()
        assert model.value_vars, name


@pytest.mark.parametrize("exporter", [export_logp, export_deterministics, export_posterior_predictive])
def test_pymc_exports_take_the_export_onnx_options(exporter, tmp_path):
    """metadata, input_docs, output_docs, model_name, doc_string and inline_functions, as docs/deploying.md says."""
    model = small_model()
    plain = exporter(model)
    first_input = plain.graph.input[0].name
    first_output = plain.graph.output[0].name
    proto = exporter(
        model, tmp_path / "m.onnx", model_name="served", doc_string="my model", metadata={"author": "me"},
        input_docs={first_input: "the first input"}, output_docs={first_output: "the first output"},
        inline_functions=True,
    )
    onnx.checker.check_model(proto, full_check=True)
    props = {p.key: p.value for p in proto.metadata_props}
    assert props["author"] == "me" and LAYOUT_KEY in props  # added to the layout, not instead of it
    assert read_layout(tmp_path / "m.onnx") == read_layout(plain)
    assert proto.graph.name == "served" and proto.doc_string == "my model"
    assert {i.name: i.doc_string for i in proto.graph.input}[first_input] == "the first input"
    assert {o.name: o.doc_string for o in proto.graph.output}[first_output] == "the first output"
    # Documentation the exporter writes itself stays for the names the user left out.
    assert [i.doc_string for i in proto.graph.input[1:]] == [i.doc_string for i in plain.graph.input[1:]]
    assert not proto.functions
    if exporter is not export_posterior_predictive:  # draws: the same seeds give the same draws anyway
        point = point_of(model)
        feeds = {i.name: np.asarray(point[i.name]) for i in proto.graph.input}
        for got, want in zip(session_outputs(proto, feeds).values(), session_outputs(plain, feeds).values()):
            np.testing.assert_array_equal(got, want)


def test_pymc_export_inline_functions():
    with pm.Model() as model:
        nu = pm.Gamma("nu", 2.0, 0.5)
        pm.StudentT("y", nu=nu, observed=np.array([0.3, -1.0]))
    stored, inlined = export_logp(model), export_logp(model, inline_functions=True)
    assert stored.functions and not inlined.functions  # gammaln/digamma recipes
    onnx.checker.check_model(inlined, full_check=True)
    feeds = {"nu_log__": np.asarray(0.7)}
    for got, want in zip(session_outputs(inlined, feeds).values(), session_outputs(stored, feeds).values()):
        np.testing.assert_allclose(got, want, rtol=1e-15)


def test_pymc_export_options_are_checked():
    model = small_model()
    with pytest.raises(ValueError, match="written by pytensor_onnx.pymc"):
        export_logp(model, metadata={LAYOUT_KEY: "{}"})
    with pytest.raises(TypeError, match="mapping by input/output name"):
        export_logp(model, input_docs=["a", "b"])
    with pytest.raises(ValueError, match="input_docs names nope"):
        export_logp(model, input_docs={"nope": "?"})
    with pytest.raises(TypeError, match="inline_functions must be a bool"):
        export_logp(model, inline_functions="yes")
