"""The ``pytensor-onnx`` command: export, inspect and validate ONNX models.

Subcommands::

    pytensor-onnx ops [--markdown]            the supported-op table
    pytensor-onnx inspect MODEL.onnx          opset, inputs/outputs, node counts, weights
    pytensor-onnx validate MODEL.onnx         onnx.checker (full check) + an ONNX Runtime session
    pytensor-onnx export SCRIPT.py -o OUT.onnx [--opset N]

``export`` runs SCRIPT.py (with ``__name__ == "__pytensor_onnx_export__"``, so
its ``if __name__ == "__main__":`` block is skipped) and exports what it
defines: either a compiled ``pytensor.function`` named ``fn``, or the variables
``inputs`` and ``outputs``.
"""

from __future__ import annotations

import argparse
import math
import os
import runpy
import sys
from collections import Counter

EXIT_OK = 0
EXIT_FAILURE = 1


class CLIError(Exception):
    """A failure to report as ``error: <message>`` with exit status 1."""


# -- ops ---------------------------------------------------------------------


def _cmd_ops(args) -> int:
    from pytensor_onnx.coverage import coverage_table, ops_markdown

    sys.stdout.write(ops_markdown() if args.markdown else coverage_table())
    return EXIT_OK


# -- inspect -----------------------------------------------------------------


def _load_model(path: str, *, load_external_data: bool):
    import onnx

    if not os.path.isfile(path):
        raise CLIError(f"{path}: no such file")
    try:
        return onnx.load(path, load_external_data=load_external_data)
    except Exception as exc:  # protobuf's DecodeError and friends
        raise CLIError(f"{path}: not a readable ONNX model ({type(exc).__name__}: {exc})") from exc


def _dtype_name(elem_type: int) -> str:
    import onnx

    try:
        return onnx.helper.tensor_dtype_to_np_dtype(elem_type).name
    except Exception:
        return onnx.TensorProto.DataType.Name(elem_type).lower()


def _describe_value_info(value_info) -> str:
    type_proto = value_info.type
    if not type_proto.HasField("tensor_type"):
        return f"{value_info.name}: {type_proto.WhichOneof('value')}"
    tensor_type = type_proto.tensor_type
    dtype = _dtype_name(tensor_type.elem_type)
    if not tensor_type.HasField("shape"):
        return f"{value_info.name}: {dtype}, rank unknown"
    dims = []
    for dim in tensor_type.shape.dim:
        if dim.HasField("dim_value"):
            dims.append(str(dim.dim_value))
        elif dim.HasField("dim_param"):
            dims.append(dim.dim_param)
        else:
            dims.append("?")
    described = f"{value_info.name}: {dtype}[{', '.join(dims)}]"
    return f"{described}  ({value_info.doc_string})" if value_info.doc_string else described


#: ``inspect`` shows metadata values up to this many characters (a PyMC layout can be long).
METADATA_SHOWN = 200


def _describe_metadata(prop) -> str:
    value = " ".join(prop.value.split())  # one line per entry
    if len(value) > METADATA_SHOWN:
        value = f"{value[:METADATA_SHOWN]}... ({len(prop.value)} characters; onnx.load(path).metadata_props has them)"
    return f"{prop.key}: {value}"


def _initializer_bytes(tensor) -> int:
    import onnx

    if tensor.data_type == onnx.TensorProto.STRING:
        return sum(len(s) for s in tensor.string_data)
    itemsize = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
    return math.prod(tensor.dims) * itemsize


def _count_nodes(graph, counts: Counter) -> None:
    """Count node types of ``graph`` and of its If/Loop/Scan bodies."""
    import onnx

    for node in graph.node:
        counts[node.op_type if not node.domain else f"{node.domain}.{node.op_type}"] += 1
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                _count_nodes(attr.g, counts)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for sub in attr.graphs:
                    _count_nodes(sub, counts)


