"""Graph helpers the dispatch rules share (as ``pytensor/link/utils.py`` is for
PyTensor's own backends): constants, axis sizes, shape vectors, reshapes with
NumPy's semantics, the output dtype, and the one run-time check (``check``).

Shape arithmetic is int64 end to end, as in PyTensor and ONNX. The helpers
keep sizes that are known at conversion time as Python ints, so the shape
vectors they build are initializers whenever possible (and the C++ builder
can infer static output shapes); sizes known only at run time are int64
Values. Nothing here registers a rule: every dispatch module may import it.
"""

from __future__ import annotations

import numpy as np

from pytensor_onnx import kernels
from pytensor_onnx.dispatch.basic import kernels_enabled

INT64_MAX = int(np.iinfo(np.int64).max)
INT64_MIN = int(np.iinfo(np.int64).min)


def output_dtype(node, index: int = 0) -> str:
    """The dtype PyTensor gives output ``index`` of ``node`` (what a rule must return)."""
    return node.outputs[index].type.dtype


def int64_const(g, value):
    return g.const(np.asarray(value, dtype=np.int64))


def static_int(value) -> int | None:
    """The Python int a scalar Value (or int) holds if it is a constant, else None."""
    if value is None:
        return None
    if isinstance(value, int | np.integer):
        return int(value)
    data = value.constant_value
    if data is None or data.ndim != 0:
        return None
    return int(data)


def dim_size(g, x, axis: int, static_dim=None):
    """Size of axis ``axis`` of ``x``: a Python int if known, else an int64 scalar Value.

    ``static_dim`` may add PyTensor's knowledge of the size.
    """
    if static_dim is not None:
        return int(static_dim)
    if x.shape is not None and isinstance(x.shape[axis], int):
        return x.shape[axis]
    return g.op("Gather", g.op("Shape", x), int64_const(g, axis), axis=0)


def dim_sizes(g, x, static_shape=None) -> list:
    """Every axis size of ``x`` (ints where known); ``static_shape`` may add PyTensor's knowledge."""
    static_shape = static_shape or (None,) * x.rank
    return [dim_size(g, x, axis, static_shape[axis]) for axis in range(x.rank)]


def int64_vector(g, pieces):
    """A 1-D int64 Value from ``pieces``: ints, int scalar Values and 1-D int Values (spliced in).

    Runs of constants become one initializer, so an all-constant vector is an
    initializer itself.
    """
    parts, run = [], []

    def flush():
        if run:
            parts.append(int64_const(g, run))
            run.clear()

    for piece in pieces:
        value = static_int(piece)
        if value is not None:
            run.append(value)
            continue
        if piece.rank == 1 and piece.constant_value is not None:
            run.extend(int(v) for v in piece.constant_value)
            continue
        flush()
        piece = g.cast(piece, "int64")
        if piece.rank == 0:
            piece = g.op("Unsqueeze", piece, axes=[0])
        parts.append(piece)
    flush()
    if not parts:
        return int64_const(g, np.zeros(0, dtype=np.int64))
    if len(parts) == 1:
        return parts[0]
    return g.op("Concat", *parts, axis=0)


def as_int64_value(g, value):
    """An int or a Value as an int64 Value."""
    if isinstance(value, int | np.integer):
        return int64_const(g, int(value))
    return g.cast(value, "int64")


def int64_range(g, start: int, length):
    """``start, start + 1, ..., start + length - 1`` (``length``: an int or an int64 scalar Value)."""
    end = g.op("Add", as_int64_value(g, length), int64_const(g, start))
    return g.op("Range", int64_const(g, start), end, int64_const(g, 1))


