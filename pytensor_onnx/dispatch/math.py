"""Reductions (CAReduce family), Argmax, Dot and related math ops.

Where ONNX Runtime's reductions differ from NumPy, the rules build NumPy's
result:

- integer sums: ReduceSum accumulates integers in double (inexact above 2**53,
  saturating at the type's limits); a MatMul with ones accumulates in the
  integer type and wraps like NumPy;
- Max/Min: ReduceMax/ReduceMin drop a NaN depending on where it sits; NumPy
  propagates it. (Their wrong int64 kernels are worked around in the C++
  builder, src/core/kernels.cc.);
- Argmax: ArgMax ignores NaN in an order-dependent way; NumPy returns the
  index of the first NaN;
- Max/Min/Argmax over an empty set raise in NumPy; ONNX returns -inf/+inf
  (or fails only sometimes), so the rules add a run-time check that fails.

Integer products (ReduceProd) still accumulate in double: exact while every
partial product stays below 2**53 in magnitude, saturating instead of
wrapping beyond int64 (docs/semantics.md, "Reductions").
"""

import numpy as np
import pytensor.scalar.basic as ps
from pytensor.tensor.elemwise import CAReduce
from pytensor.tensor.math import Argmax, Dot, MulWithoutZeros

from pytensor_onnx import kernels
from pytensor_onnx.compat import reduction_initial_value
from pytensor_onnx.dispatch.basic import const, kernels_enabled, onnx_funcify
from pytensor_onnx.dispatch.utils import INT64_MAX, check, output_dtype



def _is_integer(dtype):
    return dtype.startswith(("int", "uint"))


def _signed_twin(dtype):
    # Sums and products modulo 2**bits do not depend on signedness.
    return dtype[1:] if dtype.startswith("uint") else dtype


def reduction_axes(op, ndim):
    """The axes ``op`` reduces, as non-negative ints in increasing order."""
    if op.axis is None:
        return list(range(ndim))
    return sorted(a % ndim if ndim else a for a in op.axis)


def may_be_empty(static_shape, axes):
    """Whether one of ``axes`` may have length 0 at run time."""
    return any(static_shape[a] is None or static_shape[a] == 0 for a in axes)


def check_nonempty_reduction(g, x, axes, result):
    """``result``, failing at run time when the reduced axes hold no element,
    as NumPy's max/min/argmax raise ("zero-size array to reduction operation")."""
    reduced_dims = g.op("Gather", g.op("Shape", x), const(g, axes, "int64"), axis=0)
    smallest = g.op("ReduceMin", reduced_dims, axes=[0], keepdims=0)
    return check(g, g.op("Greater", smallest, const(g, 0, "int64")), result)


#: The dtypes of the kernel library's Reduce (max/min) nodes: those with NaN.
REDUCE_KERNEL_DTYPES = frozenset({"float32", "float64"})


def reduce(g, onnx_op, x, axes, keepdims=False):
    """ONNX reduction over `axes` (a list; [] reduces nothing), NumPy semantics
    for NaN: ReduceMax/ReduceMin in ONNX Runtime drop a NaN depending on where
    it sits, NumPy propagates it. A float sum has NumPy's zeros: its
    add.reduce starts from the identity +0.0 (over no axes too), so a sum of
    -0.0s is +0.0, where ONNX Runtime's ReduceSum gives -0.0 (1 / sum was
    -inf where PyTensor gives +inf)."""
    float_sum = onnx_op == "ReduceSum" and x.dtype.startswith("float")
    if not axes:
        return _positive_zeros(g, x) if float_sum else x
    kernel_sum = onnx_op == "ReduceSum" and x.dtype == "float64"
    if (onnx_op in ("ReduceMax", "ReduceMin") or kernel_sum) and x.dtype in REDUCE_KERNEL_DTYPES and kernels_enabled():
        # One node of the kernel library in mode ONNX (src/kernels/
        # reduce_kernel.h) for the six below; an empty set gives the
        # identity, which the callers that may reduce one check. A float64
        # sum too: NumPy's order and +0.0 start, where ReduceSum's are ONNX
        # Runtime's (most become stages of kernel nodes).
        g.require_domain(kernels.DOMAIN, kernels.DOMAIN_VERSION)
        reduction = {"ReduceMax": "max", "ReduceMin": "min", "ReduceSum": "sum"}[onnx_op]
        return g.op(f"Reduce_{x.dtype}", x, domain=kernels.DOMAIN, reduction=reduction, axes=sorted(axes),
                    keepdims=int(keepdims))
    result = g.op(onnx_op, x, axes=list(axes), keepdims=int(keepdims))
    if float_sum:
        result = _positive_zeros(g, result)
    if onnx_op in ("ReduceMax", "ReduceMin") and x.dtype.startswith("float"):
        has_nan = g.op("ReduceMax", g.cast(g.op("IsNaN", x), "uint8"), axes=list(axes), keepdims=int(keepdims))
        nan = const(g, np.nan, x.dtype)
        result = g.op("Where", g.cast(has_nan, "bool"), nan, result)
    return result


