"""The pytensor-onnx command (pytensor_onnx.cli) and the supported-op table (pytensor_onnx.coverage)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytensor
import pytensor.tensor as pt
import pytest
from onnx import TensorProto, helper
from pytensor.graph.op import Op
from pytensor.scalar.basic import ScalarOp

from pytensor_onnx import cli, compat, export_onnx, onnx_funcify
from pytensor_onnx.coverage import coverage_table, ops_markdown, supported_ops
from pytensor_onnx.testing import assert_same_result, py_function

from helpers import run_model

REPO = Path(__file__).resolve().parents[2]


def run_cli(capsys, *argv):
    status = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def write_script(tmp_path, body, name="script.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


# -- coverage ---------------------------------------------------------------------


def test_supported_ops_are_the_registered_op_classes():
    registered = {cls for cls in onnx_funcify.registry if isinstance(cls, type) and issubclass(cls, Op)}
    assert set(supported_ops()) == registered
    assert object not in supported_ops()
    builtin = supported_ops(builtin_only=True)
    assert pytensor.tensor.elemwise.Elemwise in builtin
    assert pytensor.tensor.math.Dot in builtin
    assert pytensor.scalar.basic.Add in builtin
    assert all(onnx_funcify.dispatch(cls).__module__.startswith("pytensor_onnx.") for cls in builtin)


def test_supported_ops_order_ops_before_scalar_ops():
    kinds = [issubclass(cls, ScalarOp) for cls in supported_ops(builtin_only=True)]
    assert kinds == sorted(kinds)


def test_coverage_table_lists_every_op_with_its_modules():
    table = coverage_table(builtin_only=True)
    lines = table.splitlines()
    assert lines[0].split() == ["Op", "class", "kind", "PyTensor", "module", "rule", "module"]
    rows = [line.split() for line in lines[2:-1]]
    assert len(rows) == len(supported_ops(builtin_only=True))
    for cls, row in zip(supported_ops(builtin_only=True), rows, strict=True):
        assert row[0] == cls.__qualname__
        assert row[-2] == cls.__module__
        assert row[-1] == onnx_funcify.dispatch(cls).__module__
    n_scalar = sum(issubclass(cls, ScalarOp) for cls in supported_ops(builtin_only=True))
    assert lines[-1] == f"{len(rows) - n_scalar} Op rules, {n_scalar} scalar Op rules"


def test_coverage_table_markdown():
    table = coverage_table(markdown=True, builtin_only=True)
    lines = table.splitlines()
    assert lines[0] == "| Op class | kind | PyTensor module | rule module |"
    assert lines[1] == "|---|---|---|---|"
    assert "| `Softmax` | Op | `pytensor.tensor.special` | `pytensor_onnx.dispatch.special` |" in lines
    assert len(lines) == 2 + len(supported_ops(builtin_only=True))


def _documented_ops(text):
    return {line.split("`")[1] for line in text.splitlines() if line.startswith("| `")}


def test_docs_ops_md_is_current():
    # The page is generated on the development line; on another supported
    # line the Ops may differ only by the line-specific classes.
    text = (REPO / "docs" / "ops.md").read_text()
    current = ops_markdown()
    hint = "docs/ops.md is out of date with the registered rules; regenerate it with `make docs`"
    line = ".".join(pytensor.__version__.split(".")[:2])
    if f"PyTensor {line}.x" in text:
        assert text == current, hint
    else:
        assert _documented_ops(text) ^ _documented_ops(current) <= compat.LINE_SPECIFIC_OPS, hint


# -- ops ----------------------------------------------------------------------------


def test_cli_ops(capsys):
    status, out, _ = run_cli(capsys, "ops")
    assert status == 0
    assert out == coverage_table()
    for name in ("Elemwise", "DimShuffle", "Dot", "Softmax", "Maximum", "Exp"):
        assert any(line.split()[:1] == [name] for line in out.splitlines()), name


def test_cli_ops_markdown(capsys):
    status, out, _ = run_cli(capsys, "ops", "--markdown")
    assert status == 0
    assert out == ops_markdown()
    assert out.startswith("# Supported operations\n")


# -- inspect ------------------------------------------------------------------------


@pytest.fixture
def mlp_file(tmp_path):
    x = pt.tensor("x", shape=(None, 3), dtype="float32")
    W = pytensor.shared(np.ones((3, 4), dtype="float32"), name="W")
    b = pytensor.shared(np.zeros(4, dtype="float32"), name="b")
    probs = pt.special.softmax(pt.maximum(pt.dot(x, W) + b, 0), axis=-1)
    probs.name = "probs"
    path = tmp_path / "mlp.onnx"
    model = export_onnx([x], [probs], filename=path, opset_version=17, model_name="tiny_mlp", doc_string="a test")
    return path, model


def test_cli_inspect(capsys, mlp_file):
    path, model = mlp_file
    status, out, _ = run_cli(capsys, "inspect", path)
    assert status == 0
    lines = out.splitlines()
    assert f"model:        {path} ({path.stat().st_size} bytes)" in lines
    assert "opset:        ai.onnx 17" in lines
    assert f"ir_version:   {model.ir_version}" in lines
    assert "graph:        tiny_mlp" in lines
    assert "doc_string:   a test" in lines
    assert lines[lines.index("inputs:") + 1] == "  x: float32[x_dim0, 3]"
    assert lines[lines.index("outputs:") + 1] == "  probs: float32[x_dim0, 4]"
    counts = {}
    for node in model.graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    assert f"nodes:        {len(model.graph.node)}" in lines
    for op_type, n in counts.items():
        assert f"  {op_type:<24} {n}" in lines
    weight_bytes = sum(onnx.numpy_helper.to_array(t).nbytes for t in model.graph.initializer)
    assert f"initializers: {len(model.graph.initializer)} ({weight_bytes} bytes)" in lines


def test_cli_inspect_external_data_without_loading_it(capsys, tmp_path):
    x = pt.vector("x")
    big = pytensor.shared(np.arange(1000.0), name="big")
    path = tmp_path / "big.onnx"
    model = export_onnx([x], [pt.dot(big, big) + x], filename=path, external_data=True)
    total = sum(onnx.numpy_helper.to_array(t).nbytes for t in model.graph.initializer)
    assert total >= 8000
    on_disk = onnx.load(path, load_external_data=False)
    n_external = sum(t.data_location == onnx.TensorProto.EXTERNAL for t in on_disk.graph.initializer)
    assert n_external >= 1
    os.remove(tmp_path / "big.onnx.data")  # inspect must not need it
    status, out, _ = run_cli(capsys, "inspect", path)
    assert status == 0
    assert f"initializers: {len(model.graph.initializer)} ({total} bytes, {n_external} in external data)" in out


def test_cli_inspect_counts_subgraph_nodes(capsys, tmp_path):
    def branch(name, op_type):
        return helper.make_graph(
            [helper.make_node(op_type, ["x"], [f"{name}_out"])], name, [],
            [helper.make_tensor_value_info(f"{name}_out", TensorProto.FLOAT, [2])],
        )

    graph = helper.make_graph(
        [
            helper.make_node("ReduceMax", ["x"], ["m"], keepdims=0),
            helper.make_node("Greater", ["m", "zero"], ["c"]),
            helper.make_node("If", ["c"], ["y"], then_branch=branch("then", "Exp"), else_branch=branch("else", "Neg")),
        ],
        "with_if",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    onnx.checker.check_model(model, full_check=True)
    path = tmp_path / "if.onnx"
    onnx.save(model, path)
    status, out, _ = run_cli(capsys, "inspect", path)
    assert status == 0
    lines = out.splitlines()
    assert "nodes:        5" in lines
    for op_type in ("ReduceMax", "Greater", "If", "Exp", "Neg"):
        assert f"  {op_type:<24} 1" in lines
    assert "initializers: 1 (4 bytes)" in lines


def test_cli_inspect_missing_and_corrupt_files(capsys, tmp_path):
    status, _, err = run_cli(capsys, "inspect", tmp_path / "nope.onnx")
    assert status == 1
    assert "nope.onnx: no such file" in err
    corrupt = tmp_path / "corrupt.onnx"
    corrupt.write_bytes(b"\xff\xff\xff not protobuf")
    status, _, err = run_cli(capsys, "inspect", corrupt)
    assert status == 1
    assert "corrupt.onnx: not a readable ONNX model" in err


# -- validate -----------------------------------------------------------------------


def test_cli_validate_ok(capsys, mlp_file):
    path, _ = mlp_file
    status, out, err = run_cli(capsys, "validate", path)
    assert status == 0, err
    assert out.startswith(f"{path}: valid (onnx.checker full check passed; ONNX Runtime {ort.__version__} loaded it")
    assert "1 inputs, 1 outputs" in out


def test_cli_validate_external_data(capsys, tmp_path):
    x = pt.vector("x")
    big = pytensor.shared(np.arange(500.0), name="big")
    path = tmp_path / "ext.onnx"
    export_onnx([x], [pt.dot(big, big) + x], filename=path, external_data=True)
    status, out, err = run_cli(capsys, "validate", path)
    assert status == 0, err
    os.remove(tmp_path / "ext.onnx.data")
    status, _, err = run_cli(capsys, "validate", path)
    assert status == 1
    assert "ext.onnx" in err and "error" in err


def test_cli_validate_checker_failure(capsys, tmp_path):
    # Add with a single input: loads as protobuf, fails the checker.
    graph = helper.make_graph(
        [helper.make_node("Add", ["x"], ["y"])], "bad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    path = tmp_path / "bad.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8), path)
    status, out, err = run_cli(capsys, "validate", path)
    assert status == 1
    assert out == ""
    assert "pytensor-onnx validate: error:" in err and "onnx.checker rejected the model" in err


def test_cli_inspect_shows_metadata_and_docs(capsys, tmp_path):
    x = pt.vector("x")
    path = tmp_path / "m.onnx"
    export_onnx([x], [2 * x], filename=path, metadata={"author": "me", "layout": "[" + "1, " * 200 + "1]"},
                input_docs=["the data"], output_names=["y"], output_docs={"y": "twice the data"})
    status, out, _ = run_cli(capsys, "inspect", path)
    assert status == 0
    lines = out.splitlines()
    metadata = lines[lines.index("metadata:") + 1: lines.index("inputs:")]
    assert metadata[0] == f"  pytensor_version: {compat.PYTENSOR_VERSION}"
    assert "  author: me" in metadata
    (layout,) = [line for line in metadata if line.startswith("  layout: ")]
    assert layout.endswith("... (603 characters; onnx.load(path).metadata_props has them)")
    assert len(layout) < cli.METADATA_SHOWN + 100
    assert lines[lines.index("inputs:") + 1] == "  x: float64[x_dim0]  (the data)"
    assert lines[lines.index("outputs:") + 1] == "  y: float64[x_dim0]  (twice the data)"


def test_cli_validate_unavailable_provider_fails(capsys, mlp_file):
    """ONNX Runtime only warns about a provider it lacks and runs on the CPU; validate says so and fails."""
    path, _ = mlp_file
    status, out, err = run_cli(capsys, "validate", path, "--provider", "CUDAExecutionProvider")
    assert status == 1
    assert out == ""
    assert "pytensor-onnx validate: error:" in err
    assert "--provider 'CUDAExecutionProvider' is not available in this onnxruntime build" in err
    status, out, _ = run_cli(capsys, "validate", path, "--provider", "CPUExecutionProvider")
    assert status == 0 and "with CPUExecutionProvider" in out


def test_cli_validate_runtime_failure(capsys, tmp_path):
    # A custom-domain op passes the checker but ONNX Runtime has no kernel for it.
    graph = helper.make_graph(
        [helper.make_node("Frobnicate", ["x"], ["y"], domain="com.example")], "custom",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.example", 1)], ir_version=8
    )
    path = tmp_path / "custom.onnx"
    onnx.save(model, path)
    status, _, err = run_cli(capsys, "validate", path)
    assert status == 1
    assert f"ONNX Runtime {ort.__version__} cannot load the model" in err
    assert "Frobnicate" in err


def test_cli_validate_corrupt_file(capsys, tmp_path):
    path = tmp_path / "corrupt.onnx"
    path.write_bytes(b"\xff\xff garbage")
    status, _, err = run_cli(capsys, "validate", path)
    assert status == 1
    assert "not a readable ONNX model" in err


# -- export -------------------------------------------------------------------------


def test_cli_export_inputs_outputs(capsys, tmp_path):
    script = write_script(tmp_path, """
        import numpy as np
        import pytensor
        import pytensor.tensor as pt

        x = pt.matrix("x")
        W = pytensor.shared(np.arange(6.0).reshape(3, 2), name="W")
        inputs = [x]
        outputs = [pt.special.softmax(pt.dot(x, W), axis=-1)]
    """)
    out_path = tmp_path / "out.onnx"
    status, out, err = run_cli(capsys, "export", script, "-o", out_path)
    assert status == 0, err
    assert out.startswith(f"wrote {out_path} (opset 18, ")
    model = onnx.load(out_path)
    onnx.checker.check_model(model, full_check=True)
    x = pt.matrix("x")
    want_fn = py_function([x], pt.special.softmax(pt.dot(x, np.arange(6.0).reshape(3, 2)), axis=-1))
    value = np.random.default_rng(0).normal(size=(4, 3))
    (got,) = run_model(out_path, value)
    assert_same_result(got, want_fn(value))


def test_cli_export_function_with_options(capsys, tmp_path):
    # The script imports a sibling module, as `python script.py` would allow.
    (tmp_path / "helpers_for_export.py").write_text("SCALE = 3.0\n")
    script = write_script(tmp_path, """
        import numpy as np
        import pytensor
        import pytensor.tensor as pt
        from helpers_for_export import SCALE

        x = pt.vector("x")
        w = pytensor.shared(np.full(300, SCALE), name="w")
        fn = pytensor.function([x], pt.exp(x) * w)
    """)
    out_path = tmp_path / "fn.onnx"
    status, out, err = run_cli(capsys, "export", script, "-o", out_path, "--opset", "15", "--model-name", "scaled",
                               "--external-data")
    assert status == 0, err
    assert out.startswith(f"wrote {out_path} (opset 15, ")
    assert (tmp_path / "fn.onnx.data").is_file()
    model = onnx.load(out_path)
    assert model.opset_import[0].version == 15 and model.graph.name == "scaled"
    value = np.linspace(-1, 1, 300)
    (got,) = run_model(out_path, value)
    assert_same_result(got, np.exp(value) * 3.0)
    assert str(tmp_path) not in sys.path


def test_cli_export_script_without_model(capsys, tmp_path):
    script = write_script(tmp_path, "x = 1\n")
    status, _, err = run_cli(capsys, "export", script, "-o", tmp_path / "m.onnx")
    assert status == 1
    assert "defines neither `fn` (a compiled pytensor.function) nor both `inputs` and `outputs`" in err
    assert not (tmp_path / "m.onnx").exists()


def test_cli_export_fn_not_a_function(capsys, tmp_path):
    script = write_script(tmp_path, "def fn(x):\n    return x\n")
    status, _, err = run_cli(capsys, "export", script, "-o", tmp_path / "m.onnx")
    assert status == 1
    assert "`fn` must be a compiled pytensor.function, got function" in err


def test_cli_export_unsupported_op(capsys, tmp_path):
    script = write_script(tmp_path, """
        import pytensor.tensor as pt
        from pytensor.graph.basic import Apply
        from pytensor.graph.op import Op

        class NoRuleOp(Op):
            __props__ = ()
            def make_node(self, x):
                return Apply(self, [x], [x.type()])
            def perform(self, node, inputs, out):
                out[0][0] = inputs[0]

        x = pt.vector("x")
        inputs, outputs = [x], [NoRuleOp()(x)]
    """)
    status, _, err = run_cli(capsys, "export", script, "-o", tmp_path / "m.onnx")
    assert status == 1
    assert "NotImplementedError: No ONNX conversion for Op NoRuleOp" in err


def test_cli_export_bad_graph_arguments(capsys, tmp_path):
    script = write_script(tmp_path, """
        import pytensor.tensor as pt
        x, y = pt.vector("x"), pt.vector("y")
        inputs, outputs = [x], [x + y]
    """)
    status, _, err = run_cli(capsys, "export", script, "-o", tmp_path / "m.onnx")
    assert status == 1
    assert "ValueError: The outputs depend on variables that are not in inputs: y" in err


def test_cli_export_to_a_missing_directory(capsys, tmp_path):
    script = write_script(tmp_path, """
        import pytensor.tensor as pt
        x = pt.vector("x")
        inputs, outputs = [x], [x * 2]
    """)
    status, _, err = run_cli(capsys, "export", script, "-o", tmp_path / "absent" / "m.onnx")
    assert status == 1
    assert "pytensor-onnx export: error: FileNotFoundError: [Errno 2] the directory to write the model in does not exist" in err


def test_cli_export_missing_script(capsys, tmp_path):
    status, _, err = run_cli(capsys, "export", tmp_path / "absent.py", "-o", tmp_path / "m.onnx")
    assert status == 1
    assert "absent.py: no such file" in err


@pytest.mark.parametrize("opset, message", [("12", "opset 12 is outside the supported range 13.."),
                                            ("abc", "opset must be an integer, got 'abc'")])
def test_cli_export_bad_opset(capsys, tmp_path, opset, message):
    script = write_script(tmp_path, "x = 1\n")
    with pytest.raises(SystemExit) as info:
        cli.main(["export", str(script), "-o", str(tmp_path / "m.onnx"), "--opset", opset])
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_cli_requires_a_command(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main([])
    assert info.value.code == 2
    assert "COMMAND" in capsys.readouterr().err


# -- the installed command -------------------------------------------------------------


def test_console_script_entry_point(tmp_path):
    script = Path(sys.executable).parent / "pytensor-onnx"
    assert script.is_file(), "the pytensor-onnx entry point is not installed (pip install -e .)"
    result = subprocess.run([str(script), "ops"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == coverage_table(builtin_only=True)


def test_python_dash_m(tmp_path):
    result = subprocess.run([sys.executable, "-m", "pytensor_onnx.cli", "validate", str(tmp_path / "missing.onnx")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "missing.onnx: no such file" in result.stderr


def test_cli_export_skips_main_block_and_reports_exit(capsys, tmp_path):
    script = write_script(tmp_path, """
        import sys
        import pytensor.tensor as pt

        x = pt.vector("x")
        inputs, outputs = [x], [pt.exp(x)]
        if __name__ == "__main__":
            sys.exit(3)
    """)
    status, _, err = run_cli(capsys, "export", script, "-o", tmp_path / "m.onnx")
    assert status == 0, err
    assert (tmp_path / "m.onnx").is_file()

    exiting = write_script(tmp_path, "import sys\nsys.exit(4)\n", name="exiting.py")
    status, _, err = run_cli(capsys, "export", exiting, "-o", tmp_path / "n.onnx")
    assert status == 1
    assert "exiting.py called sys.exit(4) while being run for export" in err
