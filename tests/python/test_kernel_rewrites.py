"""Mode ONNX's rewrites for the kernel graph (pytensor_onnx/rewriting.py):
element-wise work on one element (a scalar parameter's ``log``, an
``exp`` of a log-transformed value) is inlined into the kernel node that
broadcasts it, instead of being an ONNX node of its own in front of it; a
Scan that only maps its sequences and adds terms into totals is that work
on the whole sequences and a sum, not an ONNX Loop.
Both paths are held to PyTensor's ``py`` linker; the exported portable graph
runs no fusion, so nothing changes there."""

import numpy as np
import pytensor
import pytensor.scalar.basic as ps
import pytensor.tensor as pt
import pytest
from pytensor.tensor.elemwise import Elemwise

from pytensor.raise_op import CheckAndRaise

from pytensor_onnx import export_onnx, kernels
from pytensor_onnx.testing import compare_onnx_and_py

from helpers import compare_raises

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


def test_inlined_producers_that_read_the_same_values_read_them_once(rng):
    # exp(a) and a * b on one element, both broadcast into the vector's
    # Composite: inlined, they share a and b, which the kernel node reads
    # once each (every input is one more read on every run).
    x = pt.vector("x")
    a, b = pt.scalar("a"), pt.scalar("b")
    logp = (x * pt.exp(a) + x**2 * (a * b) - pt.log1p(a * a)).sum()
    values = [rng.normal(size=12), np.float64(0.3), np.float64(-1.2)]
    fn, _ = compare_onnx_and_py([x, a, b], [logp, *pytensor.grad(logp, [a, b])], values)
    kernel_nodes = [n for n in fn.maker.linker.onnx_model.graph.node if n.domain == kernels.DOMAIN]
    assert kernel_nodes
    for node in kernel_nodes:
        # (Scalars packed into one input are its elements: pack_small_arrays.h.)
        packed = next((list(a.ints) for a in node.attribute if a.name == "packed_inputs"), [-1] * len(node.input))
        reads = list(zip(node.input, packed))
        assert len(set(reads)) == len(reads), (node.op_type, reads)


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


