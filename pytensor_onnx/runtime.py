"""What the installed ONNX stack supports, found by asking it, and the session settings
shared by every session pytensor_onnx creates (log level, provider checks).

Below ``export``, ``linker`` and ``mode`` (imports nothing of theirs), so all
of them and the tests can use it.
"""

from __future__ import annotations

import functools

from pytensor_onnx import _core


#: ONNX Runtime's log severity in the sessions pytensor_onnx creates: fatal only. A failed run or
#: load raises an exception that carries ONNX Runtime's message (or the project's own, clearer
#: one), so its red ``[E:onnxruntime:...]`` line on stderr would only repeat it. Session options
#: the user passes keep their own level.
QUIET_LOG_SEVERITY = 4


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
