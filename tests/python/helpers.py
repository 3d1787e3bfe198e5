"""Helpers shared by the test modules: ``from helpers import ...``.

This directory has no ``__init__.py``, so pytest's default import mode
(prepend) puts it on ``sys.path`` and the test modules find this file as the
top-level module ``helpers``. (Fixtures live in conftest.py.)
"""

import os
import re

import numpy as np
import pytensor.tensor as pt
import onnxruntime as ort
import pytensor
import pytest

from pytensor_onnx.dispatch.utils import DATA_CHECK
from pytensor_onnx.mode import onnx_mode
from pytensor_onnx.runtime import default_session_options, newest_runtime_opset
from pytensor_onnx.testing import compare_onnx_and_py, py_function

#: The opsets the across-opsets tests run at: 13, the interface changes at
#: 15, 17 and 18, and the newest the installed onnx and ONNX Runtime support.
OPSETS = sorted({13, 15, 17, 18, newest_runtime_opset()})

FLOAT_DTYPES = ["float64", "float32"]
SIGNED_INT_DTYPES = ["int8", "int16", "int32", "int64"]
UNSIGNED_INT_DTYPES = ["uint8", "uint16", "uint32", "uint64"]
INT_DTYPES = [*SIGNED_INT_DTYPES, *UNSIGNED_INT_DTYPES]
ALL_DTYPES = [*FLOAT_DTYPES, *INT_DTYPES, "bool"]


def sample(rng, shape, dtype, low=-100, high=100, *, floats="normal", scale=1.0):
    """Random values of ``dtype`` and ``shape`` (negatives included where the dtype has them).

    - bool: True or False with equal odds;
    - integers: uniform over ``[low, high]`` (both ends included), clipped
      to the dtype's range, so small bounds keep sums and products clear of
      overflow;
    - floats: ``floats="normal"`` draws from a normal distribution of
      standard deviation ``scale``; ``floats="uniform"`` draws uniformly
      from ``[low, high)``.
    """
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("float"):
        if floats == "uniform":
            return rng.uniform(low, high, size=shape).astype(dtype)
        if floats != "normal":
            raise ValueError(f"floats must be 'normal' or 'uniform', got {floats!r}")
        return rng.normal(scale=scale, size=shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, low), min(info.max, high), size=shape, endpoint=True).astype(dtype)


def op_types(fn):
    """The PyTensor Op classes in a compiled function's graph (after rewrites)."""
    return {type(node.op) for node in fn.maker.fgraph.apply_nodes}


def onnx_op_types(fn):
    """The ONNX node types of an ONNX-mode function's model, in graph order.

    A call of a model-local function stands for its body's node types (as
    with ``export_onnx(..., inline_functions=True)``); ``onnx_function_names``
    lists the functions.
    """
    model = fn.maker.linker.onnx_model
    bodies = {(f.domain, f.name): f.node for f in model.functions}

    def expand(nodes):
        types = []
        for node in nodes:
            body = bodies.get((node.domain, node.op_type))
            types.extend(expand(body) if body is not None else [node.op_type])
        return types

    return expand(model.graph.node)


def kernel_loops(fn):
    """The ScalarLoops the kernel nodes of a mode-ONNX function's model run,
    each as a dict of its attributes (``input_dtypes``, ``program``,
    ``num_state``, ``next_state``, ``until``): ``ScalarLoop_<dtype>`` nodes,
    and the loop stages of ``Elemwise_<dtype>`` nodes (the core merges a
    loop into the element-wise nodes that feed and read it)."""
    import onnx

    from pytensor_onnx import kernels

    loops = []
    for node in fn.maker.linker.onnx_model.graph.node:
        if node.domain != kernels.DOMAIN:
            continue
        if node.op_type.startswith("ScalarLoop_"):
            attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            loops.append({k: v.decode() if isinstance(v, bytes) else v for k, v in attributes.items()})
        elif node.op_type.startswith("Elemwise_"):
            loops.extend(stage for stage in kernels.elemwise_stages(node) if "num_state" in stage)
    return loops


def onnx_function_names(model):
    """The names of a model's (ModelProto) model-local functions."""
    return [f.name for f in model.functions]


#: ONNX Runtime names the node whose kernel failed.
_FAILED_NODE = re.compile(r"running (\w+) node\. Name:'([^']*)'")


def _model_nodes(model):
    """Every node of a model: its graph, its functions, their subgraphs."""
    todo = [*model.graph.node, *(n for f in model.functions for n in f.node)]
    while todo:
        node = todo.pop()
        yield node
        for attr in node.attribute:
            todo.extend(n for g in [attr.g, *attr.graphs] for n in g.node)


