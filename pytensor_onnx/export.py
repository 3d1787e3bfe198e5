"""Export PyTensor graphs and compiled functions to ONNX models."""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pytensor
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.basic import Constant, Variable
from pytensor.graph.fg import FunctionGraph
from pytensor.graph.traversal import graph_inputs

from pytensor_onnx import mode as onnx_modes
from pytensor_onnx.dispatch import fgraph_to_onnx
from pytensor_onnx.dispatch.basic import ONNX_OPSET_VERSION, check_opset
from pytensor_onnx.dispatch.optional import register_optional_rules

logger = logging.getLogger("pytensor_onnx")

#: Initializers of at least this many bytes go to an external-data file when
#: a model is written with external data.
EXTERNAL_DATA_THRESHOLD = 1024

#: A serialized ONNX model is one protobuf message, which cannot exceed 2 GiB.
#: With ``external_data=None`` (the default) a model whose initializers hold
#: more than this many bytes is written with external data. Tests lower it.
PROTOBUF_LIMIT = 2**31 - 1

#: Room kept under PROTOBUF_LIMIT for the graph itself (nodes, names, shapes).
_GRAPH_HEADROOM = 64 * 2**20

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
    if external_data not in (None, True, False):
        raise TypeError(f"external_data must be None (automatic), True or False, got {external_data!r}")
    if external_data and filename is None:
        raise ValueError("external_data=True needs a filename to write the data file next to")


def check_string_map(mapping, what: str) -> dict[str, str]:
    if mapping is None:
        return {}
    if not isinstance(mapping, Mapping):
        raise TypeError(f"{what} must be a mapping of strings to strings, got {type(mapping).__name__}")
    for key, value in mapping.items():
        if not isinstance(key, str) or not key or not isinstance(value, str):
            raise TypeError(f"{what} must map non-empty strings to strings; got {key!r}: {value!r}")
    return dict(mapping)


def _docs_by_name(docs, names: list[str], what: str) -> dict[str, str]:
    """``docs`` as {ONNX name: doc}: given as a mapping by name, or a list aligned with ``names``."""
    if docs is None:
        return {}
    if isinstance(docs, Mapping):
        docs = check_string_map(docs, what)
        unknown = sorted(set(docs) - set(names))
        if unknown:
            raise ValueError(f"{what} names {', '.join(unknown)}, which are not among {', '.join(names)}")
        return docs
    if isinstance(docs, str) or not isinstance(docs, Sequence):
        raise TypeError(f"{what} must be a mapping by name or a list of strings, got {type(docs).__name__}")
    if len(docs) != len(names):
        raise ValueError(f"{what} has {len(docs)} entries for {len(names)} names")
    for i, doc in enumerate(docs):
        if not isinstance(doc, str):
            raise TypeError(f"{what}[{i}] must be a string, got {doc!r}")
    return {name: doc for name, doc in zip(names, docs) if doc}


@dataclass
class ExportOptions:
    """What export_onnx and export_function_onnx were asked for, checked."""

    filename: str | os.PathLike | None = None
    opset_version: int = ONNX_OPSET_VERSION
    model_name: str = "pytensor_graph"
    doc_string: str = ""
    optimize: bool = True
    input_names: list[str] | None = None
    output_names: list[str] | None = None
    external_data: bool | None = None
    float32: bool = False
    metadata: dict[str, str] = field(default_factory=dict)
    input_docs: object = None
    output_docs: object = None
    inline_functions: bool = False

    def __post_init__(self):
        self.opset_version = check_opset(self.opset_version)
        self.input_names = _check_names(self.input_names, "input_names")
        self.output_names = _check_names(self.output_names, "output_names")
        _check_model_args(self.model_name, self.doc_string, self.filename, self.external_data)
        if not isinstance(self.optimize, bool):
            raise TypeError(f"optimize must be a bool, got {type(self.optimize).__name__}")
        if self.filename is not None:
            _check_writable(os.fspath(self.filename))
        if not isinstance(self.float32, bool):
            raise TypeError(f"float32 must be a bool, got {self.float32!r}")
        self.metadata = check_string_map(self.metadata, "metadata")
        if not isinstance(self.inline_functions, bool):
            raise TypeError(f"inline_functions must be a bool, got {type(self.inline_functions).__name__}")


