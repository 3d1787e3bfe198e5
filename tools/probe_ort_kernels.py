#!/usr/bin/env python
"""Empirically probe which input dtypes ONNX Runtime's CPU provider can run.

For every (op, dtype, opset) a minimal one-node model is built with
``onnx.helper``, validated with ``onnx.checker`` (full check, i.e. including
strict type inference), loaded into an ``onnxruntime.InferenceSession`` on the
CPUExecutionProvider and run on small deterministic data.  Each probe yields

* ``"ok"``               - the model loads and runs;
* ``"spec"``             - the ONNX checker rejects the model: the spec does not
                           allow this dtype for the op;
* ``"error: <message>"`` - the spec allows it but ONNX Runtime fails, either
                           when creating the session (``"error: load: ..."``,
                           typically a missing kernel) or when running it
                           (``"error: run: ..."``).

Graph optimizations are disabled so that every node really executes on its
kernel (otherwise e.g. an Identity node could be optimized away and hide a
missing kernel).

Usage::

    python tools/probe_ort_kernels.py [--out tools/ort_kernel_types.json]

writes the JSON result to stdout (and to ``--out``) and a compact summary
table to stderr.  ``probe(op_label, dtype, opset)`` is importable for tests.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

DTYPES = [
    "float16", "float32", "float64",
    "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
    "bool",
]
OPSETS = [13, 18, 26]

# IR version to use with each opset (opsets <= 18 use IR 8).
_IR_VERSIONS = {19: 9, 20: 9, 21: 10, 22: 10, 23: 11, 24: 12, 25: 13, 26: 13}


def ir_version_for(opset: int) -> int:
    return 8 if opset <= 18 else _IR_VERSIONS[opset]


# ---------------------------------------------------------------------------
# Test data
# ---------------------------------------------------------------------------

I64 = np.dtype(np.int64)
F32 = np.dtype(np.float32)
BOOL = np.dtype(bool)


def data(dt: np.dtype, shape=(2, 3)) -> np.ndarray:
    """Small, positive, deterministic values: 1,2,3,1,2,3,... (halved for floats)."""
    n = int(np.prod(shape))
    if dt == BOOL:
        values = np.arange(n) % 2 == 0
    else:
        values = np.arange(n) % 3 + 1
        if dt.kind == "f":
            values = values * 0.5
    return values.astype(dt).reshape(shape)


def scalar(value, dt: np.dtype) -> np.ndarray:
    return np.array(value).astype(dt)


def i64(*values) -> np.ndarray:
    return np.array(values, dtype=I64)


# ---------------------------------------------------------------------------
# Op catalogue
# ---------------------------------------------------------------------------


@dataclass
class Case:
    """A one-node test graph. ``outputs`` maps names to dtypes (None = input dtype)."""

    node: onnx.NodeProto
    feeds: dict[str, np.ndarray]
    outputs: dict[str, np.dtype | None]
    initializers: dict[str, np.ndarray] = field(default_factory=dict)


Builder = Callable[[np.dtype, int], Case]


@dataclass
class OpSpec:
    op_type: str
    build: Builder
    min_opset: int = 1  # for variants newer than the op itself (e.g. attributes)


def _node(op_type, inputs, outputs, **attrs):
    return helper.make_node(op_type, inputs, outputs, **attrs)


def unary(op_type: str, out: np.dtype | None = None, **attrs) -> OpSpec:
    return OpSpec(op_type, lambda t, opset: Case(
        _node(op_type, ["x"], ["y"], **attrs), {"x": data(t)}, {"y": out}))


def binary(op_type: str, out: np.dtype | None = None, **attrs) -> OpSpec:
    return OpSpec(op_type, lambda t, opset: Case(
        _node(op_type, ["x", "z"], ["y"], **attrs),
        {"x": data(t), "z": data(t)[::-1].copy()}, {"y": out}))


def reduction(op_type: str) -> OpSpec:
    def build(t, opset):
        # ReduceSum takes axes as an input from opset 13, the others from 18.
        if op_type == "ReduceSum" or opset >= 18:
            node = _node(op_type, ["x", "axes"], ["y"], keepdims=0)
            return Case(node, {"x": data(t)}, {"y": None}, {"axes": i64(1)})
        node = _node(op_type, ["x"], ["y"], axes=[1], keepdims=0)
        return Case(node, {"x": data(t)}, {"y": None})
    return OpSpec(op_type, build)


def with_inits(op_type: str, inits: dict[str, np.ndarray], x_shape=(2, 3),
               outputs=("y",), **attrs) -> OpSpec:
    """Data input ``x`` of the probed dtype followed by constant (initializer) inputs."""
    return OpSpec(op_type, lambda t, opset: Case(
        _node(op_type, ["x", *inits], list(outputs), **attrs),
        {"x": data(t, x_shape)}, {o: None for o in outputs}, dict(inits)))


def matmul_like(op_type: str, **attrs) -> OpSpec:
    return OpSpec(op_type, lambda t, opset: Case(
        _node(op_type, ["a", "b"], ["y"], **attrs),
        {"a": data(t, (2, 3)), "b": data(t, (3, 2))}, {"y": None}))


def _where(t, opset):
    return Case(_node("Where", ["c", "x", "z"], ["y"]),
                {"c": data(BOOL), "x": data(t), "z": data(t)[::-1].copy()}, {"y": None})


def _clip(t, opset):
    return Case(_node("Clip", ["x", "lo", "hi"], ["y"]), {"x": data(t)}, {"y": None},
                {"lo": scalar(1, t), "hi": scalar(2, t)})


def _range(t, opset):
    return Case(_node("Range", ["start", "limit", "delta"], ["y"]),
                {"start": scalar(1, t), "limit": scalar(5, t), "delta": scalar(1, t)},
                {"y": None})


def _scatter_nd(**attrs) -> Builder:
    def build(t, opset):
        return Case(_node("ScatterND", ["x", "idx", "upd"], ["y"], **attrs),
                    {"x": data(t), "upd": data(t, (2,))}, {"y": None},
                    {"idx": i64([0, 1], [1, 2])})
    return build


def _scatter_elements(**attrs) -> Builder:
    def build(t, opset):
        return Case(_node("ScatterElements", ["x", "idx", "upd"], ["y"], axis=1, **attrs),
                    {"x": data(t), "upd": data(t)}, {"y": None},
                    {"idx": i64([0, 1, 2], [2, 1, 0])})
    return build


def _cast_from(t, opset):
    return Case(_node("Cast", ["x"], ["y"], to=onnx.TensorProto.FLOAT),
                {"x": data(t)}, {"y": F32})


def _cast_to(t, opset):
    return Case(_node("Cast", ["x"], ["y"], to=helper.np_dtype_to_tensor_dtype(t)),
                {"x": data(F32)}, {"y": t})


def _constant_of_shape(t, opset):
    value = numpy_helper.from_array(np.ones(1, dtype=t))
    return Case(_node("ConstantOfShape", ["shape"], ["y"], value=value),
                {}, {"y": t}, {"shape": i64(2, 3)})


def _topk(t, opset):
    return Case(_node("TopK", ["x", "k"], ["values", "indices"]),
                {"x": data(t)}, {"values": None, "indices": I64}, {"k": i64(2)})


OPS: dict[str, OpSpec] = {
    "Add": binary("Add"),
    "Sub": binary("Sub"),
    "Mul": binary("Mul"),
    "Div": binary("Div"),
    "Mod_fmod0": binary("Mod", fmod=0),
    "Mod_fmod1": binary("Mod", fmod=1),
    "Neg": unary("Neg"),
    "Abs": unary("Abs"),
    "Sign": unary("Sign"),
    "Max": binary("Max"),
    "Min": binary("Min"),
    "Pow": binary("Pow"),
    "Exp": unary("Exp"),
    "Log": unary("Log"),
    "Sqrt": unary("Sqrt"),
    "Floor": unary("Floor"),
    "Ceil": unary("Ceil"),
    "Round": unary("Round"),
    "Reciprocal": unary("Reciprocal"),
    "Equal": binary("Equal", BOOL),
    "Less": binary("Less", BOOL),
    "Greater": binary("Greater", BOOL),
    "LessOrEqual": binary("LessOrEqual", BOOL),
    "GreaterOrEqual": binary("GreaterOrEqual", BOOL),
    "Not": unary("Not"),
    "And": binary("And", BOOL),
    "Or": binary("Or", BOOL),
    "Xor": binary("Xor", BOOL),
    "Where": OpSpec("Where", _where),
    "IsNaN": unary("IsNaN", BOOL),
    "IsInf": unary("IsInf", BOOL),
    "Clip": OpSpec("Clip", _clip),
    "ReduceSum": reduction("ReduceSum"),
    "ReduceProd": reduction("ReduceProd"),
    "ReduceMax": reduction("ReduceMax"),
    "ReduceMin": reduction("ReduceMin"),
    "ReduceMean": reduction("ReduceMean"),
    "ReduceLogSumExp": reduction("ReduceLogSumExp"),
    "ReduceL1": reduction("ReduceL1"),
    "ReduceL2": reduction("ReduceL2"),
    "ReduceLogSum": reduction("ReduceLogSum"),
    "ReduceSumSquare": reduction("ReduceSumSquare"),
    "ArgMax": unary("ArgMax", I64, axis=1, keepdims=0),
    "ArgMin": unary("ArgMin", I64, axis=1, keepdims=0),
    "MatMul": matmul_like("MatMul"),
    "Gemm": matmul_like("Gemm"),
    "Softmax": unary("Softmax"),
    "LogSoftmax": unary("LogSoftmax"),
    "CumSum": with_inits("CumSum", {"axis": scalar(1, I64)}),
    "Trilu": unary("Trilu"),
    "Range": OpSpec("Range", _range),
    "Gather": with_inits("Gather", {"idx": i64(1, 0)}, axis=0),
    "GatherElements": with_inits("GatherElements", {"idx": i64([0, 1, 2], [2, 2, 0])}, axis=1),
    "GatherND": with_inits("GatherND", {"idx": i64([0, 1], [1, 2])}),
    "ScatterND": OpSpec("ScatterND", _scatter_nd()),
    "ScatterND_add": OpSpec("ScatterND", _scatter_nd(reduction="add"), min_opset=16),
    "ScatterElements": OpSpec("ScatterElements", _scatter_elements()),
    "ScatterElements_add": OpSpec("ScatterElements", _scatter_elements(reduction="add"),
                                  min_opset=16),
    "Slice": with_inits("Slice", {"starts": i64(0), "ends": i64(2), "axes": i64(1)}),
    "Concat": binary("Concat", axis=0),
    "Transpose": unary("Transpose"),
    "Reshape": with_inits("Reshape", {"shape": i64(3, 2)}),
    "Expand": with_inits("Expand", {"shape": i64(2, 2, 3)}),
    "Tile": with_inits("Tile", {"repeats": i64(2, 1)}),
    "Identity": unary("Identity"),
    "Cast_from": OpSpec("Cast", _cast_from),
    "Cast_to": OpSpec("Cast", _cast_to),
    "Unique": unary("Unique"),
    "NonZero": unary("NonZero", I64),
    "TopK": OpSpec("TopK", _topk),
    "Pad": with_inits("Pad", {"pads": i64(0, 1, 0, 1)}, mode="constant"),
    "Einsum": matmul_like("Einsum", equation="ij,jk->ik"),
    "ConstantOfShape": OpSpec("ConstantOfShape", _constant_of_shape),
    "Size": unary("Size", I64),
    "Shape": unary("Shape", I64),
    "Squeeze": with_inits("Squeeze", {"axes": i64(1)}, x_shape=(2, 1, 3)),
    "Unsqueeze": with_inits("Unsqueeze", {"axes": i64(0)}),
    "Split": with_inits("Split", {"split": i64(1, 2)}, outputs=("y0", "y1"), axis=1),
    "Sum": binary("Sum"),
    "Mean": binary("Mean"),
    "BitwiseAnd": binary("BitwiseAnd"),
    "BitwiseOr": binary("BitwiseOr"),
    "BitwiseXor": binary("BitwiseXor"),
    "BitwiseNot": unary("BitwiseNot"),
    "BitShift": binary("BitShift", direction="LEFT"),
    "Sigmoid": unary("Sigmoid"),
    "Tanh": unary("Tanh"),
    "Sin": unary("Sin"),
    "Cos": unary("Cos"),
    "Erf": unary("Erf"),
    "Softplus": unary("Softplus"),
}


# ---------------------------------------------------------------------------
# Probing
# ---------------------------------------------------------------------------


def applicable(op_label: str, opset: int) -> bool:
    """Whether the op (variant) exists in the default ONNX domain at ``opset``."""
    spec = OPS[op_label]
    if opset < spec.min_opset:
        return False
    try:
        onnx.defs.get_schema(spec.op_type, opset)
    except onnx.defs.SchemaError:
        return False
    return True


def build_model(op_label: str, dtype: str, opset: int) -> tuple[onnx.ModelProto, dict]:
    """Return the one-node model (graph outputs carry no shape yet) and its input feeds."""
    t = np.dtype(dtype)
    case = OPS[op_label].build(t, opset)

    def value_info(name, dt, shape=None):
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(dt), shape)

    graph = helper.make_graph(
        [case.node],
        f"probe_{op_label}",
        inputs=[value_info(n, a.dtype, a.shape) for n, a in case.feeds.items()],
        outputs=[value_info(n, t if dt is None else dt) for n, dt in case.outputs.items()],
        initializer=[numpy_helper.from_array(a, n) for n, a in case.initializers.items()],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", opset)],
        ir_version=ir_version_for(opset),
        producer_name="probe_ort_kernels",
    )
    return model, case.feeds


def _short(exc: Exception, limit: int = 200) -> str:
    """First line of an error message, without ORT's boilerplate."""
    msg = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    # "[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : ..." -> "NOT_IMPLEMENTED : ..."
    if msg.startswith("[ONNXRuntimeError]"):
        msg = msg.split(" : ", 2)[-1]
    # Run-time failures: keep the status code and the kernel's own message.
    code, sep, status = msg.partition(" : Non-zero status code returned while running ")
    if sep and "Status Message: " in status:
        status = status.split("Status Message: ", 1)[1]
        # Drop a leading "<file>:<line> <function signature>" if present.
        if status.startswith("/") and " const " in status:
            status = status.rsplit(" const ", 1)[1]
            if status.startswith("["):
                status = status.split("] ", 1)[-1]
        msg = f"{code} : {status}"
    return msg if len(msg) <= limit else msg[: limit - 3] + "..."


