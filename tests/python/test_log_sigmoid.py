"""Log-sigmoid forms at the extremes (x = +-1e3, +-40, 0).

PyTensor's FAST_RUN rewrites turn most ways of writing log(sigmoid(x)) and
log(1 - sigmoid(x)) into softplus (-softplus(-x), -softplus(x)); a few forms
stay without softplus (log(sigmoid(x)**2), log(2 * sigmoid(x)),
log(sigmoid(x) + sigmoid(-x))), where PyTensor itself computes log of a
sigmoid that underflows to 0 (-inf at x = -1e3). The conversion follows the
rewritten graph in both cases: each form is compared with PyTensor's py
linker running the same FAST_RUN-rewritten graph, and the softplus forms also
with exact values (np.logaddexp), so a lossy conversion cannot hide behind a
lossy reference. Without rewrites, the literal graphs convert as PyTensor
computes them.
"""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.compile.mode import Mode
from scipy.special import expit

from pytensor_onnx.mode import onnx_mode
from pytensor_onnx.testing import assert_same_result, compare_onnx_and_py

from helpers import FLOAT_DTYPES, OPSETS

EXTREMES = np.array([-1e3, -40.0, -1.0, 0.0, 1.0, 40.0, 1e3])


def _log_sigmoid(x):
    return -np.logaddexp(0.0, -x)


# name -> (form, exact value of the form from float64 x)
FORMS = {
    "log(sigmoid(x))": (lambda x: pt.log(pt.sigmoid(x)), _log_sigmoid),
    "log(sigmoid(-x))": (lambda x: pt.log(pt.sigmoid(-x)), lambda x: _log_sigmoid(-x)),
    "log1p(-sigmoid(x))": (lambda x: pt.log1p(-pt.sigmoid(x)), lambda x: _log_sigmoid(-x)),
    "log(1 - sigmoid(x))": (lambda x: pt.log(1 - pt.sigmoid(x)), lambda x: _log_sigmoid(-x)),
    "log(1 - sigmoid(-x))": (lambda x: pt.log(1 - pt.sigmoid(-x)), _log_sigmoid),
    "log(1 / (1 + exp(-x)))": (lambda x: pt.log(1 / (1 + pt.exp(-x))), _log_sigmoid),
    "log(exp(x) / (1 + exp(x)))": (lambda x: pt.log(pt.exp(x) / (1 + pt.exp(x))), _log_sigmoid),
    "log1p(-1 / (1 + exp(-x)))": (lambda x: pt.log1p(-1 / (1 + pt.exp(-x))), lambda x: _log_sigmoid(-x)),
    "-log1p(exp(-x))": (lambda x: -pt.log1p(pt.exp(-x)), _log_sigmoid),
    "log(sigmoid(2x + 1))": (lambda x: pt.log(pt.sigmoid(2 * x + 1)), lambda x: _log_sigmoid(2 * x + 1)),
    "logit of sigmoid": (lambda x: pt.log(pt.sigmoid(x)) - pt.log(1 - pt.sigmoid(x)), lambda x: x),
    "log(sigmoid(x)) + sigmoid(x)": (
        lambda x: pt.log(pt.sigmoid(x)) + pt.sigmoid(x),
        lambda x: _log_sigmoid(x) + 1 / (1 + np.exp(-x)),
    ),
    "log(sigmoid(x)**2)": (lambda x: pt.log(pt.sigmoid(x) ** 2), lambda x: 2 * _log_sigmoid(x)),
    "log(2 * sigmoid(x))": (lambda x: pt.log(2 * pt.sigmoid(x)), lambda x: np.log(2) + _log_sigmoid(x)),
    "log(sigmoid(x) + sigmoid(-x))": (lambda x: pt.log(pt.sigmoid(x) + pt.sigmoid(-x)), lambda x: 0 * x),
}

#: Forms PyTensor's rewrites leave with log of a sigmoid (no softplus) on
#: some line: PyTensor 2.38 keeps log(1 / (1 + exp(-x))) as log(sigmoid(x)).
SOFTPLUS_FREE_SOMEWHERE = {"log(sigmoid(x)**2)", "log(2 * sigmoid(x))", "log(sigmoid(x) + sigmoid(-x))",
                           "log(1 / (1 + exp(-x)))"}


def _has_softplus(fn):
    return "softplus" in str([node.op for node in fn.maker.fgraph.apply_nodes]).lower()


