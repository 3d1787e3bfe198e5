"""RandomVariable rules (dispatch/random/): statistical parity, shapes,
fresh draws per call, reproducibility, export. Bit streams cannot match
NumPy's, so distributions are checked with KS / chi-square tests at fixed
seeds (p-value thresholds of 1e-4: a correct sampler fails one in 10,000)."""

import numpy as np
import onnx
import onnxruntime as ort
import pytensor
import pytensor.tensor as pt
import pytest
from scipy import stats

import pytensor_onnx
from pytensor.tensor.random.op import RandomVariable

from pytensor_onnx.compat import random_draws
from pytensor_onnx.dispatch.random.state import rng_state, squares32, state_generator

from helpers import OPSETS, onnx_op_types

N = 20_000
P_MIN = 1e-4


def draw_fn(make_rv, *, seed=1, updates=True):
    """A mode-ONNX function drawing ``make_rv(rng)``, and its shared rng."""
    rng = pytensor.shared(np.random.default_rng(seed), name="rng")
    next_rng, draws = make_rv(rng)
    fn = pytensor.function([], draws, updates={rng: next_rng} if updates else None, mode="ONNX")
    return fn, rng


#: Published test vectors of Squares (Widynski, "Squares: a fast counter-based
#: RNG", arXiv:2004.06278): the data files of the randomgen package
#: (github.com/bashtage/randomgen, randomgen/tests/data/squares-32-testset-1.csv
#: and -2.csv), written by randomgen/src/squares/squares-test-data-gen.c from
#: the paper's own C code (squares.orig.h). Row i of a file is
#: squares32(key, 2i) | squares32(key, 2i + 1) << 32; the key of each file is
#: in that program. {key: {row: value}}, rows taken from the start, the
#: middle and the end of each file.
SQUARES_VECTORS = {
    0x3BC8BCA4D301945B: {0: 0x0E03102B5167EA8B, 1: 0x943AC4D0E59F61D7, 2: 0x8DE3053855A66612, 999: 0x6210044B433F318A},
    0x32D1638D0D582ACF: {0: 0x4666B59384EF8BB4, 1: 0x8788C4C4366ADA38, 499: 0x91334A2D87CAD0FD, 500: 0x342B820C685D8174},
}


def _squares32_int(counter, key):
    """Squares' 32-bit output in Python's unbounded integers, from the paper's
    definition (four rounds of square, add, swap halves; reduced mod 2**64),
    independent of the NumPy code of dispatch/random/state.py."""
    mask = (1 << 64) - 1
    x = y = (counter * key) & mask
    z = (y + key) & mask
    for add in (y, z, y):
        x = (x * x + add) & mask
        x = ((x >> 32) | (x << 32)) & mask
    return ((x * x + z) & mask) >> 32


def _onnx_squares32(counters, key):
    """The words the models compute (the builder's Squares subgraph), run in ONNX Runtime."""
    from pytensor_onnx.dispatch.random.stream import _squares32

    g = pytensor_onnx._core.GraphBuilder(18, "squares")
    c = g.input("c", "uint64", ["n"])
    g.output(_squares32(g, c, g.const(np.asarray(np.uint64(key)))), "w")
    session = ort.InferenceSession(g.serialize(graph_name="squares"), providers=["CPUExecutionProvider"])
    (words,) = session.run(None, {"c": np.asarray(counters, dtype=np.uint64)})
    return words


@pytest.mark.parametrize("key", list(SQUARES_VECTORS), ids=hex)
def test_generator_matches_published_vectors(key):
    rows = SQUARES_VECTORS[key]
    counters = [c for row in rows for c in (2 * row, 2 * row + 1)]
    words = _onnx_squares32(counters, key)
    got = {row: int(words[2 * k]) | int(words[2 * k + 1]) << 32 for k, row in enumerate(rows)}
    assert got == rows
    # The Python-integer definition (the reference of the next test) gives them too.
    assert {row: _squares32_int(2 * row, key) | _squares32_int(2 * row + 1, key) << 32 for row in rows} == rows
    # The host-side NumPy transcription (used by nothing but the tests) agrees too.
    np.testing.assert_array_equal(squares32(np.asarray(counters, dtype=np.uint64), key), words)


def test_generator_large_counters():
    # Counters past the published vectors' range (products wrap mod 2**64
    # several times): the paper's definition in Python integers.
    key = 0xC58EFD154CE32F6D
    counters = [2**32 - 1, 2**32, 2**40 + 7, 2**63, 2**64 - 2, 2**64 - 1]
    words = _onnx_squares32(counters, key)
    assert [int(w) for w in words] == [_squares32_int(c, key) for c in counters]
    assert words.max() < 2**32
    assert len(set(words.tolist())) == len(counters)


def test_state_round_trip():
    state = np.array([123456789, 42], dtype=np.uint64)
    np.testing.assert_array_equal(rng_state(state_generator(state)), state)
    gen = np.random.default_rng(5)
    before = gen.bit_generator.state
    np.testing.assert_array_equal(rng_state(gen), rng_state(np.random.default_rng(5)))
    assert gen.bit_generator.state == before  # not consumed
    assert rng_state(gen)[0] != rng_state(np.random.default_rng(6))[0]


