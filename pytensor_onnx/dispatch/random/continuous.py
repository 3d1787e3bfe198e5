"""Continuous distributions: transforms (inversion, Box-Muller, rejection)
of the stream's float64 uniforms, cast to the RV's dtype."""

from __future__ import annotations

import numpy as np
from pytensor.tensor.random.basic import (
    BetaRV,
    CauchyRV,
    ExponentialRV,
    GammaRV,
    GenGammaRV,
    GumbelRV,
    HalfCauchyRV,
    HalfNormalRV,
    InvGammaRV,
    LaplaceRV,
    LogNormalRV,
    LogisticRV,
    NormalRV,
    ParetoRV,
    StudentTRV,
    TriangularRV,
    TruncExponentialRV,
    UniformRV,
    VonMisesRV,
    WaldRV,
    WeibullRV,
)

from pytensor_onnx.dispatch.random.stream import (
    Stream,
    as_float,
    batch_shape,
    draws_rank,
    f64,
    full,
    register_rv,
    rejection_loop,
)
from pytensor_onnx.dispatch.utils import output_dtype


def _location_scale(standard):
    """A rule for ``loc + scale * standard(stream, shape)``."""

    def rule(op, node, g, rng, size, loc, scale):
        stream = Stream(g, rng)
        shape = batch_shape(g, node, {"size": size, "dist": (loc, scale)}, (0, 0))
        draws = g.op("Add", as_float(g, loc), g.op("Mul", as_float(g, scale), standard(g, stream, shape)))
        return stream.state, g.cast(draws, output_dtype(node, 1))

    return rule


def _standard_normal(g, stream, shape):
    return stream.normal(shape)


def _standard_halfnormal(g, stream, shape):
    return g.op("Abs", stream.normal(shape))


def _standard_cauchy(g, stream, shape):
    # cot(pi u) for u uniform on (0, 1) is standard Cauchy (sin > 0 there)
    angle = g.op("Mul", f64(g, np.pi), stream.uniform(shape))
    return g.op("Div", g.op("Cos", angle), g.op("Sin", angle))


def _standard_laplace(g, stream, shape):
    # inverse CDF: -sign(v) log(1 - 2|v|), v = u - 1/2 in (-1/2, 1/2)
    v = g.op("Sub", stream.uniform(shape), f64(g, 0.5))
    tail = g.op("Log", g.op("Sub", f64(g, 1.0), g.op("Mul", f64(g, 2.0), g.op("Abs", v))))
    return g.op("Neg", g.op("Mul", g.op("Sign", v), tail))


def _standard_logistic(g, stream, shape):
    u = stream.uniform(shape)
    return g.op("Log", g.op("Div", u, g.op("Sub", f64(g, 1.0), u)))


def _standard_gumbel(g, stream, shape):
    return g.op("Neg", g.op("Log", g.op("Neg", g.op("Log", stream.uniform(shape)))))


def _standard_halfcauchy(g, stream, shape):
    return g.op("Abs", _standard_cauchy(g, stream, shape))


for _cls, _standard in (
    (NormalRV, _standard_normal),
    (HalfNormalRV, _standard_halfnormal),
    (CauchyRV, _standard_cauchy),
    (LaplaceRV, _standard_laplace),
    (LogisticRV, _standard_logistic),
    (GumbelRV, _standard_gumbel),
):
    register_rv(_cls)(_location_scale(_standard))


register_rv(HalfCauchyRV)(_location_scale(_standard_halfcauchy))


@register_rv(LogNormalRV)
def _lognormal(op, node, g, rng, size, mean, sigma):
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (mean, sigma)}, (0, 0))
    log = g.op("Add", as_float(g, mean), g.op("Mul", as_float(g, sigma), stream.normal(shape)))
    return stream.state, g.cast(g.op("Exp", log), output_dtype(node, 1))


@register_rv(UniformRV)
def _uniform(op, node, g, rng, size, low, high):
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (low, high)}, (0, 0))
    low, high = as_float(g, low), as_float(g, high)
    draws = g.op("Add", low, g.op("Mul", g.op("Sub", high, low), stream.uniform(shape)))
    return stream.state, g.cast(draws, output_dtype(node, 1))


