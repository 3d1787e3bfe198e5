"""Mode ONNX's rewrites for the kernel graph (pytensor_onnx/rewriting.py):
element-wise work on one element (a scalar parameter's ``log``, an
``exp`` of a log-transformed value) is inlined into the kernel node that
broadcasts it, instead of being an ONNX node of its own in front of it.
Both paths are held to PyTensor's ``py`` linker; the exported portable graph
runs no fusion, so nothing changes there."""

import numpy as np
import pytensor
import pytensor.scalar.basic as ps
import pytensor.tensor as pt
import pytest
from pytensor.tensor.elemwise import Elemwise

from pytensor_onnx import kernels
from pytensor_onnx.testing import compare_onnx_and_py

pytestmark = pytest.mark.skipif(kernels.unavailable_reason() is not None, reason="the kernel library is not built")


def node_types(fn):
    return [node.op_type for node in fn.maker.linker.onnx_model.graph.node]


def test_work_on_a_scalar_parameter_is_part_of_the_kernel_that_broadcasts_it(rng):
    # PyMC's Normal(mu, sigma) log-density: log(sigma) on one element, then
    # broadcast into the vector's Composite (before: Unsqueeze, Log, kernel).
    x = pt.vector("x")
    mu, sigma_log = pt.scalar("mu"), pt.scalar("sigma_log")
    sigma = pt.exp(sigma_log)
    logp = (-0.5 * ((x - mu) / sigma) ** 2 - pt.log(sigma)).sum()
    values = [rng.normal(size=20), np.float64(0.4), np.float64(-0.3)]
    fn, _ = compare_onnx_and_py([x, mu, sigma_log], [logp, *pytensor.grad(logp, [mu, sigma_log])], values)
    types = node_types(fn)
    assert "Log" not in types and "Exp" not in types and "Unsqueeze" not in types, types
    # (x's length, read by the gradient, is a Shape and a Gather.)
    assert set(types) <= {"Elemwise_float64", "Shape", "Gather"}, types
    # Float64 results equal PyTensor's default mode.
    default = pytensor.function([x, mu, sigma_log], [logp, *pytensor.grad(logp, [mu, sigma_log])])
    for a, b in zip(fn(*values), default(*values)):
        np.testing.assert_allclose(a, b, rtol=1e-15)


def test_one_output_of_a_producer_with_several_outputs(rng):
    # A Composite on one element with a bool and a float output (PyMC's
    # check and transform of a positive parameter): the float output read
    # by the vector's kernel is inlined; the check keeps its own reader.
    x = pt.vector("x")
    tau_log = pt.scalar("tau_log")
    tau = pt.exp(tau_log)
    checked = pt.switch(tau > 0, (x / tau).sum(), -np.inf)
    fn, _ = compare_onnx_and_py([x, tau_log], [checked, tau], [rng.normal(size=5), np.float64(0.7)])
    assert "Unsqueeze" not in node_types(fn)


def test_a_producer_the_kernels_do_not_evaluate_stays_a_node_of_its_own(rng):
    # Only exact scalar op classes are the kernels' (a subclass may compute
    # something else): such a producer is not inlined, and the consumer is
    # still one kernel node.
    class ExpOfMine(ps.Exp):
        pass

    x = pt.vector("x")
    s = pt.scalar("s")
    own = Elemwise(ExpOfMine(ps.upgrade_to_float, name="exp_of_mine"))(s)
    out = ((x - own) ** 2).sum() + pt.log(x.shape[0] * own)
    fn, _ = compare_onnx_and_py([x, s], [out], [rng.normal(size=6), np.float64(0.2)])
    assert "Elemwise_float64" in node_types(fn)
    pytensor_graph = [type(n.op.scalar_op) for n in fn.maker.fgraph.apply_nodes if isinstance(n.op, Elemwise)]
    assert ExpOfMine in pytensor_graph


@pytest.mark.parametrize("shape", [(3,), (2, 3), (0,)])
def test_inlined_producers_of_every_rank_and_empty_readers(shape, rng):
    x = pt.tensor("x", shape=(None,) * len(shape))
    a, b = pt.scalar("a"), pt.vector("b", shape=(1,))
    out = pt.sqrt(pt.abs(a) + 1) * x + pt.log1p(b * b) - pt.tanh(a)
    fn, _ = compare_onnx_and_py([x, a, b], [out], [rng.normal(size=shape), np.float64(-1.5), np.array([0.5])])
    assert node_types(fn) == ["Elemwise_float64"], node_types(fn)
