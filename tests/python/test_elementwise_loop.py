"""Element-wise iterations of the recipes (src/core/recipes/loops.cc).

A Loop first runs over all elements while more than half of them still
iterate (all of them below 1,024 elements), then in epochs over the gathered
active elements, scattering them back. Each element must get the value it
gets alone: the arrays here are large enough for several epochs, mix
elements that converge after a few steps with ones that need hundreds, and
are compared with the same elements evaluated in chunks too small to be
compacted, and with SciPy. (Not bit for bit: ONNX Runtime's float64 Exp,
Log, Sin, ... give results that differ in the last bit with an element's
position in the array, vectorised body or scalar tail.)
"""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
import scipy.special

from pytensor_onnx.testing import compare_onnx_and_py

RNG = np.random.default_rng(20261127)
N = 6000


def _log_uniform(lo, hi, n=N):
    return 10.0 ** RNG.uniform(lo, hi, n)


# name -> (PyTensor function, SciPy function, arguments, rtol against SciPy):
# arguments spanning fast and slow convergence.
CASES = {
    "gammainc": (pt.gammainc, scipy.special.gammainc, [_log_uniform(-2, 3), _log_uniform(-2, 3)], 1e-10),
    "gammaincc": (pt.gammaincc, scipy.special.gammaincc, [_log_uniform(-2, 3), _log_uniform(-2, 3)], 1e-10),
    "betainc": (pt.betainc, scipy.special.betainc,
                [_log_uniform(-1.5, 2.5), _log_uniform(-1.5, 2.5), RNG.uniform(0, 1, N)], 1e-10),
    "kve": (pt.kve, scipy.special.kve, [RNG.uniform(-40, 40, N), _log_uniform(-3, 3.5)], 1e-10),
    "ive": (pt.ive, scipy.special.ive, [RNG.uniform(-40, 40, N), _log_uniform(-3, 3.5)], 1e-10),
}


def _in_chunks(fn, values, chunk=500):
    return np.concatenate([fn(*(v[i:i + chunk] for v in values)) for i in range(0, len(values[0]), chunk)])


@pytest.mark.parametrize("name", sorted(CASES))
def test_compacted_elements_get_their_own_values(name):
    op, reference, values, rtol = CASES[name]
    inputs = [pt.dvector(f"x{i}") for i in range(len(values))]
    fn = pytensor.function(inputs, op(*inputs), mode="ONNX")
    together = fn(*values)
    alone = _in_chunks(fn, values)
    np.testing.assert_allclose(together, alone, rtol=1e-13, atol=0)
    with np.errstate(all="ignore"):
        want = reference(*values)
    np.testing.assert_allclose(together, want, rtol=rtol, atol=1e-300)


def test_iteration_cap_holds_across_compaction():
    # J_v at x >= v > 20 takes floor(v) steps of the upward recurrence; the
    # cap is 30,000 (bessel_jy.cc): v = 4e4 does not converge and is NaN,
    # alone and among thousands of elements that converge at once.
    v, x = pt.dvector("v"), pt.dvector("x")
    fn = pytensor.function([v, x], pt.jv(v, x), mode="ONNX")
    orders, args = np.full(5000, 2.0), np.full(5000, 3.0)
    orders[[17, 4000]] = [4e4, 2.9e4]
    args[[17, 4000]] = [5e4, 3e4]
    got = fn(orders, args)
    assert np.isnan(got[17]) and np.isnan(fn(orders[17:18], args[17:18])[0])
    # 29,000 steps: within the cap.
    np.testing.assert_allclose(got[4000], scipy.special.jv(2.9e4, 3e4), rtol=1e-9)
    np.testing.assert_allclose(np.delete(got, [17, 4000]), scipy.special.jv(2.0, 3.0), rtol=1e-14)


def test_empty_and_all_converged_at_once():
    a, x = pt.dvector("a"), pt.dvector("x")
    fn = pytensor.function([a, x], pt.gammainc(a, x), mode="ONNX")
    assert fn(np.zeros(0), np.zeros(0)).shape == (0,)
    same = fn(np.full(3000, 2.5), np.full(3000, 1.5))
    np.testing.assert_array_equal(same, np.full(3000, same[0]))
    np.testing.assert_allclose(same[0], scipy.special.gammainc(2.5, 1.5), rtol=1e-14)


#: Every recipe family built on element-wise iterations, on one operand.
LOOP_RECIPES = {
    "gammainc": lambda x: pt.gammainc(x + 1, x),
    "betainc": lambda x: pt.betainc(x + 1, x + 2, x / 4),
    "betaincinv": lambda x: pt.betaincinv(x + 1, x + 2, x / 4),
    "hyp2f1": lambda x: pt.hyp2f1(x, x + 1, x + 3, x / 4),
    "jv": lambda x: pt.jv(x, x + 1),
    "ive": lambda x: pt.ive(x, x + 1),
    "kve": lambda x: pt.kve(x, x + 1),
    "polygamma": lambda x: pt.polygamma(2, x + 1),
}


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("name", sorted(LOOP_RECIPES))
def test_empty_and_multi_dimensional_inputs(name, opset):
    # The flat results go back to the input's shape, zeros included (opset
    # 13's Reshape reads a 0 as "copy the input's dim": found by the fuzzer
    # on a (0, 0, 0) input).
    x = pt.tensor3("x")
    out = LOOP_RECIPES[name](x)
    for shape in [(0, 0, 0), (2, 0, 3), (2, 1, 3)]:
        value = RNG.uniform(0.1, 0.9, shape)
        compare_onnx_and_py([x], [out], [value], opset_version=opset, rtol=1e-10)