def model_summary(model, path: str | None = None) -> str:
    """A human-readable summary of an ``onnx.ModelProto`` (what ``inspect`` prints)."""
    import onnx

    graph = model.graph
    lines = []
    if path is not None:
        lines.append(f"model:        {path} ({os.path.getsize(path)} bytes)")
    opsets = ", ".join(f"{imp.domain or 'ai.onnx'} {imp.version}" for imp in model.opset_import)
    lines.append(f"opset:        {opsets}")
    lines.append(f"ir_version:   {model.ir_version}")
    producer = " ".join(p for p in (model.producer_name, model.producer_version) if p)
    if producer:
        lines.append(f"producer:     {producer}")
    lines.append(f"graph:        {graph.name}")
    if model.doc_string or graph.doc_string:
        lines.append(f"doc_string:   {model.doc_string or graph.doc_string}")

    if model.metadata_props:
        lines.append("metadata:")
        lines += [f"  {_describe_metadata(prop)}" for prop in model.metadata_props]

    initializer_names = {t.name for t in graph.initializer}
    lines.append("inputs:")
    lines += [f"  {_describe_value_info(v)}" for v in graph.input if v.name not in initializer_names]
    lines.append("outputs:")
    lines += [f"  {_describe_value_info(v)}" for v in graph.output]

    counts: Counter = Counter()
    _count_nodes(graph, counts)
    lines.append(f"nodes:        {sum(counts.values())}")
    for op_type, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        lines.append(f"  {op_type:<24} {n}")
    if model.functions:
        lines.append(f"functions:    {', '.join(f'{f.domain}.{f.name}' for f in model.functions)}")

    n_external = sum(1 for t in graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL)
    total = sum(_initializer_bytes(t) for t in graph.initializer)
    external = f", {n_external} in external data" if n_external else ""
    lines.append(f"initializers: {len(graph.initializer)} ({total} bytes{external})")
    return "\n".join(lines) + "\n"


def _cmd_inspect(args) -> int:
    # External data is not read: sizes come from the tensors' dims and dtypes.
    model = _load_model(args.model, load_external_data=False)
    sys.stdout.write(model_summary(model, args.model))
    return EXIT_OK


# -- validate ----------------------------------------------------------------


def validate_model_file(path: str, providers=None) -> str:
    """Check ``path`` with ``onnx.checker`` (full check) and by creating an ONNX Runtime session.

    Returns a one-line success message; raises ``CLIError`` naming the failing step.
    """
    import onnx
    import onnxruntime as ort

    _load_model(path, load_external_data=False)
    try:
        # A path (not a loaded model) lets the checker follow external data.
        onnx.checker.check_model(path, full_check=True)
    except Exception as exc:
        raise CLIError(f"{path}: onnx.checker rejected the model: {exc}") from exc
    from pytensor_onnx.runtime import check_providers, quiet_session_options

    try:
        # ONNX Runtime would warn about a provider this build lacks and use the CPU one.
        providers = check_providers(providers)
    except ValueError as exc:
        raise CLIError(f"{path}: --provider {str(exc).split(': ', 1)[1]}") from exc
    options = quiet_session_options()  # the exception carries the message
    try:
        session = ort.InferenceSession(path, sess_options=options, providers=providers or ["CPUExecutionProvider"])
    except Exception as exc:
        raise CLIError(f"{path}: ONNX Runtime {ort.__version__} cannot load the model: {exc}") from exc
    return (
        f"{path}: valid (onnx.checker full check passed; ONNX Runtime {ort.__version__} loaded it "
        f"with {', '.join(session.get_providers())}; {len(session.get_inputs())} inputs, "
        f"{len(session.get_outputs())} outputs)\n"
    )


def _cmd_validate(args) -> int:
    sys.stdout.write(validate_model_file(args.model, providers=args.provider))
    return EXIT_OK


# -- export ------------------------------------------------------------------


def _run_script(path: str) -> dict:
    if not os.path.isfile(path):
        raise CLIError(f"{path}: no such file")
    script_dir = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, script_dir)  # like `python SCRIPT.py`: its siblings are importable
    try:
        return runpy.run_path(path, run_name="__pytensor_onnx_export__")
    except SystemExit as exc:
        raise CLIError(f"{path} called sys.exit({exc.code}) while being run for export") from exc
    finally:
        if sys.path and sys.path[0] == script_dir:
            del sys.path[0]


