"""Discrete distributions: Bernoulli, integers, categorical, Poisson,
binomial and their mixtures, geometric, hypergeometric."""

from __future__ import annotations

import numpy as np
from pytensor.tensor.random.basic import (
    BernoulliRV,
    BetaBinomialRV,
    BinomialRV,
    CategoricalRV,
    GeometricRV,
    HyperGeometricRV,
    IntegersRV,
    NegBinomialRV,
    PoissonRV,
)

from pytensor_onnx.dispatch.random.continuous import standard_gamma
from pytensor_onnx.dispatch.random.multivariate import at_least_one_max
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
from pytensor_onnx.dispatch.utils import check, int64_const, output_dtype


@register_rv(BernoulliRV)
def _bernoulli(op, node, g, rng, size, p):
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (p,)}, (0,))
    draws = g.op("Less", stream.uniform(shape), as_float(g, p))
    return stream.state, g.cast(draws, output_dtype(node, 1))


@register_rv(IntegersRV)
def _integers(op, node, g, rng, size, low, high):
    # low + floor(u * (high - low)), exact while high - low < 2**53
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (low, high)}, (0, 0))
    low64, high64 = g.cast(low, "int64"), g.cast(high, "int64")
    span = as_float(g, g.op("Sub", high64, low64))
    offset = g.cast(g.op("Floor", g.op("Mul", stream.uniform(shape), span)), "int64")
    draws = g.op("Add", low64, offset)
    draws = g.op("Min", draws, g.op("Sub", high64, int64_const(g, 1)))  # rounding guard
    return stream.state, g.cast(draws, output_dtype(node, 1))


@register_rv(CategoricalRV)
def _categorical(op, node, g, rng, size, p):
    # as PyTensor's: searchsorted(cumsum(p), u), i.e. how many cdf values < u
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (p,)}, (1,))
    cdf = g.op("CumSum", as_float(g, p), int64_const(g, -1))
    u = g.op("Unsqueeze", stream.uniform(shape), axes=[-1])
    count = g.op("ReduceSum", g.cast(g.op("Less", cdf, u), "int64"), axes=[-1], keepdims=0)
    last = g.op("Sub", last_dim(g, p), int64_const(g, 1))
    draws = g.op("Min", count, g.op("Squeeze", last, axes=[0]))
    return stream.state, g.cast(draws, output_dtype(node, 1))


def _search_counts(g, u, p0, rank, ratio, limit):
    """Inversion by sequential search, vectorised in a Loop: the smallest x
    with u <= P(X <= x), where P(X = 0) = p0 and P(X = x + 1) = P(X = x) *
    ratio(body, x); stops where ``limit(body, x)`` is false (float64 counts)."""
    body = g.subgraph("inversion_search")
    body.input("iteration", "int64", [])
    body.input("condition", "bool", [])
    x = body.input("x", "float64", [None] * rank)
    p = body.input("p", "float64", [None] * rank)
    cdf = body.input("cdf", "float64", [None] * rank)
    b = body
    more = b.op("And", b.op("Greater", u, cdf), limit(b, x))
    p = b.op("Where", more, b.op("Mul", p, ratio(b, x)), p)
    cdf = b.op("Where", more, b.op("Add", cdf, p), cdf)
    x = b.op("Add", x, b.cast(more, "float64"))
    pending = b.op("ReduceSum", b.cast(more, "int64"), keepdims=0)
    b.output(b.op("Greater", pending, int64_const(b, 0)), "continue")
    b.output(x, "x_out")
    b.output(p, "p_out")
    b.output(cdf, "cdf_out")
    zeros = g.op("Mul", u, f64(g, 0.0))
    p0 = g.op("Add", p0, zeros)
    counts, _, _ = g.op("Loop", int64_const(g, 100_000), g.const(np.array(True)), zeros, p0, p0, body=body, outputs=3)
    return counts


