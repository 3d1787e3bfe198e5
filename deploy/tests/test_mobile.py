"""Mobile: exported models in ONNX Runtime's mobile format (``.ort``), as a reduced (minimal)
build of ONNX Runtime for Android or iOS runs them.

    .venv/bin/python -m pytest deploy/tests/test_mobile.py -q     (part of make deploy-tests)

Every log-density of the PyMC suite (``tests/python/pymc_models.py``, ``export_logp(flat=True)``)
and the MLP of ``examples/mlp_classifier.py`` are exported, converted with
``python -m onnxruntime.tools.convert_onnx_models_to_ort`` as docs/deploying.md says, loaded
from the ``.ort`` files by ONNX Runtime and compared with PyMC's ``compile_logp``/``compile_dlogp``
(1e-12) and PyTensor's MLP. The operator configuration the conversion writes (what a reduced
build must include, ``--include_ops_by_config``) must be the one docs/deploying.md gives.
No Android or iOS device or emulator is run here: the ``.ort`` files run in the desktop
ONNX Runtime, whose loader and kernels are the ones a mobile build compiles.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pytensor_onnx.testing import PY_MODE

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "python"))
sys.path.insert(0, str(REPO / "examples"))

import pymc_models  # noqa: E402
from support import suite_model  # noqa: E402

DOCS = REPO / "docs" / "deploying.md"
#: The conversion as docs/deploying.md gives it (mobile CPUs are ARM).
CONVERT = ["-m", "onnxruntime.tools.convert_onnx_models_to_ort", "--optimization_style", "Fixed",
           "--target_platform", "arm"]
PYMC_MODELS = [case.name for case in pymc_models.MODELS if not case.awaits]


@pytest.fixture(scope="session")
def converted(tmp_path_factory) -> Path:
    """The exported models (``onnx/``) and their ``.ort`` conversions and config (``ort/``)."""
    import pytensor_onnx
    from pytensor_onnx.pymc import export_logp

    import mlp_classifier

    root = tmp_path_factory.mktemp("mobile")
    (root / "onnx").mkdir()
    for name in PYMC_MODELS:
        export_logp(suite_model(name), root / "onnx" / f"{name}.onnx", flat=True)
    x, probabilities, _ = mlp_classifier.build_classifier()
    pytensor_onnx.export_onnx([x], [probabilities], root / "onnx" / "mlp_classifier.onnx")
    done = subprocess.run([sys.executable, *CONVERT, "--output_dir", str(root / "ort"), str(root / "onnx")],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def _session(path: Path):
    import onnxruntime as ort

    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def test_every_model_converts(converted):
    assert sorted(p.stem for p in (converted / "ort").glob("*.ort")) == sorted([*PYMC_MODELS, "mlp_classifier"])
    assert len(PYMC_MODELS) >= 11  # the suite's models, none left out as awaiting an Op


def _close(got, want, rtol):
    want = np.asarray(want)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * max(1.0, float(np.abs(want).max())))


@pytest.mark.parametrize("name", PYMC_MODELS)
def test_pymc_logp_from_ort_file(converted, name):
    """At three points, the .ort model gives the .onnx model's numbers (1e-12: the conversion keeps
    them) and PyMC's log-density and gradient to the Python suite's 1e-10 (test_pymc_models.py;
    PyMC's functions with PyTensor's Python implementations, PY_MODE: PyTensor 2.38's C Psi is
    accurate to only ~4e-10). On PyMC 6 all of them agree with PyMC to 1e-12 too; on PyMC 5 the
    censored Gamma's gradient (a ScalarLoop series) differs by 4e-11."""
    model = suite_model(name)
    from_ort = _session(converted / "ort" / f"{name}.ort")
    from_onnx = _session(converted / "onnx" / f"{name}.onnx")
    logp_fn, dlogp_fn = model.compile_logp(mode=PY_MODE), model.compile_dlogp(mode=PY_MODE)
    start = model.initial_point(random_seed=0)
    rng = np.random.default_rng(sum(map(ord, name)))
    for k in range(3):
        named = {v.name: np.asarray(start[v.name]) + (0 if k == 0 else rng.normal(0.0, 0.3, np.shape(start[v.name])))
                 for v in model.value_vars}
        flat = np.concatenate([np.ravel(x) for x in named.values()])
        logp, dlogp = from_ort.run(["logp", "dlogp"], {"point": flat})
        onnx_logp, onnx_dlogp = from_onnx.run(["logp", "dlogp"], {"point": flat})
        _close(logp, onnx_logp, 1e-12)
        _close(dlogp, onnx_dlogp, 1e-12)
        _close(logp, logp_fn(named), 1e-10)
        _close(dlogp, dlogp_fn(named), 1e-10)


def test_mlp_from_ort_file(converted):
    """The MLP (float32, any batch size) from its .ort file: PyTensor's probabilities."""
    import pytensor

    import mlp_classifier

    x, probabilities, _ = mlp_classifier.build_classifier()
    reference = pytensor.function([x], probabilities)
    session = _session(converted / "ort" / "mlp_classifier.ort")
    for batch_size in (1, 37):
        batch = mlp_classifier.make_batch(batch_size)
        (got,) = session.run(None, {"x": batch})
        assert got.dtype == np.float32 and got.shape == (batch_size, mlp_classifier.N_CLASSES)
        np.testing.assert_allclose(got, reference(batch), rtol=0, atol=mlp_classifier.ATOL)


def _config_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if re.match(r"^\s*[\w.]+;\d+;", line)]


def _documented_config(pymc_major: str) -> list[str]:
    """The config docs/deploying.md gives for this PyMC line (the fenced block after its marker)."""
    text = DOCS.read_text()
    marker = f"<!-- required_operators.config: PyMC {pymc_major} -->"
    assert marker in text, f"docs/deploying.md has no config for PyMC {pymc_major} ({marker})"
    block = text.split(marker, 1)[1].split("```", 2)[1]
    return _config_lines(block)


def test_docs_give_the_reduced_build_config(converted):
    """docs/deploying.md's operator configuration for this PyMC line is what the conversion writes
    for these models (regenerate it with the command the docs give when a model or the exporter
    changes)."""
    import pymc as pm

    generated = _config_lines((converted / "ort" / "required_operators.config").read_text())
    assert generated and all(line.startswith("ai.onnx;") for line in generated), generated  # standard ONNX only
    major = pm.__version__.split(".")[0]
    assert _documented_config(major) == generated, (
        f"docs/deploying.md's required_operators.config for PyMC {major} is stale; the conversion writes:\n"
        + "\n".join(generated))