def check_spec(model: onnx.ModelProto) -> onnx.ModelProto:
    """Validate ``model`` against the ONNX spec and return it with inferred output shapes.

    Graph outputs are built without shapes (the checker requires them), so
    strict shape/type inference runs first - this is also where a dtype the
    op's type constraints forbid is rejected - followed by the full checker.
    Raises ``onnx.checker.ValidationError`` or ``onnx.shape_inference.InferenceError``.
    """
    model = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    onnx.checker.check_model(model, full_check=True)
    return model


def _session_options() -> ort.SessionOptions:
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 4  # fatal only: failures are reported in the result
    return opts


def _run_options() -> ort.RunOptions:
    opts = ort.RunOptions()
    opts.log_severity_level = 4
    return opts


def probe(op_label: str, dtype: str, opset: int, *, verbose: bool = False) -> str:
    """Probe one (op, dtype, opset) combination.

    Returns "ok", "spec", "error: load: <msg>", "error: run: <msg>", or "n/a"
    if the op (variant) does not exist at ``opset``.
    """
    if not applicable(op_label, opset):
        return "n/a"
    model, feeds = build_model(op_label, dtype, opset)
    try:
        model = check_spec(model)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
        if verbose:
            print(f"[spec] {op_label} {opset} {dtype}: {_short(exc, 500)}", file=sys.stderr)
        return "spec"
    try:
        sess = ort.InferenceSession(model.SerializeToString(), _session_options(),
                                    providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - any ORT failure is a result
        return f"error: load: {_short(exc)}"
    try:
        sess.run(None, feeds, _run_options())
    except Exception as exc:  # noqa: BLE001
        return f"error: run: {_short(exc)}"
    return "ok"


def probe_all(ops=None, opsets=OPSETS, dtypes=DTYPES, *, verbose=False) -> dict:
    """Probe everything; combinations where the op does not exist are omitted."""
    results: dict[str, dict[str, dict[str, str]]] = {}
    for label in ops or OPS:
        per_opset = {}
        for opset in opsets:
            if applicable(label, opset):
                per_opset[str(opset)] = {
                    dt: probe(label, dt, opset, verbose=verbose) for dt in dtypes}
        results[label] = per_opset
    return {"onnxruntime": ort.__version__, "onnx": onnx.__version__, "results": results}


# ---------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------

_SHORT = {
    "float16": "f16", "float32": "f32", "float64": "f64",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool",
}


def summary(result: dict) -> str:
    """One line per op and group of opsets with identical outcome.

    ``ok:`` lists runnable dtypes; ``ort-missing:`` lists dtypes the spec allows
    but ORT fails on (``*`` marks failures at run time rather than load time).
    """
    lines = []
    width = max(map(len, result["results"])) + 1
    for label, per_opset in result["results"].items():
        groups: dict[tuple, list[str]] = {}
        for opset, by_dtype in per_opset.items():
            ok = tuple(_SHORT[d] for d, r in by_dtype.items() if r == "ok")
            missing = tuple(_SHORT[d] + ("*" if r.startswith("error: run") else "")
                            for d, r in by_dtype.items() if r.startswith("error"))
            groups.setdefault((ok, missing), []).append(opset)
        for (ok, missing), opsets in groups.items():
            line = f"{label:<{width}} {','.join(opsets):<9} ok: {' '.join(ok) or '-'}"
            if missing:
                line += f"   ort-missing: {' '.join(missing)}"
            lines.append(line)
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="also write the JSON result to this path")
    parser.add_argument("--ops", nargs="*", help="op labels to probe (default: all)")
    parser.add_argument("--opsets", nargs="*", type=int, default=OPSETS)
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print checker messages for 'spec' results to stderr")
    args = parser.parse_args(argv)

    unknown = set(args.ops or ()) - set(OPS)
    if unknown:
        parser.error(f"unknown op labels: {sorted(unknown)}")

    result = probe_all(args.ops, args.opsets, verbose=args.verbose)
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")
    print(summary(result), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