def test_a_kernel_whose_every_input_is_inlined_keeps_its_outputs_rank():
    # The Student-t regression's gradient: a Composite on ExpandDims of
    # exp(nu_log) and exp(sigma_log), scalars that 0-d work reads too. With
    # both inlined it reads the scalars themselves, given a leading axis so
    # that its outputs keep their shape (1,) (the kernel node reads past
    # it): no Exp node of its own.
    pm = pytest.importorskip("pymc")
    from pymc_models import MODELS_BY_NAME
    from pytensor_onnx.testing import PY_MODE

    model = MODELS_BY_NAME["student_t_regression"].build()
    logp = model.logp()
    outputs = [logp, *pytensor.grad(logp, model.value_vars)]
    point = model.initial_point()
    values = [np.asarray(point[v.name]) + 0.1 for v in model.value_vars]
    fn = pytensor.function(model.value_vars, outputs, mode="ONNX")
    types = node_types(fn)
    assert "Exp" not in types, types
    assert set(types) <= {"Elemwise_float64", "Elemwise_bool", "Check_float64"}, types
    reference = pytensor.function(model.value_vars, outputs, mode=PY_MODE)
    for got, want in zip(fn(*values), reference(*values), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    del pm


# --------------------------------------------------------------------------
# Scans that only map and accumulate
# --------------------------------------------------------------------------

F64 = "float64"


def scan_loops(fn):
    return node_types(fn).count("Loop")


def checked_terms_and_total(n_steps=5, init=0.0):
    """PyMC's shape of a scan-built log-density: a checked term per step
    and a running total of it, of which only the last value is read."""
    x = pt.tensor("x", shape=(7,), dtype=F64)
    rho = pt.scalar("rho", dtype=F64)
    check = CheckAndRaise(ValueError, "rho > 0")

    def step(xt, total, rho):
        term = check(pt.exp(xt) * rho, rho > 0)
        return term, total + term

    terms, totals = pytensor.scan(
        step, sequences=[x], outputs_info=[None, pt.constant(init, dtype=F64)], non_sequences=[rho],
        n_steps=n_steps, return_updates=False,
    )
    return [x, rho], [terms, totals[-1]]


def test_a_scan_that_maps_and_totals_is_no_loop(rng):
    inputs, outputs = checked_terms_and_total()
    values = [rng.normal(size=7), np.float64(0.7)]
    fn, results = compare_onnx_and_py(inputs, outputs, values)
    assert scan_loops(fn) == 0, node_types(fn)
    # The exported portable graph keeps the Loop (compare_onnx_and_py ran it).
    assert "Loop" in [n.op_type for n in export_onnx(inputs, outputs).graph.node]
    terms, total = fn(*values)
    np.testing.assert_array_equal(terms, np.exp(values[0][:5]) * values[1])
    assert total == results[1]


def test_the_check_of_a_vectorized_scan_still_raises():
    inputs, outputs = checked_terms_and_total()
    values = [np.zeros(7), np.float64(-1.0)]
    with pytest.raises(ValueError, match="rho > 0"):
        pytensor.function(inputs, outputs, mode="FAST_COMPILE")(*values)
    compare_raises(inputs, outputs, values, ValueError, "rho > 0")
    fn = pytensor.function(inputs, outputs, mode="ONNX")
    assert scan_loops(fn) == 0


def test_totals_add_in_the_scans_order():
    # Terms whose sum depends on the order of the additions: the kernel
    # adds 0 + t0 + t1 + ... as the Scan does (in every mode), not in
    # running sums.
    x = pt.tensor("x", shape=(16,), dtype=F64)
    rho = pt.scalar("rho", dtype=F64)
    totals = pytensor.scan(
        lambda xt, total, rho: total + xt * rho, sequences=[x], outputs_info=[pt.constant(0.0, dtype=F64)],
        non_sequences=[rho], return_updates=False,
    )
    # (NumPy adds 16 values in 8 running sums: 1e16 and -1e16 cancel there.)
    values = [np.array([1e16] + [1.0] * 7 + [-1e16] + [1.0] * 7), np.float64(1.0)]
    fn, _ = compare_onnx_and_py([x, rho], [totals[-1]], values)
    assert scan_loops(fn) == 0
    sequential = 0.0
    for term in values[0] * values[1]:
        sequential += term
    assert sequential != float(np.sum(values[0]))  # (the order matters here)
    assert fn(*values)[0] == sequential == pytensor.function([x, rho], totals[-1])(*values)


def test_a_term_that_reads_no_sequence_is_added_every_step():
    x = pt.tensor("x", shape=(4,), dtype=F64)
    rho = pt.scalar("rho", dtype=F64)

    def step(xt, total, count, rho):
        return total + pt.sqr(xt), count + rho

    (totals, counts) = pytensor.scan(
        step, sequences=[x], outputs_info=[pt.constant(0.0, dtype=F64)] * 2, non_sequences=[rho],
        return_updates=False,
    )
    fn, _ = compare_onnx_and_py([x, rho], [totals[-1], counts[-1]], [np.arange(4.0), np.float64(0.1)])
    assert scan_loops(fn) == 0
    assert fn(np.arange(4.0), np.float64(0.1))[1] == ((0.0 + 0.1) + 0.1 + 0.1) + 0.1


@pytest.mark.parametrize(
    "case",
    [
        "recurrence",  # the total is scaled each step: sequential work
        "start_not_zero",  # the kernel's sum starts at +0
        "running_total",  # every step's total is read: a cumulative sum
        "matrix_step",  # per-step values are not 0-d
    ],
)
def test_scans_that_do_sequential_work_stay_loops(case, rng):
    x = pt.tensor("x", shape=(5, 2) if case == "matrix_step" else (5,), dtype=F64)
    rho = pt.scalar("rho", dtype=F64)
    init = pt.constant(np.zeros(2) if case == "matrix_step" else (1.5 if case == "start_not_zero" else 0.0), dtype=F64)

    def step(xt, total, rho):
        return total * rho + xt if case == "recurrence" else total + xt * rho

    totals = pytensor.scan(step, sequences=[x], outputs_info=[init], non_sequences=[rho], return_updates=False)
    out = totals if case == "running_total" else totals[-1]
    fn, _ = compare_onnx_and_py([x, rho], [out], [rng.normal(size=x.type.shape), np.float64(0.5)])
    assert scan_loops(fn) == 1, node_types(fn)


def test_the_pymc_ar1_scan_log_density_has_no_loop():
    pytest.importorskip("pymc")
    from pymc_models import ar1_scan

    model = ar1_scan()
    logp = model.logp()
    outputs = [logp, *pytensor.grad(logp, model.value_vars)]
    fn = pytensor.function(model.value_vars, outputs, mode="ONNX")
    assert scan_loops(fn) == 0 and len(node_types(fn)) <= 6, node_types(fn)
    default = pytensor.function(model.value_vars, outputs)
    reference = pytensor.function(model.value_vars, outputs, mode="FAST_COMPILE")
    for point in ([0.3, -0.2], [-1.1, 0.8]):
        values = [np.float64(v) for v in point]
        for got, want, ref in zip(fn(*values), default(*values), reference(*values), strict=True):
            np.testing.assert_allclose(got, ref, rtol=1e-13)
            np.testing.assert_allclose(got, want, rtol=1e-14)


def test_a_native_op_read_only_by_a_sum_is_one_kernel_node_adding_as_numpy(rng):
    # Mul then ReduceSum was two nodes, adding in ONNX Runtime's order; the
    # kernel node multiplies and adds the terms pairwise, as NumPy's
    # add.reduce (the py linker's Sum) does, to the same bits. (PyTensor's C
    # backend adds in position order; PyTensor 3's Numba in the lanes of
    # LLVM's vector loop.)
    x, y = pt.vector("x", dtype=F64), pt.vector("y", dtype=F64)
    fn, _ = compare_onnx_and_py([x, y], [(x * y).sum()], [rng.normal(size=1000), rng.normal(size=1000)])
    assert node_types(fn) == ["Elemwise_float64"], node_types(fn)
    assert not any(isinstance(n.op.scalar_op, ps.Composite) for n in fn.maker.fgraph.apply_nodes
                   if isinstance(n.op, Elemwise))  # (a lone Mul, not a fused Composite)
    values = [np.array([1e16] + [1.0] * 7 + [-1e16] + [1.0] * 7), np.ones(16)]
    all_fn, _ = compare_onnx_and_py([x, y], [(x > y).all()], values)
    assert node_types(all_fn) == ["Elemwise_bool"], node_types(all_fn)
    sequential = 0.0
    for term in values[0] * values[1]:
        sequential += term
    assert sequential == 7.0  # (the order matters here)
    assert fn(*values)[0] == np.add.reduce(values[0] * values[1]) == 14.0
