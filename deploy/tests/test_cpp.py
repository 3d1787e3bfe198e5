"""The C++ program (``deploy/cpp``, ``pymc_logp``): an exported PyMC log-density evaluated
with ONNX Runtime's C++ API, against PyMC's own ``compile_logp``/``compile_dlogp``.

    make deploy-cpp                        # builds build/deploy-cpp/pymc_logp
    .venv/bin/python -m pytest deploy/tests/test_cpp.py -q

The program is compiled against Debian's libonnxruntime-dev 1.21 headers and linked to the
shared library of the onnxruntime wheel installed here (docs/deploying.md); the models are
three of the PyMC suite (``tests/python/pymc_models.py``), exported with
``export_logp(flat=True)``, and models whose ``pm.Data`` is an input (``--data``). Bad input (a file that is not a model, a model without the layout,
a layout that does not fit the model, a point of the wrong size or with wrong names) must give
a message that names the cause and a non-zero exit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pytensor_onnx.testing import PY_MODE

REPO = Path(__file__).resolve().parents[2]
PROGRAM = REPO / "build" / "deploy-cpp" / "pymc_logp"

from support import suite_model  # noqa: E402

MODELS = ["eight_schools_noncentered", "logistic_regression", "radon_hierarchical"]
#: PyMC's compile_logp/compile_dlogp run with PyTensor's Python implementations (PY_MODE), the
#: reference of the Python suite (test_pymc_models.py): PyTensor 2.38's C code for Psi is
#: accurate to only ~4e-10.
#: The issue's bar: PyMC's float64 numbers to 1e-12 (relative; absolute for gradient
#: entries near zero, relative to the gradient's largest entry).
RTOL = 1e-12


@pytest.fixture(scope="session")
def program() -> Path:
    if not PROGRAM.is_file():
        pytest.fail(f"{PROGRAM} is missing: build it with `make deploy-cpp` (part of `make deploy-tests`)")
    return PROGRAM


def run(program, *args, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(program), *map(str, args)], input=stdin, capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.fixture(scope="session")
def exported(tmp_path_factory) -> dict:
    """name -> (model file, [(named point, flat point, PyMC's logp, PyMC's gradient)])."""
    from pytensor_onnx.pymc import export_logp

    out = tmp_path_factory.mktemp("cpp")
    cases = {}
    for name in MODELS:
        model = suite_model(name)
        path = out / f"{name}.onnx"
        export_logp(model, path, flat=True)
        logp_fn, dlogp_fn = model.compile_logp(mode=PY_MODE), model.compile_dlogp(mode=PY_MODE)
        rng = np.random.default_rng(sum(map(ord, name)))
        start = model.initial_point(random_seed=0)
        points = []
        for k in range(4):
            # The initial point, then points around it (away from it, no term sits at a special value).
            point = {v: np.asarray(x) + (0 if k == 0 else rng.normal(0.0, 0.5, np.shape(x))) for v, x in start.items()}
            named = {v.name: point[v.name] for v in model.value_vars}
            flat = np.concatenate([np.ravel(x) for x in named.values()])
            points.append((named, flat, float(logp_fn(named)), np.asarray(dlogp_fn(named))))
        cases[name] = (path, points)
    return cases


def assert_pymc(result: dict, logp: float, dlogp: np.ndarray) -> None:
    assert "error" not in result, result
    np.testing.assert_allclose(result["logp"], logp, rtol=RTOL, atol=0)
    np.testing.assert_allclose(np.array(result["dlogp"]), dlogp, rtol=RTOL,
                               atol=RTOL * max(1.0, float(np.abs(dlogp).max())))


@pytest.mark.parametrize("name", MODELS)
def test_matches_pymc(program, exported, name):
    """Every point, given as the flat vector and by name on one standard input, gives PyMC's
    log-density and gradient; the gradient by variable is the flat one in the variables' shapes."""
    path, points = exported[name]
    lines = []
    for named, flat, _, _ in points:
        lines.append(json.dumps(flat.tolist()))
        lines.append(json.dumps({k: np.asarray(v).tolist() for k, v in named.items()}))
    done = run(program, path, stdin="\n".join(lines) + "\n")
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(results) == 2 * len(points)
    for i, (named, _, logp, dlogp) in enumerate(points):
        for result in results[2 * i: 2 * i + 2]:
            assert_pymc(result, logp, dlogp)
            by_variable = np.concatenate([np.ravel(result["dlogp_by_variable"][k]) for k in named])
            np.testing.assert_array_equal(by_variable, result["dlogp"])
            assert {k: np.shape(v) for k, v in result["dlogp_by_variable"].items()} == \
                {k: np.shape(v) for k, v in named.items()}


def test_one_point_option_and_layout(program, exported):
    """--point evaluates one point; --layout prints the layout the model carries."""
    from pytensor_onnx.pymc import read_layout

    path, [(named, flat, logp, dlogp), *_] = exported["eight_schools_noncentered"]
    done = run(program, path, "--point", json.dumps(flat.tolist()))
    assert done.returncode == 0, done.stderr
    assert_pymc(json.loads(done.stdout), logp, dlogp)
    done = run(program, path, "--layout")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == read_layout(path)