def _check_writable(path: str) -> None:
    """Fail before the conversion (which can take long), not after it, when
    the model cannot be written to ``path``."""
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "filename is a directory, not a file to write the model to", path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(errno.ENOENT, "the directory to write the model in does not exist", directory)
    if not os.access(directory, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise PermissionError(errno.EACCES, "no permission to write the model there", path)


def build_fgraph(inputs, outputs, shared_values=None):
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


def rewrite_for_export(fgraph, including=()):
    """Rewrite ``fgraph`` in place as export does: the ONNX rewrite set of
    the portable conversion, plus the rewrites tagged ``including``."""
    # Read at call time: the portable mode may be replaced (tests do).
    portable = onnx_modes.PORTABLE_ONNX
    mode = portable.including(*including) if including else portable
    # Every node a rewrite creates records the Python stack that made it
    # (tag.trace, up to traceback__limit frames), for PyTensor's error
    # messages of compiled functions. The exported graph is thrown away after
    # conversion, and walking the stack was about a third of the export time
    # of a 1,000-op chain (9.5-11.3 s -> 6.2-7.7 s; bench/conversion.py).
    with pytensor.config.change_flags(traceback__limit=0):
        mode.optimizer.rewrite(fgraph)


def model_metadata(options: ExportOptions) -> list[tuple[str, str]]:
    """The metadata_props of an exported model: what made it, then the user's entries."""
    from pytensor_onnx.compat import PYTENSOR_VERSION

    entries = {"pytensor_version": PYTENSOR_VERSION}
    if options.float32:
        entries["pytensor_onnx.float32"] = "float64 values were exported as float32"
    entries.update(options.metadata)
    return list(entries.items())


def _wants_external_data(builder, options: ExportOptions) -> bool:
    if options.external_data is not None:
        return options.external_data
    nbytes = builder.initializer_nbytes()
    if nbytes + _GRAPH_HEADROOM <= PROTOBUF_LIMIT:
        return False
    if options.filename is None:
        raise ValueError(
            f"The model's initializers hold {nbytes} bytes, more than one protobuf message can (2 GiB): "
            "pass a filename, and the weights go to an external-data file next to it"
        )
    return True


def _serialize(converted, options: ExportOptions):
    import onnx

    from pytensor_onnx import __version__

    builder = converted.builder
    value_docs = {
        **_docs_by_name(options.input_docs, list(converted.input_names), "input_docs"),
        **_docs_by_name(options.output_docs, list(converted.output_names), "output_docs"),
    }
    common = dict(
        graph_name=options.model_name, doc_string=options.doc_string, producer_version=__version__,
        metadata=model_metadata(options), value_docs=value_docs,
    )
    external_data = _wants_external_data(builder, options)
    if options.filename is None:
        return onnx.load_from_string(builder.serialize(**common))
    path = os.fspath(options.filename)
    if external_data:
        location = os.path.basename(path) + ".data"
        common.update(
            external_data_path=os.path.join(os.path.dirname(os.path.abspath(path)), location),
            external_data_location=location,
            external_data_threshold=EXTERNAL_DATA_THRESHOLD,
        )
    data = builder.serialize(**common)
    with open(path, "wb") as f:
        f.write(data)
    logger.info("wrote ONNX model to %s (%d bytes%s)", path, len(data), ", external data" if external_data else "")
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
    external_data: bool | None = None,
    float32: bool = False,
    metadata: Mapping[str, str] | None = None,
    input_docs: Mapping[str, str] | Sequence[str] | None = None,
    output_docs: Mapping[str, str] | Sequence[str] | None = None,
    inline_functions: bool = False,
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
        names where valid and unique, else ``input_<i>`` / ``output_<i>``).
    external_data
        With ``filename``: store initializers of at least 1 KiB in
        ``<filename>.data`` next to the model. ``None`` (default): only when
        the initializers exceed what one protobuf message holds (2 GiB).
    float32
        Compute and store in float32 what the graph computes in float64
        (inputs, outputs, weights and every operation), for runtimes and
        devices where float32 is faster or the only choice. Costs precision:
        see docs/deploying.md.
    metadata
        Extra ``metadata_props`` entries (strings). The model always records
        ``pytensor_version``; producer name and version are pytensor-onnx's.
    input_docs, output_docs
        Documentation of the graph inputs/outputs (their ``doc_string``): a
        mapping by ONNX name, or a list aligned with inputs/outputs.
    inline_functions
        Recipes used for what ONNX lacks (special functions, float64 sin/cos,
        ...) are stored once as model-local functions of the domain
        ``pytensor_onnx`` (ONNX Runtime inlines them when it loads the
        model). ``True`` builds every one inline instead, for runtimes
        without local-function support. Both forms compute the same values.
        ``float32=True`` always builds them inline (the demotion to float32
        rewrites the main graph).

    Returns
    -------
    onnx.ModelProto
    """
    inputs = _as_variable_list(inputs, "inputs")
    outputs = _as_variable_list(outputs, "outputs")
    if not outputs:
        raise ValueError("outputs is empty; an ONNX model needs at least one output")
    options = ExportOptions(
        filename, opset_version, model_name, doc_string, optimize, input_names, output_names,
        external_data, float32, metadata, input_docs, output_docs, inline_functions,
    )
    fgraph, shared_values = build_fgraph(inputs, outputs)
    return export_fgraph(fgraph, shared_values, options)


def export_fgraph(fgraph, shared_values, options: ExportOptions, *, rewrites_including=()):
    """Export a FunctionGraph (its shared-variable inputs baked in with ``shared_values``).

    ``rewrites_including`` names rewrites to run besides the ONNX mode's (for
    callers such as ``pytensor_onnx.pymc`` whose graphs need their library's
    own rewrites).
    """
    register_optional_rules()
    if options.optimize:
        rewrite_for_export(fgraph, rewrites_including)
    converted = fgraph_to_onnx(
        fgraph,
        opset_version=options.opset_version,
        shared_as_initializers=True,
        initializer_values=shared_values,
        optimize=options.optimize,
        input_names=options.input_names,
        output_names=options.output_names,
        inline_functions=options.inline_functions or options.float32,
    )
    if options.float32:
        converted.builder.demote_float64()
        # Casts between float64 and float32 are now no-ops; drop them.
        converted.builder.optimize(fold_constants=options.optimize, cse=options.optimize)
    return _serialize(converted, options)


def export_function_onnx(
    fn,
    filename=None,
    *,
    opset_version: int = ONNX_OPSET_VERSION,
    model_name: str = "pytensor_function",
    doc_string: str = "",
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    external_data: bool | None = None,
    float32: bool = False,
    metadata: Mapping[str, str] | None = None,
    input_docs: Mapping[str, str] | Sequence[str] | None = None,
    output_docs: Mapping[str, str] | Sequence[str] | None = None,
    inline_functions: bool = False,
):
    """Export a compiled ``pytensor.function`` (any mode) to an ONNX model.

    The function's explicit inputs become graph inputs; its shared variables
    are baked in with the values the function currently holds, except random
    generators, which become ``uint64[2]`` seed inputs (docs/semantics.md).
    Updates are not part of the model (an ONNX model is a pure function of
    its inputs). The other arguments are those of :func:`export_onnx`.
    """
    maker = getattr(fn, "maker", None)
    if maker is None or not hasattr(maker, "inputs"):
        raise TypeError(f"fn must be a compiled pytensor.function, got {type(fn).__name__}")
    options = ExportOptions(
        filename, opset_version, model_name, doc_string, True, input_names, output_names,
        external_data, float32, metadata, input_docs, output_docs, inline_functions,
    )
    explicit = [inp.variable for inp in maker.inputs if not inp.implicit]
    shared_values = {
        inp.variable: container.data
        for inp, container in zip(maker.inputs, fn.input_storage)
        if inp.implicit
    }
    outputs = [out.variable for out in maker.outputs]
    if not outputs:
        raise ValueError("fn has no outputs (only updates); an ONNX model needs at least one output")
    fgraph, values = build_fgraph(explicit, outputs, shared_values)
    return export_fgraph(fgraph, values, options)
