"""The bundled example and the code in docs/usage.md and docs/pymc.md run and do what they say."""

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytensor
import pytest

from pytensor_onnx import cli
from pytensor_onnx.testing import assert_same_result, py_function

REPO = Path(__file__).resolve().parents[2]


def load_example():
    spec = importlib.util.spec_from_file_location("mlp_classifier", REPO / "examples" / "mlp_classifier.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example():
    return load_example()


def test_example_main_succeeds(example, tmp_path, capsys):
    out_path = tmp_path / "mlp.onnx"
    status = example.main(["--output", str(out_path), "--batch-size", "64", "--repeat", "3"])
    report = capsys.readouterr().out
    assert status == 0, report
    assert out_path.is_file()
    lines = report.splitlines()
    assert lines[-1] == "OK"
    assert sum("argmax agreement 64/64  OK" in line for line in lines) == 2
    assert any("ONNX Runtime session.run" in line for line in lines)
    assert any("PyTensor default mode" in line for line in lines)

    # Independently of the example's own check: the file runs on ONNX Runtime
    # alone and agrees with PyTensor's py linker.
    model = onnx.load(out_path)
    onnx.checker.check_model(model, full_check=True)
    assert [i.name for i in model.graph.input] == ["x"]  # the weights are initializers
    assert model.graph.name == "mlp_classifier"
    x, probabilities, _ = example.build_classifier()
    batch = example.make_batch(10, seed=99)
    session = ort.InferenceSession(str(out_path), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {"x": batch})
    want = py_function([x], probabilities)(batch)
    assert_same_result(got, want)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-5)


def test_example_fails_on_parity_mismatch(example, tmp_path, monkeypatch, capsys):
    original = example.predict_with_onnxruntime

    def perturbed(path, batch):
        probabilities, session = original(path, batch)
        return probabilities + 1e-3, session

    monkeypatch.setattr(example, "predict_with_onnxruntime", perturbed)
    status = example.main(["--output", str(tmp_path / "mlp.onnx"), "--batch-size", "8", "--repeat", "1"])
    captured = capsys.readouterr()
    assert status == 1
    assert "MISMATCH" in captured.out
    assert "FAILED: ONNX results differ from PyTensor's" in captured.err


def test_example_weights_are_deterministic(example):
    first = example.init_weights()
    second = example.init_weights()
    for (W1, b1), (W2, b2) in zip(first, second, strict=True):
        assert np.array_equal(W1, W2) and np.array_equal(b1, b2)
    assert [W.shape for W, _ in first] == [(32, 64), (64, 64), (64, 10)]


# -- docs/usage.md ------------------------------------------------------------------


def fenced_blocks(language, page="usage.md"):
    text = (REPO / "docs" / page).read_text()  # (an absolute page path stays as it is)
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


_BLOCK_RUNNER = """
import json, sys
blocks, check = json.loads(sys.stdin.read())
namespace = {"__name__": "__main__"}
for i, (title, block) in enumerate(blocks):
    try:
        exec(compile(block, title, "exec"), namespace)
    except BaseException:
        print(f"{title} failed:\\n{block}", file=sys.stderr)
        raise
exec(compile(check, "the test's check", "exec"), namespace)
"""


def run_blocks(page, tmp_path, check: str = "") -> None:
    """Run the page's Python blocks in order, in one namespace, in a fresh Python process (in
    tmp_path), as a reader who copies them into a new script would; then the test's ``check``
    code in the same namespace. (In the test process pytensor_onnx is already imported, which
    would hide a page that forgets to import it.)"""
    blocks = [(f"docs/{page} python block {i}", block) for i, block in enumerate(fenced_blocks("python", page))]
    result = subprocess.run(
        [sys.executable, "-c", _BLOCK_RUNNER], input=json.dumps([blocks, check]), cwd=tmp_path,
        capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, f"docs/{page}: the examples failed in a fresh process:\n{result.stderr}"


def test_usage_python_blocks_run(tmp_path):
    assert len(fenced_blocks("python")) >= 6
    run_blocks("usage.md", tmp_path)
    # What the blocks claim to write exists and is valid.
    for name in ("classifier.onnx", "big.onnx", "accumulate.onnx", "softsign.onnx", "ar1.onnx"):
        onnx.checker.check_model(str(tmp_path / name), full_check=True)
    assert (tmp_path / "big.onnx.data").is_file()


def test_kernels_python_blocks_run(tmp_path):
    run_blocks("kernels.md", tmp_path, check="assert session.run(None, {'x': np.zeros(2)})[0] == f(np.zeros(2))")


def test_page_blocks_run_in_a_fresh_process(tmp_path):
    """The runner itself: a page that uses mode ONNX without importing pytensor_onnx fails."""
    page = tmp_path / "page.md"
    page.write_text("```python\nimport pytensor, pytensor.tensor as pt\n"
                    "x = pt.vector('x')\nf = pytensor.function([x], x + 1, mode='ONNX')\n```\n")
    with pytest.raises(AssertionError, match="No predefined mode exist for string: ONNX"):
        run_blocks(str(page), tmp_path)


def test_usage_cli_export_example(tmp_path, capsys):
    (script_text,) = fenced_blocks("text")
    script = tmp_path / "model.py"
    script.write_text(script_text)
    out_path = tmp_path / "model.onnx"
    assert cli.main(["export", str(script), "-o", str(out_path)]) == 0
    assert cli.main(["validate", str(out_path)]) == 0
    capsys.readouterr()
    session = ort.InferenceSession(str(out_path), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {"x": np.ones((2, 3))})
    assert_same_result(got, np.full((2, 2), 0.5))


# -- docs/pymc.md -------------------------------------------------------------------


def test_pymc_page_blocks_run_and_show_the_real_layout(tmp_path):
    pytest.importorskip("pymc")
    run_blocks("pymc.md", tmp_path, check="assert idata.posterior['mu'].shape == (1, 200)")
    for name in ("logp.onnx", "flat.onnx", "det.onnx", "ppc.onnx"):
        onnx.checker.check_model(str(tmp_path / name), full_check=True)
    # The layout the page prints is the one the exporter writes.
    from pytensor_onnx.pymc import read_layout

    (shown,) = fenced_blocks("json", "pymc.md")
    assert json.loads(shown) == read_layout(str(tmp_path / "flat.onnx"))
