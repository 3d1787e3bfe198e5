"""RandomVariable Ops -> a counter-based generator built from standard ONNX ops.

Why not ONNX's ``RandomUniform``/``RandomNormal``: their only seed is a static
attribute and ONNX Runtime's kernels keep a private engine that advances on
every run (ONNX-NOTES section E). A PyTensor random graph is *functional*: an
RV node maps an RNG state to draws and a next state, and the function
reproduces its draws when the shared RNG is re-seeded. A stateful kernel
can do neither without rebuilding the session.

So an RNG variable is, in ONNX, a ``uint64[2]`` tensor ``[seed, counter]``
and every RV node is a pure function of it: word ``i`` of a node is the
"Squares" counter-based generator (B. Widynski, "Squares: A Fast
Counter-Based RNG", 2020, arXiv:2004.06278; four rounds, 32-bit output,
passes BigCrush) at counter ``counter + i`` with a key derived from
``seed``; the node's next state is ``[seed, counter + words used]``. Squares
needs only uint64 multiply, add and shifts (its 32-bit rotation is a sum of
two shifts), which ONNX Runtime has at opset 13. Each float is built from
two words (53 random bits), then transformed (inversion, Box-Muller) in
float64 and cast to the RV's dtype.

How a NumPy ``Generator`` becomes a state and back, for mode ONNX and
export, is in ``rng_state`` / ``state_generator`` (see docs/semantics.md).
Distributions without a rule here fall to ``onnx_funcify``'s default:
NotImplementedError naming the Op and node.
"""

from __future__ import annotations

import copy
import functools

import numpy as np
from pytensor.tensor.random.basic import (
    BernoulliRV,
    BetaBinomialRV,
    BetaRV,
    BinomialRV,
    CategoricalRV,
    CauchyRV,
    ChoiceWithoutReplacement,
    DirichletRV,
    ExponentialRV,
    GammaRV,
    GenGammaRV,
    GeometricRV,
    GumbelRV,
    HalfCauchyRV,
    HalfNormalRV,
    HyperGeometricRV,
    IntegersRV,
    InvGammaRV,
    LaplaceRV,
    LogNormalRV,
    LogisticRV,
    MultinomialRV,
    MvNormalRV,
    NegBinomialRV,
    NormalRV,
    ParetoRV,
    PermutationRV,
    PoissonRV,
    StudentTRV,
    TriangularRV,
    TruncExponentialRV,
    UniformRV,
    VonMisesRV,
    WaldRV,
    WeibullRV,
)
from pytensor.tensor.random.type import RandomType
from pytensor.tensor.type_other import NoneTypeT

from pytensor_onnx.dispatch.basic import onnx_funcify, onnx_typify
from pytensor_onnx.dispatch.shape import _reshape_with_zero_sizes, guarded

#: The key that turns a seed into a node key: the first key of the Squares
#: paper's key list (keys.h of its reference code).
_SEED_KEY = 0xC58EFD154CE32F6D
#: Marks a Philox key as an encoded ONNX RNG state (see ``state_generator``).
_STATE_MARK = 0x0A11CE5EED0A11CE
_U64 = np.uint64


# ---------------------------------------------------------------- host side
def squares32(counter, key):
    """NumPy reference of the generator the models run (uint64 arrays in,
    32-bit words as uint64 out); tests compare the ONNX words with it."""
    counter = np.asarray(counter, dtype=_U64)
    key = _U64(key)
    with np.errstate(over="ignore"):
        x = y = counter * key
        z = y + key
        for add in (y, z, y):
            x = x * x + add
            x = (x >> _U64(32)) + (x << _U64(32))
        return (x * x + z) >> _U64(32)


def rng_state(generator) -> np.ndarray:
    """The ONNX RNG state ``uint64[2] = [seed, counter]`` of a NumPy Generator.

    A Generator made by ``state_generator`` decodes to its state; any other
    Generator gives ``[its next raw 64-bit word, 0]`` (read from a copy, so
    the Generator itself is left as it was): the same seeded Generator gives
    the same state, hence the same draws."""
    bitgen = generator.bit_generator
    if isinstance(bitgen, np.random.Philox):
        state = bitgen.state["state"]
        if int(state["key"][1]) == _STATE_MARK:
            return np.array([state["key"][0], state["counter"][0]], dtype=_U64)
    seed = copy.deepcopy(bitgen).random_raw()
    return np.array([seed, 0], dtype=_U64)


def state_generator(state) -> np.random.Generator:
    """A NumPy Generator that encodes the ONNX RNG ``state`` (and is a real
    Philox Generator, so PyTensor's other backends can draw from it)."""
    seed, counter = (int(v) for v in np.asarray(state, dtype=_U64))
    bitgen = np.random.Philox(counter=[counter, 0, 0, 0], key=[seed, _STATE_MARK])
    return np.random.Generator(bitgen)


def is_rng(var) -> bool:
    return isinstance(var.type, RandomType)


@onnx_typify.register(np.random.Generator)
def _typify_generator(data, dtype=None, **kwargs):
    return rng_state(data)


# ---------------------------------------------------------------- graph side
def _u64(g, value):
    return g.const(np.asarray(value, dtype=_U64))


def _i64(g, value):
    return g.const(np.asarray(value, dtype=np.int64))


def _f64(g, value):
    return g.const(np.asarray(value, dtype=np.float64))


def _shift(g, x, bits, direction):
    return g.op("BitShift", x, _u64(g, bits), direction=direction)


def _squares32(g, counter, key):
    """Squares (4 rounds) on uint64 counters: 32-bit words as uint64."""
    x = y = g.op("Mul", counter, key)
    z = g.op("Add", y, key)
    for add in (y, z, y):
        x = g.op("Add", g.op("Mul", x, x), add)
        x = g.op("Add", _shift(g, x, 32, "RIGHT"), _shift(g, x, 32, "LEFT"))
    return _shift(g, g.op("Add", g.op("Mul", x, x), z), 32, "RIGHT")


