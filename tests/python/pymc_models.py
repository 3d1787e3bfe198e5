"""The PyMC model suite: real models of the kinds PyMC users write.

Each entry builds a fresh ``pm.Model`` from seeded synthetic data. The tests
(``test_pymc_models.py``), the benchmark (``bench/pymc_logp.py``) and the deployment cases share it; a new
model is one more ``ModelCase`` in ``MODELS``.

Parameter checks stay on (``check_bounds=True``, PyMC's default): PyMC's
``CheckParameterValue`` nodes are rewritten to ``-inf`` switches when a
log-density is compiled or exported, so no ``CheckAndRaise`` reaches the
ONNX converter.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

#: PyMC's default (see the module docstring).
CHECK_BOUNDS = True


@dataclass(frozen=True)
class ModelCase:
    """One model of the suite.

    ``awaits`` names the Ops (class names) the model's log-density needs that
    may have no ONNX rule yet. While some of them have none (and nothing
    else is missing), the model's tests are expected to fail with the
    ``NotImplementedError`` naming them (strict xfail); they run as ordinary
    tests once every Op has a rule. An Op missing but not awaited fails.
    """

    name: str
    build: object
    awaits: tuple[str, ...] = field(default=())
    #: A short run of pm.sample is part of the model's tests.
    sample: bool = True


def _rng(seed):
    return np.random.default_rng(seed)


#: The eight schools' effects and their standard errors (Rubin 1981; Gelman et al., BDA3 section 5.5).
EIGHT_SCHOOLS = (np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0]),
                 np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0]))


def eight_schools_centered():
    import pymc as pm

    y, sigma = EIGHT_SCHOOLS
    with pm.Model(check_bounds=CHECK_BOUNDS, coords={"school": range(8)}) as model:
        mu = pm.Normal("mu", 0.0, 5.0)
        tau = pm.HalfCauchy("tau", 5.0)
        theta = pm.Normal("theta", mu, tau, dims="school")
        pm.Normal("obs", theta, sigma, observed=y, dims="school")
    return model


def eight_schools_noncentered():
    import pymc as pm

    y, sigma = EIGHT_SCHOOLS
    with pm.Model(check_bounds=CHECK_BOUNDS, coords={"school": range(8)}) as model:
        mu = pm.Normal("mu", 0.0, 5.0)
        tau = pm.HalfCauchy("tau", 5.0)
        theta_std = pm.Normal("theta_std", 0.0, 1.0, dims="school")
        theta = pm.Deterministic("theta", mu + tau * theta_std, dims="school")
        pm.Normal("obs", theta, sigma, observed=y, dims="school")
    return model


def radon_hierarchical():
    """Varying intercepts by county, a common floor slope (the radon model's shape)."""
    import pymc as pm

    rng = _rng(11)
    n_counties, n = 12, 120
    county = rng.integers(0, n_counties, size=n)
    floor = rng.integers(0, 2, size=n).astype("float64")
    a_true = rng.normal(1.5, 0.4, size=n_counties)
    log_radon = a_true[county] - 0.6 * floor + rng.normal(0, 0.7, size=n)
    with pm.Model(check_bounds=CHECK_BOUNDS, coords={"county": range(n_counties)}) as model:
        mu_a = pm.Normal("mu_a", 0.0, 10.0)
        sigma_a = pm.HalfNormal("sigma_a", 5.0)
        a = pm.Normal("a", mu_a, sigma_a, dims="county")
        b = pm.Normal("b", 0.0, 10.0)
        sigma_y = pm.Exponential("sigma_y", 1.0)
        pm.Normal("log_radon", a[county] + b * floor, sigma_y, observed=log_radon)
    return model


def logistic_regression():
    import pymc as pm

    rng = _rng(12)
    X = rng.normal(size=(80, 3))
    y = (X @ np.array([1.0, -2.0, 0.5]) + 0.3 + rng.logistic(size=80) > 0).astype("int64")
    with pm.Model(check_bounds=CHECK_BOUNDS) as model:
        intercept = pm.Normal("intercept", 0.0, 2.5)
        beta = pm.Normal("beta", 0.0, 2.5, shape=3)
        pm.Bernoulli("y", logit_p=intercept + X @ beta, observed=y)
    return model


def poisson_regression():
    import pymc as pm

    rng = _rng(13)
    X = rng.normal(size=(60, 2))
    y = rng.poisson(np.exp(0.5 + X @ np.array([0.4, -0.3])))
    with pm.Model(check_bounds=CHECK_BOUNDS) as model:
        intercept = pm.Normal("intercept", 0.0, 1.0)
        beta = pm.Normal("beta", 0.0, 1.0, shape=2)
        pm.Poisson("counts", mu=pm.math.exp(intercept + X @ beta), observed=y)
    return model


def student_t_regression():
    import pymc as pm

    rng = _rng(14)
    x = np.linspace(-2, 2, 50)
    y = 1.0 + 2.0 * x + rng.standard_t(3, size=50) * 0.5
    with pm.Model(check_bounds=CHECK_BOUNDS) as model:
        alpha = pm.Normal("alpha", 0.0, 5.0)
        beta = pm.Normal("beta", 0.0, 5.0)
        sigma = pm.HalfNormal("sigma", 2.0)
        nu = pm.Gamma("nu", alpha=2.0, beta=0.1)
        pm.StudentT("y", nu=nu, mu=alpha + beta * x, sigma=sigma, observed=y)
    return model


def dirichlet_mixture():
    """Gaussian mixture with Dirichlet weights; labelled points are Categorical on the same weights."""
    import pymc as pm

    rng = _rng(15)
    k = 3
    labels = rng.integers(0, k, size=30)
    centres = np.array([-3.0, 0.0, 4.0])
    y = centres[rng.integers(0, k, size=70)] + rng.normal(0, 0.8, size=70)
    with pm.Model(check_bounds=CHECK_BOUNDS) as model:
        w = pm.Dirichlet("w", a=np.ones(k))
        mu = pm.Normal("mu", 0.0, 5.0, shape=k)
        sigma = pm.HalfNormal("sigma", 2.0)
        pm.NormalMixture("y", w=w, mu=mu, sigma=sigma, observed=y)
        pm.Categorical("labels", p=w, observed=labels)
    return model


def gaussian_process():
    """Marginal GP regression: the likelihood is an MvNormal with a Cholesky of the kernel."""
    import pymc as pm

    rng = _rng(16)
    x = np.linspace(0, 5, 20)[:, None]
    y = np.sin(x[:, 0]) + rng.normal(0, 0.2, size=20)
    with pm.Model(check_bounds=CHECK_BOUNDS) as model:
        ls = pm.Gamma("ls", alpha=2.0, beta=1.0)
        eta = pm.HalfNormal("eta", 1.0)
        noise = pm.HalfNormal("noise", 0.5)
        gp = pm.gp.Marginal(cov_func=eta**2 * pm.gp.cov.ExpQuad(1, ls=ls))
        gp.marginal_likelihood("y", X=x, y=y, sigma=noise)
    return model


def ar1_scan():
    """AR(1) series generated by pytensor.scan in a CustomDist; PyMC derives its logp (a Scan)."""
    import pymc as pm
    import pytensor
    import pytensor.tensor as pt
    from pymc.pytensorf import collect_default_updates

    rng = _rng(17)
    steps = 40
    series = np.zeros(steps)
    for t in range(1, steps):
        series[t] = 0.7 * series[t - 1] + rng.normal(0, 0.5)

    def ar_dist(x0, rho, sigma, size):
        def step(x_tm1, rho, sigma):
            x = pm.Normal.dist(rho * x_tm1, sigma)
            return x, collect_default_updates([x])

        with warnings.catch_warnings():
            # PyTensor 3.3 announces a new return signature; both lines return (outputs, updates) today.
            warnings.simplefilter("ignore", DeprecationWarning)
            xs, _ = pytensor.scan(step, outputs_info=[x0], non_sequences=[rho, sigma], n_steps=steps - 1,
                                  strict=True)
        return xs

    with pm.Model(check_bounds=CHECK_BOUNDS) as model:
        rho = pm.Uniform("rho", -1.0, 1.0)
        sigma = pm.HalfNormal("sigma", 1.0)
        # The first value is given; the model is the distribution of the rest.
        pm.CustomDist("series", pt.as_tensor(series[0]), rho, sigma, dist=ar_dist, observed=series[1:])
    return model


def potential_regression():
    """Linear regression with a soft sum-to-zero constraint on group effects, as a pm.Potential."""
    import pymc as pm

    rng = _rng(18)
    group = rng.integers(0, 4, size=40)
    x = rng.normal(size=40)
    y = 0.5 + np.array([-1.0, 0.0, 0.5, 0.5])[group] + 1.5 * x + rng.normal(0, 0.3, size=40)
    with pm.Model(check_bounds=CHECK_BOUNDS) as model:
        alpha = pm.Normal("alpha", 0.0, 5.0)
        effect = pm.Normal("effect", 0.0, 2.0, shape=4)
        beta = pm.Normal("beta", 0.0, 5.0)
        sigma = pm.HalfNormal("sigma", 1.0)
        pm.Potential("sum_to_zero", -0.5 * (effect.sum() / 0.01) ** 2)
        pm.Normal("y", alpha + effect[group] + beta * x, sigma, observed=y)
    return model


MODELS = [
    ModelCase("eight_schools_centered", eight_schools_centered, awaits=("Log1p",)),
    ModelCase("eight_schools_noncentered", eight_schools_noncentered, awaits=("Log1p",)),
    ModelCase("radon_hierarchical", radon_hierarchical),
    ModelCase("logistic_regression", logistic_regression, awaits=("Softplus",)),
    ModelCase("poisson_regression", poisson_regression),
    ModelCase("student_t_regression", student_t_regression, awaits=("Log1p", "Psi", "GammaLn")),
    ModelCase("dirichlet_mixture", dirichlet_mixture),
    ModelCase("gaussian_process", gaussian_process, awaits=("Cholesky", "ExtractDiag", "SolveTriangular")),
    ModelCase("ar1_scan", ar1_scan, awaits=("Softplus",)),
    ModelCase("potential_regression", potential_regression),
]

MODELS_BY_NAME = {case.name: case for case in MODELS}