def export_script(path: str, output: str, *, opset_version: int | None = None, model_name: str | None = None,
                  external_data: bool = False):
    """Run ``path`` and export the ``fn`` or ``inputs``/``outputs`` it defines to ``output``."""
    from pytensor.compile import Function

    from pytensor_onnx.export import export_function_onnx, export_onnx

    namespace = _run_script(path)
    kwargs = {"external_data": external_data}
    if opset_version is not None:
        kwargs["opset_version"] = opset_version
    if model_name is not None:
        kwargs["model_name"] = model_name
    fn = namespace.get("fn")
    if fn is not None:
        if not isinstance(fn, Function):
            raise CLIError(f"{path}: `fn` must be a compiled pytensor.function, got {type(fn).__name__}")
        return export_function_onnx(fn, output, **kwargs)
    if "inputs" in namespace and "outputs" in namespace:
        return export_onnx(namespace["inputs"], namespace["outputs"], output, **kwargs)
    raise CLIError(
        f"{path} defines neither `fn` (a compiled pytensor.function) nor both `inputs` and `outputs` "
        "(PyTensor variables)"
    )


def _cmd_export(args) -> int:
    model = export_script(
        args.script, args.output, opset_version=args.opset, model_name=args.model_name,
        external_data=args.external_data,
    )
    n_nodes = len(model.graph.node)
    sys.stdout.write(
        f"wrote {args.output} (opset {model.opset_import[0].version}, {n_nodes} nodes, "
        f"{len(model.graph.initializer)} initializers)\n"
    )
    return EXIT_OK


# -- main --------------------------------------------------------------------


def _opset(text: str) -> int:
    from pytensor_onnx import _core

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"opset must be an integer, got {text!r}") from None
    if not _core.MIN_OPSET <= value <= _core.MAX_KNOWN_OPSET:
        raise argparse.ArgumentTypeError(
            f"opset {value} is outside the supported range {_core.MIN_OPSET}..{_core.MAX_KNOWN_OPSET}"
        )
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pytensor-onnx",
        description="Export PyTensor graphs to ONNX; inspect and validate ONNX models.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ops = sub.add_parser("ops", help="print the table of PyTensor ops that have ONNX rules")
    ops.add_argument("--markdown", action="store_true", help="print docs/ops.md (a Markdown page)")
    ops.set_defaults(handler=_cmd_ops)

    inspect = sub.add_parser("inspect", help="print opset, inputs/outputs, node counts and weight sizes")
    inspect.add_argument("model", metavar="FILE.onnx")
    inspect.set_defaults(handler=_cmd_inspect)

    validate = sub.add_parser("validate", help="check a model with onnx.checker and ONNX Runtime")
    validate.add_argument("model", metavar="FILE.onnx")
    validate.add_argument("--provider", action="append", metavar="NAME",
                          help="ONNX Runtime execution provider (repeatable; default CPUExecutionProvider)")
    validate.set_defaults(handler=_cmd_validate)

    export = sub.add_parser(
        "export",
        help="run a Python file and export the function it defines",
        description="Run SCRIPT.py and export either its compiled pytensor.function `fn` "
        "or its `inputs` and `outputs` variables. The script runs with __name__ set to "
        "'__pytensor_onnx_export__', so an `if __name__ == '__main__':` block is skipped.",
    )
    export.add_argument("script", metavar="SCRIPT.py")
    export.add_argument("-o", "--output", required=True, metavar="OUT.onnx")
    export.add_argument("--opset", type=_opset, default=None, metavar="N", help="ONNX opset (default 18)")
    export.add_argument("--model-name", default=None, help="graph name stored in the model")
    export.add_argument("--external-data", action="store_true",
                        help="store weights of 1 KiB or more in OUT.onnx.data")
    export.set_defaults(handler=_cmd_export)
    return parser


def main(argv=None) -> int:
    """Entry point of ``pytensor-onnx``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except CLIError as exc:
        print(f"pytensor-onnx {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except (NotImplementedError, TypeError, ValueError, OSError) as exc:
        # Conversion errors from export (unsupported Op, bad graph, an output
        # path that cannot be written) are the user's to fix; their messages
        # say how.
        if args.command != "export":
            raise
        print(f"pytensor-onnx export: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
