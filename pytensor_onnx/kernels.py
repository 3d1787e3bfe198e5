"""The kernel library: the project's own ONNX Runtime custom ops.

Mode ONNX replaces fused element-wise subgraphs (PyTensor's ``Composite``),
special functions and matrix factorizations with single nodes of the domain
``pytensor_onnx.kernels``, evaluated by ``libpytensor_onnx_kernels.so``
(``src/kernels``): ONNX Runtime pays per node, and runs element-wise graphs
node by node. The factorizations call SciPy's LAPACK, float64 matrix
products its BLAS, and some special functions SciPy's own C functions
(those PyTensor's backends call), which this module hands the library when
it loads it.
Exported files stay standard ONNX unless asked otherwise.

The library is built with the extension when ONNX Runtime's C++ API headers
are found (``make system-deps`` fetches them). Without it mode ONNX runs the
portable graph, and says once why (``unavailable_reason``).
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import re
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
def _library():
    """The library, loaded into this process (ONNX Runtime's later load of the
    same file shares it, and with it the LAPACK routines set here)."""
    library = ctypes.CDLL(library_path())
    library.pytensor_onnx_kernels_ops.restype = ctypes.c_char_p
    library.pytensor_onnx_kernels_linalg.restype = ctypes.c_char_p
    library.pytensor_onnx_kernels_missing_lapack.restype = ctypes.c_char_p
    library.pytensor_onnx_kernels_set_lapack.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    library.pytensor_onnx_kernels_missing_special.restype = ctypes.c_char_p
    library.pytensor_onnx_kernels_blas.restype = ctypes.c_char_p
    library.pytensor_onnx_kernels_missing_blas.restype = ctypes.c_char_p
    library.pytensor_onnx_kernels_set_blas.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    library.pytensor_onnx_kernels_set_special.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    return library


def _capsule_pointer(capsule) -> tuple[bytes, int]:
    """A Cython capsule's signature and C function pointer."""
    capsule_name = ctypes.pythonapi.PyCapsule_GetName
    capsule_name.restype, capsule_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    capsule_pointer.restype, capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    name = capsule_name(capsule)
    return name, capsule_pointer(capsule, name)


#: cython_special's real-valued form of a function: every argument and the result double
#: (its fused variants take complex or float arguments).
_REAL_SIGNATURE = re.compile(rb"double \((double, )+int __pyx_skip_dispatch\)")


def _set_special(library) -> None:
    """Hands the library SciPy's special functions (``scipy.special.cython_special``,
    the C functions PyTensor's Numba backend calls), each in its float64 form."""
    try:
        from scipy.special import cython_special
    except ImportError:  # SciPy is PyTensor's dependency; without it these ops stay portable
        return
    capsules = cython_special.__pyx_capi__
    for name in library.pytensor_onnx_kernels_missing_special().decode().split():
        for key, capsule in capsules.items():
            if key != name and not re.fullmatch(rf"__pyx_fuse_\d+{name}", key):
                continue
            signature, pointer = _capsule_pointer(capsule)
            if _REAL_SIGNATURE.fullmatch(signature):
                library.pytensor_onnx_kernels_set_special(name.encode(), pointer)
                break


def _set_lapack(library) -> str:
    """Hands the library SciPy's LAPACK routines (``scipy.linalg.cython_lapack``
    exports them as capsules of C function pointers); returns what is still
    missing, space-separated."""
    try:
        from scipy.linalg import cython_lapack
    except ImportError as exc:  # SciPy is PyTensor's dependency; say it if it is broken
        return f"(SciPy's LAPACK: {exc})"
    capsules = cython_lapack.__pyx_capi__
    for name in library.pytensor_onnx_kernels_missing_lapack().decode().split():
        capsule = capsules.get(name)
        if capsule is not None:
            library.pytensor_onnx_kernels_set_lapack(name.encode(), _capsule_pointer(capsule)[1])
    return library.pytensor_onnx_kernels_missing_lapack().decode()


def _set_blas(library) -> str:
    """Hands the library SciPy's BLAS routines (``scipy.linalg.cython_blas``, the ones
    PyTensor's Numba backend multiplies with); returns what is still missing."""
    try:
        from scipy.linalg import cython_blas
    except ImportError as exc:
        return f"(SciPy's BLAS: {exc})"
    capsules = cython_blas.__pyx_capi__
    for name in library.pytensor_onnx_kernels_missing_blas().decode().split():
        capsule = capsules.get(name)
        if capsule is not None:
            library.pytensor_onnx_kernels_set_blas(name.encode(), _capsule_pointer(capsule)[1])
    return library.pytensor_onnx_kernels_missing_blas().decode()


@functools.cache
def _load() -> tuple[dict[str, KernelOp] | None, str]:
    path = library_path()
    if path is None:
        return None, (
            f"{_LIBRARY_NAME} was not built with this installation (the build found no ONNX Runtime C++ API "
            "headers; `make system-deps` fetches them, or set PYTENSOR_ONNX_ORT_INCLUDE_DIR and rebuild)"
        )
    try:
        library = _library()
        version = library.pytensor_onnx_kernels_api_version()
        _set_special(library)  # before the op table is read: it lists those ops once they are set
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


@functools.cache
def linalg_ops() -> frozenset[str]:
    """The linear-algebra kernels ("Cholesky", "Solve", ...; ``src/kernels/linalg_kernel.h``),
    empty without the library or without SciPy's LAPACK and BLAS (then logged once):
    triangular solves call BLAS's ``trsm``."""
    if _load()[0] is None:
        return frozenset()
    library = _library()
    missing = " ".join(m for m in (_set_lapack(library), _set_blas(library)) if m)
    if missing:
        logger.warning("pytensor-onnx: linear algebra runs the portable graph, SciPy's LAPACK and BLAS lack %s",
                       missing)
        return frozenset()
    return frozenset(library.pytensor_onnx_kernels_linalg().decode().split())