@register_rv(ExponentialRV)
def _exponential(op, node, g, rng, size, scale):
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (scale,)}, (0,))
    draws = g.op("Mul", g.op("Neg", as_float(g, scale)), g.op("Log", stream.uniform(shape)))
    return stream.state, g.cast(draws, output_dtype(node, 1))


def standard_gamma(g, stream, shape, rank, alpha):
    """Gamma(alpha, 1) draws of ``shape`` (``alpha`` float64, broadcastable to
    it). Marsaglia & Tsang, "A simple method for generating gamma variables",
    ACM TOMS 26(3), 2000: a vectorised rejection Loop that redraws only until
    every element has been accepted; alpha < 1 through their boost
    gamma(alpha) = gamma(alpha + 1) * U**(1/alpha)."""
    alpha = g.op("Add", alpha, full(g, shape, 0.0))  # broadcast to the draws
    small = g.op("Less", alpha, f64(g, 1.0))
    d = g.op("Sub", g.op("Where", small, g.op("Add", alpha, f64(g, 1.0)), alpha), f64(g, 1.0 / 3.0))
    c = g.op("Reciprocal", g.op("Sqrt", g.op("Mul", f64(g, 9.0), d)))

    def propose(b, inner):
        z, u = inner.normal(shape), inner.uniform(shape)
        v = b.op("Add", f64(b, 1.0), b.op("Mul", c, z))
        v = b.op("Mul", b.op("Mul", v, v), v)
        positive = b.op("Greater", v, f64(b, 0.0))
        log_v = b.op("Log", b.op("Where", positive, v, f64(b, 1.0)))
        # accept when log u < z**2 / 2 + d (1 - v + log v)
        bound = b.op("Add", b.op("Mul", f64(b, 0.5), b.op("Mul", z, z)),
                     b.op("Mul", d, b.op("Add", b.op("Sub", f64(b, 1.0), v), log_v)))
        return b.op("Mul", d, v), b.op("And", positive, b.op("Less", b.op("Log", u), bound))

    result = rejection_loop(g, stream, shape, rank, "gamma_rejection", propose)
    boost = g.op("Pow", stream.uniform(shape), g.op("Reciprocal", alpha))
    return g.op("Where", small, g.op("Mul", result, boost), result)


@register_rv(GammaRV)
def _gamma(op, node, g, rng, size, alpha, scale):
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (alpha, scale)}, (0, 0))
    draws = standard_gamma(g, stream, shape, draws_rank(node), as_float(g, alpha))
    return stream.state, g.cast(g.op("Mul", draws, as_float(g, scale)), output_dtype(node, 1))


@register_rv(InvGammaRV)
def _invgamma(op, node, g, rng, size, alpha, scale):
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (alpha, scale)}, (0, 0))
    draws = standard_gamma(g, stream, shape, draws_rank(node), as_float(g, alpha))
    return stream.state, g.cast(g.op("Div", as_float(g, scale), draws), output_dtype(node, 1))


@register_rv(BetaRV)
def _beta(op, node, g, rng, size, a, b):
    # X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b)
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (a, b)}, (0, 0))
    x = standard_gamma(g, stream, shape, draws_rank(node), as_float(g, a))
    y = standard_gamma(g, stream, shape, draws_rank(node), as_float(g, b))
    return stream.state, g.cast(g.op("Div", x, g.op("Add", x, y)), output_dtype(node, 1))


@register_rv(StudentTRV)
def _studentt(op, node, g, rng, size, df, loc, scale):
    # Z / sqrt(V / df) with V ~ chi2(df) = 2 Gamma(df / 2)
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (df, loc, scale)}, (0, 0, 0))
    df = as_float(g, df)
    z = stream.normal(shape)
    half_v = standard_gamma(g, stream, shape, draws_rank(node), g.op("Mul", df, f64(g, 0.5)))
    t = g.op("Div", z, g.op("Sqrt", g.op("Div", g.op("Add", half_v, half_v), df)))
    draws = g.op("Add", as_float(g, loc), g.op("Mul", as_float(g, scale), t))
    return stream.state, g.cast(draws, output_dtype(node, 1))