def compare_raises(inputs, outputs, values, py_error, py_match, opset_version=None, *, onnx_fails=None):
    """ONNX mode must fail at run time where PyTensor's Python implementation
    raises, and for the same reason.

    ``onnx_fails`` says how (one form or a tuple of forms that are all right):

    - ``None``: mode ONNX raises ``py_error`` itself, its message matching
      ``py_match`` (converted checks, indices out of range);
    - ``"check"``: a data check of a rule (``dispatch.utils.check``): the
      Gather node named ``DATA_CHECK`` failed;
    - an ONNX op type (``"Reshape"``): ONNX Runtime's kernel of a node of
      that type in the model refuses its operands.
    """
    fn = pytensor.function(inputs, outputs, mode=onnx_mode(opset_version=opset_version))
    with pytest.raises(RuntimeError, match="ONNX Runtime failed to run the model|" + (py_match or "^$")) as info:
        fn(*values)
    error = info.value
    forms = onnx_fails if isinstance(onnx_fails, tuple) else (onnx_fails,)
    message = str(error)
    failed = _FAILED_NODE.search(message)
    nodes = {node.name: node for node in _model_nodes(fn.maker.linker.onnx_model)}
    seen = []
    for form in forms:
        if form is None:
            if isinstance(error, py_error) and re.search(py_match, message):
                break
            seen.append(f"not a {py_error.__name__} matching {py_match!r}")
        elif failed is None:
            seen.append(f"no failed node named (wanted {form})")
        elif failed.group(2) not in nodes or nodes[failed.group(2)].op_type != failed.group(1):
            seen.append(f"the failed node {failed.group(2)!r} is not a {failed.group(1)} of the model")
        elif form == "check":
            # The Gather read out of range of the portable form, or the
            # kernel library's Check node in mode ONNX (dispatch/utils.py).
            if (failed.group(1) == "Gather" or failed.group(1).startswith("Check_")) and DATA_CHECK in failed.group(2):
                break
            seen.append("not a rule's data check")
        elif failed.group(1) == form:
            break
        else:
            seen.append(f"failed in a {failed.group(1)} node, not {form}")
    else:
        raise AssertionError(f"mode ONNX failed for another reason ({'; '.join(seen)}): {type(error).__name__}: {message[:500]}")
    py_fn = py_function(inputs, outputs)
    with pytest.raises(py_error, match=py_match):
        py_fn(*values)


def run_model(model_or_path, *values):
    """Run a model (ModelProto or path) on ONNX Runtime, feeding ``values`` in input order."""
    if isinstance(model_or_path, str | os.PathLike):
        source = os.fspath(model_or_path)
    else:
        source = model_or_path.SerializeToString()
    session = ort.InferenceSession(source, providers=["CPUExecutionProvider"])
    feed = {graph_input.name: value for graph_input, value in zip(session.get_inputs(), values, strict=True)}
    return session.run(None, feed)


# Unary element-wise ops every elemwise test file runs over all dtypes.
UNARY_ELEMWISE = {
    "neg": lambda x: -x,
    "abs": pt.abs,
    "sign": pt.sign,
    "exp": pt.exp,
    "log": pt.log,
    "sqrt": pt.sqrt,
    "floor": pt.floor,
    "ceil": pt.ceil,
    "trunc": pt.trunc,
    "round_half_to_even": lambda x: pt.round(x, mode="half_to_even"),
    "round_half_away_from_zero": lambda x: pt.round(x, mode="half_away_from_zero"),
    "sqr": pt.sqr,
    "reciprocal": pt.reciprocal,
    "sigmoid": pt.sigmoid,
    "tanh": pt.tanh,
    "sin": pt.sin,
    "cos": pt.cos,
    "log2": pt.log2,
    "log10": pt.log10,
    "exp2": pt.exp2,
    "isnan": pt.isnan,
    "isinf": pt.isinf,
    "invert": lambda x: ~x,
}


def compare_binary_on_dtype(build, dtype, floats, ints, name="the function"):
    """``build(v, x)`` on two vectors of ``dtype`` against PyTensor (skipped
    where PyTensor refuses the dtype): ``floats`` (two arrays) for float
    dtypes, ``ints`` for integer ones, fixed bools for bool; float64 results
    to 1e-12, others to 1e-6."""
    v, x = pt.vector("v", dtype=dtype), pt.vector("x", dtype=dtype)
    try:
        out = build(v, x)
    except TypeError as error:  # PyTensor rejects the dtype itself
        pytest.skip(f"PyTensor has no {name} for {dtype}: {error}")
    if dtype == "bool":
        values = [np.array([False, True, True, False]), np.array([True, True, False, False])]
    elif dtype.startswith(("int", "uint")):
        values = [np.array(a).astype(dtype) for a in ints]
    else:
        values = [np.array(a).astype(dtype) for a in floats]
    rtol = 1e-6 if out[0].dtype != "float64" else 1e-12
    compare_onnx_and_py([v, x], out, values, rtol=rtol, atol=0)


def assert_interpreter_bits(test_file, case, compiled, tmp_path):
    """Compiled kernel programs must give the interpreter's bits: ``compiled``
    (the outputs of ``_case_results(case)`` of the test module ``test_file``,
    run here) against the same case run in a process with compiled programs
    off (``PYTENSOR_ONNX_COMPILE_KERNELS=0``), output by output, to the last bit."""
    import subprocess
    import sys
    from pathlib import Path

    from pytensor_onnx import compiled_kernels

    module = Path(test_file).stem
    script = (
        f"import sys, numpy as np; sys.path.insert(0, sys.argv[1]); import {module} as t; "
        "fn, results = t._case_results(sys.argv[2]); "
        "from pytensor_onnx import compiled_kernels; assert not compiled_kernels._COMPILED; "
        "np.savez(sys.argv[3], *results)"
    )
    out = tmp_path / "interpreted.npz"
    env = dict(os.environ, **{compiled_kernels.ENV_SWITCH: "0"})
    subprocess.run([sys.executable, "-c", script, str(Path(test_file).parent), case, str(out)], check=True, env=env)
    with np.load(out) as saved:
        interpreted = [saved[f"arr_{k}"] for k in range(len(saved.files))]
    assert len(interpreted) == len(compiled)
    for k, (got, want) in enumerate(zip(compiled, interpreted)):
        assert got.dtype == want.dtype and got.shape == want.shape, k
        assert got.tobytes() == want.tobytes(), f"output {k}: {got} != {want}"


def kernel_session(nodes, inputs, outputs):
    """A session of hand-made nodes (the kernel library registered): inputs
    and outputs as onnx.helper value infos."""
    from onnx import helper

    from pytensor_onnx import kernels

    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid(kernels.DOMAIN, 1)], ir_version=8
    )
    options = default_session_options()
    kernels.register(options)
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
