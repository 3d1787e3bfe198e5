"""Export the models the deployment tests run outside Python, with PyTensor's results.

    python deploy/export_cases.py --out deploy/build/cases [--only NAME ...]

writes one ``.onnx`` file per case and ``cases.json``: for each case the
model file, the inputs to feed, the outputs PyTensor computes for them, and
the tolerance. The Node and Chromium runners (``run_node.mjs``,
``run_browser.mjs``) run every case and print what they got; the tests
(``deploy/tests``) compare that with PyTensor's numbers.

The cases:

- ``mlp_*``: an MLP with baked weights (float64; its float32 export; and the
  float32 classifier of ``examples/mlp_classifier.py``);
- ``pymc_*``: a PyMC model's logp and gradient (the hierarchical radon model
  of the Python suite, ``tests/python/pymc_models.py``): flat and
  per-variable inputs, float64 and float32 export;
- ``example_regression``: the example page's model (``examples/web/model.py``);
- ``op_*``: every unary element-wise op and one graph per dispatch module
  (the Python smoke cases, ``tests/python/test_smoke.py``), in float64 and
  exported as float32: the table of what runs where (docs/deploying.md).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np

DEPLOY = Path(__file__).resolve().parent
REPO = DEPLOY.parent
sys.path.insert(0, str(REPO / "tests" / "python"))  # the Python suite's models and smoke cases
sys.path.insert(0, str(REPO / "examples" / "web"))

FLOAT64_TOL = dict(rtol=1e-12, atol=1e-12)
FLOAT32_TOL = dict(rtol=1e-5, atol=1e-6)  # float32 kernels against float32 PyTensor
#: A float32 export against the float64 graph's results.
DEMOTED_TOL = dict(rtol=2e-5, atol=1e-5)
PYMC_TOL = dict(rtol=1e-10, atol=1e-10)
PYMC_FLOAT32_TOL = dict(rtol=1e-4, atol=1e-3)


def encode(array) -> dict:
    """An array as JSON: dtype, dims and the flat values (non-finite floats as strings)."""
    array = np.asarray(array)
    values = array.ravel().tolist()
    if array.dtype.kind == "f":
        values = [v if math.isfinite(v) else ("NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity"))
                  for v in values]
    return {"dtype": str(array.dtype), "dims": list(array.shape), "data": values}


def decode(encoded: dict) -> np.ndarray:
    values = [float(v) if isinstance(v, str) else v for v in encoded["data"]]
    return np.array(values, dtype=encoded["dtype"]).reshape(encoded["dims"])


class CaseWriter:
    def __init__(self, out: Path, only=None):
        self.out = out
        self.only = set(only or ())
        self.cases = []
        out.mkdir(parents=True, exist_ok=True)

    def wanted(self, name: str) -> bool:
        return not self.only or name in self.only or any(name.startswith(p) for p in self.only)

    def add(self, name, export, feeds, expected, tol, *, group):
        """``export(path)`` writes the model and returns it. ``feeds`` and ``expected`` are {ONNX name: array},
        or lists in the order of the model's inputs and outputs."""
        if not self.wanted(name):
            return
        path = self.out / f"{name}.onnx"
        try:
            model = export(path)
        except NotImplementedError as exc:
            # A graph with no ONNX conversion yet is not a deployment case.
            print(f"skipping case {name}: {str(exc).splitlines()[0]}", file=sys.stderr)
            return
        if not isinstance(feeds, dict):
            feeds = dict(zip([i.name for i in model.graph.input], feeds, strict=True))
        if not isinstance(expected, dict):
            expected = dict(zip([o.name for o in model.graph.output], expected, strict=True))
        self.cases.append({
            "name": name,
            "group": group,
            "model": path.name,
            "feeds": {k: encode(v) for k, v in feeds.items()},
            "expected": {k: encode(v) for k, v in expected.items()},
            **tol,
        })

    def write(self) -> Path:
        path = self.out / "cases.json"
        path.write_text(json.dumps({"cases": self.cases}))
        return path


def add_graph(writer, name, inputs, outputs, values, *, group, float32=False, tol=None):
    """A PyTensor graph: exported (optionally as float32) and evaluated by PyTensor (in float64)."""
    import pytensor

    from pytensor_onnx import export_onnx

    if not writer.wanted(name):
        return
    expected = pytensor.function(inputs, outputs, on_unused_input="ignore")(*values)
    if _draws_random_numbers(outputs):
        tol = {**(tol or FLOAT64_TOL), "random": True}  # the runners check dtypes and shapes only
    # An exported random generator is a uint64[2] [seed, counter] input (docs/semantics.md).
    feeds = [np.array([1, 0], dtype=np.uint64) if isinstance(v, np.random.Generator) else np.asarray(v)
             for v in values]
    if float32:
        feeds = [v.astype("float32") if v.dtype == np.float64 else v for v in feeds]
    writer.add(
        name, lambda path: export_onnx(inputs, outputs, path, float32=float32), feeds, expected,
        {**(tol or (DEMOTED_TOL if float32 else FLOAT64_TOL)), "float32_export": float32}, group=group,
    )


def _draws_random_numbers(outputs) -> bool:
    from pytensor.graph.traversal import ancestors
    from pytensor.tensor.random.op import RandomVariable

    return any(v.owner is not None and isinstance(v.owner.op, RandomVariable) for v in ancestors(outputs))