def _positive_zeros(g, x):
    """``x`` with its zeros +0.0. (Not ``x + 0.0``, which gives the same:
    ONNX Runtime's NoopElimination removes an Add of 0.)"""
    zero = const(g, 0.0, x.dtype)
    return g.op("Where", g.op("Equal", x, zero), zero, x)


def _move_axes_last(g, x, axes):
    """Transpose ``x`` so that ``axes`` come last (kept axes keep their order)."""
    kept = [a for a in range(x.rank) if a not in axes]
    perm = kept + list(axes)
    if perm != list(range(x.rank)):
        x = g.op("Transpose", x, perm=perm)
    return x


def _axis_length(g, x, axis):
    """The length of ``axis`` of ``x`` as a 1-element int64 vector."""
    size = x.shape[axis] if x.shape is not None else None
    if isinstance(size, int):
        return const(g, [size], "int64")
    return g.op("Slice", g.op("Shape", x), const(g, [axis], "int64"), const(g, [axis + 1], "int64"))


def _ones(g, x, axis, shape_around):
    """int tensor of ones: the length of ``axis`` of ``x`` with the 1-element
    vectors ``shape_around`` = (before, after) around it."""
    before, after = shape_around
    parts = [part for part in (before, _axis_length(g, x, axis), after) if part is not None]
    return g.op("Expand", const(g, 1, x.dtype), g.op("Concat", *parts, axis=0))


def integer_sum(g, x, axes):
    """Sum of an integer tensor over ``axes``, wrapping on overflow like NumPy.

    Each reduced axis is contracted with ones by MatMul, which accumulates in
    the integer type (ReduceSum would accumulate in double): the last axis
    as x @ ones(n, 1), the first of a matrix as ones(1, n) @ x; other axes
    are transposed to the end first.
    """
    if not axes:
        return x
    dtype = x.dtype
    # ONNX Runtime's unsigned MatMul fails on empty inputs; add in the
    # signed type of the same width.
    x = g.cast(x, _signed_twin(dtype))
    one_vector = const(g, [1], "int64")
    remaining = sorted(axes)
    # (a 2-D left operand against a batched right one fails in ONNX Runtime
    # when a batch dim is empty, so ones(1, n) @ x only for matrices)
    while remaining and (remaining[-1] == x.rank - 1 or x.rank == 2):
        axis = remaining.pop()
        if axis == x.rank - 1:
            # An (n, 1) column, not an (n,) vector: ONNX Runtime's MatMul
            # rejects a vector right operand when the left one has an empty
            # leading dim.
            x = g.op("MatMul", x, _ones(g, x, axis, (None, one_vector)))
        else:
            x = g.op("MatMul", _ones(g, x, axis, (one_vector, None)), x)
        x = g.op("Squeeze", x, axes=[axis])
    if remaining:
        x = _move_axes_last(g, x, remaining)
        for _ in remaining:
            x = g.op("MatMul", x, _ones(g, x, x.rank - 1, (None, one_vector)))
            x = g.op("Squeeze", x, axes=[x.rank - 1])
    return g.cast(x, dtype)


def _halve_by_multiplying(g, x):
    """Products of neighbouring pairs along the last axis (an odd length is padded with a 1).

    Strided slices rather than a Reshape to (..., n/2, 2): ONNX Runtime's
    reshape fusion rewrites such targets with a -1, which fails on tensors
    with an empty axis.
    """
    last = x.rank - 1
    length = g.op("Gather", g.op("Shape", x), const(g, last, "int64"), axis=0)
    odd = g.op("Mod", length, const(g, 2, "int64"))
    pads = g.op("Concat", const(g, [0] * (2 * x.rank - 1), "int64"), g.op("Unsqueeze", odd, axes=[0]), axis=0)
    padded = g.op("Pad", x, pads, const(g, 1, x.dtype))
    end, axis, step = const(g, [INT64_MAX], "int64"), const(g, [last], "int64"), const(g, [2], "int64")
    first = g.op("Slice", padded, const(g, [0], "int64"), end, axis, step)
    second = g.op("Slice", padded, const(g, [1], "int64"), end, axis, step)
    return g.op("Mul", first, second)


