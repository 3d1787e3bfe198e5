"""What the installed ONNX stack supports, found by asking it, and the session settings
shared by every session pytensor_onnx creates (log level, provider checks).

Below ``export``, ``linker`` and ``mode`` (imports nothing of theirs), so all
of them and the tests can use it.
"""

from __future__ import annotations

import functools
import math
import os
import types

from pytensor_onnx import _core


#: ONNX Runtime's log severity in the sessions pytensor_onnx creates: fatal only. A failed run or
#: load raises an exception that carries ONNX Runtime's message (or the project's own, clearer
#: one), so its red ``[E:onnxruntime:...]`` line on stderr would only repeat it. Session options
#: the user passes keep their own level.
QUIET_LOG_SEVERITY = 4


#: The session config entries of mode ONNX's default sessions, chosen from
#: bench/session_options.py (results in bench/results.md): ONNX Runtime's
#: intra-op threads (one per physical core: on the 2-core machine measured,
#: 2 threads run the 1e6-element chain 1.4x faster than 1, and the MLP gains
#: too; tiny graphs do not use the pool) that do not spin while idle
#: (spinning gained nothing measurable there, and a spinning pool burns a core
#: between calls, slowing the rest of the process on small machines).
DEFAULT_CONFIG_ENTRIES = {
    "session.intra_op.allow_spinning": "0",
    "session.inter_op.allow_spinning": "0",
}


def default_session_options():
    """Mode ONNX's default session options: :data:`QUIET_LOG_SEVERITY` and
    :data:`DEFAULT_CONFIG_ENTRIES` (a native session is built with the same)."""
    options = quiet_session_options()
    for key, value in DEFAULT_CONFIG_ENTRIES.items():
        options.add_session_config_entry(key, value)
    return options


