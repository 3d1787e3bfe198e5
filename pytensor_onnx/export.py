"""Export PyTensor graphs and compiled functions to ONNX models."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

import pytensor
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.basic import Constant, Variable
from pytensor.graph.fg import FunctionGraph
from pytensor.graph.traversal import graph_inputs

from pytensor_onnx import _core
from pytensor_onnx.dispatch import fgraph_to_onnx
from pytensor_onnx.dispatch.basic import ONNX_OPSET_VERSION

logger = logging.getLogger("pytensor_onnx")

#: Initializers of at least this many bytes go to an external-data file when
#: exporting to a path with ``external_data=True``.
EXTERNAL_DATA_THRESHOLD = 1024


def _as_variable_list(values, what: str) -> list[Variable]:
    if isinstance(values, Variable):
        return [values]
    if not isinstance(values, Sequence) or isinstance(values, str):
        raise TypeError(f"{what} must be a PyTensor Variable or a list of Variables, got {type(values).__name__}")
    result = list(values)
    for i, v in enumerate(result):
        if not isinstance(v, Variable):
            raise TypeError(f"{what}[{i}] must be a PyTensor Variable, got {type(v).__name__}: {v!r}")
    return result


def _check_names(names, what: str) -> list[str] | None:
    if names is None:
        return None
    if isinstance(names, str) or not isinstance(names, Sequence):
        raise TypeError(f"{what} must be a list of strings, got {type(names).__name__}")
    names = list(names)
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name:
            raise TypeError(f"{what}[{i}] must be a non-empty string, got {name!r}")
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"{what} must be unique; repeated: {', '.join(duplicates)}")
    return names


def _check_model_args(model_name, doc_string, filename, external_data) -> None:
    if not isinstance(model_name, str) or not model_name:
        raise TypeError("model_name must be a non-empty string")
    if not isinstance(doc_string, str):
        raise TypeError("doc_string must be a string")
    if filename is not None and not isinstance(filename, str | os.PathLike):
        raise TypeError(f"filename must be a str or os.PathLike, got {type(filename).__name__}")
    if external_data and filename is None:
        raise ValueError("external_data=True needs a filename to write the data file next to")


def _check_opset(opset_version) -> int:
    if isinstance(opset_version, bool) or not isinstance(opset_version, int):
        raise TypeError(f"opset_version must be an int, got {type(opset_version).__name__}")
    if not _core.MIN_OPSET <= opset_version <= _core.MAX_KNOWN_OPSET:
        raise ValueError(
            f"opset_version {opset_version} is outside the supported range "
            f"{_core.MIN_OPSET}..{_core.MAX_KNOWN_OPSET}"
        )
    return opset_version


def _build_fgraph(inputs, outputs, shared_values=None):
    """A FunctionGraph over ``inputs`` plus the shared variables ``outputs`` read."""
    for i, inp in enumerate(inputs):
        if isinstance(inp, Constant):
            raise TypeError(f"inputs[{i}] is a Constant; graph inputs must be symbolic variables")
        if isinstance(inp, SharedVariable):
            # PyTensor rejects shared variables as explicit function inputs too.
            raise TypeError(
                f"inputs[{i}] is the shared variable {inp}; shared variables are baked into the model "
                "as initializers, so leave it out of inputs (or, to feed it at run time, replace it by a "
                "symbolic variable with pytensor.graph.replace.graph_replace)"
            )
    if len(set(inputs)) != len(inputs):
        raise ValueError("inputs contains the same variable more than once")
    missing = []
    shared = []
    # Inputs block the walk: a non-root input cuts the graph there, as in pytensor.function.
    for var in graph_inputs(outputs, blockers=inputs):
        if var in inputs or isinstance(var, Constant):
            continue
        if isinstance(var, SharedVariable):
            if var not in shared:
                shared.append(var)
        else:
            missing.append(var)
    if missing:
        names = ", ".join(str(v) for v in missing)
        raise ValueError(f"The outputs depend on variables that are not in inputs: {names}. Add them to inputs.")
    fgraph = FunctionGraph(list(inputs) + shared, outputs, clone=True)
    values = {}
    for orig, cloned in zip(shared, fgraph.inputs[len(inputs):]):
        values[cloned] = shared_values[orig] if shared_values and orig in shared_values else orig.get_value(borrow=True)
    return fgraph, values


def _rewrite(fgraph):
    import pytensor

    from pytensor_onnx.mode import ONNX

    # Every node a rewrite creates records the Python stack that made it
    # (tag.trace, up to traceback__limit frames), for PyTensor's error
    # messages of compiled functions. The exported graph is thrown away after
    # conversion, and walking the stack was about a third of the export time
    # of a 1,000-op chain (9.5-11.3 s -> 6.2-7.7 s; bench/conversion.py).
    with pytensor.config.change_flags(traceback__limit=0):
        ONNX.optimizer.rewrite(fgraph)


def _serialize(builder, filename, model_name, doc_string, external_data):
    import onnx

    from pytensor_onnx import __version__

    if filename is None:
        data = builder.serialize(graph_name=model_name, doc_string=doc_string, producer_version=__version__)
        return onnx.load_from_string(data)
    path = os.fspath(filename)
    kwargs = {}
    if external_data:
        location = os.path.basename(path) + ".data"
        kwargs = dict(
            external_data_path=os.path.join(os.path.dirname(os.path.abspath(path)), location),
            external_data_location=location,
            external_data_threshold=EXTERNAL_DATA_THRESHOLD,
        )
    data = builder.serialize(graph_name=model_name, doc_string=doc_string, producer_version=__version__, **kwargs)
    with open(path, "wb") as f:
        f.write(data)
    logger.info("wrote ONNX model to %s (%d bytes)", path, len(data))
    return onnx.load_from_string(data) if not external_data else onnx.load(path)


def export_onnx(
    inputs,
    outputs,
    filename=None,
    *,
    opset_version: int = ONNX_OPSET_VERSION,
    model_name: str = "pytensor_graph",
    doc_string: str = "",
    optimize: bool = True,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    external_data: bool = False,
):
    """Export the symbolic graph from ``inputs`` to ``outputs`` as an ONNX model.

    Shared variables the outputs read are baked in as initializers (their
    current values). Dims that PyTensor's types leave unknown stay symbolic,
    each with its own name; static dims are written as static.

    Parameters
    ----------
    inputs, outputs
        A Variable or list of Variables.
    filename
        Where to write the ``.onnx`` file (optional).
    opset_version
        Target ONNX opset (13 to the newest this library knows).
    model_name, doc_string
        Stored in the model.
    optimize
        Run PyTensor's rewrites (those the ONNX mode runs) and the C++ graph
        passes before writing.
    input_names, output_names
        ONNX names for the graph inputs and outputs (default: the variables'
        names where unique, else ``input_<i>`` / ``output_<i>``).
    external_data
        With ``filename``: store initializers of at least 1 KiB in
        ``<filename>.data`` next to the model (needed beyond 2 GiB).

    Returns
    -------
    onnx.ModelProto
    """
    inputs = _as_variable_list(inputs, "inputs")
    outputs = _as_variable_list(outputs, "outputs")
    if not outputs:
        raise ValueError("outputs is empty; an ONNX model needs at least one output")
    opset_version = _check_opset(opset_version)
    input_names = _check_names(input_names, "input_names")
    output_names = _check_names(output_names, "output_names")
    _check_model_args(model_name, doc_string, filename, external_data)
    fgraph, shared_values = _build_fgraph(inputs, outputs)
    return _export_fgraph(
        fgraph, shared_values, filename, opset_version, model_name, doc_string, optimize,
        input_names, output_names, external_data,
    )


def _export_fgraph(fgraph, shared_values, filename, opset_version, model_name, doc_string, optimize,
                   input_names, output_names, external_data):
    if optimize:
        _rewrite(fgraph)
    converted = fgraph_to_onnx(
        fgraph,
        opset_version=opset_version,
        shared_as_initializers=True,
        initializer_values=shared_values,
        optimize=optimize,
        input_names=input_names,
        output_names=output_names,
    )
    return _serialize(converted.builder, filename, model_name, doc_string, external_data)


def export_function_onnx(
    fn,
    filename=None,
    *,
    opset_version: int = ONNX_OPSET_VERSION,
    model_name: str = "pytensor_function",
    doc_string: str = "",
    external_data: bool = False,
):
    """Export a compiled ``pytensor.function`` (any mode) to an ONNX model.

    The function's explicit inputs become graph inputs; its shared variables
    are baked in with the values the function currently holds. Updates are not
    part of the model (an ONNX model is a pure function of its inputs).
    """
    maker = getattr(fn, "maker", None)
    if maker is None or not hasattr(maker, "inputs"):
        raise TypeError(f"fn must be a compiled pytensor.function, got {type(fn).__name__}")
    opset_version = _check_opset(opset_version)
    _check_model_args(model_name, doc_string, filename, external_data)
    explicit = [inp.variable for inp in maker.inputs if not inp.implicit]
    shared_values = {
        inp.variable: container.data
        for inp, container in zip(maker.inputs, fn.input_storage)
        if inp.implicit
    }
    outputs = [out.variable for out in maker.outputs]
    if not outputs:
        raise ValueError("fn has no outputs (only updates); an ONNX model needs at least one output")
    fgraph, values = _build_fgraph(explicit, outputs, shared_values)
    return _export_fgraph(
        fgraph, values, filename, opset_version, model_name, doc_string, True, None, None, external_data,
    )


def compile_onnx(inputs, outputs, *, opset_version: int | None = None, session_options=None, providers=None,
                 **function_kwargs):
    """``pytensor.function(inputs, outputs, ...)`` running on ONNX Runtime."""
    from pytensor_onnx.mode import ONNX, onnx_mode

    if "mode" in function_kwargs:
        raise TypeError("compile_onnx chooses the mode; pass opset_version/session_options/providers instead")
    if opset_version is None and session_options is None and providers is None:
        mode = ONNX
    else:
        if opset_version is not None:
            _check_opset(opset_version)
        mode = onnx_mode(opset_version, session_options, providers)
    return pytensor.function(inputs, outputs, mode=mode, **function_kwargs)