def _chunks(g, shape, total, chunk):
    """Split per-element totals (float64, broadcast to ``shape``) into chunks
    of at most ``chunk``: (chunk sizes of shape (K, *shape), K), K the most
    chunks any element needs (at least 1)."""
    total = g.op("Add", total, full(g, shape, 0.0))
    count = g.op("Max", g.op("Ceil", g.op("Div", total, f64(g, chunk))), f64(g, 1.0))
    flat = g.op("Concat", f64(g, [1.0]), g.op("Reshape", count, int64_const(g, [-1])), axis=0)
    k = g.cast(g.op("ReduceMax", flat, axes=[0], keepdims=1), "int64")
    index = g.cast(g.op("Range", int64_const(g, 0), g.op("Squeeze", k, axes=[0]), int64_const(g, 1)), "float64")
    index = g.op("Reshape", index, g.op("Concat", k, int64_const(g, np.ones(0, np.int64)), axis=0))
    return k, index, count, total


def _poisson_draws(g, stream, shape, rank, lam):
    """Pois(lam) draws of ``shape`` as float64: the sum of ceil(lam / 10)
    Poisson chunks of rate <= 10, each by inversion (exact; time and memory
    grow with lam)."""
    k, index, count, lam = _chunks(g, shape, lam, 10.0)
    index = batch_axes(g, index, rank)
    rate = g.op("Where", g.op("Less", index, count), g.op("Div", lam, count), f64(g, 0.0))
    u = stream.uniform(g.op("Concat", k, shape, axis=0))
    counts = _search_counts(
        g, u, g.op("Exp", g.op("Neg", rate)), rank + 1,
        ratio=lambda b, x: b.op("Div", rate, b.op("Add", x, f64(b, 1.0))),
        limit=lambda b, x: b.op("Less", x, f64(b, 1e9)),  # p underflows long before
    )
    return g.op("ReduceSum", counts, axes=[0], keepdims=0)


@register_rv(PoissonRV)
def _poisson(op, node, g, rng, size, lam):
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (lam,)}, (0,))
    draws = _poisson_draws(g, stream, shape, draws_rank(node), as_float(g, lam))
    return stream.state, g.cast(draws, output_dtype(node, 1))


@register_rv(NegBinomialRV)
def _negative_binomial(op, node, g, rng, size, n, p):
    # failures before the n-th success: Poisson(Gamma(n, scale=(1 - p) / p))
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (n, p)}, (0, 0))
    p = as_float(g, p)
    rate = g.op("Mul", standard_gamma(g, stream, shape, draws_rank(node), as_float(g, n)),
                g.op("Div", g.op("Sub", f64(g, 1.0), p), p))
    draws = _poisson_draws(g, stream, shape, draws_rank(node), rate)
    return stream.state, g.cast(draws, output_dtype(node, 1))


def _binomial_draws(g, stream, shape, rank, n, p):
    """Bin(n, p) draws of ``shape`` as float64: the sum of Bin(m_j, p) chunks
    of m_j <= 16 trials, each by inversion on q = min(p, 1 - p) (so
    (1 - q)**16 cannot underflow); exact, time grows with n."""
    k, index, count, trials = _chunks(g, shape, n, 16.0)
    index = batch_axes(g, index, rank)
    m = g.op("Max", g.op("Min", g.op("Sub", trials, g.op("Mul", index, f64(g, 16.0))), f64(g, 16.0)), f64(g, 0.0))
    p = g.op("Add", p, full(g, shape, 0.0))
    flip = g.op("Greater", p, f64(g, 0.5))
    q = g.op("Where", flip, g.op("Sub", f64(g, 1.0), p), p)
    odds = g.op("Div", q, g.op("Sub", f64(g, 1.0), q))
    u = stream.uniform(g.op("Concat", k, shape, axis=0))
    counts = _search_counts(
        g, u, g.op("Pow", g.op("Sub", f64(g, 1.0), q), m), rank + 1,
        ratio=lambda b, x: b.op("Mul", odds, b.op("Div", b.op("Sub", m, x), b.op("Add", x, f64(b, 1.0)))),
        limit=lambda b, x: b.op("Less", x, m),
    )
    counts = g.op("Where", flip, g.op("Sub", m, counts), counts)
    return g.op("ReduceSum", counts, axes=[0], keepdims=0)