def quiet_session_options():
    """New ``onnxruntime.SessionOptions`` with ONNX Runtime's log at :data:`QUIET_LOG_SEVERITY`."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = QUIET_LOG_SEVERITY
    return options


def _probe_model(opset: int) -> bytes:
    """A one-node model (Add) at ``opset``, with the IR version that opset came with; built by onnx.helper only."""
    from onnx import TensorProto, helper

    ir_version = min(ir for _release, ir, ai_onnx, *_ in helper.VERSION_TABLE if ai_onnx >= opset)
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "a"], ["b"])],
        "opset_probe",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version)
    return model.SerializeToString()


@functools.cache
def newest_onnx_opset() -> int:
    """The newest default-domain opset the installed ``onnx`` package (its checker) knows."""
    import onnx.defs

    return int(onnx.defs.onnx_opset_version())


@functools.cache
def newest_runtime_opset() -> int:
    """The newest opset (up to what this exporter writes) the installed ONNX Runtime loads and runs."""
    import numpy as np
    import onnxruntime as ort

    newest_known = min(_core.MAX_KNOWN_OPSET, newest_onnx_opset())
    for opset in range(newest_known, _core.MIN_OPSET - 1, -1):
        try:
            session = ort.InferenceSession(
                _probe_model(opset), sess_options=quiet_session_options(), providers=["CPUExecutionProvider"]
            )
            (out,) = session.run(None, {"a": np.ones(1, dtype="float32")})
        except Exception:  # ORT raises its own exception types for unknown opsets
            continue
        if out[0] == 2.0:
            return opset
    raise RuntimeError(
        f"ONNX Runtime {ort.__version__} loads no opset in {_core.MIN_OPSET}..{newest_known}; "
        "pytensor-onnx needs onnxruntime >= 1.21"
    )


def check_providers(providers):
    """``providers`` checked now, not at the first call: ONNX Runtime warns
    about an unknown provider and silently falls back to the CPU one."""
    if providers is None:
        return None
    import onnxruntime as ort

    if isinstance(providers, str) or not isinstance(providers, list | tuple):
        raise TypeError(
            f"providers must be a list of provider names (or (name, options) pairs), got {type(providers).__name__}"
        )
    available = ort.get_available_providers()
    for i, provider in enumerate(providers):
        name = provider[0] if isinstance(provider, tuple) and len(provider) == 2 else provider
        if not isinstance(name, str) or (isinstance(provider, tuple) and not isinstance(provider[1], dict)):
            raise TypeError(f"providers[{i}] must be a provider name or a (name, options dict) pair, got {provider!r}")
        if name not in available:
            raise ValueError(
                f"providers[{i}]: {name!r} is not available in this onnxruntime build "
                f"(available: {', '.join(available)})"
            )
    return list(providers)


#: ``PYTENSOR_ONNX_NATIVE_SESSIONS=0`` (set before the first mode-ONNX
#: function is compiled) makes mode ONNX run every model through
#: ``onnxruntime.InferenceSession``, as functions with session options of
#: their own always do.
NATIVE_ENV_SWITCH = "PYTENSOR_ONNX_NATIVE_SESSIONS"


@functools.cache
def native_unavailable_reason() -> str | None:
    """Why mode ONNX's default sessions are not native ones (None when they are).

    A native session (``_core.NativeSession``, src/runtime/session.h) drives
    the ONNX Runtime that the ``onnxruntime`` package loaded through its C
    API, from the extension: the feeds and outputs cross into Python as NumPy
    arrays over ONNX Runtime's memory, without the Python binding's per-call
    conversions (bench/overhead.py)."""
    if os.environ.get(NATIVE_ENV_SWITCH, "1").strip().lower() in ("0", "false", "no", "off"):
        return f"{NATIVE_ENV_SWITCH}={os.environ[NATIVE_ENV_SWITCH]} turns them off"
    if not hasattr(_core, "NativeSession"):
        return "the extension was built without ONNX Runtime's C API headers or NumPy's headers"
    from pytensor_onnx import kernels

    base = kernels.onnxruntime_api_base()
    if not base:
        return f"the kernel library, which receives ONNX Runtime's C API, is not loaded: {kernels.unavailable_reason()}"
    try:
        _core.native_runtime_init(base)
    except RuntimeError as exc:
        import onnxruntime as ort

        return f"ONNX Runtime {ort.__version__}: {exc}"
    return None


def packed_offsets(shapes) -> list[int]:
    """The offset of each of the packed arrays of ``shapes`` in their packed
    vector: each one's values follow the one before's."""
    offsets, at = [], 0
    for shape in shapes:
        offsets.append(at)
        at += math.prod(shape)
    return offsets


def packed_results(output_names, packed):
    """The outputs a session of a model with ``packed`` outputs (triples:
    packed output, the names of its elements, their shapes) fetches for
    ``output_names``, and per name, (that session output, the offset of its
    values or -1) and its shape there (``()`` where not packed); no pairs when
    nothing is packed."""
    element_of = {
        name: (out, offset, tuple(shape))
        for out, elements, shapes in packed
        for name, offset, shape in zip(elements, packed_offsets(shapes), shapes, strict=True)
    }
    if not element_of:
        return list(output_names), [], []
    session_outputs = [name for name in output_names if name not in element_of] + [out for out, _, _ in packed]
    index = {name: i for i, name in enumerate(session_outputs)}
    results = [(index[element_of[name][0]], element_of[name][1]) if name in element_of else (index[name], -1)
               for name in output_names]
    shapes = [list(element_of[name][2]) if name in element_of else [] for name in output_names]
    return session_outputs, results, shapes


class NativeSession:
    """A session of the ONNX Runtime the ``onnxruntime`` package loaded, run
    through its C API (see ``native_unavailable_reason``), with mode ONNX's
    default options (``default_session_options``). ``run(arrays)``
    takes the inputs in the order of ``input_names`` and returns the outputs
    as NumPy arrays that hold ONNX Runtime's memory (no copy). The
    ``get_inputs``/``get_outputs``/``get_providers`` of an InferenceSession
    are there for code that inspects a function's session."""

    def __init__(self, model_bytes: bytes, input_names, output_names, initializers=None, packed=(), packed_inputs=()):
        """``packed``: triples (output of the model, names of ``output_names``
        that are its float64 elements, their shapes), which the runs split
        again (``GraphBuilder.pack_small_outputs_of_kernels``);
        ``packed_inputs`` the same for inputs of ``input_names``, which the
        runs gather (``GraphBuilder.pack_small_inputs_of_kernels``)."""
        from pytensor_onnx import kernels

        names, arrays = zip(*initializers.items()) if initializers else ((), ())
        session_outputs, results, result_shapes = packed_results(output_names, packed)
        session_inputs, gathered, gathered_shapes = list(input_names), [], []
        if packed_inputs:
            ((vector, elements, shapes),) = packed_inputs
            session_inputs = [name for name in input_names if name not in elements] + [vector]
            gathered = [list(input_names).index(name) for name in elements]
            gathered_shapes = [list(shape) for shape in shapes]
        library = kernels.library_path() if kernels.model_uses_kernels(model_bytes) else ""
        if library:
            kernels.linalg_ops()  # the library's LAPACK and BLAS routines set before a session can run them
        try:
            self._session = _core.NativeSession(
                model_bytes, session_inputs, session_outputs, list(DEFAULT_CONFIG_ENTRIES.items()),
                QUIET_LOG_SEVERITY, library or "", list(names), list(arrays), results, result_shapes,
                gathered, [list(input_names)[i] for i in gathered], gathered_shapes,
            )
        except RuntimeError as exc:
            raise RuntimeError(
                f"ONNX Runtime rejected the model built for this graph: {exc}\n"
                "Export it with pytensor_onnx.export_onnx and check it with `pytensor-onnx validate` to inspect it."
            ) from exc
        self.run = self._session.run
        self.run_cells = self._session.run_cells
        self.input_names = tuple(input_names)
        self.output_names = tuple(output_names)

    def run_feed(self, output_names, feed, run_options=None):
        """``InferenceSession._sess.run``'s call: a feed dict by input name (the
        outputs are always ``output_names``, in order)."""
        return self.run([feed[name] for name in self.input_names])

    def get_inputs(self):
        return [types.SimpleNamespace(name=name) for name in self.input_names]

    def get_outputs(self):
        return [types.SimpleNamespace(name=name) for name in self.output_names]

    def get_providers(self):
        return ["CPUExecutionProvider"]

    def get_session_options(self):
        """The options the session was built with, as ``onnxruntime.SessionOptions``."""
        return default_session_options()
