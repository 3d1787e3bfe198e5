"""The one place that knows how PyTensor's lines differ.

Supported lines: 2.38.x (PyMC 5), 3.0.x and 3.3.x (PyMC 6). Every helper
here detects the feature it needs (a class, an Op property) rather than
comparing version numbers, so an intermediate release that has one line's
layout works like that line. Rules call these helpers and never test
versions themselves.

| difference | 2.38.x | 3.0.x | 3.3.x |
|---|---|---|---|
| ``Join`` axis | first input | first input | ``op.axis`` (static) |
| ``Split`` axis | second input | second input | ``op.axis`` (static) |
| ``AdvancedSubtensor1``/``AdvancedIncSubtensor1`` | exist | exist | removed |
| ``blas.Ger`` | exists | exists | removed |
| ``special.SoftmaxGrad`` | exists | removed | removed |
| ``AdvancedSubtensor`` index layout | every index an input (slices via ``MakeSlice``) | ``idx_list`` | ``idx_list`` |
| ``Softmax``/``LogSoftmax`` | ``COp``, axis int or None; Python impl. is SciPy's | ``TensorSymbolicOp`` (inner graph), axis tuple or None | same as 3.0 |
| ``SortOp``/``ArgSortOp`` axis | second input | (not checked) | ``op.axis`` (static) |
| rewrites of ``JoinDims``/``SplitDims`` to ``Reshape`` | ``local_*_dims_to_reshape`` | ``local_*_dims`` | ``local_*_dims`` |
| ``Max``/``Min`` over an empty set | raise | raise | raise, or the identity with ``initial=True`` (FAST_RUN's ``logsumexp``) |
| linear-algebra Ops | modules ``nlinalg``/``slinalg`` | | package ``pytensor.tensor.linalg`` (``nlinalg``/``slinalg`` deprecated aliases) |
| ``Eigh`` props | ``UPLO`` ("L"/"U") | | ``lower`` (bool), ``driver`` |
| ``EighGrad``/``EigvalshGrad`` Ops | exist | | removed (gradients are graphs) |
| ``pt.linalg.eigh`` of a stack of matrices | refused (``Eigh.make_node`` asserts a matrix) | | ``Blockwise`` |
| tridiagonal LU Ops | absent | | ``LUFactorTridiagonal``/``SolveLUFactorTridiagonal`` |
| ``Lstsq`` | ``Op`` with inputs ``(a, b, rcond)``, outputs ``(x, residuals, rank, s)`` | | same |
| scan-save-mem for backends without output preallocation | ``scan.rewriting.scan_save_mem_no_prealloc`` | same | ``scan.rewriting.trace.scan_reduce_trace_no_prealloc`` |
| Scan inner graphs rewritten for the outer mode's linker | no | no | yes (``scan.rewriting.inner_graph``) |
| ``ScanArgs(...)`` of a node | clones the inner graph unless ``clone=False`` | not checked | slices it as is (``clone`` deprecated) |
| ``RandomVariable(..., return_next_rng=True)`` | absent (draws only) | not checked | returns ``(next_rng, draws)``; warns without it |
| ``IfElse`` | ``pytensor.ifelse`` | ``pytensor.ifelse`` | ``pytensor.conditional.op`` (plus ``LazyIfElse``, branches as ``OpFromGraph``) |
| scalar ``Deg2Rad``, ``Rad2Deg``, ``Angle``, ``ComplexFromPolar`` | exist | not checked | removed (``deg2rad``, ``angle`` are graphs) |
| scalar ``GammaU``, ``GammaL``, ``Iv`` | exist | not checked | removed |
| scalar ``NdtriExp`` | absent | not checked | exists |
| scalar ``XlogX``, ``XlogY0`` (``tensor.xlogx``) | exist | not checked | removed (graphs of ``special.xlogy``) |

NumPy too (the py linker's ``Sum`` is ``np.add.reduce``): NumPy 2.0 adds a
contiguous float64 array pairwise within chunks of its buffer size (8192),
the chunks' sums in order; newer NumPy pairwise over the whole array
(``numpy_sum_chunk``).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect

import pytensor
import pytensor.scalar.basic as _scalar_basic
import pytensor.scalar.math as _scalar_math
import pytensor.tensor.linalg as _linalg
import pytensor.tensor.blas as _blas
import pytensor.tensor.rewriting.reshape as _reshape_rewrites
import pytensor.tensor.special as _special
import pytensor.tensor.subtensor as _subtensor
import pytensor.tensor.xlogx as _xlogx
from pytensor.compile.builders import OpFromGraph
from pytensor.graph.basic import Constant
from pytensor.tensor.basic import Join, Split
from pytensor.tensor.random.op import RandomVariable
from pytensor.tensor.sort import SortOp
from pytensor.tensor.special import LogSoftmax, Softmax

#: The installed PyTensor version string (for messages and metadata only).
PYTENSOR_VERSION = pytensor.__version__

try:  # 3.3+: conditionals live in pytensor.conditional (pytensor.ifelse warns)
    from pytensor.conditional.op import IfElse, LazyIfElse, ifelse
except ImportError:
    from pytensor.ifelse import IfElse, ifelse

    #: The conditional whose branches are ``OpFromGraph``s (3.3+), else None.
    LazyIfElse = None

#: Vector-index subtensor ops; ``None`` on lines that removed them (3.3+),
#: where ``x[v]`` is an ``AdvancedSubtensor``.
AdvancedSubtensor1 = getattr(_subtensor, "AdvancedSubtensor1", None)
AdvancedIncSubtensor1 = getattr(_subtensor, "AdvancedIncSubtensor1", None)

#: The rank-1 update BLAS op; ``None`` on lines that removed it (3.3+).
Ger = getattr(_blas, "Ger", None)

#: Scalar Op classes some lines define and others do not (``None`` where
#: absent): 2.38 has Deg2Rad, Rad2Deg, Angle, ComplexFromPolar, GammaU,
#: GammaL and Iv; 3.3 has NdtriExp.
Deg2Rad = getattr(_scalar_basic, "Deg2Rad", None)
Rad2Deg = getattr(_scalar_basic, "Rad2Deg", None)
Angle = getattr(_scalar_basic, "Angle", None)
ComplexFromPolar = getattr(_scalar_basic, "ComplexFromPolar", None)
GammaU = getattr(_scalar_math, "GammaU", None)
GammaL = getattr(_scalar_math, "GammaL", None)
Iv = getattr(_scalar_math, "Iv", None)
NdtriExp = getattr(_scalar_math, "NdtriExp", None)

_LINE_SPECIFIC_SCALAR_OPS = (
    "Deg2Rad", "Rad2Deg", "Angle", "ComplexFromPolar", "GammaU", "GammaL", "Iv", "NdtriExp", "XlogX", "XlogY0",
)


def line_specific_scalar_ops() -> tuple[type, ...]:
    """The line-specific scalar Op classes this PyTensor defines."""
    found = (globals()[name] for name in _LINE_SPECIFIC_SCALAR_OPS)
    return tuple(op for op in found if op is not None)


#: Names of Op classes with rules on some supported lines only (where the
#: line defines them).
LINE_SPECIFIC_OPS = frozenset(
    {
        "AdvancedSubtensor1",
        "AdvancedIncSubtensor1",
        "Ger",
        "LazyIfElse",
        "SoftmaxGrad",
        *_LINE_SPECIFIC_SCALAR_OPS,
        "EighGrad",
        "EigvalshGrad",
        "LUFactorTridiagonal",
        "SolveLUFactorTridiagonal",
    }
)

#: Whether linear algebra is the package ``pytensor.tensor.linalg`` (3.3+;
#: ``nlinalg``/``slinalg`` are deprecated aliases that warn) rather than the
#: modules ``nlinalg`` and ``slinalg`` (2.38).
LINALG_IS_PACKAGE = hasattr(_linalg, "__path__")

_LINALG_SUBMODULES = (
    "decomposition.cholesky",
    "decomposition.eigen",
    "decomposition.lu",
    "decomposition.qr",
    "decomposition.svd",
    "inverse",
    "products",
    "summary",
    "constructors",
    "solvers.core",
    "solvers.general",
    "solvers.triangular",
    "solvers.psd",
    "solvers.lstsq",
    "solvers.tridiagonal",
    "solvers.linear_control",
    "decomposition.schur",
)


def linalg_op_class(name: str):
    """The linear-algebra Op class ``name`` where this line defines it, else ``None``."""
    if LINALG_IS_PACKAGE:
        found = getattr(_linalg, name, None)
        for sub in _LINALG_SUBMODULES:
            if found is not None:
                break
            try:
                module = importlib.import_module(f"pytensor.tensor.linalg.{sub}")
            except ImportError:
                continue
            found = getattr(module, name, None)
        return found
    import pytensor.tensor.nlinalg as nlinalg
    import pytensor.tensor.slinalg as slinalg

    found = getattr(nlinalg, name, None) or getattr(slinalg, name, None)
    if found is None:
        # 2.38 keeps the Sylvester and Lyapunov solvers (TRSYL, SolveSylvester)
        # in a private module that slinalg does not re-export.
        try:
            module = importlib.import_module("pytensor.tensor._linalg.solve.linear_control")
        except ImportError:
            return None
        found = getattr(module, name, None)
    return found


def solve_splitting_rewriters():
    """PyTensor's helpers that split a ``Solve`` into a reusable decomposition
    and a solve step: ``(split_decomposition_and_solve_steps,
    split_non_sequence_decomposition_and_solve_in_scan)``, or ``(None, None)``
    on a line without them. They live in ``pytensor.tensor.rewriting.linalg.solvers``
    (3.3) or ``pytensor.tensor._linalg.solve.rewriting`` (2.38), where PyTensor
    registers its own variants (and JAX's, which leave tridiagonal matrices out).
    """
    for name in ("pytensor.tensor.rewriting.linalg.solvers", "pytensor.tensor._linalg.solve.rewriting"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        split = getattr(module, "_split_decomp_and_solve_steps", None)
        in_scan = getattr(module, "_scan_split_non_sequence_decomposition_and_solve", None)
        if split is not None and in_scan is not None:
            return split, in_scan
    return None, None


def eigh_lower(op) -> bool:
    """Whether an ``Eigh``/``EighGrad``/``Eigvalsh`` Op reads the lower triangle."""
    if hasattr(op, "UPLO"):
        return op.UPLO == "L"
    return bool(getattr(op, "lower", True))


def eigh_driver(op) -> str:
    """The LAPACK driver PyTensor's perform calls for an ``Eigh``/``Eigvalsh``
    Op: its own ``driver`` (3.x Eigh), else SciPy's default for ``eigvalsh``
    ("evr", syevr), or NumPy's for 2.38's ``Eigh`` ("evd": numpy.linalg.eigh
    calls syevd). An eigenvector's sign depends on the driver."""
    driver = getattr(op, "driver", None)
    if driver is not None:
        return driver
    return "evd" if hasattr(op, "UPLO") else "evr"


def _eigh_takes_batches() -> bool:
    from pytensor.tensor import linalg, tensor3

    try:
        linalg.eigh(tensor3("a"))
    except AssertionError:  # 2.38's Eigh.make_node asserts a matrix
        return False
    return True


#: Whether ``pt.linalg.eigh`` takes stacks of matrices (3.x wraps it in ``Blockwise``).
EIGH_TAKES_BATCHES = _eigh_takes_batches()

#: Whether ``Join`` and ``Split`` keep their axis as a static Op property
#: (3.3+) instead of a graph input.
JOIN_AXIS_IS_PROPERTY = "axis" in Join.__props__
SPLIT_AXIS_IS_PROPERTY = "axis" in Split.__props__


def vector_index_ops() -> tuple[type, ...]:
    """The vector-index subtensor Op classes this PyTensor has (maybe none)."""
    return tuple(op for op in (AdvancedSubtensor1, AdvancedIncSubtensor1) if op is not None)


def join_axis_and_tensors(op, inputs):
    """``(axis, tensors)`` of a ``Join`` node's converted inputs.

    ``axis`` is a Python int when PyTensor stores it on the Op, else the
    converted first input (a Value, possibly constant).
    """
    if JOIN_AXIS_IS_PROPERTY:
        return op.axis, list(inputs)
    return inputs[0], list(inputs[1:])


def split_operands(op, inputs):
    """``(x, axis, splits)`` of a ``Split`` node's converted inputs (axis as in ``join_axis_and_tensors``)."""
    if SPLIT_AXIS_IS_PROPERTY:
        x, splits = inputs
        return x, op.axis, splits
    x, axis, splits = inputs
    return x, axis, splits


def subtensor_indices(op, index_values) -> tuple:
    """The index tuple (slices and index values) of any ``*Subtensor*`` node.

    ``index_values`` are the converted index inputs (after ``x``, or after
    ``x, y`` for the increment forms). On lines where ``AdvancedSubtensor``
    has no ``idx_list`` every index is an input already: a slice arrives as
    the Python ``slice`` that the ``MakeSlice`` rule (or a slice constant)
    gives.
    """
    idx_list = getattr(op, "idx_list", None)
    if idx_list is None:
        return tuple(index_values)
    return tuple(_subtensor.indices_from_subtensor(index_values, idx_list))


def _softmax_takes_axis_tuples() -> bool:
    try:
        Softmax(axis=(0,))
    except TypeError:
        return False
    return True


#: Whether ``softmax``/``log_softmax`` accept a tuple of axes (3.0+; 2.38
#: raises TypeError for anything but an int or None).
SOFTMAX_TAKES_AXIS_TUPLES = _softmax_takes_axis_tuples()


def softmax_axes(op, ndim: int) -> list[int]:
    """The non-negative axes a ``Softmax``/``LogSoftmax`` normalizes over."""
    axis = op.axis
    if axis is None:
        return list(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return [a % ndim for a in axis]


#: Whether ``LogSoftmax``'s Python implementation is SciPy's ``log_softmax``
#: (2.38), which shifts by the maximum only where that maximum is finite, so
#: a slice holding +inf gives ``[nan, -inf, ...]`` rather than NaN throughout
#: (3.x evaluates the ``x - max(x)`` graph).
LOG_SOFTMAX_SHIFTS_BY_FINITE_MAX = not issubclass(LogSoftmax, OpFromGraph)


#: The gradient Op of ``Softmax`` on 2.38 (``None`` on 3.x, where the
#: gradient is an ordinary graph).
SoftmaxGrad = getattr(_special, "SoftmaxGrad", None)
# PyTensor 3.x: logsumexp is an op (its graph inlined at specialize); 2.38 builds log(sum(exp(x))).
LogSumExp = getattr(_special, "LogSumExp", None)


#: Names of the canonicalize rewrites that turn ``JoinDims``/``SplitDims``
#: into ``Reshape`` on this line (excluding them keeps those Ops intact).
RESHAPE_DIMS_REWRITES = tuple(
    name
    for name in ("local_join_dims", "local_split_dims", "local_join_dims_to_reshape", "local_split_dims_to_reshape")
    if hasattr(_reshape_rewrites, name)
)


def reduction_initial_value(op, dtype):
    """What an empty ``Max``/``Min`` reduction returns, or None when it raises.

    3.3 gave ``max``/``min`` an ``initial`` flag (``Op.initial``): the
    identity (``-inf``/``inf``, the dtype's bounds for integers and bools)
    instead of NumPy's "zero-size array" error. FAST_RUN's ``logsumexp``
    rewrite uses it. Older lines always raise.
    """
    if not getattr(op, "initial", False):
        return None
    return op.initial_value(dtype)


#: Whether ``SortOp``/``ArgSortOp`` keep their axis as a static Op property
#: (3.3+) instead of a second graph input (2.38).
SORT_AXIS_IS_PROPERTY = "axis" in SortOp.__props__


def sort_axis(op, node) -> int:
    """The non-negative axis a ``SortOp``/``ArgSortOp`` node sorts along.

    2.38 passes the axis as a second input, a constant in every graph its
    ``sort``/``argsort`` helpers build (``axis=None`` flattens first); a
    computed axis cannot give ONNX a static one.
    """
    ndim = node.inputs[0].type.ndim
    if SORT_AXIS_IS_PROPERTY:
        return op.axis
    axis_var = node.inputs[1]
    if not isinstance(axis_var, Constant):
        raise NotImplementedError(
            f"{type(op).__name__} with an axis computed at run time (node: {node}): ONNX needs a constant axis"
        )
    return int(axis_var.data) % ndim if ndim else 0


def _scan_save_mem_without_prealloc():
    try:  # 3.3+
        from pytensor.scan.rewriting.trace import scan_reduce_trace_no_prealloc

        return scan_reduce_trace_no_prealloc
    except ImportError:
        from pytensor.scan.rewriting import scan_save_mem_no_prealloc

        return scan_save_mem_no_prealloc


def _scan_args_clone_by_default() -> bool:
    from pytensor.scan.utils import ScanArgs

    return inspect.signature(ScanArgs.__init__).parameters["clone"].default is True


_SCAN_ARGS_CLONE_BY_DEFAULT = _scan_args_clone_by_default()


def scan_args(node):
    """``ScanArgs`` of a Scan ``node`` over the Op's own inner variables (not
    a clone), so that they are those of ``node.op.fgraph``."""
    from pytensor.scan.utils import ScanArgs

    op = node.op
    extra = {"clone": False} if _SCAN_ARGS_CLONE_BY_DEFAULT else {}
    return ScanArgs(node.inputs, node.outputs, op.inner_inputs, op.inner_outputs, op.info, **extra)


#: The scan-save-mem node rewriter for backends that do not preallocate
#: outputs (JAX, Numba): it shrinks Scan buffers to what the graph reads.
SCAN_SAVE_MEM_WITHOUT_PREALLOC = _scan_save_mem_without_prealloc()

#: Whether compiling a function rewrites each Scan's inner graph with the
#: function's own mode (3.3+); before, ``op.fgraph`` stays as ``scan()`` built
#: it (``Scan.fn`` optimizes a copy for the C backend).
def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent is a module, not a package
        return False


SCAN_INNER_GRAPHS_REWRITTEN_BY_MODE = _has_module("pytensor.scan.rewriting.inner_graph")


#: The scalar ``XlogX``/``XlogY0`` ops of ``pytensor.tensor.xlogx`` (2.38);
#: ``None`` on lines where ``xlogx``/``xlogy0`` build graphs of other ops.
XlogX = getattr(_xlogx, "XlogX", None)
XlogY0 = getattr(_xlogx, "XlogY0", None)


#: Whether calling a RandomVariable can return its next RNG with the draws
#: (``return_next_rng=True``, 3.3+; 2.38 returns the draws only, and 3.3 warns
#: when the next RNG stays hidden).
RV_RETURNS_NEXT_RNG = "return_next_rng" in inspect.signature(RandomVariable.__call__).parameters


def random_draws(rv, *params, **kwargs):
    """``(next_rng, draws)`` of ``rv(*params, **kwargs)`` on every line."""
    if RV_RETURNS_NEXT_RNG:
        return rv(*params, return_next_rng=True, **kwargs)
    return tuple(rv(*params, **kwargs).owner.outputs)


@functools.cache
def numpy_sum_chunk() -> int:
    """How this NumPy's ``add.reduce`` adds a contiguous float64 array, which
    mode ONNX's kernel sums follow to the bit: 0 when pairwise over the whole
    array, else the length of the chunks it adds pairwise, one after the
    other (NumPy 2.0: its buffer size). Probed once, on values whose two
    orders differ."""
    import numpy as np

    chunk = int(np.getbufsize())
    values = np.random.default_rng(20261126).normal(size=3 * chunk + 1000) * np.logspace(-8, 8, 3 * chunk + 1000)
    chunked = 0.0
    for start in range(0, values.size, chunk):
        chunked += float(np.add.reduce(values[start : start + chunk]))
    return chunk if float(np.add.reduce(values)) == chunked else 0
