"""Gradients of Scan: PyTensor builds them as Scans with mit-mot outputs."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from helpers import OPSETS
from pytensor.scan.op import Scan

from pytensor_onnx.testing import compare_onnx_and_py


def scan(*args, **kwargs):
    return pytensor.scan(*args, return_updates=False, **kwargs)


def _has_mit_mot(outputs):
    pending, seen = list(outputs), set()
    while pending:
        var = pending.pop()
        if var in seen or var.owner is None:
            continue
        seen.add(var)
        if isinstance(var.owner.op, Scan) and var.owner.op.info.n_mit_mot > 0:
            return True
        pending.extend(var.owner.inputs)
    return False


@pytest.mark.parametrize("opset", OPSETS)
def test_gradient_of_sit_sot_wrt_sequence_initial_state_and_parameter(opset, rng):
    x = pt.vector("x")
    x0 = pt.scalar("x0")
    a = pt.scalar("a")
    ys = scan(lambda xt, prev, a: pt.tanh(a * prev) + xt, sequences=[x], outputs_info=[x0], non_sequences=[a])
    cost = (ys**2).sum()
    grads = pytensor.grad(cost, [x, x0, a])
    assert _has_mit_mot(grads)
    compare_onnx_and_py([x, x0, a], [cost, *grads], [rng.normal(size=7), np.float64(0.3), np.float64(0.8)],
                        opset_version=opset)


@pytest.mark.parametrize("taps", [(-2, -1), (-3, -1)])
def test_gradient_of_mit_sot(taps, rng):
    init = pt.vector("init")
    w = pt.vector("w")
    ys = scan(
        lambda *args: pt.sin(args[0] * args[-1][0]) + args[1] * args[-1][1],
        outputs_info=[dict(initial=init, taps=list(taps))],
        non_sequences=[w],
        n_steps=6,
    )
    cost = ys.sum() + (ys[-1] ** 2)
    grads = pytensor.grad(cost, [init, w])
    compare_onnx_and_py([init, w], [cost, *grads], [rng.normal(size=-min(taps)), rng.normal(size=2)])


def test_gradient_of_nit_sot_and_vector_states(rng):
    x = pt.matrix("x")
    h0 = pt.vector("h0")
    w = pt.matrix("w")

    def step(row, h, w):
        new = pt.tanh(pt.dot(w, h) + row)
        return new, (new**2).sum()

    hs, energies = scan(step, sequences=[x], outputs_info=[h0, None], non_sequences=[w])
    cost = energies.sum() + hs[-1].sum()
    grads = pytensor.grad(cost, [x, h0, w])
    compare_onnx_and_py([x, h0, w], [cost, *grads],
                        [rng.normal(size=(5, 3)), rng.normal(size=3), rng.normal(size=(3, 3)) * 0.5])


def test_truncated_gradient(rng):
    x = pt.vector("x")
    x0 = pt.scalar("x0")
    a = pt.scalar("a")
    ys = scan(lambda xt, prev, a: a * prev + xt, sequences=[x], outputs_info=[x0], non_sequences=[a],
              truncate_gradient=3)
    grads = pytensor.grad(ys.sum(), [x, a])
    compare_onnx_and_py([x, x0, a], grads, [rng.normal(size=8), np.float64(0.5), np.float64(0.9)])


def test_gradient_of_backwards_and_nested_scans(rng):
    x = pt.matrix("x")
    s0 = pt.scalar("s0")

    def outer_step(row, prev):
        inner = scan(lambda v, acc: pt.tanh(acc + v), sequences=[row], outputs_info=[prev])
        return inner[-1]

    ys = scan(outer_step, sequences=[x], outputs_info=[s0], go_backwards=True)
    grads = pytensor.grad(ys.sum(), [x, s0])
    compare_onnx_and_py([x, s0], [ys, *grads], [rng.normal(size=(4, 3)), np.float64(0.2)])


def test_second_derivative_through_scan(rng):
    x0 = pt.scalar("x0")
    a = pt.scalar("a")
    ys = scan(lambda prev, a: pt.sin(a * prev), outputs_info=[x0], non_sequences=[a], n_steps=5)
    first = pytensor.grad(ys[-1], a)
    second = pytensor.grad(first, a)
    compare_onnx_and_py([x0, a], [first, second], [np.float64(0.7), np.float64(1.3)])


def ar1_loglike(y, phi, sigma):
    """Log-likelihood of an AR(1) series, written as a Scan (a PyMC-style time series)."""
    residuals = scan(lambda yt, prev, phi: yt - phi * prev, sequences=[y[1:], y[:-1]], non_sequences=[phi])
    terms = scan(
        lambda r, total, sigma: total - 0.5 * (r / sigma) ** 2 - pt.log(sigma) - 0.5 * np.log(2 * np.pi),
        sequences=[residuals],
        outputs_info=[pt.constant(np.float64(0.0))],
        non_sequences=[sigma],
    )
    return terms[-1]


def test_ar1_log_likelihood_of_1000_steps_with_gradient(rng):
    y = pt.vector("y")
    phi = pt.scalar("phi")
    sigma = pt.scalar("sigma")
    logp = ar1_loglike(y, phi, sigma)
    grads = pytensor.grad(logp, [phi, sigma])
    series = np.zeros(1001)
    for t in range(1, 1001):
        series[t] = 0.7 * series[t - 1] + rng.normal() * 0.5
    fn, (value, d_phi, d_sigma) = compare_onnx_and_py(
        [y, phi, sigma], [logp, *grads], [series, np.float64(0.6), np.float64(0.4)], rtol=1e-10
    )
    # Closed form, independent of PyTensor.
    r = series[1:] - 0.6 * series[:-1]
    np.testing.assert_allclose(value, np.sum(-0.5 * (r / 0.4) ** 2 - np.log(0.4) - 0.5 * np.log(2 * np.pi)), rtol=1e-10)
    np.testing.assert_allclose(d_phi, np.sum(r * series[:-1]) / 0.4**2, rtol=1e-10)
    np.testing.assert_allclose(d_sigma, np.sum(r**2) / 0.4**3 - 1000 / 0.4, rtol=1e-10)
