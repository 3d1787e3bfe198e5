"""The kernel library: the project's own ONNX Runtime custom ops.

Mode ONNX replaces fused element-wise subgraphs (PyTensor's ``Composite``)
and special functions with single nodes of the domain
``pytensor_onnx.kernels``, evaluated by ``libpytensor_onnx_kernels.so``
(``src/kernels``): ONNX Runtime pays per node, and runs element-wise graphs
node by node. Exported files stay standard ONNX unless asked otherwise.

The library is built with the extension when ONNX Runtime's C++ API headers
are found (``make system-deps`` fetches them). Without it mode ONNX runs the
portable graph, and says once why (``unavailable_reason``).
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger("pytensor_onnx")

#: The custom-op domain of the library's ops, and its version.
DOMAIN = "pytensor_onnx.kernels"
DOMAIN_VERSION = 1
#: The ONNX Runtime C API version the library is built against (1.21).
API_VERSION = 21
#: ``PYTENSOR_ONNX_KERNELS=0`` turns the kernels off for every mode ONNX
#: function of the process (``ONNXLinker(kernels=False)`` for one function).
ENV_SWITCH = "PYTENSOR_ONNX_KERNELS"

_LIBRARY_NAME = "libpytensor_onnx_kernels.so"


@dataclass(frozen=True)
class KernelOp:
    """One scalar op of the element-wise kernels (``src/kernels/ops.cc``)."""

    name: str
    arity: int
    signature: str  # "same", "compare", "switch" or "cast"
    dtypes: frozenset[str]


def library_path() -> str | None:
    """The path of the kernel library this installation built, or None.

    Services outside Python that run models exported with ``kernels=True``
    load this file into their session options (ONNX Runtime's
    ``RegisterCustomOpsLibrary``)."""
    from pytensor_onnx import _core

    for folder in (Path(_core.__file__).parent, Path(__file__).parent):
        candidate = folder / _LIBRARY_NAME
        if candidate.is_file():
            return str(candidate)
    return None


@functools.cache
def _load() -> tuple[dict[str, KernelOp] | None, str]:
    path = library_path()
    if path is None:
        return None, (
            f"{_LIBRARY_NAME} was not built with this installation (the build found no ONNX Runtime C++ API "
            "headers; `make system-deps` fetches them, or set PYTENSOR_ONNX_ORT_INCLUDE_DIR and rebuild)"
        )
    try:
        library = ctypes.CDLL(path)
        library.pytensor_onnx_kernels_ops.restype = ctypes.c_char_p
        version = library.pytensor_onnx_kernels_api_version()
        text = library.pytensor_onnx_kernels_ops().decode()
    except (OSError, AttributeError) as exc:
        return None, f"{path} could not be loaded: {exc}"
    if version != API_VERSION:
        return None, f"{path} is built for ONNX Runtime API {version}, this package expects {API_VERSION}"
    ops = {}
    for entry in filter(None, text.split(";")):
        name, arity, signature, dtypes = entry.split(" ")
        ops[name] = KernelOp(name, int(arity), signature, frozenset(dtypes.split(",")))
    return ops, ""


def ops() -> dict[str, KernelOp]:
    """The scalar ops the element-wise kernels evaluate, by name (empty without the library)."""
    return _load()[0] or {}


def unavailable_reason() -> str | None:
    """Why the kernels are not used, or None when they are available."""
    if os.environ.get(ENV_SWITCH, "1").strip().lower() in ("0", "false", "no", "off"):
        return f"{ENV_SWITCH}={os.environ[ENV_SWITCH]} turns them off"
    table, reason = _load()
    return None if table is not None else reason


_warned = False


def available() -> bool:
    """Whether mode ONNX can use the kernels; logs once why not."""
    global _warned
    reason = unavailable_reason()
    if reason is not None and not _warned:
        _warned = True
        logger.warning("pytensor-onnx kernel library not used, mode ONNX runs the portable graph: %s", reason)
    return reason is None


# Session options the library was added to, by id (kept alive here, so the
# id cannot be reused): ONNX Runtime refuses a second registration of the
# same domain on one options object.
_REGISTERED: dict[int, object] = {}
_REGISTERED_LOCK = threading.Lock()


def register(options, *, fresh: bool = False) -> None:
    """Load the library into ``options`` (an ``onnxruntime.SessionOptions``), once per
    object; ``fresh`` options (made for one session) are not remembered."""
    path = library_path()
    if path is None:
        raise RuntimeError(f"the model uses the kernel library, which is not available: {unavailable_reason()}")
    if fresh:
        options.register_custom_ops_library(path)
        return
    with _REGISTERED_LOCK:
        if id(options) in _REGISTERED:
            return
        options.register_custom_ops_library(path)
        _REGISTERED[id(options)] = options


def model_uses_kernels(model_bytes: bytes) -> bool:
    """Whether serialized model bytes import the kernel domain (a cheap byte search: the
    domain name appears in the bytes exactly when a node or opset import names it)."""
    return DOMAIN.encode() in model_bytes