def _split_state(g, state):
    seed = g.op("Slice", state, _i64(g, [0]), _i64(g, [1]))
    counter = g.op("Slice", state, _i64(g, [1]), _i64(g, [2]))
    return seed, counter


def _key(g, seed):
    """An odd 64-bit key from the seed (two Squares words under a fixed key)."""
    twice = g.op("Add", seed, seed)
    hi = _squares32(g, twice, _u64(g, _SEED_KEY))
    lo = _squares32(g, g.op("Add", twice, _u64(g, 1)), _u64(g, _SEED_KEY))
    key = g.op("Add", _shift(g, hi, 32, "LEFT"), lo)
    return g.op("Add", _shift(g, _shift(g, key, 1, "RIGHT"), 1, "LEFT"), _u64(g, 1))


def _reshape(g, x, shape):
    """Reshape to an int64 ``shape`` with NumPy's zero sizes (ONNX Reshape
    reads a 0 as "copy the input dim" unless allowzero=1, opset 14+)."""
    if g.opset >= 14:
        return g.op("Reshape", x, shape, allowzero=1)
    return _reshape_with_zero_sizes(g, x, shape)


class _Stream:
    """Draws from one RNG state, advancing it: ``uniform(shape)`` gives
    float64 draws in the open interval (0, 1); ``state`` is the next state."""

    def __init__(self, g, state):
        self.g = g
        self.seed, self.counter = _split_state(g, state)
        self.key = _key(g, self.seed)

    def inside(self, body, counter):
        """A stream drawing in the subgraph ``body`` from ``counter`` (a
        loop-carried uint64[1]); seed and key are read from the enclosing graph."""
        inner = object.__new__(_Stream)
        inner.g, inner.seed, inner.key, inner.counter = body, self.seed, self.key, counter
        return inner

    def uniform(self, shape):
        g = self.g
        known = shape.constant_value
        if known is not None and 0 in known:
            # ONNX Runtime 1.21's optimizer breaks on constant-folded empty
            # tensors broadcast with the [1] counter (it gives shape {1}).
            return g.const(np.zeros(tuple(int(d) for d in known), dtype=np.float64))
        n = g.op("Size", g.op("ConstantOfShape", shape))
        index = g.cast(g.op("Range", _i64(g, 0), n, _i64(g, 1)), "uint64")
        first = g.op("Add", self.counter, g.op("Add", index, index))
        high = _squares32(g, first, self.key)
        low = _squares32(g, g.op("Add", first, _u64(g, 1)), self.key)
        # 53 bits: 32 from the first word, 21 from the second
        bits = g.op("Add", _shift(g, high, 21, "LEFT"), _shift(g, low, 11, "RIGHT"))
        # (bits + 0.5) / 2**53 lies strictly inside (0, 1)
        u = g.op("Mul", g.op("Add", g.cast(bits, "float64"), _f64(g, 0.5)), _f64(g, 2.0**-53))
        used = g.cast(g.op("Add", n, n), "uint64")
        self.counter = g.op("Add", self.counter, g.op("Unsqueeze", used, axes=[0]))
        return _reshape(g, u, shape)

    def normal(self, shape):
        g = self.g
        radius = g.op("Sqrt", g.op("Mul", _f64(g, -2.0), g.op("Log", self.uniform(shape))))
        angle = g.op("Mul", _f64(g, 2 * np.pi), self.uniform(shape))
        return g.op("Mul", radius, g.op("Cos", angle))

    @property
    def state(self):
        return self.g.op("Concat", self.seed, self.counter, axis=0)


# ---------------------------------------------------------------- the rules
def _register(op_class):
    """Register an RV rule; draws PyTensor knows to be empty skip it (a
    constant empty result, the state unchanged): ONNX Runtime 1.21 crashes on
    some constant-folded empty tensors in these graphs."""

    def decorate(rule):
        @functools.wraps(rule)
        def rv_rule(op, node, g, rng, *inputs):
            static = node.outputs[1].type.shape
            if 0 in static and None not in static:
                return rng, g.const(np.zeros(static, dtype=node.outputs[1].type.dtype))
            return rule(op, node, g, rng, *inputs)

        return onnx_funcify.register(op_class)(rv_rule)

    return decorate


def _batch_shape(g, node, params, core_ndims):
    """int64 shape of the draws: ``size`` when given, else the broadcast
    batch shape of the parameters (PyTensor makes their batch ranks equal)."""
    op = node.op
    static = node.outputs[1].type.shape
    if all(dim is not None for dim in static):
        return _i64(g, np.array(static[: len(static) - op.ndim_supp], dtype=np.int64))
    size_var = node.inputs[1]
    if not isinstance(size_var.type, NoneTypeT):
        return g.cast(params["size"], "int64")
    batch_ndim = node.outputs[1].type.ndim - op.ndim_supp
    shape = None
    for value, core in zip(params["dist"], core_ndims):
        dims = g.op("Slice", g.op("Shape", value), _i64(g, [0]), _i64(g, [batch_ndim]))
        # broadcasting per axis: a 1 takes the other size (also 0)
        shape = dims if shape is None else g.op("Where", g.op("Equal", shape, _i64(g, 1)), dims, shape)
    return shape if shape is not None else _i64(g, np.zeros(0, np.int64))


def _last_dim(g, x):
    """The last dim of ``x`` as int64 [1]."""
    return g.op("Slice", g.op("Shape", x), _i64(g, [-1]), _i64(g, [np.iinfo(np.int64).max]))


def _as_float(g, value):
    return g.cast(value, "float64")


def _location_scale(standard):
    """A rule for ``loc + scale * standard(stream, shape)``."""

    def rule(op, node, g, rng, size, loc, scale):
        stream = _Stream(g, rng)
        shape = _batch_shape(g, node, {"size": size, "dist": (loc, scale)}, (0, 0))
        draws = g.op("Add", _as_float(g, loc), g.op("Mul", _as_float(g, scale), standard(g, stream, shape)))
        return stream.state, g.cast(draws, node.outputs[1].type.dtype)

    return rule