def _product_along_last_axis(g, x):
    """The product over the last axis (removed): ceil(log2(n)) halvings,
    unrolled when n is known, else in a Loop."""
    last = x.rank - 1
    length = x.shape[last] if x.shape is not None else None
    # Append a 1: the same product, and never an empty axis (empty products are 1).
    ones_shape = g.op("Concat", g.op("Slice", g.op("Shape", x), const(g, [0], "int64"), const(g, [last], "int64")),
                      const(g, [1], "int64"), axis=0)
    x = g.op("Concat", x, g.op("Expand", const(g, 1, x.dtype), ones_shape), axis=last)
    if isinstance(length, int):
        for _ in range(length.bit_length()):  # 2**steps >= length + 1
            x = _halve_by_multiplying(g, x)
    else:
        body = g.subgraph("halving_product")
        body.input("iteration", "int64", [])
        body.input("condition", "bool", [])
        halved = _halve_by_multiplying(body, body.input("partial", x.dtype, [None] * x.rank))
        halved_length = body.op("Gather", body.op("Shape", halved), const(body, last, "int64"), axis=0)
        body.output(body.op("Greater", halved_length, const(body, 1, "int64")), "more")
        body.output(halved, "halved")
        more = g.op("Greater", g.op("Gather", g.op("Shape", x), const(g, last, "int64"), axis=0), const(g, 1, "int64"))
        # 64 halvings reduce any length an int64 can count.
        x = g.op("Loop", const(g, 64, "int64"), more, x, body=body)
    return g.op("Squeeze", x, axes=[last])


def integer_product(g, x, axes):
    """Product of an integer tensor over ``axes``, wrapping on overflow like NumPy.

    ONNX Runtime's ReduceProd multiplies integers in double in some releases
    (rounded past 2**53, saturated where NumPy wraps) and exactly in others;
    Mul wraps in every one. Each reduced axis is moved last and halved by
    multiplying neighbouring pairs until one element is left.
    """
    dtype = x.dtype
    x = g.cast(x, _signed_twin(dtype))
    for axis in sorted(axes, reverse=True):
        x = _product_along_last_axis(g, _move_axes_last(g, x, [axis]))
    return g.cast(x, dtype)


def _product_without_zeros(g, x, axes):
    # MulWithoutZeros skips zeros; its identity is 0, so an empty or all-zero
    # set gives 0.
    zero = const(g, 0, x.dtype)
    is_zero = g.op("Equal", x, zero)
    product = reduce(g, "ReduceProd", g.op("Where", is_zero, const(g, 1, x.dtype), x), axes)
    any_nonzero = reduce(g, "ReduceMax", g.cast(g.op("Not", is_zero), "uint8"), axes)
    return g.op("Where", g.cast(any_nonzero, "bool"), product, zero)


def _parity(g, x, axes):
    # XOR over booleans: an odd number of True values.
    count = reduce(g, "ReduceSum", g.cast(x, "int64"), axes)
    return g.cast(g.op("Mod", count, const(g, 2, "int64")), "bool")


# Scalar op -> ONNX reduction; subclasses are matched with issubclass, so the
# more specific entries come first.
_REDUCTIONS = [
    (MulWithoutZeros, "ProductWithoutZeros"),
    (ps.Add, "ReduceSum"),
    (ps.Mul, "ReduceProd"),
    (ps.Maximum, "ReduceMax"),
    (ps.Minimum, "ReduceMin"),
    (ps.AND, "ReduceMin"),  # All: min over booleans
    (ps.OR, "ReduceMax"),  # Any: max over booleans
    (ps.XOR, "Parity"),
]