def _rewritten_py_function(inputs, outputs):
    """PyTensor's py linker on the FAST_RUN-rewritten graph (NumPy only)."""
    with pytensor.config.change_flags(cxx=""):
        return pytensor.function(inputs, outputs, mode=Mode(linker="py", optimizer="fast_run"))


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(FORMS))
def test_log_sigmoid_forms_at_the_extremes(name, dtype, opset):
    form, exact = FORMS[name]
    x = pt.vector("x", dtype=dtype)
    out = form(x)
    value = EXTREMES.astype(dtype)
    fn = pytensor.function([x], out, mode=onnx_mode(opset_version=opset))
    got = fn(value)
    reference = _rewritten_py_function([x], out)
    want = reference(value)
    rtol = 1e-6 if dtype == "float32" else 1e-14
    assert_same_result(got, want, rtol=rtol, atol=1e-300)
    if _has_softplus(reference):
        # PyTensor computes it accurately: so must the conversion.
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, exact(EXTREMES), rtol=rtol, atol=1e-300)
    else:
        assert name in SOFTPLUS_FREE_SOMEWHERE
        # Accurate where the sigmoid does not underflow.
        inner = np.abs(EXTREMES) < 30
        np.testing.assert_allclose(got[inner], exact(EXTREMES[inner]), rtol=rtol * 100, atol=1e-15)
    # The literal graph (no rewrites) converts as PyTensor computes it,
    # -inf included.
    compare_onnx_and_py([x], [out], [value], opset_version=opset, optimize=False, rtol=rtol)


def test_a_softplus_free_form_stays_softplus_free():
    # What makes the last three forms special: PyTensor keeps log(sigmoid)
    # in them, so -inf at -1e3 is PyTensor's own answer, not a conversion loss.
    x = pt.dvector("x")
    fn = _rewritten_py_function([x], pt.log(2 * pt.sigmoid(x)))
    assert not _has_softplus(fn)
    assert fn(np.array([-1e3]))[0] == -np.inf
    onnx = pytensor.function([x], pt.log(2 * pt.sigmoid(x)), mode=onnx_mode())
    assert onnx(np.array([-1e3]))[0] == -np.inf


GRADIENTS = {
    # cost -> its exact derivative
    "log(sigmoid(x))": (lambda x: pt.log(pt.sigmoid(x)), lambda x: expit(-x)),
    "log1p(-sigmoid(x))": (lambda x: pt.log1p(-pt.sigmoid(x)), lambda x: -expit(x)),
    "log(1 - sigmoid(x))": (lambda x: pt.log(1 - pt.sigmoid(x)), lambda x: -expit(x)),
    "log(sigmoid(x)) + log1p(-sigmoid(x))": (
        lambda x: pt.log(pt.sigmoid(x)) + pt.log1p(-pt.sigmoid(x)),
        lambda x: expit(-x) - expit(x),
    ),
}


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_log_sigmoid_gradients_at_the_extremes(name, opset):
    # Without PyTensor's canonizers (mode.EXPENSIVE_REWRITES) these gradients
    # kept (1 / s) * s * (1 - s) (NaN at x = -1e3) or -exp(x) * sigmoid(-x)
    # (NaN at x = 1e3); pytensor_onnx/rewriting.py cancels them. Exact values
    # as reference: PyTensor's own FAST_RUN gives NaN at 1e3 for the last one.
    cost, derivative = GRADIENTS[name]
    x = pt.dvector("x")
    grad = pytensor.grad(cost(x).sum(), x)
    fn = pytensor.function([x], grad, mode=onnx_mode(opset_version=opset))
    np.testing.assert_allclose(fn(EXTREMES), derivative(EXTREMES), rtol=1e-14, atol=1e-300)


def test_reciprocal_cancelling_keeps_shapes_and_other_factors(rng):
    # (a / t) * t * c -> a * c, and t / t alone -> ones of t's shape.
    a, t, c = pt.dvector("a"), pt.dvector("t"), pt.dscalar("c")
    outputs = [(a / t) * t * c, pt.reciprocal(t) * t, (1 / t) * t * 2.0]
    values = [rng.normal(size=4), rng.normal(size=4), np.array(1.5)]
    compare_onnx_and_py([a, t, c], outputs, values, rtol=1e-15)
    fn = pytensor.function([a, t, c], outputs, mode=onnx_mode())
    got = fn(values[0], np.zeros(4), values[2])
    np.testing.assert_array_equal(got[1], np.ones(4))  # the limit, as PyTensor's FAST_RUN gives