def _standard_normal(g, stream, shape):
    return stream.normal(shape)


def _standard_halfnormal(g, stream, shape):
    return g.op("Abs", stream.normal(shape))


def _standard_cauchy(g, stream, shape):
    # cot(pi u) for u uniform on (0, 1) is standard Cauchy (sin > 0 there)
    angle = g.op("Mul", _f64(g, np.pi), stream.uniform(shape))
    return g.op("Div", g.op("Cos", angle), g.op("Sin", angle))


def _standard_laplace(g, stream, shape):
    # inverse CDF: -sign(v) log(1 - 2|v|), v = u - 1/2 in (-1/2, 1/2)
    v = g.op("Sub", stream.uniform(shape), _f64(g, 0.5))
    tail = g.op("Log", g.op("Sub", _f64(g, 1.0), g.op("Mul", _f64(g, 2.0), g.op("Abs", v))))
    return g.op("Neg", g.op("Mul", g.op("Sign", v), tail))


def _standard_logistic(g, stream, shape):
    u = stream.uniform(shape)
    return g.op("Log", g.op("Div", u, g.op("Sub", _f64(g, 1.0), u)))


def _standard_gumbel(g, stream, shape):
    return g.op("Neg", g.op("Log", g.op("Neg", g.op("Log", stream.uniform(shape)))))


for _cls, _standard in (
    (NormalRV, _standard_normal),
    (HalfNormalRV, _standard_halfnormal),
    (CauchyRV, _standard_cauchy),
    (LaplaceRV, _standard_laplace),
    (LogisticRV, _standard_logistic),
    (GumbelRV, _standard_gumbel),
):
    _register(_cls)(_location_scale(_standard))


@_register(LogNormalRV)
def _lognormal(op, node, g, rng, size, mean, sigma):
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (mean, sigma)}, (0, 0))
    log = g.op("Add", _as_float(g, mean), g.op("Mul", _as_float(g, sigma), stream.normal(shape)))
    return stream.state, g.cast(g.op("Exp", log), node.outputs[1].type.dtype)


@_register(UniformRV)
def _uniform(op, node, g, rng, size, low, high):
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (low, high)}, (0, 0))
    low, high = _as_float(g, low), _as_float(g, high)
    draws = g.op("Add", low, g.op("Mul", g.op("Sub", high, low), stream.uniform(shape)))
    return stream.state, g.cast(draws, node.outputs[1].type.dtype)


@_register(ExponentialRV)
def _exponential(op, node, g, rng, size, scale):
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (scale,)}, (0,))
    draws = g.op("Mul", g.op("Neg", _as_float(g, scale)), g.op("Log", stream.uniform(shape)))
    return stream.state, g.cast(draws, node.outputs[1].type.dtype)


@_register(BernoulliRV)
def _bernoulli(op, node, g, rng, size, p):
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (p,)}, (0,))
    draws = g.op("Less", stream.uniform(shape), _as_float(g, p))
    return stream.state, g.cast(draws, node.outputs[1].type.dtype)


@_register(IntegersRV)
def _integers(op, node, g, rng, size, low, high):
    # low + floor(u * (high - low)), exact while high - low < 2**53
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (low, high)}, (0, 0))
    low64, high64 = g.cast(low, "int64"), g.cast(high, "int64")
    span = _as_float(g, g.op("Sub", high64, low64))
    offset = g.cast(g.op("Floor", g.op("Mul", stream.uniform(shape), span)), "int64")
    draws = g.op("Add", low64, offset)
    draws = g.op("Min", draws, g.op("Sub", high64, _i64(g, 1)))  # rounding guard
    return stream.state, g.cast(draws, node.outputs[1].type.dtype)


@_register(CategoricalRV)
def _categorical(op, node, g, rng, size, p):
    # as PyTensor's: searchsorted(cumsum(p), u), i.e. how many cdf values < u
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (p,)}, (1,))
    cdf = g.op("CumSum", _as_float(g, p), _i64(g, -1))
    u = g.op("Unsqueeze", stream.uniform(shape), axes=[-1])
    count = g.op("ReduceSum", g.cast(g.op("Less", cdf, u), "int64"), axes=[-1], keepdims=0)
    last = g.op("Sub", _last_dim(g, p), _i64(g, 1))
    draws = g.op("Min", count, g.op("Squeeze", last, axes=[0]))
    return stream.state, g.cast(draws, node.outputs[1].type.dtype)


#: Most rounds a rejection sampler's Loop runs. Marsaglia-Tsang accepts with
#: probability > 0.95 per round, so an element still rejected after them has
#: probability < 1e-1000; it is NaN rather than silently wrong.
_MAX_ROUNDS = 1000


def _full(g, shape, value):
    return g.op("Expand", _f64(g, value), shape)


def _rejection_loop(g, stream, shape, rank, name, propose, done=None, fill=np.nan):
    """Vectorised rejection sampling of ``shape``: a Loop whose every round
    draws a proposal for all elements, ``propose(body, inner_stream) ->
    (candidate, accept)``, and keeps each element's first accepted candidate;
    it stops when all are accepted (at most ``_MAX_ROUNDS`` rounds; an element
    never accepted keeps ``fill``). ``done`` marks elements to skip."""
    body = g.subgraph(name)
    body.input("iteration", "int64", [])
    body.input("condition", "bool", [])
    counter = body.input("counter", "uint64", [1])
    result = body.input("result", "float64", [None] * rank)
    accepted = body.input("done", "bool", [None] * rank)
    inner = stream.inside(body, counter)
    b = body
    candidate, accept = propose(b, inner)
    result = b.op("Where", b.op("And", accept, b.op("Not", accepted)), candidate, result)
    accepted = b.op("Or", accepted, accept)
    pending = b.op("ReduceSum", b.cast(b.op("Not", accepted), "int64"), keepdims=0)
    b.output(b.op("Greater", pending, _i64(b, 0)), "continue")
    b.output(inner.counter, "counter_out")
    b.output(result, "result_out")
    b.output(accepted, "done_out")
    if done is None:
        done = g.op("Less", _full(g, shape, 0.0), _f64(g, 0.0))
    stream.counter, result, _ = g.op(
        "Loop", _i64(g, _MAX_ROUNDS), g.const(np.array(True)), stream.counter, _full(g, shape, fill), done,
        body=body, outputs=3,
    )
    return result


