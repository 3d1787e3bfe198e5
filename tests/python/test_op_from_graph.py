"""OpFromGraph: the inner graph is converted in place (inlined)."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from helpers import OPSETS
from pytensor.compile.builders import OpFromGraph

from pytensor_onnx.compat import ifelse
from pytensor_onnx.testing import compare_onnx_and_py


def _ofg_nodes(fn):
    return [node for node in fn.maker.fgraph.apply_nodes if isinstance(node.op, OpFromGraph)]


@pytest.mark.parametrize("opset", OPSETS)
def test_several_outputs_across_opsets(opset, rng):
    a, b = pt.vector("a"), pt.vector("b")
    op = OpFromGraph([a, b], [a * b + 1, pt.exp(a - b).sum()])
    x, y = pt.vector("x"), pt.vector("y")
    prod, total = op(x, y)
    fn, _ = compare_onnx_and_py([x, y], [prod, total * 2], [rng.normal(size=3), rng.normal(size=3)],
                                opset_version=opset, optimize=False)
    assert _ofg_nodes(fn)


def test_shared_variables_inside(rng):
    # 3.3 wants the shared variables an inner graph reads as explicit inputs;
    # 2.38 also accepts them implicitly (and adds them as inputs).
    w = pytensor.shared(rng.normal(size=(3, 2)), name="w")
    a, m = pt.matrix("a"), pt.matrix("m")
    op = OpFromGraph([a, m], [pt.tanh(pt.dot(a, m))])
    x = pt.matrix("x")
    compare_onnx_and_py([x], [op(x, w) * 2], [rng.normal(size=(4, 3))], optimize=False)
    # The function sees the current value of the shared variable.
    fn = pytensor.function([x], op(x, w), mode="ONNX")
    value = rng.normal(size=(4, 3))
    w.set_value(np.zeros((3, 2)))
    np.testing.assert_array_equal(fn(value), np.zeros((4, 2)))


def test_nested_op_from_graph(rng):
    a = pt.vector("a")
    inner = OpFromGraph([a], [a**2])
    b = pt.vector("b")
    outer = OpFromGraph([b], [inner(b) + inner(b * 2).sum()])
    x = pt.vector("x")
    compare_onnx_and_py([x], [outer(x)], [rng.normal(size=4)], optimize=False)


@pytest.mark.parametrize("inline", [False, True])
def test_gradient(inline, rng):
    a, b = pt.vector("a"), pt.scalar("b")
    op = OpFromGraph([a, b], [pt.sin(a) * b], inline=inline)
    x, s = pt.vector("x"), pt.scalar("s")
    cost = op(x, s).sum()
    grads = pytensor.grad(cost, [x, s])
    for optimize in (False, True):
        compare_onnx_and_py([x, s], [cost, *grads], [rng.normal(size=5), np.float64(1.5)], optimize=optimize)


def test_op_from_graph_in_an_ifelse_branch_and_with_an_ifelse_inside(rng):
    a = pt.vector("a")
    c = pt.scalar("c")
    op = OpFromGraph([a], [pt.exp(a).sum()])
    with_ifelse_inside = OpFromGraph([c, a], [ifelse(c > 0, a.sum(), a.max())])
    x = pt.vector("x")
    outs = [ifelse(c > 0, op(x), x.sum()), with_ifelse_inside(c, x)]
    for cond in (1.0, -1.0):
        compare_onnx_and_py([c, x], outs, [np.float64(cond), rng.normal(size=3)], optimize=False)