def test_float32_export(program, tmp_path):
    """A float32 export computes in float32: PyMC's numbers to float32 precision."""
    from pytensor_onnx.pymc import export_logp

    model = suite_model("logistic_regression")
    export_logp(model, tmp_path / "f32.onnx", flat=True, float32=True)
    point = model.initial_point(random_seed=0)
    named = {v.name: point[v.name] + 0.1 for v in model.value_vars}
    flat = np.concatenate([np.ravel(x) for x in named.values()])
    done = run(program, tmp_path / "f32.onnx", "--point", json.dumps(flat.tolist()))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    np.testing.assert_allclose(result["logp"], model.compile_logp(mode=PY_MODE)(named), rtol=1e-5)
    np.testing.assert_allclose(result["dlogp"], model.compile_dlogp(mode=PY_MODE)(named), rtol=1e-4, atol=1e-3)


def test_data_inputs(program, tmp_path):
    """pm.Data exported as an input (the example page's regression, data_inputs=["xy"]) is fed with
    --data, inline or from a file, with any number of rows: PyMC's numbers for the same data."""
    sys.path.insert(0, str(REPO / "examples" / "web"))
    import model as example_model

    from pytensor_onnx.pymc import export_logp

    pm_model = example_model.build()
    path = tmp_path / "regression.onnx"
    export_logp(pm_model, path, flat=True, data_inputs=["xy"])
    rng = np.random.default_rng(7)
    for rows, from_file in [(3, False), (40, True)]:
        xy = rng.normal(size=(rows, 2))
        pm_model.set_data("xy", xy)
        logp_fn, dlogp_fn = pm_model.compile_logp(mode=PY_MODE), pm_model.compile_dlogp(mode=PY_MODE)
        data = json.dumps({"xy": xy.tolist()})
        if from_file:
            (tmp_path / "data.json").write_text(data)
            data = f"@{tmp_path / 'data.json'}"
        points = [rng.normal(size=3) for _ in range(3)]
        done = run(program, path, "--data", data, stdin="".join(json.dumps(p.tolist()) + "\n" for p in points))
        assert done.returncode == 0, done.stderr
        for point, line in zip(points, done.stdout.splitlines(), strict=True):
            named = dict(zip(["intercept", "slope", "sigma_log__"], point))
            assert_pymc(json.loads(line), float(logp_fn(named)), np.asarray(dlogp_fn(named)))

    point = "[0.5, 1.0, -0.3]"
    assert_fails(run(program, path, "--point", point), "pm.Data input(s) xy, which have no value", "--data")
    assert_fails(run(program, path, "--data", '{"xy": [1, 2]}', "--point", point),
                 "pm.Data xy must be nested lists of 2 dimensions")
    assert_fails(run(program, path, "--data", '{"xy": [[1, 2], [3]]}', "--point", point),
                 "pm.Data xy must have shape [2,2]")
    assert_fails(run(program, path, "--data", '{"x": [[1, 2]]}', "--point", point), 'no pm.Data input "x"', "xy")
    assert_fails(run(program, path, "--data", f"@{tmp_path / 'missing.json'}", "--point", point),
                 "cannot read the data file")


def test_integer_data_input(program, tmp_path):
    """An integer pm.Data input (group indices) takes integers, and refuses 0.5."""
    import pymc as pm

    from pytensor_onnx.pymc import export_logp

    y = np.array([0.3, -1.2, 0.8, 2.0, 0.1])
    with pm.Model() as pm_model:
        idx = pm.Data("idx", np.array([0, 1, 1, 0, 2]))
        mu = pm.Normal("mu", 0.0, 1.0, shape=3)
        pm.Normal("y", mu[idx], 1.0, observed=y)
    assert idx.type.dtype in ("int32", "int64")  # (PyMC stores integer data as int32)
    path = tmp_path / "groups.onnx"
    export_logp(pm_model, path, flat=True, data_inputs=["idx"])
    new_idx = [2, 2, 0, 1, 1]
    pm_model.set_data("idx", np.array(new_idx))
    named = {"mu": np.array([0.1, -0.4, 0.9])}
    done = run(program, path, "--data", json.dumps({"idx": new_idx}), "--point", json.dumps(named["mu"].tolist()))
    assert done.returncode == 0, done.stderr
    want_logp, want_dlogp = pm_model.compile_logp(mode=PY_MODE)(named), pm_model.compile_dlogp(mode=PY_MODE)(named)
    assert_pymc(json.loads(done.stdout), float(want_logp), np.asarray(want_dlogp))
    assert_fails(run(program, path, "--data", json.dumps({"idx": [0, 0.5, 1, 1, 2]}), "--point", "[0, 0, 0]"),
                 "pm.Data idx holds 0.5", "not an integer")


# -- bad input: a clear message and a non-zero exit --------------------------------------------