def _standard_gamma(g, stream, shape, rank, alpha):
    """Gamma(alpha, 1) draws of ``shape`` (``alpha`` float64, broadcastable to
    it). Marsaglia & Tsang, "A simple method for generating gamma variables",
    ACM TOMS 26(3), 2000: a vectorised rejection Loop that redraws only until
    every element has been accepted; alpha < 1 through their boost
    gamma(alpha) = gamma(alpha + 1) * U**(1/alpha)."""
    alpha = g.op("Add", alpha, _full(g, shape, 0.0))  # broadcast to the draws
    small = g.op("Less", alpha, _f64(g, 1.0))
    d = g.op("Sub", g.op("Where", small, g.op("Add", alpha, _f64(g, 1.0)), alpha), _f64(g, 1.0 / 3.0))
    c = g.op("Reciprocal", g.op("Sqrt", g.op("Mul", _f64(g, 9.0), d)))

    def propose(b, inner):
        z, u = inner.normal(shape), inner.uniform(shape)
        v = b.op("Add", _f64(b, 1.0), b.op("Mul", c, z))
        v = b.op("Mul", b.op("Mul", v, v), v)
        positive = b.op("Greater", v, _f64(b, 0.0))
        log_v = b.op("Log", b.op("Where", positive, v, _f64(b, 1.0)))
        # accept when log u < z**2 / 2 + d (1 - v + log v)
        bound = b.op("Add", b.op("Mul", _f64(b, 0.5), b.op("Mul", z, z)),
                     b.op("Mul", d, b.op("Add", b.op("Sub", _f64(b, 1.0), v), log_v)))
        return b.op("Mul", d, v), b.op("And", positive, b.op("Less", b.op("Log", u), bound))

    result = _rejection_loop(g, stream, shape, rank, "gamma_rejection", propose)
    boost = g.op("Pow", stream.uniform(shape), g.op("Reciprocal", alpha))
    return g.op("Where", small, g.op("Mul", result, boost), result)


def _out_dtype(node):
    return node.outputs[1].type.dtype


def _rank(node):
    return node.outputs[1].type.ndim


@_register(GammaRV)
def _gamma(op, node, g, rng, size, alpha, scale):
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (alpha, scale)}, (0, 0))
    draws = _standard_gamma(g, stream, shape, _rank(node), _as_float(g, alpha))
    return stream.state, g.cast(g.op("Mul", draws, _as_float(g, scale)), _out_dtype(node))


@_register(InvGammaRV)
def _invgamma(op, node, g, rng, size, alpha, scale):
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (alpha, scale)}, (0, 0))
    draws = _standard_gamma(g, stream, shape, _rank(node), _as_float(g, alpha))
    return stream.state, g.cast(g.op("Div", _as_float(g, scale), draws), _out_dtype(node))


@_register(BetaRV)
def _beta(op, node, g, rng, size, a, b):
    # X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b)
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (a, b)}, (0, 0))
    x = _standard_gamma(g, stream, shape, _rank(node), _as_float(g, a))
    y = _standard_gamma(g, stream, shape, _rank(node), _as_float(g, b))
    return stream.state, g.cast(g.op("Div", x, g.op("Add", x, y)), _out_dtype(node))


@_register(StudentTRV)
def _studentt(op, node, g, rng, size, df, loc, scale):
    # Z / sqrt(V / df) with V ~ chi2(df) = 2 Gamma(df / 2)
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (df, loc, scale)}, (0, 0, 0))
    df = _as_float(g, df)
    z = stream.normal(shape)
    half_v = _standard_gamma(g, stream, shape, _rank(node), g.op("Mul", df, _f64(g, 0.5)))
    t = g.op("Div", z, g.op("Sqrt", g.op("Div", g.op("Add", half_v, half_v), df)))
    draws = g.op("Add", _as_float(g, loc), g.op("Mul", _as_float(g, scale), t))
    return stream.state, g.cast(draws, _out_dtype(node))


@_register(DirichletRV)
def _dirichlet(op, node, g, rng, size, alphas):
    # Gamma(alpha_i) draws normalised along the last axis
    stream = _Stream(g, rng)
    batch = _batch_shape(g, node, {"size": size, "dist": (alphas,)}, (1,))
    k = _last_dim(g, alphas)
    shape = g.op("Concat", batch, k, axis=0)
    draws = _standard_gamma(g, stream, shape, _rank(node), _as_float(g, alphas))
    total = g.op("ReduceSum", draws, axes=[-1], keepdims=1)
    return stream.state, g.cast(g.op("Div", draws, total), _out_dtype(node))


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
    b.output(b.op("Greater", pending, _i64(b, 0)), "continue")
    b.output(x, "x_out")
    b.output(p, "p_out")
    b.output(cdf, "cdf_out")
    zeros = g.op("Mul", u, _f64(g, 0.0))
    p0 = g.op("Add", p0, zeros)
    counts, _, _ = g.op("Loop", _i64(g, 100_000), g.const(np.array(True)), zeros, p0, p0, body=body, outputs=3)
    return counts


def _chunks(g, shape, total, chunk):
    """Split per-element totals (float64, broadcast to ``shape``) into chunks
    of at most ``chunk``: (chunk sizes of shape (K, *shape), K), K the most
    chunks any element needs (at least 1)."""
    total = g.op("Add", total, _full(g, shape, 0.0))
    count = g.op("Max", g.op("Ceil", g.op("Div", total, _f64(g, chunk))), _f64(g, 1.0))
    flat = g.op("Concat", _f64(g, [1.0]), g.op("Reshape", count, _i64(g, [-1])), axis=0)
    k = g.cast(g.op("ReduceMax", flat, axes=[0], keepdims=1), "int64")
    index = g.cast(g.op("Range", _i64(g, 0), g.op("Squeeze", k, axes=[0]), _i64(g, 1)), "float64")
    index = g.op("Reshape", index, g.op("Concat", k, _i64(g, np.ones(0, np.int64)), axis=0))
    return k, index, count, total