def swap_last_axes(g, x):
    """``x`` with its last two axes swapped (the matrix transpose of a stack of matrices)."""
    perm = list(range(x.rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return g.op("Transpose", x, perm=perm)


# --------------------------------------------------------------------------
# Run-time checks
# --------------------------------------------------------------------------


#: The node name of the rules' own run-time checks (an empty max, a zero
#: arange step, a non-square matrix, ...): ONNX Runtime quotes the failing
#: node's name in its error, so the linker knows what failed by the name.
DATA_CHECK = "pytensor_onnx_data_check"


#: The dtypes of the kernel library's Check op (src/kernels/dtype.h).
CHECK_KERNEL_DTYPES = frozenset(
    ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]
)


def check(g, ok, value, node_name: str = DATA_CHECK):
    """``value``, but running the model fails when the bool ``ok`` is false
    (anywhere, when ``ok`` is a tensor).

    ONNX has no assertion op: ``value`` gets a leading axis of length 1 and
    is read back by a Gather at index 1 (out of range, so ONNX Runtime stops
    the run) when a condition fails, else 0. The index is data, so no graph
    optimisation can drop the check, inside If branches and Loop bodies too.
    The Gather node is named ``node_name``: ``DATA_CHECK`` for a rule's check,
    the converted CheckAndRaise's own name for that Op's (raise_op.py). It
    copies ``value`` once; rules check sizes, shapes and the results they
    guard. In mode ONNX the kernel library's ``Check`` node, of the same name,
    does the same in one node.
    """
    if value.dtype in CHECK_KERNEL_DTYPES and kernels_enabled():
        # One node of the kernel library in mode ONNX (src/kernels/
        # check_kernel.h): the four below cost ~0.5 us each per call, and
        # PyMC checks the parameters of every bounded log-density.
        g.require_domain(kernels.DOMAIN, kernels.DOMAIN_VERSION)
        return g.op(f"Check_{value.dtype}", value, g.cast(ok, "bool"), domain=kernels.DOMAIN, node_name=node_name)
    if ok.rank == 0:
        index = g.cast(g.op("Not", ok), "int64")
    else:
        failures = g.op("ReduceSum", g.cast(g.op("Not", ok), "int64"), keepdims=0)
        index = g.op("Min", failures, int64_const(g, 1))
    return g.op("Gather", g.op("Unsqueeze", value, axes=[0]), index, axis=0, node_name=node_name)


# --------------------------------------------------------------------------
# Reshapes with NumPy's semantics
# --------------------------------------------------------------------------


def reshape(g, x, pieces, copies=(), nonnegative=()):
    """``np.reshape(x, shape)`` for a target given as ``int64_vector`` pieces.

    NumPy reads 0 as a size; ONNX Reshape reads it as "copy the input dim"
    unless ``allowzero=1`` (opset 14). ``copies`` lists target positions known
    to equal the input dim at the same position: there copying is exact, so a
    target of copies and non-zero constants needs neither. ``nonnegative``
    lists positions of run-time pieces known never to be negative (sizes read
    from shapes): they cannot be the one inferred size.
    """
    # NumPy takes any negative size for the one inferred size; ONNX only -1.
    pieces = [-1 if static_int(p) is not None and static_int(p) < 0 else p for p in pieces]
    # A copy next to a -1 is exact only where the copied size is known not to
    # be 0: NumPy refuses to infer a size beside a 0, ONNX's copy infers one
    # (a (0, 2, 0, 2) array flattened to 2 axes gave (0, 4); found by the fuzzer).
    # A run-time piece may be the -1 too (a target computed in the graph,
    # `Cast(-1)` beside a dim read at run time: FUZZ_SEED=3743763509).
    infers = any(
        static_int(p) == -1 or (static_int(p) is None and i not in copies and i not in nonnegative)
        for i, p in enumerate(pieces)
    )
    copies = {i for i in copies if not infers or (x.shape is not None and isinstance(x.shape[i], int) and x.shape[i] > 0)}
    if all(i in copies or (static_int(p) is not None and static_int(p) != 0) for i, p in enumerate(pieces)):
        return g.op("Reshape", x, int64_vector(g, [0 if i in copies else p for i, p in enumerate(pieces)]))
    target = int64_vector(g, pieces)
    known = target.constant_value
    if known is not None and (known == -1).any() and (known == 0).any():
        return _always_refused_reshape(g, x, known)
    if known is None:
        target = g.op("Max", target, int64_const(g, -1))
        if infers and g.opset >= 14:
            # allowzero=1 forbids a -1 beside a 0, but ONNX Runtime infers a
            # size anyway (a (0, 2, 0, 2) array to (0, -1) gave (0, 4)).
            target = check(g, g.op("Not", _infer_beside_zero(g, target)), target)
    return reshape_to(g, x, target)


def _always_refused_reshape(g, x, target):
    """The reshape of ``x`` to the constant ``target`` that holds both a -1 and
    a 0, which NumPy refuses for every input ("cannot reshape array of size 0
    into shape (0,newaxis)"): running the model fails with the rule's data
    check, as PyTensor raises ValueError when called.

    ONNX Runtime refuses such a Reshape when it loads the model (shape
    inference: "Product cannot be 0 in combination with -1"), so the target's
    -1 becomes a 0 and the reshaped value is an empty slice of ``x`` behind a
    check that always fails. The check reads ``x``, not a constant: a
    condition on constants alone is folded before the runtime sees it, by our
    passes or ONNX Runtime's, and a folded failing check fails the load.
    """
    refused = check(g, g.const(np.asarray(False)), g.op("Reshape", x, int64_const(g, [-1])))
    empty = g.op("Slice", refused, int64_const(g, [0]), int64_const(g, [0]), int64_const(g, [0]))
    return reshape_to(g, empty, int64_const(g, np.where(target == -1, 0, target)))


def _infer_beside_zero(g, target):
    """Whether the int64 vector ``target`` holds both a -1 and a 0 (NumPy
    refuses to infer a size beside a 0: the size would be ambiguous)."""
    def holds(size):
        return g.cast(g.op("ReduceMax", g.cast(g.op("Equal", target, int64_const(g, size)), "int64"), keepdims=0), "bool")

    return g.op("And", holds(-1), holds(0))


def reshape_to(g, x, target):
    """Reshape to the int64 vector Value ``target`` (sizes and at most one -1),
    reading a 0 as NumPy does: a size, not "copy the input dim"."""
    if g.opset >= 14:
        return g.op("Reshape", x, target, allowzero=1)
    return _reshape_with_zero_sizes(g, x, target)


def _reshape_with_zero_sizes(g, x, target):
    """Reshape with NumPy's zero sizes before ``allowzero`` existed (opset 13).

    A target with a 0 has no elements, and the input must have none either.
    Reshape a zero-padded copy of the flat input to the target with every 0
    replaced by 1, then slice each axis down to its size: without zeros the
    padding is empty and both steps are the identity.
    """
    rank = target.shape[0]
    if rank == 0:
        return g.op("Reshape", x, target)
    n = g.op("Size", x)
    is_infer = g.op("Equal", target, int64_const(g, -1))
    known = g.op("ReduceProd", g.op("Where", is_infer, int64_const(g, 1), target), keepdims=0)
    inferred = g.op("Div", n, g.op("Max", known, int64_const(g, 1)))
    sizes = g.op("Where", is_infer, inferred, target)
    # NumPy refuses a -1 next to a 0 and sizes whose product differs from the input's.
    ok = g.op(
        "And",
        g.op("Equal", g.op("ReduceProd", sizes, keepdims=0), n),
        g.op("Not", _infer_beside_zero(g, target)),
    )
    nonzero_sizes = g.op("Max", sizes, int64_const(g, 1))
    padded_numel = g.op("ReduceProd", nonzero_sizes, keepdims=1)
    pad = check(g, ok, g.op("Sub", padded_numel, n))
    zero = g.const(np.zeros((), dtype=x.dtype))
    flat = g.op("Concat", g.op("Reshape", x, int64_const(g, [-1])), g.op("Expand", zero, pad), axis=0)
    padded = g.op("Reshape", flat, nonzero_sizes)
    return g.op(
        "Slice", padded, int64_const(g, [0] * rank), sizes, int64_const(g, list(range(rank)))
    )
