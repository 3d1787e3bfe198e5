"""ONNXLinker: runs a FunctionGraph as one ONNX Runtime session."""

from __future__ import annotations

import hashlib
import logging
from collections import OrderedDict

import numpy as np
from pytensor.link.basic import JITLinker
from pytensor.scalar.basic import ScalarType

logger = logging.getLogger("pytensor_onnx")

_SESSION_CACHE: OrderedDict = OrderedDict()
_SESSION_CACHE_SIZE = 64


def default_session_options():
    """Session options tuned for PyTensor-style use (see bench/overhead.py).

    The intra-op pool does not spin while idle: a spinning pool burns a core
    between calls and slows the rest of the process (and PyTensor's own
    Python-side work) on small machines.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.log_severity_level = 3
    return options


def _options_key(options) -> tuple:
    if options is None:
        return ()
    return (
        options.intra_op_num_threads,
        options.inter_op_num_threads,
        int(options.graph_optimization_level),
        int(options.execution_mode),
        options.enable_cpu_mem_arena,
        id(options),
    )


def get_session(model_bytes: bytes, session_options=None, providers=None):
    """An InferenceSession for ``model_bytes``; identical models share one."""
    import onnxruntime as ort

    providers = list(providers) if providers else ["CPUExecutionProvider"]
    key = (hashlib.sha256(model_bytes).digest(), _options_key(session_options), tuple(map(str, providers)))
    session = _SESSION_CACHE.get(key)
    if session is not None:
        _SESSION_CACHE.move_to_end(key)
        return session
    options = session_options if session_options is not None else default_session_options()
    try:
        session = ort.InferenceSession(model_bytes, sess_options=options, providers=providers)
    except Exception as exc:  # ORT raises its own exception types
        raise RuntimeError(
            f"ONNX Runtime rejected the model built for this graph: {exc}\n"
            "Export it with pytensor_onnx.export_onnx and check it with `pytensor-onnx validate` to inspect it."
        ) from exc
    _SESSION_CACHE[key] = session
    if len(_SESSION_CACHE) > _SESSION_CACHE_SIZE:
        _SESSION_CACHE.popitem(last=False)
    return session


class ONNXLinker(JITLinker):
    """A Linker that converts the whole FunctionGraph to ONNX and runs it on ONNX Runtime.

    Parameters
    ----------
    opset_version
        ONNX opset of the model (default ``pytensor_onnx.ONNX_OPSET_VERSION``).
    session_options
        ``onnxruntime.SessionOptions``; the default disables idle spinning.
    providers
        ONNX Runtime execution providers (default ``["CPUExecutionProvider"]``).
    """

    required_rewrites = ("minimum_compile",)
    incompatible_rewrites = (
        "cxx_only",
        "BlasOpt",
        "fusion",
        "local_careduce_fusion",
        "inplace",
        # The preallocating scan-save-mem rewrite (2.38's and 3.3's names);
        # mode.py registers the variant without preallocation instead.
        "scan_save_mem_prealloc",
        "scan_reduce_trace_prealloc",
    )

    def __init__(self, opset_version=None, session_options=None, providers=None, *args, **kwargs):
        from pytensor_onnx.dispatch.basic import ONNX_OPSET_VERSION
        from pytensor_onnx.export import _check_opset

        self.opset_version = _check_opset(opset_version) if opset_version is not None else ONNX_OPSET_VERSION
        self.session_options = session_options
        self.providers = providers
        self.onnx_model_bytes: bytes | None = None
        self.session = None
        super().__init__(*args, **kwargs)

    def clone(self, allow_gc=None):
        return type(self)(
            opset_version=self.opset_version,
            session_options=self.session_options,
            providers=self.providers,
            allow_gc=self.allow_gc if allow_gc is None else allow_gc,
        )

    def __repr__(self):
        return f"ONNXLinker(opset_version={self.opset_version})"

    @property
    def onnx_model(self):
        """The ``onnx.ModelProto`` this linker runs."""
        import onnx

        if self.onnx_model_bytes is None:
            raise ValueError("The linker has not converted a graph yet")
        return onnx.load_from_string(self.onnx_model_bytes)

    def fgraph_convert(self, fgraph, order=None, input_storage=None, output_storage=None, storage_map=None, **kwargs):
        """Convert ``fgraph`` to ONNX, open its session, and return ``run(*inputs) -> outputs``."""
        from pytensor_onnx.dispatch import fgraph_to_onnx

        converted = fgraph_to_onnx(fgraph, opset_version=self.opset_version, shared_as_initializers=False)
        self.onnx_model_bytes = converted.builder.serialize(graph_name="pytensor_graph")
        self.session = get_session(self.onnx_model_bytes, self.session_options, self.providers)
        self._input_names = tuple(converted.input_names)
        self._output_names = list(converted.output_names)
        run = self.session._sess.run
        names, outputs = self._input_names, self._output_names

        def run_onnx(*args):
            try:
                return run(outputs, dict(zip(names, args)), None)
            except Exception as exc:  # ORT raises its own exception types
                raise run_error(exc, _describe_failure(exc, names, args, fgraph)) from exc

        return run_onnx

    def jit_compile(self, fn):
        return fn

    def create_thunk_inputs(self, storage_map):
        return [storage_map[var] for var in self.fgraph.inputs]

    def create_jitable_thunk(self, compute_map, order, input_storage, output_storage, storage_map):
        # A leaner thunk than JITLinker's: it feeds the storage cells straight
        # into the C-level session run (PyTensor has already checked the input
        # types) and returns the outputs, so Function skips collecting them.
        fgraph = self.fgraph
        output_nodes = [o.owner for o in fgraph.outputs if o.owner is not None][:1]
        run_onnx = self.fgraph_convert(fgraph, order, input_storage, output_storage, storage_map)
        feeds = tuple(zip(self._input_names, (storage_map[var] for var in fgraph.inputs)))
        out_cells = [storage_map[var] for var in fgraph.outputs]
        out_names = self._output_names
        run = self.session._sess.run
        # PyTensor holds ScalarType values as NumPy scalars; ONNX Runtime wants
        # 0-d arrays in, and PyTensor wants NumPy scalars back.
        scalar_inputs = {name for (name, _), var in zip(feeds, fgraph.inputs) if isinstance(var.type, ScalarType)}
        scalar_outputs = [i for i, var in enumerate(fgraph.outputs) if isinstance(var.type, ScalarType)]
        input_names = self._input_names

        def fail(exc):
            args = [cell[0] for _, cell in feeds]
            raise run_error(exc, _describe_failure(exc, input_names, args, fgraph)) from exc

        if not scalar_inputs and not scalar_outputs:
            # The hot path: nothing but the run and the output stores.
            def thunk():
                try:
                    results = run(out_names, {name: cell[0] for name, cell in feeds}, None)
                except Exception as exc:
                    fail(exc)
                for cell, value in zip(out_cells, results):
                    cell[0] = value
                return results
        else:

            def thunk():
                feed = {name: np.asarray(cell[0]) if name in scalar_inputs else cell[0] for name, cell in feeds}
                try:
                    results = run(out_names, feed, None)
                except Exception as exc:
                    fail(exc)
                for i in scalar_outputs:
                    results[i] = results[i][()]
                for cell, value in zip(out_cells, results):
                    cell[0] = value
                return results

        thunk.inputs = [cell for _, cell in feeds]
        thunk.outputs = out_cells
        thunk.lazy = False
        return [thunk], output_nodes, run_onnx


def run_error(exc, description: str) -> BaseException:
    """The exception for a failed run: the converted CheckAndRaise's own
    exception type (also a RuntimeError) when one of its checks failed, else
    a RuntimeError."""
    from pytensor_onnx.dispatch.raise_op import raised_check_error

    return raised_check_error(exc, description) or RuntimeError(description)


def _describe_failure(exc, names, args, fgraph) -> str:
    lines = [f"ONNX Runtime failed to run the model: {exc}", "Inputs given:"]
    for name, arg, var in zip(names, args, fgraph.inputs):
        shape = getattr(arg, "shape", None)
        dtype = getattr(arg, "dtype", type(arg).__name__)
        lines.append(f"  {name}: dtype {dtype}, shape {shape}; PyTensor type {var.type}")
    return "\n".join(lines)