@register_rv(BinomialRV)
def _binomial(op, node, g, rng, size, n, p):
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (n, p)}, (0, 0))
    draws = _binomial_draws(g, stream, shape, draws_rank(node), as_float(g, n), as_float(g, p))
    return stream.state, g.cast(draws, output_dtype(node, 1))


@register_rv(BetaBinomialRV)
def _beta_binomial(op, node, g, rng, size, n, a, b):
    # Bin(n, p) with p ~ Beta(a, b)
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (n, a, b)}, (0, 0, 0))
    x = standard_gamma(g, stream, shape, draws_rank(node), as_float(g, a))
    y = standard_gamma(g, stream, shape, draws_rank(node), as_float(g, b))
    p = g.op("Div", x, g.op("Add", x, y))
    draws = _binomial_draws(g, stream, shape, draws_rank(node), as_float(g, n), p)
    return stream.state, g.cast(draws, output_dtype(node, 1))


@register_rv(GeometricRV)
def _geometric(op, node, g, rng, size, p):
    # trials to the first success: floor(log u / log(1 - p)) + 1
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (p,)}, (0,))
    log_q = g.op("Log", g.op("Sub", f64(g, 1.0), as_float(g, p)))
    draws = g.op("Add", g.op("Floor", g.op("Div", g.op("Log", stream.uniform(shape)), log_q)), f64(g, 1.0))
    return stream.state, g.cast(draws, output_dtype(node, 1))


@register_rv(HyperGeometricRV)
def _hypergeometric(op, node, g, rng, size, ngood, nbad, nsample):
    """Good items among ``nsample`` drawn without replacement from ``ngood``
    good and ``nbad`` bad ones, drawn one at a time (exact; a Loop of
    min(nsample, total - nsample) steps, the most any element needs: like
    NumPy, a sample of more than half the items is drawn as the items left
    out, whose good ones are subtracted from ngood)."""
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (ngood, nbad, nsample)}, (0, 0, 0))
    rank = draws_rank(node)
    good = g.op("Add", as_float(g, ngood), full(g, shape, 0.0))
    total = g.op("Add", good, as_float(g, nbad))
    sample = g.op("Add", as_float(g, nsample), full(g, shape, 0.0))
    # NumPy raises for negative counts or a sample larger than the population
    zero = f64(g, 0.0)
    valid = g.op("And", g.op("And", g.op("GreaterOrEqual", good, zero), g.op("GreaterOrEqual", total, good)),
                 g.op("And", g.op("GreaterOrEqual", sample, zero), g.op("LessOrEqual", sample, total)))
    sample = check(g, valid, sample)
    flip = g.op("Greater", sample, g.op("Sub", total, sample))
    steps = g.op("Where", flip, g.op("Sub", total, sample), sample)
    most = at_least_one_max(g, steps)

    body = g.subgraph("hypergeometric_draws")
    step = body.input("iteration", "int64", [])
    body.input("condition", "bool", [])
    counter = body.input("counter", "uint64", [1])
    good_left = body.input("good_left", "float64", [None] * rank)
    left = body.input("left", "float64", [None] * rank)
    b = body
    inner = stream.inside(body, counter)
    active = b.op("Less", b.cast(step, "float64"), steps)
    # the next item is good with probability good_left / left
    is_good = b.op("And", active, b.op("Less", b.op("Mul", inner.uniform(shape), left), good_left))
    b.output(b.const(np.array(True)), "continue")
    b.output(inner.counter, "counter_out")
    b.output(b.op("Sub", good_left, b.cast(is_good, "float64")), "good_left_out")
    b.output(b.op("Sub", left, b.cast(active, "float64")), "left_out")
    stream.counter, good_left, _ = g.op(
        "Loop", g.op("Squeeze", most, axes=[0]), g.const(np.array(True)), stream.counter, good, total,
        body=body, outputs=3,
    )
    chosen = g.op("Sub", good, good_left)
    draws = g.op("Where", flip, good_left, chosen)
    return stream.state, g.cast(draws, output_dtype(node, 1))