@register_rv(GenGammaRV)
def _gengamma(op, node, g, rng, size, alpha, p, lambd):
    # lambd * Gamma(alpha / p) ** (1 / p), as scipy's gengamma(alpha / p, p)
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (alpha, p, lambd)}, (0, 0, 0))
    p = as_float(g, p)
    base = standard_gamma(g, stream, shape, draws_rank(node), g.op("Div", as_float(g, alpha), p))
    draws = g.op("Mul", as_float(g, lambd), g.op("Pow", base, g.op("Reciprocal", p)))
    return stream.state, g.cast(draws, output_dtype(node, 1))


@register_rv(TruncExponentialRV)
def _truncexpon(op, node, g, rng, size, b, loc, scale):
    # inversion on [0, b]: -log(1 - u (1 - exp(-b)))
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (b, loc, scale)}, (0, 0, 0))
    mass = g.op("Sub", f64(g, 1.0), g.op("Exp", g.op("Neg", as_float(g, b))))
    standard = g.op("Neg", g.op("Log", g.op("Sub", f64(g, 1.0), g.op("Mul", stream.uniform(shape), mass))))
    draws = g.op("Add", as_float(g, loc), g.op("Mul", as_float(g, scale), standard))
    return stream.state, g.cast(draws, output_dtype(node, 1))


@register_rv(WeibullRV)
def _weibull(op, node, g, rng, size, k):
    # (-log u) ** (1 / k)
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (k,)}, (0,))
    draws = g.op("Pow", g.op("Neg", g.op("Log", stream.uniform(shape))), g.op("Reciprocal", as_float(g, k)))
    return stream.state, g.cast(draws, output_dtype(node, 1))


@register_rv(ParetoRV)
def _pareto(op, node, g, rng, size, b, scale):
    # scale * u ** (-1 / b)
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (b, scale)}, (0, 0))
    power = g.op("Neg", g.op("Reciprocal", as_float(g, b)))
    draws = g.op("Mul", as_float(g, scale), g.op("Pow", stream.uniform(shape), power))
    return stream.state, g.cast(draws, output_dtype(node, 1))


@register_rv(TriangularRV)
def _triangular(op, node, g, rng, size, left, mode, right):
    # inversion of the piecewise-quadratic CDF
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (left, mode, right)}, (0, 0, 0))
    left, mode, right = (as_float(g, v) for v in (left, mode, right))
    u = stream.uniform(shape)
    width = g.op("Sub", right, left)
    below = g.op("Less", g.op("Mul", u, width), g.op("Sub", mode, left))
    rise = g.op("Add", left, g.op("Sqrt", g.op("Mul", g.op("Mul", u, width), g.op("Sub", mode, left))))
    fall = g.op("Sub", right, g.op("Sqrt", g.op("Mul", g.op("Mul", g.op("Sub", f64(g, 1.0), u), width),
                                                 g.op("Sub", right, mode))))
    return stream.state, g.cast(g.op("Where", below, rise, fall), output_dtype(node, 1))


@register_rv(WaldRV)
def _wald(op, node, g, rng, size, mean, scale):
    # Michael, Schucany & Haas (1976): a root of the chi-square transform,
    # picked with probability mean / (mean + x)
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (mean, scale)}, (0, 0))
    mu, lam = as_float(g, mean), as_float(g, scale)
    z = stream.normal(shape)
    y = g.op("Mul", g.op("Mul", z, z), mu)  # mu * z**2
    root = g.op("Sqrt", g.op("Add", g.op("Mul", g.op("Mul", f64(g, 4.0), lam), y), g.op("Mul", y, y)))
    x = g.op("Add", mu, g.op("Div", g.op("Mul", mu, g.op("Sub", y, root)), g.op("Mul", f64(g, 2.0), lam)))
    pick = g.op("LessOrEqual", stream.uniform(shape), g.op("Div", mu, g.op("Add", mu, x)))
    draws = g.op("Where", pick, x, g.op("Div", g.op("Mul", mu, mu), x))
    return stream.state, g.cast(draws, output_dtype(node, 1))