def _batch_axes(g, x, rank):
    """``x`` (K,) with ``rank`` trailing unit axes, to broadcast against draws."""
    return g.op("Unsqueeze", x, axes=list(range(1, rank + 1))) if rank else x


def _poisson_draws(g, stream, shape, rank, lam):
    """Pois(lam) draws of ``shape`` as float64: the sum of ceil(lam / 10)
    Poisson chunks of rate <= 10, each by inversion (exact; time and memory
    grow with lam)."""
    k, index, count, lam = _chunks(g, shape, lam, 10.0)
    index = _batch_axes(g, index, rank)
    rate = g.op("Where", g.op("Less", index, count), g.op("Div", lam, count), _f64(g, 0.0))
    u = stream.uniform(g.op("Concat", k, shape, axis=0))
    counts = _search_counts(
        g, u, g.op("Exp", g.op("Neg", rate)), rank + 1,
        ratio=lambda b, x: b.op("Div", rate, b.op("Add", x, _f64(b, 1.0))),
        limit=lambda b, x: b.op("Less", x, _f64(b, 1e9)),  # p underflows long before
    )
    return g.op("ReduceSum", counts, axes=[0], keepdims=0)


@_register(PoissonRV)
def _poisson(op, node, g, rng, size, lam):
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (lam,)}, (0,))
    draws = _poisson_draws(g, stream, shape, _rank(node), _as_float(g, lam))
    return stream.state, g.cast(draws, _out_dtype(node))


@_register(NegBinomialRV)
def _negative_binomial(op, node, g, rng, size, n, p):
    # failures before the n-th success: Poisson(Gamma(n, scale=(1 - p) / p))
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (n, p)}, (0, 0))
    p = _as_float(g, p)
    rate = g.op("Mul", _standard_gamma(g, stream, shape, _rank(node), _as_float(g, n)),
                g.op("Div", g.op("Sub", _f64(g, 1.0), p), p))
    draws = _poisson_draws(g, stream, shape, _rank(node), rate)
    return stream.state, g.cast(draws, _out_dtype(node))


def _binomial_draws(g, stream, shape, rank, n, p):
    """Bin(n, p) draws of ``shape`` as float64: the sum of Bin(m_j, p) chunks
    of m_j <= 16 trials, each by inversion on q = min(p, 1 - p) (so
    (1 - q)**16 cannot underflow); exact, time grows with n."""
    k, index, count, trials = _chunks(g, shape, n, 16.0)
    index = _batch_axes(g, index, rank)
    m = g.op("Max", g.op("Min", g.op("Sub", trials, g.op("Mul", index, _f64(g, 16.0))), _f64(g, 16.0)), _f64(g, 0.0))
    p = g.op("Add", p, _full(g, shape, 0.0))
    flip = g.op("Greater", p, _f64(g, 0.5))
    q = g.op("Where", flip, g.op("Sub", _f64(g, 1.0), p), p)
    odds = g.op("Div", q, g.op("Sub", _f64(g, 1.0), q))
    u = stream.uniform(g.op("Concat", k, shape, axis=0))
    counts = _search_counts(
        g, u, g.op("Pow", g.op("Sub", _f64(g, 1.0), q), m), rank + 1,
        ratio=lambda b, x: b.op("Mul", odds, b.op("Div", b.op("Sub", m, x), b.op("Add", x, _f64(b, 1.0)))),
        limit=lambda b, x: b.op("Less", x, m),
    )
    counts = g.op("Where", flip, g.op("Sub", m, counts), counts)
    return g.op("ReduceSum", counts, axes=[0], keepdims=0)


@_register(BinomialRV)
def _binomial(op, node, g, rng, size, n, p):
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (n, p)}, (0, 0))
    draws = _binomial_draws(g, stream, shape, _rank(node), _as_float(g, n), _as_float(g, p))
    return stream.state, g.cast(draws, _out_dtype(node))


@_register(BetaBinomialRV)
def _beta_binomial(op, node, g, rng, size, n, a, b):
    # Bin(n, p) with p ~ Beta(a, b)
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (n, a, b)}, (0, 0, 0))
    x = _standard_gamma(g, stream, shape, _rank(node), _as_float(g, a))
    y = _standard_gamma(g, stream, shape, _rank(node), _as_float(g, b))
    p = g.op("Div", x, g.op("Add", x, y))
    draws = _binomial_draws(g, stream, shape, _rank(node), _as_float(g, n), p)
    return stream.state, g.cast(draws, _out_dtype(node))


@_register(GenGammaRV)
def _gengamma(op, node, g, rng, size, alpha, p, lambd):
    # lambd * Gamma(alpha / p) ** (1 / p), as scipy's gengamma(alpha / p, p)
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (alpha, p, lambd)}, (0, 0, 0))
    p = _as_float(g, p)
    base = _standard_gamma(g, stream, shape, _rank(node), g.op("Div", _as_float(g, alpha), p))
    draws = g.op("Mul", _as_float(g, lambd), g.op("Pow", base, g.op("Reciprocal", p)))
    return stream.state, g.cast(draws, _out_dtype(node))


@_register(TruncExponentialRV)
def _truncexpon(op, node, g, rng, size, b, loc, scale):
    # inversion on [0, b]: -log(1 - u (1 - exp(-b)))
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (b, loc, scale)}, (0, 0, 0))
    mass = g.op("Sub", _f64(g, 1.0), g.op("Exp", g.op("Neg", _as_float(g, b))))
    standard = g.op("Neg", g.op("Log", g.op("Sub", _f64(g, 1.0), g.op("Mul", stream.uniform(shape), mass))))
    draws = g.op("Add", _as_float(g, loc), g.op("Mul", _as_float(g, scale), standard))
    return stream.state, g.cast(draws, _out_dtype(node))