@onnx_funcify.register(CAReduce)
def _careduce(op, node, g, x):
    scalar_type = type(op.scalar_op)
    onnx_op = next((name for cls, name in _REDUCTIONS if issubclass(scalar_type, cls)), None)
    if onnx_op is None:
        raise NotImplementedError(f"No ONNX conversion for CAReduce with scalar op {op.scalar_op} (node: {node})")
    dtype = output_dtype(node)
    acc_dtype = getattr(op, "acc_dtype", None) or dtype
    if isinstance(op.scalar_op, ps.AND | ps.OR | ps.XOR) and acc_dtype != "bool":
        raise NotImplementedError(
            f"No ONNX conversion for the bitwise reduction {op} on {acc_dtype} (node: {node}); "
            "only the logical form on booleans (all, any) is supported"
        )
    x = g.cast(x, acc_dtype)
    static_shape = node.inputs[0].type.shape
    axes = reduction_axes(op, len(static_shape))

    if onnx_op == "ReduceSum" and _is_integer(acc_dtype):
        result = integer_sum(g, x, axes)
    elif onnx_op == "ReduceProd" and _is_integer(acc_dtype):
        result = integer_product(g, x, axes)
    elif onnx_op == "ProductWithoutZeros":
        result = _product_without_zeros(g, x, axes)
    elif onnx_op == "Parity":
        result = _parity(g, x, axes)
    elif isinstance(op.scalar_op, ps.AND):
        # all(x) = not any(not x): ONNX Runtime 1.21's ReduceMin of an empty
        # set gives False, where the identity of `all` is True.
        result = g.op("Not", reduce(g, "ReduceMax", g.op("Not", x), axes))
    else:
        initial = reduction_initial_value(op, acc_dtype)
        if initial is not None and may_be_empty(static_shape, axes):
            x = _pad_reduced_axes(g, x, axes, initial)
        result = reduce(g, onnx_op, x, axes)
        if initial is None and isinstance(op.scalar_op, ps.Maximum | ps.Minimum) and may_be_empty(static_shape, axes):
            result = check_nonempty_reduction(g, x, axes, result)
    return g.cast(result, dtype)


def _pad_reduced_axes(g, x, axes, identity):
    """``x`` with one ``identity`` element appended along each reduced axis, so
    the reduced set is never empty and its max/min unchanged (3.3's
    ``max(..., initial=-inf)``; ONNX Runtime's ReduceMax fails on an empty set)."""
    pads = [0] * x.rank + [1 if axis in axes else 0 for axis in range(x.rank)]
    return g.op("Pad", x, const(g, pads, "int64"), const(g, identity, x.dtype))


@onnx_funcify.register(Argmax)
def _argmax(op, node, g, x):
    static_shape = node.inputs[0].type.shape
    axes = reduction_axes(op, len(static_shape))
    if not axes:
        # NumPy's argmax of a 0-d array (or over no axes) is 0 everywhere.
        return g.op("Expand", const(g, 0, "int64"), g.op("Shape", x))

    original = x
    x = _move_axes_last(g, x, axes)
    n_kept = x.rank - len(axes)
    if len(axes) > 1:
        # Flatten the reduced axes into one, as PyTensor does. A 0 in the
        # target shape copies the input's dim at that index: for the kept
        # axes that is the same size, and an empty reduced part fails below.
        shape = g.op("Shape", x)
        kept_shape = g.op("Slice", shape, const(g, [0], "int64"), const(g, [n_kept], "int64"))
        reduced = g.op(
            "ReduceProd",
            g.op("Slice", shape, const(g, [n_kept], "int64"), const(g, [x.rank], "int64")),
            axes=[0],
            keepdims=1,
        )
        x = g.op("Reshape", x, g.op("Concat", kept_shape, reduced, axis=0))
    last = x.rank - 1

    index = g.op("ArgMax", x, axis=last, keepdims=0)
    if x.dtype.startswith("float"):
        # NumPy's argmax stops at the first NaN; ONNX Runtime's ignores NaN
        # in an order-dependent way.
        is_nan = g.cast(g.op("IsNaN", x), "uint8")
        first_nan = g.op("ArgMax", is_nan, axis=last, keepdims=0)
        has_nan = g.op("ReduceMax", is_nan, axes=[last], keepdims=0)
        index = g.op("Where", g.cast(has_nan, "bool"), first_nan, index)
    if may_be_empty(static_shape, axes):
        # On the original axes: the flattening Reshape reads a 0 size as "copy".
        index = check_nonempty_reduction(g, original, axes, index)
    return index


@onnx_funcify.register(Dot)
def _dot(op, node, g, x, y):
    # PyTensor's Dot multiplies matrices (np.matmul) in the upcast dtype.
    # Integer MatMul wraps like NumPy. ONNX Runtime's unsigned MatMul fails
    # when the inner dim is empty, so unsigned products run on the signed
    # type of the same width; the builder computes narrow integer and bool
    # products in int32 and casts back, which keeps the low bits (and the
    # truth value for bool). Float64 products run on BLAS in mode ONNX
    # (linalg_kernel.matmul).
    from pytensor_onnx.dispatch.linalg_kernel import matmul

    dtype = output_dtype(node)
    compute = _signed_twin(dtype)
    return g.cast(matmul(g, g.cast(x, compute), g.cast(y, compute)), dtype)