@register_rv(VonMisesRV)
def _vonmises(op, node, g, rng, size, mu, kappa):
    """Best & Fisher's wrapped-Cauchy rejection sampler (Applied Statistics
    28(2), 1979), the algorithm and constants of NumPy's random_vonmises:
    kappa < 1e-8 is uniform on the circle, kappa < 1e-5 takes a second-order
    expansion of s, kappa > 1e6 a wrapped normal of variance 1 / kappa. The
    draw is wrapped into [-pi, pi] as NumPy wraps it."""
    stream = Stream(g, rng)
    shape = batch_shape(g, node, {"size": size, "dist": (mu, kappa)}, (0, 0))
    rank = draws_rank(node)
    mu = as_float(g, mu)
    kappa = g.op("Add", as_float(g, kappa), full(g, shape, 0.0))
    uniform = g.op("Less", kappa, f64(g, 1e-8))
    tiny = g.op("Less", kappa, f64(g, 1e-5))
    huge = g.op("Greater", kappa, f64(g, 1e6))
    safe = g.op("Where", uniform, f64(g, 1.0), kappa)
    r = g.op("Add", f64(g, 1.0), g.op("Sqrt", g.op("Add", f64(g, 1.0), g.op("Mul", f64(g, 4.0), g.op("Mul", safe, safe)))))
    rho = g.op("Div", g.op("Sub", r, g.op("Sqrt", g.op("Mul", f64(g, 2.0), r))), g.op("Mul", f64(g, 2.0), safe))
    s_exact = g.op("Div", g.op("Add", f64(g, 1.0), g.op("Mul", rho, rho)), g.op("Mul", f64(g, 2.0), rho))
    s = g.op("Where", tiny, g.op("Add", g.op("Reciprocal", safe), safe), s_exact)

    def propose(b, inner):
        z = b.op("Cos", b.op("Mul", f64(b, np.pi), inner.uniform(shape)))
        w = b.op("Div", b.op("Add", f64(b, 1.0), b.op("Mul", s, z)), b.op("Add", s, z))
        y = b.op("Mul", safe, b.op("Sub", s, w))
        v = inner.uniform(shape)
        # accept when y (2 - y) >= v or log(y / v) + 1 >= y (y > 0 where the
        # first test fails; the Where keeps Log away from y <= 0)
        first = b.op("GreaterOrEqual", b.op("Sub", b.op("Mul", y, b.op("Sub", f64(b, 2.0), y)), v), f64(b, 0.0))
        ratio = b.op("Div", b.op("Where", b.op("Greater", y, f64(b, 0.0)), y, v), v)
        second = b.op("GreaterOrEqual", b.op("Sub", b.op("Add", b.op("Log", ratio), f64(b, 1.0)), y), f64(b, 0.0))
        return w, b.op("Or", first, b.op("And", b.op("Greater", y, f64(b, 0.0)), second))

    # elements that need no rejection start (and stay) done
    w = rejection_loop(g, stream, shape, rank, "vonmises_rejection", propose, done=g.op("Or", uniform, huge), fill=0.0)
    # the accepted W is cos of the angle; rounding can leave [-1, 1]
    angle = g.recipe("acos", g.op("Max", g.op("Min", w, f64(g, 1.0)), f64(g, -1.0)))
    negative = g.op("Less", stream.uniform(shape), f64(g, 0.5))
    angle = g.op("Where", negative, g.op("Neg", angle), angle)
    normal = g.op("Mul", g.op("Sqrt", g.op("Reciprocal", safe)), stream.normal(shape))
    angle = g.op("Where", huge, normal, angle)
    draws = g.op("Add", angle, mu)
    # NumPy's wrap: fmod(|x| + pi, 2 pi) - pi, with x's sign
    wrapped = g.op("Sub", g.op("Mod", g.op("Add", g.op("Abs", draws), f64(g, np.pi)), f64(g, 2 * np.pi), fmod=1),
                   f64(g, np.pi))
    draws = g.op("Where", g.op("Less", draws, f64(g, 0.0)), g.op("Neg", wrapped), wrapped)
    circle = g.op("Mul", f64(g, np.pi), g.op("Sub", g.op("Mul", f64(g, 2.0), stream.uniform(shape)), f64(g, 1.0)))
    draws = g.op("Where", uniform, circle, draws)
    return stream.state, g.cast(draws, output_dtype(node, 1))