def _at_least_one_max(g, x):
    """max(1, max of ``x``) as int64 [1] (also for an empty ``x``)."""
    flat = g.op("Concat", _f64(g, [1.0]), g.op("Reshape", g.cast(x, "float64"), _i64(g, [-1])), axis=0)
    return g.cast(g.op("ReduceMax", flat, axes=[0], keepdims=1), "int64")


@_register(MultinomialRV)
def _multinomial(op, node, g, rng, size, n, p):
    # Counts of n categorical draws (the last category takes 1 - sum of the
    # others, as NumPy's): exact; memory grows with max(n) * batch * k.
    stream = _Stream(g, rng)
    batch = _batch_shape(g, node, {"size": size, "dist": (n, p)}, (0, 1))
    rank = _rank(node) - 1
    n = g.op("Add", _as_float(g, n), _full(g, batch, 0.0))
    most = _at_least_one_max(g, n)
    u = stream.uniform(g.op("Concat", most, batch, axis=0))
    cdf = g.op("CumSum", _as_float(g, p), _i64(g, -1))
    k = _last_dim(g, p)
    head = g.op("Slice", cdf, _i64(g, [0]), g.op("Sub", k, _i64(g, 1)), _i64(g, [-1]))
    category = g.op("ReduceSum", g.cast(g.op("Less", head, g.op("Unsqueeze", u, axes=[-1])), "int64"),
                    axes=[-1], keepdims=1)
    draw = g.op("Range", _i64(g, 0), g.op("Squeeze", most, axes=[0]), _i64(g, 1))
    active = g.op("Less", _batch_axes(g, g.cast(draw, "float64"), rank), n)
    categories = g.op("Range", _i64(g, 0), g.op("Squeeze", k, axes=[0]), _i64(g, 1))
    hits = g.op("And", g.op("Equal", category, categories), g.op("Unsqueeze", active, axes=[-1]))
    counts = g.op("ReduceSum", g.cast(hits, "int64"), axes=[0], keepdims=0)
    return stream.state, g.cast(counts, _out_dtype(node))


def _population(g, op, x):
    """How many items a permutation/choice draws from, int64 [1]: the value
    of an integer ``x`` (``arange(x)``; batched, its equal entries), else the
    first core dim of ``x``."""
    if op.ndims_params[0] == 0:
        flat = g.op("Reshape", g.cast(x, "int64"), _i64(g, [-1]))
        return g.op("Slice", flat, _i64(g, [0]), _i64(g, [1]))
    first_core = x.rank - op.ndims_params[0]
    return g.op("Slice", g.op("Shape", x), _i64(g, [first_core]), _i64(g, [first_core + 1]))


def _dims_from(g, x, start):
    """The dims of ``x`` from ``start`` on (int64, maybe empty)."""
    return g.op("Slice", g.op("Shape", x), _i64(g, [start]), _i64(g, [x.rank]))


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
    count = g.op("Slice", g.op("Shape", order), _i64(g, [batch_ndim]), _i64(g, [batch_ndim + 1]))
    order = g.op("Expand", order, g.op("Concat", batch, count, rest, axis=0))
    return g.op("GatherElements", x, order, axis=batch_ndim)


@_register(PermutationRV)
def _permutation(op, node, g, rng, size, x):
    # sorting i.i.d. uniform keys gives a uniformly random order; each batch
    # entry sorts its own keys
    stream = _Stream(g, rng)
    batch_ndim = _rank(node) - op.ndim_supp
    batch = _batch_shape(g, node, {"size": size, "dist": (x,)}, op.ndims_params)
    length = _population(g, op, x)
    order = _order(g, stream.uniform(g.op("Concat", batch, length, axis=0)), length, largest=False)
    out = _take_items(g, op, x, batch, batch_ndim, order)
    return stream.state, g.cast(out, _out_dtype(node))


@_register(ChoiceWithoutReplacement)
def _choice_without_replacement(op, node, g, rng, size, a, *rest):
    # the first draws of a random order; with p, the Gumbel-top-k trick:
    # the k largest log p + Gumbel keys are a weighted draw without replacement
    # (Vieira 2014; Kool et al., ICML 2019). Each batch entry draws its own.
    p, core_shape = rest if len(rest) == 2 else (None, rest[0])
    stream = _Stream(g, rng)
    batch_ndim = _rank(node) - op.ndim_supp
    params = (a,) if p is None else (a, p)
    batch = _batch_shape(g, node, {"size": size, "dist": params}, op.ndims_params[: len(params)])
    core_shape = g.cast(core_shape, "int64")
    for _ in range(core_shape.rank - 1):  # batched core shapes are all equal (PyTensor reads the first)
        core_shape = g.op("Gather", core_shape, _i64(g, 0), axis=0)
    count = g.op("Reshape", g.op("Size", g.op("ConstantOfShape", core_shape)), _i64(g, [1]))
    u = stream.uniform(g.op("Concat", batch, _population(g, op, a), axis=0))
    if p is None:
        keys = u
    else:
        keys = g.op("Sub", g.op("Log", _as_float(g, p)), g.op("Log", g.op("Neg", g.op("Log", u))))
    chosen = _take_items(g, op, a, batch, batch_ndim, _order(g, keys, count, largest=True))
    item_dims = _dims_from(g, chosen, batch_ndim + 1)
    out = _reshape(g, chosen, g.op("Concat", batch, core_shape, item_dims, axis=0))
    return stream.state, g.cast(out, _out_dtype(node))


