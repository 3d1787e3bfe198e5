"""Helpers the linear-algebra rules share: operands checked to be square or
to have matching sizes, NaN where a factorization fails, triangles.

The decompositions are recipes of the C++ core (``src/core/recipes/linalg*.cc``)
built from standard ONNX ops (in mode ONNX, LAPACK kernels where one does the
job: ``linalg_kernel.factorization``), in the output's dtype (float32 stays
float32, float64 is never computed in float32). Every rule takes leading batch
dims (``Blockwise``). Failures follow PyTensor: NaN where LAPACK reports one
(not positive definite, exactly singular). A non-square matrix, or a
right-hand side whose rows differ from the matrix's, raises at conversion when
the shapes are static, else makes ONNX Runtime fail at run time, as PyTensor
raises there.
"""

from __future__ import annotations

import numpy as np

from pytensor_onnx.dispatch.linalg_kernel import has_kernel
from pytensor_onnx.dispatch.utils import check, dim_size, int64_const, int64_range, int64_vector, output_dtype, swap_last_axes


def same_sizes(g, x, axis_x: int, y, axis_y: int, what: str, node, at_run_time: bool = True):
    """``x`` unchanged, checked to have as many elements on ``axis_x`` as ``y`` on ``axis_y``.

    Static sizes are checked now (ValueError); others make ONNX Runtime fail
    at run time where they differ (unless ``at_run_time`` is false: a kernel that
    checks them itself reads ``x``).
    """
    a, b = dim_size(g, x, axis_x), dim_size(g, y, axis_y)
    if isinstance(a, int) and isinstance(b, int):
        if a != b:
            raise ValueError(f"{node.op}: {what} ({a} != {b}) in node {node}")
        return x
    if not at_run_time:
        return x
    return check(g, g.op("Equal", int64_vector(g, [a]), int64_vector(g, [b])), x)

def square(g, x, node, dtype: str, recipe: str | None = None):
    """``x`` cast to ``dtype``, checked to be (stacks of) square matrices (at
    run time only when ``recipe`` has no kernel here, see ``has_kernel``)."""
    x = g.cast(x, dtype)
    at_run_time = recipe is None or not has_kernel(recipe, dtype)
    return same_sizes(g, x, -1, x, -2, "expected square matrices", node, at_run_time)

def solve_operands(g, node, a, b, b_ndim: int, recipe: str, **attrs):
    """``a`` and ``b`` of a solve: square ``a``, ``b`` with as many rows, both in the output dtype."""
    dtype = output_dtype(node)
    at_run_time = not has_kernel(recipe, dtype, 2, **attrs)
    a = g.cast(a, dtype)
    a = same_sizes(g, a, -1, a, -2, "expected square matrices", node, at_run_time)
    b = g.cast(b, dtype)
    b = same_sizes(g, b, -b_ndim, a, -1, "b's rows must match a's size", node, at_run_time)
    return a, b

def nan_where(g, flag, x, core_rank: int):
    """``x`` with NaN in the core matrices (or vectors) whose ``flag`` (batch dims only) is true."""
    if core_rank:
        flag = g.op("Unsqueeze", flag, axes=list(range(flag.rank, flag.rank + core_rank)))
    return g.op("Where", flag, g.const(np.array(np.nan, dtype=x.dtype)), x)

def rows_cols(g, x):
    """The sizes of the last two axes of ``x`` as 1-D int64 Values."""
    return int64_vector(g, [dim_size(g, x, -2)]), int64_vector(g, [dim_size(g, x, -1)])

def triangle(g, x, upper: bool):
    """triu(x) (or tril) over the last two axes, for any shape."""
    rows, cols = rows_cols(g, x)
    r = g.op("Unsqueeze", g.op("Range", int64_const(g, 0), g.op("Squeeze", rows, axes=[0]), int64_const(g, 1)), axes=[1])
    c = g.op("Unsqueeze", g.op("Range", int64_const(g, 0), g.op("Squeeze", cols, axes=[0]), int64_const(g, 1)), axes=[0])
    keep = g.op("LessOrEqual", r, c) if upper else g.op("GreaterOrEqual", r, c)
    return g.op("Where", keep, x, g.const(np.array(0, dtype=x.dtype)))

def fold_triangle(g, x, lower: bool):
    """tril(x) + triu(x, 1)^T (lower) or triu(x) + tril(x, -1)^T (upper): the
    gradient with respect to the triangle an Op reads."""
    n = dim_size(g, x, -1)
    index = int64_range(g, 0, n)
    rows, cols = g.op("Unsqueeze", index, axes=[1]), g.op("Unsqueeze", index, axes=[0])
    zero = g.const(np.array(0, dtype=x.dtype))
    keep = g.op("GreaterOrEqual", rows, cols) if lower else g.op("LessOrEqual", rows, cols)
    strict_other = g.op("Less", rows, cols) if lower else g.op("Greater", rows, cols)
    return g.op("Add", g.op("Where", keep, x, zero), swap_last_axes(g, g.op("Where", strict_other, x, zero)))

def tall(x) -> int:
    """1 when the matrices are (or may be) at least as tall as wide (see the svd recipe)."""
    rows, cols = (x.shape[-2], x.shape[-1]) if x.shape is not None else (None, None)
    return int(not (isinstance(rows, int) and isinstance(cols, int)) or rows >= cols)