CONTINUOUS = [
    ("normal", lambda r: random_draws(pt.random.normal, 1.5, 2.0, size=(N,), rng=r), stats.norm(1.5, 2.0)),
    ("uniform", lambda r: random_draws(pt.random.uniform, -1.0, 3.0, size=(N,), rng=r), stats.uniform(-1.0, 4.0)),
    ("halfnormal", lambda r: random_draws(pt.random.halfnormal, 0.5, 2.0, size=(N,), rng=r), stats.halfnorm(0.5, 2.0)),
    ("lognormal", lambda r: random_draws(pt.random.lognormal, 0.3, 0.7, size=(N,), rng=r), stats.lognorm(0.7, scale=np.exp(0.3))),
    ("exponential", lambda r: random_draws(pt.random.exponential, 2.5, size=(N,), rng=r), stats.expon(scale=2.5)),
    ("cauchy", lambda r: random_draws(pt.random.cauchy, -1.0, 0.5, size=(N,), rng=r), stats.cauchy(-1.0, 0.5)),
    ("laplace", lambda r: random_draws(pt.random.laplace, 2.0, 1.5, size=(N,), rng=r), stats.laplace(2.0, 1.5)),
    ("logistic", lambda r: random_draws(pt.random.logistic, 0.5, 2.0, size=(N,), rng=r), stats.logistic(0.5, 2.0)),
    ("gumbel", lambda r: random_draws(pt.random.gumbel, 0.5, 2.0, size=(N,), rng=r), stats.gumbel_r(0.5, 2.0)),
    ("gamma", lambda r: random_draws(pt.random.gamma, 3.0, scale=2.0, size=(N,), rng=r), stats.gamma(3.0, scale=2.0)),
    ("gamma_small", lambda r: random_draws(pt.random.gamma, 0.3, scale=2.0, size=(N,), rng=r), stats.gamma(0.3, scale=2.0)),
    ("invgamma", lambda r: random_draws(pt.random.invgamma, 3.0, 2.0, size=(N,), rng=r), stats.invgamma(3.0, scale=2.0)),
    ("beta", lambda r: random_draws(pt.random.beta, 0.5, 2.0, size=(N,), rng=r), stats.beta(0.5, 2.0)),
    ("studentt", lambda r: random_draws(pt.random.t, 3.0, 1.0, 2.0, size=(N,), rng=r), stats.t(3.0, 1.0, 2.0)),
    ("halfcauchy", lambda r: random_draws(pt.random.halfcauchy, 1.0, 2.0, size=(N,), rng=r), stats.halfcauchy(1.0, 2.0)),
    ("weibull", lambda r: random_draws(pt.random.weibull, 1.5, size=(N,), rng=r), stats.weibull_min(1.5)),
    ("pareto", lambda r: random_draws(pt.random.pareto, 2.5, 3.0, size=(N,), rng=r), stats.pareto(2.5, scale=3.0)),
    ("triangular", lambda r: random_draws(pt.random.triangular, -1.0, 0.5, 2.0, size=(N,), rng=r),
     stats.triang(0.5, loc=-1.0, scale=3.0)),
    ("gengamma", lambda r: random_draws(pt.random.gengamma, 2.0, 1.5, 3.0, size=(N,), rng=r),
     stats.gengamma(2.0 / 1.5, 1.5, scale=3.0)),
    ("truncexpon", lambda r: random_draws(pt.random.truncexpon, 2.0, 1.0, 0.5, size=(N,), rng=r),
     stats.truncexpon(2.0, loc=1.0, scale=0.5)),
    ("wald", lambda r: random_draws(pt.random.wald, 1.5, 2.0, size=(N,), rng=r), stats.invgauss(1.5 / 2.0, scale=2.0)),
]


