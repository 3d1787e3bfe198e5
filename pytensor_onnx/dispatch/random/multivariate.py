"""Multivariate distributions and draws of whole core arrays: Dirichlet,
multinomial, permutations and choice without replacement, multivariate normal."""

from __future__ import annotations

import numpy as np
from pytensor.tensor.random.basic import (
    ChoiceWithoutReplacement,
    DirichletRV,
    MultinomialRV,
    MvNormalRV,
    PermutationRV,
)

from pytensor_onnx.dispatch.random.continuous import standard_gamma
from pytensor_onnx.dispatch.random.stream import (
    Stream,
    as_float,
    batch_axes,
    batch_shape,
    draws_rank,
    f64,
    full,
    last_dim,
    register_rv,
)
from pytensor_onnx.dispatch.utils import int64_const, output_dtype, reshape_to


@register_rv(DirichletRV)
def _dirichlet(op, node, g, rng, size, alphas):
    # Gamma(alpha_i) draws normalised along the last axis
    stream = Stream(g, rng)
    batch = batch_shape(g, node, {"size": size, "dist": (alphas,)}, (1,))
    k = last_dim(g, alphas)
    shape = g.op("Concat", batch, k, axis=0)
    draws = standard_gamma(g, stream, shape, draws_rank(node), as_float(g, alphas))
    total = g.op("ReduceSum", draws, axes=[-1], keepdims=1)
    return stream.state, g.cast(g.op("Div", draws, total), output_dtype(node, 1))


def at_least_one_max(g, x):
    """max(1, max of ``x``) as int64 [1] (also for an empty ``x``)."""
    flat = g.op("Concat", f64(g, [1.0]), g.op("Reshape", g.cast(x, "float64"), int64_const(g, [-1])), axis=0)
    return g.cast(g.op("ReduceMax", flat, axes=[0], keepdims=1), "int64")


@register_rv(MultinomialRV)
def _multinomial(op, node, g, rng, size, n, p):
    # Counts of n categorical draws (the last category takes 1 - sum of the
    # others, as NumPy's): exact; memory grows with max(n) * batch * k.
    stream = Stream(g, rng)
    batch = batch_shape(g, node, {"size": size, "dist": (n, p)}, (0, 1))
    rank = draws_rank(node) - 1
    n = g.op("Add", as_float(g, n), full(g, batch, 0.0))
    most = at_least_one_max(g, n)
    u = stream.uniform(g.op("Concat", most, batch, axis=0))
    cdf = g.op("CumSum", as_float(g, p), int64_const(g, -1))
    k = last_dim(g, p)
    head = g.op("Slice", cdf, int64_const(g, [0]), g.op("Sub", k, int64_const(g, 1)), int64_const(g, [-1]))
    category = g.op("ReduceSum", g.cast(g.op("Less", head, g.op("Unsqueeze", u, axes=[-1])), "int64"),
                    axes=[-1], keepdims=1)
    draw = g.op("Range", int64_const(g, 0), g.op("Squeeze", most, axes=[0]), int64_const(g, 1))
    active = g.op("Less", batch_axes(g, g.cast(draw, "float64"), rank), n)
    categories = g.op("Range", int64_const(g, 0), g.op("Squeeze", k, axes=[0]), int64_const(g, 1))
    hits = g.op("And", g.op("Equal", category, categories), g.op("Unsqueeze", active, axes=[-1]))
    counts = g.op("ReduceSum", g.cast(hits, "int64"), axes=[0], keepdims=0)
    return stream.state, g.cast(counts, output_dtype(node, 1))


def _population(g, op, x):
    """How many items a permutation/choice draws from, int64 [1]: the value
    of an integer ``x`` (``arange(x)``; batched, its equal entries), else the
    first core dim of ``x``."""
    if op.ndims_params[0] == 0:
        flat = g.op("Reshape", g.cast(x, "int64"), int64_const(g, [-1]))
        return g.op("Slice", flat, int64_const(g, [0]), int64_const(g, [1]))
    first_core = x.rank - op.ndims_params[0]
    return g.op("Slice", g.op("Shape", x), int64_const(g, [first_core]), int64_const(g, [first_core + 1]))


def _dims_from(g, x, start):
    """The dims of ``x`` from ``start`` on (int64, maybe empty)."""
    return g.op("Slice", g.op("Shape", x), int64_const(g, [start]), int64_const(g, [x.rank]))


def _order(g, keys, count, largest):
    """Indices of the ``count`` largest (or smallest) keys along the last axis, in order."""
    return g.op("TopK", keys, count, axis=-1, largest=int(largest), sorted=1, outputs=2)[1]


def _take_items(g, op, x, batch, batch_ndim, order):
    """The items ``order`` (batch dims, then the picks) of ``x`` per batch
    entry: ``order`` itself for an integer ``x``, else the slices of ``x``
    along its first core axis (``x`` broadcast to the batch first)."""
    core = op.ndims_params[0]
    if core == 0:
        return order
    first_core = x.rank - core
    x = g.op("Expand", x, g.op("Concat", batch, _dims_from(g, x, first_core), axis=0))
    rest = _dims_from(g, x, batch_ndim + 1)
    if core > 1:
        order = g.op("Unsqueeze", order, axes=list(range(batch_ndim + 1, batch_ndim + core)))
    count = g.op("Slice", g.op("Shape", order), int64_const(g, [batch_ndim]), int64_const(g, [batch_ndim + 1]))
    order = g.op("Expand", order, g.op("Concat", batch, count, rest, axis=0))
    return g.op("GatherElements", x, order, axis=batch_ndim)