def _psd_cholesky(g, cov, rank):
    """Lower Cholesky factor of symmetric positive semi-definite matrices
    (..., k, k), a column per Loop iteration (the Cholesky-Banachiewicz
    recurrence): column j is (A[:, j] - L L[j]^T) / sqrt(pivot) below the
    diagonal. A pivot <= 0 (a singular PSD matrix) gives a zero column, so
    L L^T = A still holds: any factor of the covariance gives the same
    distribution, as PyTensor's "svd" and "eigh" methods do."""
    k = _last_dim(g, cov)
    body = g.subgraph("psd_cholesky")
    j = body.input("j", "int64", [])
    body.input("condition", "bool", [])
    factor = body.input("factor", "float64", [None] * rank)
    b = body
    row = b.op("Gather", factor, j, axis=rank - 2)  # (..., k): L[j, :]
    column = b.op("Gather", cov, j, axis=rank - 1)  # (..., k): A[:, j]
    rest = b.op("Sub", column, b.op("ReduceSum", b.op("Mul", factor, b.op("Unsqueeze", row, axes=[-2])),
                                    axes=[-1], keepdims=0))
    pivot = b.op("Max", b.op("Gather", rest, j, axis=rank - 2), _f64(b, 0.0))
    root = b.op("Unsqueeze", b.op("Sqrt", pivot), axes=[-1])
    index = b.op("Range", _i64(b, 0), b.op("Squeeze", k, axes=[0]), _i64(b, 1))
    keep = b.op("And", b.op("GreaterOrEqual", index, j), b.op("Greater", root, _f64(b, 0.0)))
    new_column = b.op("Where", keep, b.op("Div", rest, b.op("Where", keep, root, _f64(b, 1.0))), _f64(b, 0.0))
    at_j = b.cast(b.op("Equal", index, j), "float64")
    b.output(b.const(np.array(True)), "continue")
    b.output(b.op("Add", factor, b.op("Mul", b.op("Unsqueeze", new_column, axes=[-1]), at_j)), "factor_out")
    return g.op("Loop", g.op("Squeeze", k, axes=[0]), g.const(np.array(True)), g.op("Mul", cov, _f64(g, 0.0)),
                body=body, outputs=1)


@_register(MvNormalRV)
def _mvnormal(op, node, g, rng, size, mean, cov):
    # mean + L z with L L^T = cov (every method draws from the same distribution)
    stream = _Stream(g, rng)
    batch = _batch_shape(g, node, {"size": size, "dist": (mean, cov)}, (1, 2))
    k = _last_dim(g, mean)
    z = stream.normal(g.op("Concat", batch, k, axis=0))
    cov = _as_float(g, cov)
    factor = _psd_cholesky(g, cov, node.inputs[3].type.ndim)
    draws = g.op("Add", _as_float(g, mean),
                 g.op("ReduceSum", g.op("Mul", factor, g.op("Unsqueeze", z, axes=[-2])), axes=[-1], keepdims=0))
    return stream.state, g.cast(draws, _out_dtype(node))


def _standard_halfcauchy(g, stream, shape):
    return g.op("Abs", _standard_cauchy(g, stream, shape))


_register(HalfCauchyRV)(_location_scale(_standard_halfcauchy))


@_register(WeibullRV)
def _weibull(op, node, g, rng, size, k):
    # (-log u) ** (1 / k)
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (k,)}, (0,))
    draws = g.op("Pow", g.op("Neg", g.op("Log", stream.uniform(shape))), g.op("Reciprocal", _as_float(g, k)))
    return stream.state, g.cast(draws, _out_dtype(node))


@_register(ParetoRV)
def _pareto(op, node, g, rng, size, b, scale):
    # scale * u ** (-1 / b)
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (b, scale)}, (0, 0))
    power = g.op("Neg", g.op("Reciprocal", _as_float(g, b)))
    draws = g.op("Mul", _as_float(g, scale), g.op("Pow", stream.uniform(shape), power))
    return stream.state, g.cast(draws, _out_dtype(node))


@_register(GeometricRV)
def _geometric(op, node, g, rng, size, p):
    # trials to the first success: floor(log u / log(1 - p)) + 1
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (p,)}, (0,))
    log_q = g.op("Log", g.op("Sub", _f64(g, 1.0), _as_float(g, p)))
    draws = g.op("Add", g.op("Floor", g.op("Div", g.op("Log", stream.uniform(shape)), log_q)), _f64(g, 1.0))
    return stream.state, g.cast(draws, _out_dtype(node))


@_register(TriangularRV)
def _triangular(op, node, g, rng, size, left, mode, right):
    # inversion of the piecewise-quadratic CDF
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (left, mode, right)}, (0, 0, 0))
    left, mode, right = (_as_float(g, v) for v in (left, mode, right))
    u = stream.uniform(shape)
    width = g.op("Sub", right, left)
    below = g.op("Less", g.op("Mul", u, width), g.op("Sub", mode, left))
    rise = g.op("Add", left, g.op("Sqrt", g.op("Mul", g.op("Mul", u, width), g.op("Sub", mode, left))))
    fall = g.op("Sub", right, g.op("Sqrt", g.op("Mul", g.op("Mul", g.op("Sub", _f64(g, 1.0), u), width),
                                                 g.op("Sub", right, mode))))
    return stream.state, g.cast(g.op("Where", below, rise, fall), _out_dtype(node))


@_register(WaldRV)
def _wald(op, node, g, rng, size, mean, scale):
    # Michael, Schucany & Haas (1976): a root of the chi-square transform,
    # picked with probability mean / (mean + x)
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (mean, scale)}, (0, 0))
    mu, lam = _as_float(g, mean), _as_float(g, scale)
    z = stream.normal(shape)
    y = g.op("Mul", g.op("Mul", z, z), mu)  # mu * z**2
    root = g.op("Sqrt", g.op("Add", g.op("Mul", g.op("Mul", _f64(g, 4.0), lam), y), g.op("Mul", y, y)))
    x = g.op("Add", mu, g.op("Div", g.op("Mul", mu, g.op("Sub", y, root)), g.op("Mul", _f64(g, 2.0), lam)))
    pick = g.op("LessOrEqual", stream.uniform(shape), g.op("Div", mu, g.op("Add", mu, x)))
    draws = g.op("Where", pick, x, g.op("Div", g.op("Mul", mu, mu), x))
    return stream.state, g.cast(draws, _out_dtype(node))