@pytest.mark.parametrize("name, make_rv, dist", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_ks(name, make_rv, dist):
    fn, _ = draw_fn(make_rv)
    assert "BitShift" in onnx_op_types(fn)  # the rule ran, not a fallback
    first, second = fn(), fn()
    for draws in (first, second):
        assert draws.shape == (N,) and draws.dtype == "float64"
        assert stats.kstest(draws, dist.cdf).pvalue > P_MIN
    assert not np.array_equal(first, second)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dtype_and_moments(dtype):
    fn, _ = draw_fn(lambda r: random_draws(pt.random.normal, pt.constant(3.0, dtype=dtype), 0.5, size=(N,), rng=r, dtype=dtype))
    draws = fn()
    assert draws.dtype == dtype
    assert abs(draws.mean() - 3.0) < 5 * 0.5 / np.sqrt(N)
    assert abs(draws.var() / 0.25 - 1) < 0.05


def test_gamma_batched_shapes_and_dirichlet():
    # one Loop serves elements with different shapes (small and large)
    alpha = np.array([0.2, 1.0, 50.0])
    fn, _ = draw_fn(lambda r: random_draws(pt.random.gamma, alpha, scale=1.0, size=(N // 2, 3), rng=r))
    draws = fn()
    assert not np.isnan(draws).any()
    for column, a in zip(draws.T, alpha):
        assert stats.kstest(column, stats.gamma(a).cdf).pvalue > P_MIN

    alphas = np.array([0.5, 2.0, 3.0])
    fn, _ = draw_fn(lambda r: random_draws(pt.random.dirichlet, alphas, size=(N // 2,), rng=r))
    draws = fn()
    assert draws.shape == (N // 2, 3)
    np.testing.assert_allclose(draws.sum(axis=1), 1.0, rtol=1e-12)
    for column, a in zip(draws.T, alphas):  # marginals are Beta(a_i, sum - a_i)
        assert stats.kstest(column, stats.beta(a, alphas.sum() - a).cdf).pvalue > P_MIN


def chi_square_pvalue(draws, dist):
    """Chi-square of integer draws against a scipy discrete distribution,
    over the values with expected count >= 5 plus one bin for the rest."""
    values = np.arange(int(dist.ppf(1e-6)), int(dist.ppf(1 - 1e-6)) + 1)
    expected = dist.pmf(values) * len(draws)
    keep = expected >= 5
    counts = np.array([(draws == v).sum() for v in values[keep]])
    counts = np.append(counts, len(draws) - counts.sum())
    expected = np.append(expected[keep], len(draws) - expected[keep].sum())
    return stats.chisquare(counts, expected * len(draws) / expected.sum()).pvalue


@pytest.mark.parametrize("lam", [0.5, 7.0, 35.0, 400.0])
def test_poisson_chi_square(lam):
    fn, _ = draw_fn(lambda r: random_draws(pt.random.poisson, lam, size=(N,), rng=r))
    draws = fn()
    assert draws.dtype == "int64" and draws.min() >= 0
    assert chi_square_pvalue(draws, stats.poisson(lam)) > P_MIN


@pytest.mark.parametrize(
    "make_rv, dist",
    [
        (lambda r: random_draws(pt.random.geometric, 0.2, size=(N,), rng=r), stats.geom(0.2)),
        (lambda r: random_draws(pt.random.negative_binomial, 3.5, 0.3, size=(N,), rng=r), stats.nbinom(3.5, 0.3)),
        (lambda r: random_draws(pt.random.betabinom, 30, 2.0, 3.0, size=(N,), rng=r), stats.betabinom(30, 2.0, 3.0)),
    ],
    ids=["geometric", "negative_binomial", "beta_binomial"],
)
def test_other_discrete_chi_square(make_rv, dist):
    fn, _ = draw_fn(make_rv)
    draws = fn()
    assert draws.dtype == "int64"
    assert chi_square_pvalue(draws, dist) > P_MIN


@pytest.mark.parametrize("n, p", [(10, 0.3), (100, 0.8), (1000, 0.05)])
def test_binomial_chi_square(n, p):
    fn, _ = draw_fn(lambda r: random_draws(pt.random.binomial, n, p, size=(N,), rng=r))
    draws = fn()
    assert draws.dtype == "int64" and 0 <= draws.min() and draws.max() <= n
    assert chi_square_pvalue(draws, stats.binom(n, p)) > P_MIN


def test_discrete_batched_parameters_and_edges():
    lam = np.array([0.0, 3.0, 250.0])
    fn, _ = draw_fn(lambda r: random_draws(pt.random.poisson, lam, size=(N // 4, 3), rng=r))
    draws = fn()
    assert (draws[:, 0] == 0).all()
    for column, rate in zip(draws.T[1:], lam[1:]):
        assert chi_square_pvalue(column, stats.poisson(rate)) > P_MIN
    n, p = np.array([0, 5, 40, 7]), np.array([0.5, 1.0, 0.25, 0.0])
    fn, _ = draw_fn(lambda r: random_draws(pt.random.binomial, n, p, size=(N // 4, 4), rng=r))
    draws = fn()
    assert (draws[:, 0] == 0).all() and (draws[:, 1] == 5).all() and (draws[:, 3] == 0).all()
    assert chi_square_pvalue(draws[:, 2], stats.binom(40, 0.25)) > P_MIN


def test_multinomial():
    p = np.array([0.2, 0.3, 0.5])
    fn, _ = draw_fn(lambda r: random_draws(pt.random.multinomial, 20, p, size=(N // 4,), rng=r))
    draws = fn()
    assert draws.shape == (N // 4, 3) and draws.dtype == "int64"
    assert (draws.sum(axis=1) == 20).all()
    for column, pi in zip(draws.T, p):  # marginals are Bin(n, p_i)
        assert chi_square_pvalue(column, stats.binom(20, pi)) > P_MIN
    # batched n and p, n = 0, and a last category taking the rest
    fn, _ = draw_fn(lambda r: random_draws(
        pt.random.multinomial, np.array([0, 7, 5]), np.array([[0.5, 0.5], [0.25, 0.75], [0.0, 0.0]]), rng=r))
    draws = fn()
    np.testing.assert_array_equal(draws[0], [0, 0])
    assert draws[1].sum() == 7
    np.testing.assert_array_equal(draws[2], [0, 5])


def orderings(fn, calls):
    return [tuple(fn().ravel().tolist()) for _ in range(calls)]


def test_permutation_uniform_over_orders():
    fn, _ = draw_fn(lambda r: random_draws(pt.random.permutation, 4, rng=r))
    seen = orderings(fn, 2400)
    assert all(sorted(order) == [0, 1, 2, 3] for order in seen)
    counts = np.unique(np.array(seen), axis=0, return_counts=True)[1]
    assert len(counts) == 24 and stats.chisquare(counts).pvalue > P_MIN
    x = np.arange(12.0).reshape(4, 3)
    fn, _ = draw_fn(lambda r: random_draws(pt.random.permutation, x, rng=r))
    rows = fn()
    assert rows.shape == (4, 3)
    np.testing.assert_array_equal(np.sort(rows[:, 0]), x[:, 0])
    np.testing.assert_array_equal(rows - rows[:, :1], np.tile([0.0, 1.0, 2.0], (4, 1)))


def test_choice_without_replacement():
    fn, _ = draw_fn(lambda r: random_draws(pt.random.choice, 5, size=(2,), replace=False, rng=r))
    seen = orderings(fn, 2000)
    assert all(a != b for a, b in seen)
    counts = np.unique(np.array(seen), axis=0, return_counts=True)[1]
    assert len(counts) == 20 and stats.chisquare(counts).pvalue > P_MIN
    p = np.array([0.1, 0.2, 0.3, 0.4])
    fn, _ = draw_fn(lambda r: random_draws(pt.random.choice, np.arange(4) * 10, size=(2, 2), replace=False, p=p,
                                           rng=r))
    seen = np.array(orderings(fn, 2000))
    assert all(len(set(row)) == 4 for row in seen)
    first = np.bincount(seen[:, 0] // 10, minlength=4)
    assert stats.chisquare(first, p * len(seen)).pvalue > P_MIN


@pytest.mark.parametrize("method", ["cholesky", "svd"])
def test_multivariate_normal(method):
    mean = np.array([1.0, -1.0, 0.0])
    cov = np.array([[2.0, 0.6, 0.3], [0.6, 1.0, -0.2], [0.3, -0.2, 0.5]])
    fn, _ = draw_fn(lambda r: random_draws(pt.random.multivariate_normal, mean, cov, size=(N,), method=method, rng=r))
    draws = fn()
    assert draws.shape == (N, 3)
    np.testing.assert_allclose(np.cov(draws.T), cov, atol=0.06)
    for w in (np.array([1.0, 0.0, 0.0]), np.array([0.3, -1.0, 2.0])):  # projections are normal
        projected = stats.norm(w @ mean, np.sqrt(w @ cov @ w))
        assert stats.kstest(draws @ w, projected.cdf).pvalue > P_MIN


def test_multivariate_normal_batched_and_singular():
    # a batch of covariances, one singular (perfectly correlated): PSD is enough
    cov = np.stack([np.eye(2) * 4.0, np.ones((2, 2))])
    fn, _ = draw_fn(lambda r: random_draws(pt.random.multivariate_normal, np.zeros(2), cov, size=(N // 4, 2), rng=r))
    draws = fn()
    assert draws.shape == (N // 4, 2, 2) and not np.isnan(draws).any()
    np.testing.assert_array_equal(draws[:, 1, 0], draws[:, 1, 1])
    np.testing.assert_allclose(draws[:, 0].std(axis=0), [2.0, 2.0], rtol=0.05)
    assert abs(np.corrcoef(draws[:, 0].T)[0, 1]) < 0.05


def test_bernoulli_and_integers_chi_square():
    fn, _ = draw_fn(lambda r: random_draws(pt.random.bernoulli, 0.3, size=(N,), rng=r))
    draws = fn()
    assert draws.dtype == "int64" and set(np.unique(draws)) <= {0, 1}
    ones = draws.sum()
    assert stats.binomtest(int(ones), N, 0.3).pvalue > P_MIN

    fn, _ = draw_fn(lambda r: random_draws(pt.random.integers, -3, 4, size=(N,), rng=r))
    draws = fn()
    assert draws.dtype == "int64" and draws.min() >= -3 and draws.max() <= 3
    counts = np.bincount(draws + 3, minlength=7)
    assert stats.chisquare(counts).pvalue > P_MIN


def test_categorical_chi_square_batched():
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.0, 0.5]])
    fn, _ = draw_fn(lambda r: random_draws(pt.random.categorical, p, size=(N // 2, 2), rng=r))
    draws = fn()
    assert draws.shape == (N // 2, 2) and draws.dtype == "int64"
    for row, probs in enumerate(p):
        counts = np.bincount(draws[:, row], minlength=3)
        expected = probs * len(draws)
        nonzero = expected > 0
        assert counts[~nonzero].sum() == 0
        assert stats.chisquare(counts[nonzero], expected[nonzero]).pvalue > P_MIN


@pytest.mark.parametrize(
    "make_rv",
    [
        lambda r: random_draws(pt.random.normal, np.zeros((3, 1)), np.ones(4), rng=r),
        lambda r: random_draws(pt.random.normal, np.zeros(4), 1.0, size=(2, 3, 4), rng=r),
        lambda r: random_draws(pt.random.uniform, 0.0, np.ones((0, 2)), rng=r),
        lambda r: random_draws(pt.random.normal, 0.0, 1.0, size=(), rng=r),
        lambda r: random_draws(pt.random.normal, 0.0, 1.0, rng=r),
        lambda r: random_draws(pt.random.bernoulli, np.full((2, 1), 0.5), size=(2, 5), rng=r),
        lambda r: random_draws(pt.random.categorical, np.full((3, 4), 0.25), rng=r),
        lambda r: random_draws(pt.random.integers, np.arange(3), 10, rng=r),
        lambda r: random_draws(pt.random.gamma, np.ones((2, 1)), scale=np.ones(3), rng=r),
        lambda r: random_draws(pt.random.dirichlet, np.ones((2, 3)), size=(4, 2), rng=r),
        lambda r: random_draws(pt.random.beta, 1.0, 1.0, size=(0, 3), rng=r),
        lambda r: random_draws(pt.random.poisson, np.ones((2, 1)), size=(3, 2, 5), rng=r),
        lambda r: random_draws(pt.random.binomial, np.arange(4), 0.5, rng=r),
        lambda r: random_draws(pt.random.poisson, 3.0, size=(0,), rng=r),
        lambda r: random_draws(pt.random.multivariate_normal, np.zeros((3, 1, 2)), np.eye(2), rng=r),
    ],
)
def test_shapes_match_pytensor(make_rv):
    fn, _ = draw_fn(make_rv)
    ref = pytensor.function([], make_rv(pytensor.shared(np.random.default_rng(0)))[1], mode="FAST_COMPILE")
    got, want = fn(), ref()
    assert got.shape == want.shape and got.dtype == want.dtype


def test_params_broadcast_per_element():
    # each column has its own location: the batch parameters broadcast like PyTensor's
    loc = np.array([0.0, 100.0, -50.0])
    fn, _ = draw_fn(lambda r: random_draws(pt.random.normal, loc, 0.1, size=(N // 4, 3), rng=r))
    draws = fn()
    np.testing.assert_allclose(draws.mean(axis=0), loc, atol=0.01)


def test_symbolic_size_and_params():
    rng = pytensor.shared(np.random.default_rng(3))
    n = pt.scalar("n", dtype="int64")
    loc = pt.vector("loc")
    next_rng, draws = random_draws(pt.random.normal, loc, 1.0, size=(n, loc.shape[0]), rng=rng)
    fn = pytensor.function([n, loc], draws, updates={rng: next_rng}, mode="ONNX")
    out = fn(4000, np.array([10.0, -10.0]))
    assert out.shape == (4000, 2)
    np.testing.assert_allclose(out.mean(axis=0), [10.0, -10.0], atol=0.1)
    assert fn(0, np.array([1.0])).shape == (0, 1)


def test_fresh_draws_and_reproducible_seeding():
    fn, rng = draw_fn(lambda r: random_draws(pt.random.normal, size=(5,), rng=r))
    first = fn()
    second = fn()
    assert not np.array_equal(first, second)
    rng.set_value(np.random.default_rng(1))
    np.testing.assert_array_equal(fn(), first)
    np.testing.assert_array_equal(fn(), second)
    rng.set_value(np.random.default_rng(2))
    assert not np.array_equal(fn(), first)
    # the updated value is a real NumPy Generator other backends can use
    assert isinstance(rng.get_value(), np.random.Generator)


def test_without_updates_draws_repeat_like_pytensor():
    fn, _ = draw_fn(lambda r: random_draws(pt.random.uniform, size=(4,), rng=r), updates=False)
    np.testing.assert_array_equal(fn(), fn())


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")
def test_random_stream_default_updates_and_seed():
    from pytensor.tensor.random.utils import RandomStream

    srng = RandomStream(seed=3)
    fn = pytensor.function([], srng.normal(0.0, 1.0, size=(4,)), mode="ONNX")
    first, second = fn(), fn()
    assert not np.array_equal(first, second)
    srng.seed(3)
    np.testing.assert_array_equal(fn(), first)


def test_chained_rvs_differ():
    rng = pytensor.shared(np.random.default_rng(7))
    rng1, x = random_draws(pt.random.normal, size=(1000,), rng=rng)
    rng2, y = random_draws(pt.random.normal, size=(1000,), rng=rng1)
    fn = pytensor.function([], [x, y], updates={rng: rng2}, mode="ONNX")
    x1, y1 = fn()
    assert abs(np.corrcoef(x1, y1)[0, 1]) < 0.15
    x2, _ = fn()
    assert not np.array_equal(x1, x2)


@pytest.mark.parametrize("opset", OPSETS)
def test_opsets(opset):
    rng = pytensor.shared(np.random.default_rng(1))
    next_rng, draws = random_draws(pt.random.uniform, size=(N,), rng=rng)
    fn = pytensor_onnx.compile_onnx([], draws, updates={rng: next_rng}, opset_version=opset)
    _, gammas = random_draws(pt.random.gamma, 0.5, scale=1.0, size=(N,), rng=next_rng)
    gamma_fn = pytensor_onnx.compile_onnx([], gammas, opset_version=opset)
    assert stats.kstest(gamma_fn(), stats.gamma(0.5).cdf).pvalue > P_MIN
    # zero sizes (ONNX Reshape reads 0 as "copy" before opset 14's allowzero)
    m = pt.lscalar("m")
    _, empty = random_draws(pt.random.poisson, 3.0, size=(2, m), rng=rng)
    empty_fn = pytensor_onnx.compile_onnx([m], empty, opset_version=opset)
    assert empty_fn(0).shape == (2, 0)
    assert empty_fn(3).shape == (2, 3)
    # sizes PyTensor knows to be empty give a constant (ORT 1.21 crashes on
    # constant-folded empty tensors otherwise)
    _, static_empty = random_draws(pt.random.poisson, 3.0, size=(0,), rng=rng)
    assert pytensor_onnx.compile_onnx([], static_empty, opset_version=opset)().shape == (0,)
    _, mv = random_draws(pt.random.multivariate_normal, np.zeros(2), np.eye(2), size=(3,), rng=rng)
    mv_draws = pytensor_onnx.compile_onnx([], mv, opset_version=opset)()
    assert mv_draws.shape == (3, 2) and np.isfinite(mv_draws).all()
    model = pytensor_onnx.export_onnx([], [draws], opset_version=opset)
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (feed,) = session.get_inputs()
    assert feed.type == "tensor(uint64)" and feed.shape == [2]
    (out,) = session.run(None, {feed.name: np.array([9, 0], dtype=np.uint64)})
    assert stats.kstest(out, "uniform").pvalue > P_MIN
    assert fn().shape == (N,)


def test_export_takes_seed_and_returns_next_state(tmp_path):
    rng = pytensor.shared(np.random.default_rng(1), name="rng")
    next_rng, draws = random_draws(pt.random.normal, size=(3,), rng=rng)
    path = tmp_path / "normal.onnx"
    model = pytensor_onnx.export_onnx([], [draws, next_rng], str(path))
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    seed = np.array([42, 0], dtype=np.uint64)
    a, state = session.run(None, {name: seed})
    np.testing.assert_array_equal(state, [42, 12])  # 3 normals: 6 uniforms of 2 words
    b, _ = session.run(None, {name: seed})
    np.testing.assert_array_equal(a, b)  # same seed, same draws
    c, _ = session.run(None, {name: state})
    assert not np.array_equal(a, c)
    # mode ONNX with the same state gives the same numbers as the exported model
    rng.set_value(state_generator(seed))
    fn = pytensor.function([], draws, mode="ONNX")
    np.testing.assert_array_equal(fn(), a)


def test_export_function_takes_rng_as_seed_input():
    rng = pytensor.shared(np.random.default_rng(1), name="rng")
    x = pt.vector("x")
    next_rng, draws = random_draws(pt.random.normal, x, 1.0, rng=rng)
    fn = pytensor.function([x], draws * 2, updates={rng: next_rng})
    model = pytensor_onnx.export_function_onnx(fn)
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert [(i.name, i.type) for i in session.get_inputs()] == [("x", "tensor(double)"), ("rng", "tensor(uint64)")]
    loc = np.full(N, 5.0)
    (a,) = session.run(None, {"x": loc, "rng": np.array([1, 0], dtype=np.uint64)})
    (b,) = session.run(None, {"x": loc, "rng": np.array([2, 0], dtype=np.uint64)})
    assert not np.array_equal(a, b)
    assert stats.kstest(a, stats.norm(10.0, 2.0).cdf).pvalue > P_MIN


class NoRuleRV(RandomVariable):
    """A distribution without an ONNX rule (every one of PyTensor's has one)."""

    name = "no_rule"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("NoRule", "\\operatorname{NoRule}")

    @classmethod
    def rng_fn(cls, rng, loc, scale, size):
        return rng.normal(loc, scale, size=size)


_no_rule = NoRuleRV()


@pytest.mark.parametrize(
    "make_rv, name",
    [
        (lambda r: random_draws(_no_rule, 0.0, 1.0, size=(3,), rng=r), "NoRuleRV"),
    ],
)
def test_unsupported_distribution_names_it(make_rv, name):
    rng = pytensor.shared(np.random.default_rng(1))
    _, draws = make_rv(rng)
    with pytest.raises(NotImplementedError, match=name):
        pytensor.function([], draws, mode="ONNX")


def _centred_on_circle(draws, mu):
    """Draws around ``mu`` wrapped into [-pi, pi) (what the von Mises cdf of loc 0 covers)."""
    return np.mod(draws - mu + np.pi, 2 * np.pi) - np.pi


@pytest.mark.parametrize("mu, kappa", [(0.0, 2.0), (2.5, 0.3), (-1.0, 40.0), (3.0, 1e-6), (0.5, 1e-9), (-2.0, 4e6)])
def test_vonmises_ks(mu, kappa):
    fn, _ = draw_fn(lambda r: random_draws(pt.random.vonmises, mu, kappa, size=(N,), rng=r))
    assert "BitShift" in onnx_op_types(fn)
    first, second = fn(), fn()
    for draws in (first, second):
        assert draws.shape == (N,) and draws.dtype == "float64"
        assert np.all(np.abs(draws) <= np.pi)
        if kappa < 1e-8:
            assert stats.kstest(draws, stats.uniform(-np.pi, 2 * np.pi).cdf).pvalue > P_MIN
        else:
            assert stats.kstest(_centred_on_circle(draws, mu), stats.vonmises(kappa).cdf).pvalue > P_MIN
    assert not np.array_equal(first, second)


def test_vonmises_batched_parameters_and_float32():
    mu = np.array([-3.0, 0.0, 3.0])
    kappa = np.array([[0.5], [8.0]])
    fn, _ = draw_fn(lambda r: random_draws(pt.random.vonmises, mu, kappa, size=(N // 4, 2, 3), rng=r))
    draws = fn()
    assert draws.shape == (N // 4, 2, 3)
    for i, k in enumerate(kappa[:, 0]):
        for j, m in enumerate(mu):
            assert stats.kstest(_centred_on_circle(draws[:, i, j], m), stats.vonmises(k).cdf).pvalue > P_MIN
    fn, _ = draw_fn(lambda r: random_draws(pt.random.vonmises, np.float32(1.0), np.float32(3.0), size=(N,), rng=r,
                                           dtype="float32"))
    draws = fn()
    assert draws.dtype == "float32"
    assert stats.kstest(_centred_on_circle(draws.astype("float64"), 1.0), stats.vonmises(3.0).cdf).pvalue > P_MIN


def finite_chi_square_pvalue(draws, dist, low, high):
    """Chi-square over the support low..high, values expected fewer than 5
    times pooled into one bin."""
    values = np.arange(low, high + 1)
    expected = dist.pmf(values) * len(draws)
    counts = np.array([(draws == v).sum() for v in values])
    assert counts.sum() == len(draws)
    keep = expected >= 5
    counts = np.append(counts[keep], counts[~keep].sum())
    expected = np.append(expected[keep], expected[~keep].sum())
    if expected[-1] == 0:
        counts, expected = counts[:-1], expected[:-1]
    return stats.chisquare(counts, expected * len(draws) / expected.sum()).pvalue


@pytest.mark.parametrize("ngood, nbad, nsample", [(10, 5, 7), (7, 30, 20), (200, 300, 60), (4, 0, 3), (0, 6, 2),
                                                  (5, 5, 0), (5, 5, 10)])
def test_hypergeometric_chi_square(ngood, nbad, nsample):
    fn, _ = draw_fn(lambda r: random_draws(pt.random.hypergeometric, ngood, nbad, nsample, size=(N,), rng=r))
    assert "BitShift" in onnx_op_types(fn)
    draws = fn()
    assert draws.dtype == "int64"
    dist = stats.hypergeom(ngood + nbad, ngood, nsample)
    low, high = max(0, nsample - nbad), min(nsample, ngood)
    assert low <= draws.min() and draws.max() <= high
    if low == high:
        assert np.all(draws == low)
    else:
        assert finite_chi_square_pvalue(draws, dist, low, high) > P_MIN


def test_hypergeometric_batched_parameters():
    ngood = np.array([3, 40, 8])
    nsample = np.array([[2], [30]])
    fn, _ = draw_fn(lambda r: random_draws(pt.random.hypergeometric, ngood, 45, nsample, size=(N // 4, 2, 3), rng=r))
    draws = fn()
    assert draws.shape == (N // 4, 2, 3)
    for i, n in enumerate(nsample[:, 0]):
        for j, good in enumerate(ngood):
            dist = stats.hypergeom(good + 45, good, n)
            assert finite_chi_square_pvalue(draws[:, i, j], dist, max(0, n - 45), min(n, good)) > P_MIN


@pytest.mark.parametrize("ngood, nbad, nsample", [(3, 4, 8), (-1, 4, 2), (3, -1, 1), (3, 4, -1)])
def test_hypergeometric_bad_parameters_fail_at_run_time(ngood, nbad, nsample):
    # NumPy raises (ValueError); the model fails instead of drawing.
    good = pt.lscalar("good")
    rng = pytensor.shared(np.random.default_rng(1))
    _, draws = random_draws(pt.random.hypergeometric, good, nbad, nsample, size=(4,), rng=rng)
    reference = pytensor.function([good], draws, mode="FAST_COMPILE")
    with pytest.raises(ValueError):
        reference(ngood)
    fn = pytensor.function([good], draws, mode="ONNX")
    # The rule's data check fails (named in the error: a Gather read out of
    # range in the portable form, the kernel library's Check node in mode ONNX).
    with pytest.raises(Exception, match="(?i)index|invalid|out of|pytensor_onnx_data_check"):
        fn(ngood)


@pytest.mark.parametrize("opset", OPSETS)
def test_vonmises_and_hypergeometric_opsets(opset):
    rng = pytensor.shared(np.random.default_rng(3))
    _, angles = random_draws(pt.random.vonmises, 1.0, 2.0, size=(N,), rng=rng)
    _, goods = random_draws(pt.random.hypergeometric, 9, 12, 10, size=(N,), rng=rng)
    fn = pytensor_onnx.compile_onnx([], [angles, goods], opset_version=opset)
    angles, goods = fn()
    assert stats.kstest(_centred_on_circle(angles, 1.0), stats.vonmises(2.0).cdf).pvalue > P_MIN
    assert finite_chi_square_pvalue(goods, stats.hypergeom(21, 9, 10), 0, 9) > P_MIN


def _vectorized_draws(make_rv, core_value, batch_value):
    """``make_rv(rng, param)`` with a core-shaped parameter, vectorized over a
    batched one (how PyTensor batches RVs whose helper takes no batch)."""
    from pytensor.graph.replace import vectorize_graph

    rng = pytensor.shared(np.random.default_rng(5))
    core = pt.tensor("core", dtype=core_value.dtype, shape=(None,) * core_value.ndim)
    next_rng, draws = make_rv(rng, core)
    next_rng, draws = vectorize_graph([next_rng, draws], {core: pt.constant(batch_value)})
    return rng, next_rng, draws


def test_batched_permutation():
    # size batch: each row its own uniformly random order of 0..3 (the
    # node's type says (2400, 4); PyTensor's own perform cannot batch an
    # integer permutation by size and fails)
    fn, _ = draw_fn(lambda r: random_draws(pt.random.permutation, 4, size=(2400,), rng=r))
    rows = fn()
    assert rows.shape == (2400, 4)
    assert (np.sort(rows, axis=1) == np.arange(4)).all()
    counts = np.unique(rows, axis=0, return_counts=True)[1]
    assert len(counts) == 24 and stats.chisquare(counts).pvalue > P_MIN
    # size batch of a matrix: each entry a row permutation of x
    x = np.arange(12.0).reshape(4, 3)
    fn, _ = draw_fn(lambda r: random_draws(pt.random.permutation, x, size=(500,), rng=r))
    draws = fn()
    assert draws.shape == (500, 4, 3)
    assert (np.sort(draws[:, :, 0], axis=1) == x[:, 0]).all()
    np.testing.assert_array_equal(draws - draws[:, :, :1], np.broadcast_to([0.0, 1.0, 2.0], draws.shape))
    first = np.bincount((draws[:, 0, 0] // 3).astype(int), minlength=4)
    assert stats.chisquare(first).pvalue > P_MIN


def test_vectorized_permutation_of_batched_vectors():
    values = np.stack([np.arange(5.0) + 10 * i for i in range(3)])
    rng, next_rng, draws = _vectorized_draws(
        lambda r, v: random_draws(pt.random.permutation, v, rng=r), np.zeros(5), values
    )
    assert draws.owner.op.ndims_params == [1]
    fn = pytensor.function([], draws, updates={rng: next_rng}, mode="ONNX")
    seen = np.array([fn() for _ in range(1200)])
    assert seen.shape == (1200, 3, 5)
    np.testing.assert_array_equal(np.sort(seen, axis=-1), np.broadcast_to(values, seen.shape))
    for row in range(3):
        first = np.bincount(((seen[:, row, 0] - 10 * row)).astype(int), minlength=5)
        assert stats.chisquare(first).pvalue > P_MIN
    # rows draw independently of each other
    assert not (seen[:, 0] == seen[:, 1] - 10).all()


def test_batched_choice_without_replacement():
    # a batch of weights: each row draws its own 2 of 4 items, without replacement
    p = np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]])
    rng, next_rng, draws = _vectorized_draws(
        lambda r, w: random_draws(pt.random.choice, np.arange(4) * 10, size=(2,), replace=False, p=w, rng=r),
        np.full(4, 0.25), p,
    )
    fn = pytensor.function([], draws, updates={rng: next_rng}, mode="ONNX")
    seen = np.array([fn() for _ in range(2000)])
    assert seen.shape == (2000, 2, 2)
    assert (seen[:, :, 0] != seen[:, :, 1]).all()
    for row in range(2):
        first = np.bincount(seen[:, row, 0] // 10, minlength=4)
        assert stats.chisquare(first, p[row] * len(seen)).pvalue > P_MIN
    # batched populations (rows of a matrix), no weights
    a = np.arange(15.0).reshape(3, 5)
    rng, next_rng, draws = _vectorized_draws(
        lambda r, v: random_draws(pt.random.choice, v, size=(3,), replace=False, rng=r), np.zeros(5), a
    )
    fn = pytensor.function([], draws, updates={rng: next_rng}, mode="ONNX")
    seen = np.array([fn() for _ in range(1000)])
    assert seen.shape == (1000, 3, 3)
    for row in range(3):
        assert np.isin(seen[:, row], a[row]).all()
        assert all(len(set(draw)) == 3 for draw in seen[:, row].tolist())
        first = np.bincount((seen[:, row, 0] - 5 * row).astype(int), minlength=5)
        assert stats.chisquare(first).pvalue > P_MIN


@pytest.mark.parametrize(
    "make_rv",
    [
        lambda r: random_draws(pt.random.permutation, np.ones((2, 3)), size=(2,), rng=r),
        lambda r: random_draws(pt.random.permutation, np.ones((4, 0)), size=(2,), rng=r),
        lambda r: random_draws(pt.random.choice, np.ones((5, 2)), size=(3,), replace=False, rng=r),
        lambda r: random_draws(pt.random.choice, 6, size=(2, 2), replace=False, rng=r),
    ],
)
def test_batched_permutation_and_choice_shapes_match_pytensor(make_rv):
    fn, _ = draw_fn(make_rv)
    ref = pytensor.function([], make_rv(pytensor.shared(np.random.default_rng(0)))[1], mode="FAST_COMPILE")
    got, want = fn(), ref()
    assert got.shape == want.shape and got.dtype == want.dtype