@functools.cache
def blas_ops() -> frozenset[str]:
    """The BLAS kernels ("MatMul"; ``src/kernels/matmul_kernel.h``), empty without the
    library or without SciPy's BLAS (then logged once)."""
    if _load()[0] is None:
        return frozenset()
    library = _library()
    missing = _set_blas(library)
    if missing:
        logger.warning("pytensor-onnx: matrix products run on ONNX Runtime's MatMul, SciPy's BLAS lacks %s", missing)
        return frozenset()
    return frozenset(library.pytensor_onnx_kernels_blas().decode().split())


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
    linalg_ops()  # its LAPACK and BLAS routines set before a session can run them
    blas_ops()
    if fresh:
        options.register_custom_ops_library(path)
        return
    with _REGISTERED_LOCK:
        if id(options) in _REGISTERED:
            return
        options.register_custom_ops_library(path)
        _REGISTERED[id(options)] = options


def onnxruntime_api_base() -> int | None:
    """The address of the ``OrtApiBase`` of the ONNX Runtime the ``onnxruntime``
    package loaded, or None without the library: ONNX Runtime hands it to the
    library when it registers it (here, into throwaway session options).
    ``runtime.NativeSession`` drives that same runtime through its C API."""
    import onnxruntime as ort

    if _load()[0] is None:  # (the library, loaded; whether mode ONNX uses its kernels does not matter)
        return None
    register(ort.SessionOptions(), fresh=True)
    library = _library()
    library.pytensor_onnx_kernels_api_base.restype = ctypes.c_void_p
    return library.pytensor_onnx_kernels_api_base()


def model_uses_kernels(model_bytes: bytes) -> bool:
    """Whether serialized model bytes import the kernel domain (a cheap byte search: the
    domain name appears in the bytes exactly when a node or opset import names it)."""
    return DOMAIN.encode() in model_bytes


_STAGE_SUFFIX = re.compile(r"^(.*)_s(\d+)$")


def elemwise_stages(node) -> list[dict]:
    """The stages of an ``Elemwise_<dtype>`` node (an ``onnx.NodeProto``), in
    the order it runs them: one per fused program. The core merges nodes
    whose values only each other read into one node of several stages
    (``src/core/passes/merge_kernel_stages.h``). Each stage is a dict of its
    attributes by their one-program names (``program``, ``input_axes``, ...)
    with ``sources`` (per program input: node input k, or ``-(g + 1)`` for
    output g of the stages, numbered across them) and ``destinations`` (per
    program output: the node output, or -1 where only later stages read it).
    A stage that reduces its one input (a ReduceSum or Reduce node merged in)
    has ``reduce`` ("sum", "max" or "min"), ``axes`` and ``keepdims`` instead
    of a program; a stage that runs a ScalarLoop (a ``ScalarLoop_<dtype>``
    node merged in) has its ``num_state``, ``next_state`` and ``until``, and
    reads the step count first; a stage of ONNX's indexing (a ``Gather`` or
    ``ScatterND`` node merged in) has ``gather`` (the axis, 0) or ``scatter``
    ("add" or "none") and reads the data, the int64 indices, and for a
    scatter the updates; a stage that reshapes its one input (a ``Reshape``,
    ``Squeeze`` or ``Unsqueeze`` merged in) has ``reshape`` (per output axis:
    a size, -1, or -2 - k for the size of input axis k) and maybe
    ``reshape_ones``; a stage that splits its one input (a ``Split`` of
    constant sizes) has ``split`` (the axis) and ``split_sizes``, one output
    per piece; a stage that joins its inputs (a ``Concat``) has ``concat``
    (the axis); a stage that multiplies its two inputs (a ``MatMul_<dtype>``
    kernel node merged in) has ``matmul`` (trans_a, trans_b); a stage that
    factors or solves (a ``Cholesky``, ``SolveTriangular``, ``CholeskySolve``
    or ``Solve`` kernel node merged in) has ``linalg`` (the kernel's name)
    and that kernel's attributes (``lower``, ``b_ndim``, ...)."""
    import onnx

    attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    count = int(attributes.pop("stages", 1))
    sources = list(attributes.pop("stage_inputs", []))
    destinations = list(attributes.pop("stage_outputs", []))
    stages = [{} for _ in range(count)]
    for name, value in attributes.items():
        match = _STAGE_SUFFIX.match(name)
        stage, base = (int(match.group(2)), match.group(1)) if match else (0, name)
        stages[stage][base] = value.decode() if isinstance(value, bytes) else value
    for stage in stages:
        # (A reduction stage, attribute reduce: one input, one output; a loop
        # stage, attribute num_state: the step count, then its body's inputs.)
        n_in, n_out = len(stage["input_dtypes"].split()), len(stage.get("output_registers", [0]))
        if "split_sizes" in stage:
            n_out = len(stage["split_sizes"])
        if "num_state" in stage:
            n_in, n_out = n_in + 1, int(stage["num_state"]) + (1 if int(stage.get("until", -1)) >= 0 else 0)
        if count == 1 and not sources:
            stage["sources"], stage["destinations"] = list(range(n_in)), list(range(n_out))
        else:
            stage["sources"], sources = sources[:n_in], sources[n_in:]
            stage["destinations"], destinations = destinations[:n_out], destinations[n_out:]
    return stages