@_register(VonMisesRV)
def _vonmises(op, node, g, rng, size, mu, kappa):
    """Best & Fisher's wrapped-Cauchy rejection sampler (Applied Statistics
    28(2), 1979), the algorithm and constants of NumPy's random_vonmises:
    kappa < 1e-8 is uniform on the circle, kappa < 1e-5 takes a second-order
    expansion of s, kappa > 1e6 a wrapped normal of variance 1 / kappa. The
    draw is wrapped into [-pi, pi] as NumPy wraps it."""
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (mu, kappa)}, (0, 0))
    rank = _rank(node)
    mu = _as_float(g, mu)
    kappa = g.op("Add", _as_float(g, kappa), _full(g, shape, 0.0))
    uniform = g.op("Less", kappa, _f64(g, 1e-8))
    tiny = g.op("Less", kappa, _f64(g, 1e-5))
    huge = g.op("Greater", kappa, _f64(g, 1e6))
    safe = g.op("Where", uniform, _f64(g, 1.0), kappa)
    r = g.op("Add", _f64(g, 1.0), g.op("Sqrt", g.op("Add", _f64(g, 1.0), g.op("Mul", _f64(g, 4.0), g.op("Mul", safe, safe)))))
    rho = g.op("Div", g.op("Sub", r, g.op("Sqrt", g.op("Mul", _f64(g, 2.0), r))), g.op("Mul", _f64(g, 2.0), safe))
    s_exact = g.op("Div", g.op("Add", _f64(g, 1.0), g.op("Mul", rho, rho)), g.op("Mul", _f64(g, 2.0), rho))
    s = g.op("Where", tiny, g.op("Add", g.op("Reciprocal", safe), safe), s_exact)

    def propose(b, inner):
        z = b.op("Cos", b.op("Mul", _f64(b, np.pi), inner.uniform(shape)))
        w = b.op("Div", b.op("Add", _f64(b, 1.0), b.op("Mul", s, z)), b.op("Add", s, z))
        y = b.op("Mul", safe, b.op("Sub", s, w))
        v = inner.uniform(shape)
        # accept when y (2 - y) >= v or log(y / v) + 1 >= y (y > 0 where the
        # first test fails; the Where keeps Log away from y <= 0)
        first = b.op("GreaterOrEqual", b.op("Sub", b.op("Mul", y, b.op("Sub", _f64(b, 2.0), y)), v), _f64(b, 0.0))
        ratio = b.op("Div", b.op("Where", b.op("Greater", y, _f64(b, 0.0)), y, v), v)
        second = b.op("GreaterOrEqual", b.op("Sub", b.op("Add", b.op("Log", ratio), _f64(b, 1.0)), y), _f64(b, 0.0))
        return w, b.op("Or", first, b.op("And", b.op("Greater", y, _f64(b, 0.0)), second))

    # elements that need no rejection start (and stay) done
    w = _rejection_loop(g, stream, shape, rank, "vonmises_rejection", propose, done=g.op("Or", uniform, huge), fill=0.0)
    # the accepted W is cos of the angle; rounding can leave [-1, 1]
    angle = g.recipe("acos", g.op("Max", g.op("Min", w, _f64(g, 1.0)), _f64(g, -1.0)))
    negative = g.op("Less", stream.uniform(shape), _f64(g, 0.5))
    angle = g.op("Where", negative, g.op("Neg", angle), angle)
    normal = g.op("Mul", g.op("Sqrt", g.op("Reciprocal", safe)), stream.normal(shape))
    angle = g.op("Where", huge, normal, angle)
    draws = g.op("Add", angle, mu)
    # NumPy's wrap: fmod(|x| + pi, 2 pi) - pi, with x's sign
    wrapped = g.op("Sub", g.op("Mod", g.op("Add", g.op("Abs", draws), _f64(g, np.pi)), _f64(g, 2 * np.pi), fmod=1),
                   _f64(g, np.pi))
    draws = g.op("Where", g.op("Less", draws, _f64(g, 0.0)), g.op("Neg", wrapped), wrapped)
    circle = g.op("Mul", _f64(g, np.pi), g.op("Sub", g.op("Mul", _f64(g, 2.0), stream.uniform(shape)), _f64(g, 1.0)))
    draws = g.op("Where", uniform, circle, draws)
    return stream.state, g.cast(draws, _out_dtype(node))


@_register(HyperGeometricRV)
def _hypergeometric(op, node, g, rng, size, ngood, nbad, nsample):
    """Good items among ``nsample`` drawn without replacement from ``ngood``
    good and ``nbad`` bad ones, drawn one at a time (exact; a Loop of
    min(nsample, total - nsample) steps, the most any element needs: like
    NumPy, a sample of more than half the items is drawn as the items left
    out, whose good ones are subtracted from ngood)."""
    stream = _Stream(g, rng)
    shape = _batch_shape(g, node, {"size": size, "dist": (ngood, nbad, nsample)}, (0, 0, 0))
    rank = _rank(node)
    good = g.op("Add", _as_float(g, ngood), _full(g, shape, 0.0))
    total = g.op("Add", good, _as_float(g, nbad))
    sample = g.op("Add", _as_float(g, nsample), _full(g, shape, 0.0))
    # NumPy raises for negative counts or a sample larger than the population
    zero = _f64(g, 0.0)
    valid = g.op("And", g.op("And", g.op("GreaterOrEqual", good, zero), g.op("GreaterOrEqual", total, good)),
                 g.op("And", g.op("GreaterOrEqual", sample, zero), g.op("LessOrEqual", sample, total)))
    sample = guarded(g, valid, sample)
    flip = g.op("Greater", sample, g.op("Sub", total, sample))
    steps = g.op("Where", flip, g.op("Sub", total, sample), sample)
    most = _at_least_one_max(g, steps)

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
    return stream.state, g.cast(draws, _out_dtype(node))