def mlp_graph(dtype="float64", seed=7):
    import pytensor
    import pytensor.tensor as pt

    rng = np.random.default_rng(seed)
    x = pt.tensor("x", shape=(None, 16), dtype=dtype)
    h = x
    for i, (n_in, n_out) in enumerate([(16, 32), (32, 32), (32, 5)]):
        w = pytensor.shared((rng.normal(size=(n_in, n_out)) / np.sqrt(n_in)).astype(dtype), name=f"w{i}")
        b = pytensor.shared(rng.normal(scale=0.1, size=n_out).astype(dtype), name=f"b{i}")
        h = h @ w + b
        if i < 2:
            h = pt.tanh(h) if i == 0 else pt.maximum(h, 0)
    probabilities = pt.special.softmax(h, axis=-1)
    probabilities.name = "probabilities"
    batch = np.random.default_rng(seed + 1).normal(size=(8, 16)).astype(dtype)
    return [x], [probabilities], [batch]


def add_mlps(writer):
    inputs, outputs, values = mlp_graph("float64")
    add_graph(writer, "mlp_float64", inputs, outputs, values, group="model")
    add_graph(writer, "mlp_float32_export", inputs, outputs, values, group="model", float32=True)

    sys.path.insert(0, str(REPO / "examples"))
    import mlp_classifier

    x, probabilities, _ = mlp_classifier.build_classifier()
    add_graph(writer, "mlp_float32", [x], [probabilities], [mlp_classifier.make_batch(8)], group="model",
              tol=FLOAT32_TOL)


def pymc_point_vector(model, seed):
    rng = np.random.default_rng(seed)
    start = model.initial_point(random_seed=seed)
    point = {v.name: np.asarray(start[v.name] + rng.normal(scale=0.5, size=np.shape(start[v.name])))
             for v in model.value_vars}
    return point


def add_pymc(writer):
    from pymc_models import MODELS_BY_NAME

    from pytensor_onnx.pymc import export_logp, read_layout

    model = MODELS_BY_NAME["radon_hierarchical"].build()
    point = pymc_point_vector(model, seed=3)
    logp = np.asarray(model.compile_logp()(point))
    dlogp = np.asarray(model.compile_dlogp()(point))
    names = [v.name for v in model.value_vars]
    vector = np.concatenate([np.ravel(point[n]) for n in names])

    for name, float32, tol in [("pymc_logp_float64", False, PYMC_TOL),
                               ("pymc_logp_float32", True, PYMC_FLOAT32_TOL)]:
        dtype = "float32" if float32 else "float64"
        writer.add(
            name, lambda path, f=float32: export_logp(model, path, flat=True, float32=f),
            {"point": vector.astype(dtype)}, {"logp": logp, "dlogp": dlogp}, {**tol, "float32_export": float32},
            group="model",
        )

    def per_variable(path):
        exported = export_logp(model, path)
        assert [v["name"] for v in read_layout(exported)["variables"]] == names
        return exported

    sizes = np.cumsum([0] + [np.size(point[n]) for n in names])
    grads = {f"dlogp_{n}": dlogp[a:b].reshape(np.shape(point[n])) for n, a, b in zip(names, sizes[:-1], sizes[1:])}
    writer.add("pymc_logp_variables", per_variable, {n: point[n] for n in names}, {"logp": logp, **grads},
               PYMC_TOL, group="model")


def add_example(writer):
    import model as example_model

    from pytensor_onnx.pymc import export_logp

    pm_model = example_model.build()
    xy = example_model.initial_data()
    vector = np.array([0.3, 0.8, -0.5])
    point = {"intercept": vector[0], "slope": vector[1], "sigma_log__": vector[2]}
    logp = np.asarray(pm_model.compile_logp()(point))
    dlogp = np.asarray(pm_model.compile_dlogp()(point))
    writer.add(
        "example_regression", lambda path: export_logp(pm_model, path, flat=True, data_inputs=["xy"]),
        {"point": vector, "xy": xy}, {"logp": logp, "dlogp": dlogp}, PYMC_TOL, group="model",
    )


def unary_values(dtype):
    if dtype.startswith("float"):
        return np.array([-2.5, -1.0, -0.3, 0.0, 0.4, 1.5, 3.0], dtype=dtype)
    return np.array([-7, -1, 0, 1, 2, 9], dtype=dtype)


def add_op_coverage(writer):
    import pytensor.tensor as pt
    from helpers import UNARY_ELEMWISE

    from test_smoke import CASES

    for op_name, fn in UNARY_ELEMWISE.items():
        for dtype in ("float64", "float32", "int64", "int32", "bool"):
            x = pt.vector("x", dtype=dtype)
            try:
                out = fn(x)
            except Exception:  # noqa: BLE001 - PyTensor refuses the dtype; nothing to deploy
                continue
            values = unary_values(dtype) if dtype != "bool" else np.array([True, False, True])
            if op_name in ("log", "sqrt", "log2", "log10", "reciprocal") and dtype.startswith("float"):
                values = np.abs(values) + 0.25
            tol = FLOAT64_TOL if dtype != "float32" else FLOAT32_TOL
            add_graph(writer, f"op_{op_name}_{dtype}", [x], [out], [values], group="ops", tol=tol)
    for module, make in CASES.items():
        inputs, outputs, values = make(np.random.default_rng(1))
        add_graph(writer, f"op_module_{module}", inputs, outputs, values, group="ops")
        if any(np.asarray(v).dtype == np.float64 for v in values):
            add_graph(writer, f"op_module_{module}_float32_export", inputs, outputs, values, group="ops",
                      float32=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(DEPLOY / "build" / "cases"))
    parser.add_argument("--only", nargs="*", help="case names or name prefixes to export (default: all)")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    import logging

    logging.getLogger("pymc").setLevel(logging.ERROR)
    writer = CaseWriter(Path(args.out), args.only)
    add_mlps(writer)
    add_pymc(writer)
    add_example(writer)
    add_op_coverage(writer)
    path = writer.write()
    print(f"wrote {len(writer.cases)} cases to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