@register_rv(PermutationRV)
def _permutation(op, node, g, rng, size, x):
    # sorting i.i.d. uniform keys gives a uniformly random order; each batch
    # entry sorts its own keys
    stream = Stream(g, rng)
    batch_ndim = draws_rank(node) - op.ndim_supp
    batch = batch_shape(g, node, {"size": size, "dist": (x,)}, op.ndims_params)
    length = _population(g, op, x)
    order = _order(g, stream.uniform(g.op("Concat", batch, length, axis=0)), length, largest=False)
    out = _take_items(g, op, x, batch, batch_ndim, order)
    return stream.state, g.cast(out, output_dtype(node, 1))


@register_rv(ChoiceWithoutReplacement)
def _choice_without_replacement(op, node, g, rng, size, a, *rest):
    # the first draws of a random order; with p, the Gumbel-top-k trick:
    # the k largest log p + Gumbel keys are a weighted draw without replacement
    # (Vieira 2014; Kool et al., ICML 2019). Each batch entry draws its own.
    p, core_shape = rest if len(rest) == 2 else (None, rest[0])
    stream = Stream(g, rng)
    batch_ndim = draws_rank(node) - op.ndim_supp
    params = (a,) if p is None else (a, p)
    batch = batch_shape(g, node, {"size": size, "dist": params}, op.ndims_params[: len(params)])
    core_shape = g.cast(core_shape, "int64")
    for _ in range(core_shape.rank - 1):  # batched core shapes are all equal (PyTensor reads the first)
        core_shape = g.op("Gather", core_shape, int64_const(g, 0), axis=0)
    count = g.op("Reshape", g.op("Size", g.op("ConstantOfShape", core_shape)), int64_const(g, [1]))
    u = stream.uniform(g.op("Concat", batch, _population(g, op, a), axis=0))
    if p is None:
        keys = u
    else:
        keys = g.op("Sub", g.op("Log", as_float(g, p)), g.op("Log", g.op("Neg", g.op("Log", u))))
    chosen = _take_items(g, op, a, batch, batch_ndim, _order(g, keys, count, largest=True))
    item_dims = _dims_from(g, chosen, batch_ndim + 1)
    out = reshape_to(g, chosen, g.op("Concat", batch, core_shape, item_dims, axis=0))
    return stream.state, g.cast(out, output_dtype(node, 1))


def _psd_cholesky(g, cov, rank):
    """Lower Cholesky factor of symmetric positive semi-definite matrices
    (..., k, k), a column per Loop iteration (the Cholesky-Banachiewicz
    recurrence): column j is (A[:, j] - L L[j]^T) / sqrt(pivot) below the
    diagonal. A pivot <= 0 (a singular PSD matrix) gives a zero column, so
    L L^T = A still holds: any factor of the covariance gives the same
    distribution, as PyTensor's "svd" and "eigh" methods do."""
    k = last_dim(g, cov)
    body = g.subgraph("psd_cholesky")
    j = body.input("j", "int64", [])
    body.input("condition", "bool", [])
    factor = body.input("factor", "float64", [None] * rank)
    b = body
    row = b.op("Gather", factor, j, axis=rank - 2)  # (..., k): L[j, :]
    column = b.op("Gather", cov, j, axis=rank - 1)  # (..., k): A[:, j]
    rest = b.op("Sub", column, b.op("ReduceSum", b.op("Mul", factor, b.op("Unsqueeze", row, axes=[-2])),
                                    axes=[-1], keepdims=0))
    pivot = b.op("Max", b.op("Gather", rest, j, axis=rank - 2), f64(b, 0.0))
    root = b.op("Unsqueeze", b.op("Sqrt", pivot), axes=[-1])
    index = b.op("Range", int64_const(b, 0), b.op("Squeeze", k, axes=[0]), int64_const(b, 1))
    keep = b.op("And", b.op("GreaterOrEqual", index, j), b.op("Greater", root, f64(b, 0.0)))
    new_column = b.op("Where", keep, b.op("Div", rest, b.op("Where", keep, root, f64(b, 1.0))), f64(b, 0.0))
    at_j = b.cast(b.op("Equal", index, j), "float64")
    b.output(b.const(np.array(True)), "continue")
    b.output(b.op("Add", factor, b.op("Mul", b.op("Unsqueeze", new_column, axes=[-1]), at_j)), "factor_out")
    return g.op("Loop", g.op("Squeeze", k, axes=[0]), g.const(np.array(True)), g.op("Mul", cov, f64(g, 0.0)),
                body=body, outputs=1)


@register_rv(MvNormalRV)
def _mvnormal(op, node, g, rng, size, mean, cov):
    # mean + L z with L L^T = cov (every method draws from the same distribution)
    stream = Stream(g, rng)
    batch = batch_shape(g, node, {"size": size, "dist": (mean, cov)}, (1, 2))
    k = last_dim(g, mean)
    z = stream.normal(g.op("Concat", batch, k, axis=0))
    cov = as_float(g, cov)
    factor = _psd_cholesky(g, cov, node.inputs[3].type.ndim)
    draws = g.op("Add", as_float(g, mean),
                 g.op("ReduceSum", g.op("Mul", factor, g.op("Unsqueeze", z, axes=[-2])), axes=[-1], keepdims=0))
    return stream.state, g.cast(draws, output_dtype(node, 1))