def assert_fails(done: subprocess.CompletedProcess, *phrases: str) -> None:
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert done.stderr.startswith("pymc_logp: error: "), done.stderr
    for phrase in phrases:
        assert phrase in done.stderr, done.stderr
    assert "terminate called" not in done.stderr and "Segmentation" not in done.stderr


def test_bad_model_file(program, tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not a protobuf")
    assert_fails(run(program, bad, "--point", "[0]"), "cannot load", str(bad))
    assert_fails(run(program, tmp_path / "missing.onnx", "--point", "[0]"), "cannot read the model file")


def test_model_without_layout(program, tmp_path):
    import pytensor.tensor as pt

    from pytensor_onnx import export_onnx

    x = pt.vector("point", shape=(3,), dtype="float64")
    export_onnx([x], [(x**2).sum()], tmp_path / "plain.onnx")
    assert_fails(run(program, tmp_path / "plain.onnx", "--point", "[1, 2, 3]"),
                 '"pytensor_onnx.pymc.layout" metadata', "export_logp")


def _with_layout(src: Path, dst: Path, edit) -> Path:
    import onnx

    proto = onnx.load(src)
    for prop in proto.metadata_props:
        if prop.key == "pytensor_onnx.pymc.layout":
            layout = json.loads(prop.value)
            edit(layout)
            prop.value = json.dumps(layout)
    onnx.save(proto, dst)
    return dst


def test_layout_that_does_not_fit(program, exported, tmp_path):
    path, _ = exported["eight_schools_noncentered"]

    def grow(layout):
        layout["size"] += 1
        layout["variables"][-1]["shape"] = [9]
        layout["variables"][-1]["size"] = 9

    assert_fails(run(program, _with_layout(path, tmp_path / "grown.onnx", grow), "--layout"),
                 "does not match the model", "shape [11]", "shape [10]")

    def rename(layout):
        layout["flat_input"] = "x"

    assert_fails(run(program, _with_layout(path, tmp_path / "renamed.onnx", rename), "--layout"),
                 'names the input "x"', "the model's inputs: point")

    def overlap(layout):
        layout["variables"][1]["offset"] = 0

    assert_fails(run(program, _with_layout(path, tmp_path / "overlap.onnx", overlap), "--layout"),
                 "tau_log__ at offset 0, expected 1")


def test_per_variable_export_is_refused(program, tmp_path):
    from pytensor_onnx.pymc import export_logp

    export_logp(suite_model("eight_schools_noncentered"), tmp_path / "vars.onnx")
    assert_fails(run(program, tmp_path / "vars.onnx", "--layout"), "flat=True")


def test_point_of_wrong_size_or_names(program, exported):
    path, [(named, flat, _, _), *_] = exported["eight_schools_noncentered"]
    assert_fails(run(program, path, "--point", json.dumps(flat[:-1].tolist())),
                 "the point has 9 values, but the model takes 10", "theta_std[8]")
    short = {**{k: np.asarray(v).tolist() for k, v in named.items()}, "theta_std": [0.0] * 7}
    assert_fails(run(program, path, "--point", json.dumps(short)), "theta_std must have shape [8]")
    assert_fails(run(program, path, "--point", json.dumps({"mu": 0.0, "tau": 1.0})), '"tau"', "tau_log__")
    assert_fails(run(program, path, "--point", "[1, 2,"), "not valid JSON")
    assert_fails(run(program, path, "--point", json.dumps([0] * 9 + ["x"])), "point[9] is not a number")


def test_service_reports_bad_points_in_place(program, exported):
    """On standard input a bad point gets an error line where its result would be; the good
    points around it are evaluated; the exit status says that one failed."""
    path, [(_, flat, logp, dlogp), *_] = exported["eight_schools_noncentered"]
    good = json.dumps(flat.tolist())
    done = run(program, path, stdin=f"{good}\n[1, 2]\n\n{good}\n")
    assert done.returncode == 1
    first, bad, last = (json.loads(line) for line in done.stdout.splitlines())
    assert_pymc(first, logp, dlogp)
    assert_pymc(last, logp, dlogp)
    assert "the point has 2 values, but the model takes 10" in bad["error"]


def test_non_finite_values_are_strings(program, exported):
    """JSON has no inf/NaN: they travel as "Infinity"/"-Infinity"/"NaN" both ways, where PyMC's are."""
    path, _ = exported["eight_schools_noncentered"]
    model = suite_model("eight_schools_noncentered")
    for flat, shown in [([1e200] + [0.0] * 9, "-Infinity"), (["NaN"] + [0.0] * 9, "NaN")]:
        named = {"mu": float(flat[0]), "tau_log__": 0.0, "theta_std": np.zeros(8)}
        assert str(model.compile_logp(mode=PY_MODE)(named)) == {"-Infinity": "-inf", "NaN": "nan"}[shown]
        done = run(program, path, "--point", json.dumps(flat))
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["logp"] == shown


def test_usage(program):
    done = run(program)
    assert done.returncode == 2 and "usage: pymc_logp" in done.stderr
    done = run(program, "model.onnx", "--threads", "many")
    assert done.returncode == 2 and "--threads takes a count" in done.stderr
