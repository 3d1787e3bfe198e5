"""Run-time broadcasting that PyTensor refuses is refused by the model too
(pytensor_onnx/dispatch/broadcast.py): a dim PyTensor does not know to be 1
never broadcasts, in mode ONNX (kernel and portable forms) and in exported
files; one check stands for every element-wise node sharing the dims."""

import numpy as np
import onnx
import onnxruntime as ort
import pytensor
import pytensor.tensor as pt
import pytest

from pytensor_onnx import export_onnx
from pytensor_onnx.dispatch import broadcast
from pytensor_onnx.mode import onnx_mode
from pytensor_onnx.testing import check_model, compare_onnx_and_py

MODES = {"kernels": onnx_mode(), "portable": onnx_mode(kernels=False)}
MISMATCH = "Input dimension mismatch"


def _graphs():
    """name -> (inputs, output, a refused feed, an accepted feed)."""
    x, y = pt.vector("x"), pt.vector("y")
    m = pt.matrix("m")
    s3 = pt.vector("s3", shape=(3,))
    chain = x
    for i in range(50):
        chain = pt.exp(-chain) * y + i if i % 2 else chain * 0.5 + y
    one, three = np.array([1.0]), np.array([1.0, 2.0, 3.0])
    # Scan bodies: every step is checked (a carry of one row against rows of
    # none, PyTensor's wrong static shape of a slice made such a carry: the
    # fresh-seed fuzzer's FUZZ_SEED=3486082120, case-308f4517a16f).
    rows, carry = pt.tensor3("rows"), pt.matrix("carry")
    running = pytensor.scan(lambda r, c: c + r, sequences=[rows], outputs_info=[carry], return_updates=False)
    scaled = pytensor.scan(lambda r, v: r * v, sequences=[m], non_sequences=[y], return_updates=False)
    # IfElse branches (the work only the branch taken needs) and OpFromGraph
    # bodies are checked too.
    from pytensor.compile.builders import OpFromGraph

    from pytensor_onnx.compat import ifelse

    c = pt.scalar("c")
    a, b = pt.vector("a"), pt.vector("b")
    inner = OpFromGraph([a, b], [a * b + 1.0, a - b])
    return {
        "ifelse_branch": ([c, x, y], ifelse(c > 0, x + y, x), [np.array(1.0), three, one],
                          [np.array(1.0), three, three]),
        "op_from_graph": ([x, y], inner(x, y)[1] * 2.0, [three, one], [three, three]),
        "scan_carry": ([rows, carry], running, [np.zeros((1, 0, 3)), np.ones((1, 3))],
                       [np.ones((2, 4, 3)), np.ones((4, 3))]),
        "scan_map": ([m, y], scaled, [np.ones((2, 3)), one], [np.ones((2, 3)), three]),
        "add": ([x, y], x + y, [one, three], [three, three]),
        "add_unequal_lengths": ([x, y], x + y, [three, np.ones(4)], [three, three]),
        # (Kernel nodes whose own broadcast fails before the check they carry.)
        "sum_of_unequal_lengths": ([x, y], (x + y).sum(), [three, np.ones(4)], [three, three]),
        "exp_times_unequal_lengths": ([x, y], pt.exp(x) * y, [three, np.ones(4)], [three, three]),
        "fused_chain": ([x, y], chain, [three, one], [three, three]),
        "static_against_unknown": ([s3, y], s3 * y, [three, one], [three, three]),
        "through_dimshuffle": ([m, y], m + y[None, :], [np.ones((2, 3)), one], [np.ones((2, 3)), three]),
        "through_transpose": ([m, y], m.T * y, [np.ones((1, 2)), np.ones(3)], [np.ones((2, 3)), np.ones(2)]),
        "through_reduction": ([m, y], m.sum(axis=0) - y, [np.ones((2, 1)), three], [np.ones((2, 3)), three]),
        "special_function": ([x, y], pt.gammaln(x) + pt.erfinv(y / 4), [three, one], [three, three]),
    }


GRAPHS = _graphs()


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_refused_broadcast_raises_value_error_as_pytensor(name, mode):
    inputs, out, refused, accepted = GRAPHS[name]
    reference = pytensor.function(inputs, out, mode="FAST_RUN")
    with pytest.raises(ValueError):
        reference(*refused)
    fn = pytensor.function(inputs, out, mode=MODES[mode])
    with pytest.raises(ValueError, match=MISMATCH):
        fn(*refused)
    np.testing.assert_allclose(fn(*accepted), reference(*accepted), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_exported_model_fails_on_refused_broadcast(name):
    inputs, out, refused, accepted = GRAPHS[name]
    compare_onnx_and_py(inputs, out, accepted)
    model = export_onnx(inputs, [out])
    check_model(model)
    options = ort.SessionOptions()
    options.log_severity_level = 4
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    with pytest.raises(Exception, match=MISMATCH):
        session.run(None, dict(zip(names, refused)))


def _comparisons(model):
    return sum(node.op_type == "Abs" for node in model.graph.node)


def _check_nodes(model):
    return [node for node in model.graph.node if node.name.startswith("pytensor_check:")]


def test_one_check_for_many_element_wise_nodes():
    # 50 element-wise steps over x and y: their dims form one class, so one
    # comparison, one check node.
    inputs, out, _, _ = GRAPHS["fused_chain"]
    model = export_onnx(inputs, [out])
    assert _comparisons(model) == 1
    assert len(_check_nodes(model)) == 1


def test_no_check_where_pytensor_knows_the_sizes():
    # Static sizes; one origin per class; static 1s that broadcast (an
    # outer sum: column (n, 1) + row (1, m)).
    x = pt.vector("x", shape=(3,))
    y = pt.vector("y", shape=(3,))
    column = pt.matrix("column", shape=(None, 1))
    z = pt.vector("z")
    for out, inputs in (([x + y * 2], [x, y]), ([column + z], [column, z]), ([pt.exp(z) * z], [z])):
        model = export_onnx(inputs, out)
        assert not _check_nodes(model), onnx.printer.to_text(model.graph)
    fn = pytensor.function([column, z], column + z, mode="ONNX")
    np.testing.assert_array_equal(fn(np.ones((2, 1)), np.arange(3.0)), np.ones((2, 1)) + np.arange(3.0))


def test_static_sizes_that_differ_fail_at_conversion():
    # PyTensor builds this graph (y's size is unknown) and fails every call.
    x3, x4, y = pt.vector("x3", shape=(3,)), pt.vector("x4", shape=(4,)), pt.vector("y")
    with pytest.raises(ValueError, match=r"x\d axis 0 has size \d, x\d axis 0 has size \d"):
        export_onnx([x3, x4, y], [x3 + y, y * x4])


def test_checks_can_be_switched_off_only_for_measurement(monkeypatch):
    # The tests above fail without the checks (ONNX broadcasts the length 1).
    inputs, out, refused, _ = GRAPHS["add"]
    monkeypatch.setattr(broadcast, "ENABLED", False)
    fn = pytensor.function(inputs, out, mode=onnx_mode())
    np.testing.assert_array_equal(fn(*refused), [2.0, 3.0, 4.0])


def test_pymc_per_variable_export_has_the_layout_shapes():
    # docs/pymc.md's model: theta had shape ['theta_dim0'] although its layout
    # says [3], so a length-1 theta gave a log-density where PyMC raises.
    pm = pytest.importorskip("pymc")
    from pytensor_onnx.pymc import export_deterministics, export_logp, read_layout

    with pm.Model(coords={"g": range(3)}) as model:
        mu = pm.Normal("mu", 0.0, 1.0)
        sigma = pm.HalfNormal("sigma", 1.0)
        theta = pm.Normal("theta", mu, sigma, dims="g")
        pm.Deterministic("spread", 2 * sigma)
        pm.Normal("y", theta, 1.0, observed=[0.1, -0.3, 0.7], dims="g")
    for exported in (export_logp(model), export_deterministics(model)):
        check_model(exported)
        layout = {v["name"]: v["shape"] for v in read_layout(exported)["variables"]}
        for graph_input in exported.graph.input:
            dims = [d.dim_value for d in graph_input.type.tensor_type.shape.dim]
            assert dims == layout[graph_input.name], (graph_input.name, dims)
    session = ort.InferenceSession(export_logp(model).SerializeToString(), providers=["CPUExecutionProvider"])
    point = {k: np.asarray(v) for k, v in model.initial_point().items()}
    want = model.compile_logp()(point)
    np.testing.assert_allclose(session.run(None, point)[0], want, rtol=1e-12)
    with pytest.raises(Exception, match="theta"):
        session.run(None, {**point, "theta": np.zeros(1)})


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_branch_not_taken_is_not_checked(mode):
    # PyTensor's ifelse is lazy: the sizes of x + y meet only when the branch
    # is taken (dispatch/broadcast.eager_nodes).
    from pytensor_onnx.compat import ifelse

    c, x, y = pt.scalar("c"), pt.vector("x"), pt.vector("y")
    fn = pytensor.function([c, x, y], ifelse(c > 0, x + y, x), mode=MODES[mode])
    np.testing.assert_array_equal(fn(np.float64(-1), np.arange(3.0), np.ones(1)), np.arange(3.0))
    np.testing.assert_array_equal(fn(np.float64(1), np.arange(3.0), np.ones(3)), np.arange(3.0) + 1)


def test_work_both_branches_need_is_checked():
    # x + y feeds both branches (one through -(x + y)): every run computes it,
    # in PyTensor too, so its sizes must meet whichever branch is taken. In
    # mode ONNX, an export of the graph, and an export of the compiled FAST_RUN
    # function, whose graph holds the ifelse PyTensor's rewrites leave
    # (FUZZ_SEED=3151764732: its empty operands broadcast silently).
    from pytensor_onnx import export_function_onnx
    from pytensor_onnx.compat import ifelse

    c, x, y = pt.scalar("c", dtype="int8"), pt.tensor3("x"), pt.tensor3("y")
    both = x + y
    output = ifelse(c, both, -both)
    refused = [np.zeros((2, 0, 2)), np.zeros((1, 0, 1))]
    accepted = [np.arange(4.0).reshape(2, 1, 2), np.ones((2, 1, 2))]
    reference = pytensor.function([c, x, y], output, mode="FAST_RUN")
    with pytest.raises(ValueError):
        reference(np.array(0, dtype="int8"), *refused)
    runs = {label: pytensor.function([c, x, y], output, mode=mode) for label, mode in MODES.items()}
    for model in (export_onnx([c, x, y], output), export_function_onnx(reference)):
        check_model(model)
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        runs[f"export {len(runs)}"] = lambda *values, session=session, names=names: session.run(
            None, dict(zip(names, values)))[0]
    for label, run in runs.items():
        for taken in (np.array(0, dtype="int8"), np.array(1, dtype="int8")):
            np.testing.assert_array_equal(run(taken, *accepted), reference(taken, *accepted), err_msg=label)
            with pytest.raises(Exception, match=MISMATCH):
                run(taken, *refused)


def test_exports_check_each_output_mode_onnx_one():
    # An exported model's user may fetch any output; the linker's thunk
    # fetches them all, so one output reading the check fails the run.
    # (The portable form: in the kernel form the kernel nodes check, below.)
    x, y = pt.vector("x"), pt.vector("y")
    outputs = [x + y, x * y, pt.exp(x)]
    fn = pytensor.function([x, y], outputs, mode=MODES["portable"])
    model = export_onnx([x, y], outputs)

    def squeezes(m):
        return sum(node.op_type == "Squeeze" for node in m.graph.node)

    assert squeezes(fn.maker.linker.onnx_model) == 1
    assert squeezes(model) == 3
    with pytest.raises(ValueError, match=MISMATCH):
        fn(np.ones(1), np.ones(3))
    options = ort.SessionOptions()
    options.log_severity_level = 4
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    for name in [o.name for o in session.get_outputs()]:
        with pytest.raises(Exception, match=MISMATCH):
            session.run([name], {"x": np.ones(1), "y": np.ones(3)})


def test_kernel_nodes_check_their_own_inputs():
    # Mode ONNX's kernel nodes check PyTensor's rule on their own inputs
    # (attribute strict_axes): no check nodes of the model's own, and the
    # failure is PyTensor's ValueError. Element-wise nodes left in the
    # portable form are still checked by the model.
    x, y, z = pt.vector("x"), pt.vector("y"), pt.vector("z")
    fn = pytensor.function([x, y], [pt.exp(x) * y, pt.gammaln(y)], mode=MODES["kernels"])
    kinds = [node.op_type for node in fn.maker.linker.onnx_model.graph.node]
    assert set(kinds) == {"Elemwise_float64"}, kinds
    assert all(node.attribute for node in fn.maker.linker.onnx_model.graph.node)
    np.testing.assert_allclose(fn(np.ones(3), np.ones(3))[0], np.e * np.ones(3))
    for feed in ([np.ones(1), np.ones(3)], [np.ones(3), np.ones(1)]):
        with pytest.raises(ValueError, match=MISMATCH):
            fn(*feed)
    # A lone x + z stays a native Add: the model checks it.
    fn = pytensor.function([x, z], x + z, mode=MODES["kernels"])
    assert {"Add", "Squeeze"} <= {node.op_type for node in fn.maker.linker.onnx_model.graph.node}
    with pytest.raises(ValueError, match=MISMATCH):
        fn(np.ones(3), np.ones(1))


def test_dims_the_kernel_nodes_check_are_not_checked_again():
    # A ScalarLoop (the gradient of gammainc) reads outputs of the kernel
    # node that checked its inputs k and x, and DimShuffles of those inputs:
    # their dims are k's and x's, which the kernel node compares, so the
    # model adds no check of its own (it compared all eight of the loop's
    # inputs, 27 nodes, ~25 us a run); a mismatch still fails as PyTensor's
    # ValueError, on both paths. A loop reading an input no kernel node
    # checked is still checked by the model.
    k, x, w = pt.vector("k"), pt.vector("x"), pt.vector("w")
    grad = pytensor.grad(pt.gammainc(k, x).sum(), k)
    fn = pytensor.function([k, x], grad, mode=MODES["kernels"])
    nodes = fn.maker.linker.onnx_model.graph.node
    assert not [n.name for n in nodes if n.op_type == "Gather" and MISMATCH in n.name], [n.op_type for n in nodes]
    compare_onnx_and_py([k, x], [grad], [np.linspace(0.5, 4.0, 9), np.linspace(0.1, 6.0, 9)])
    for mode in MODES.values():
        f = pytensor.function([k, x], grad, mode=mode)
        for feed in ([np.ones(1), np.ones(3)], [np.ones(3), np.ones(4)]):
            with pytest.raises(ValueError, match=MISMATCH):
                f(*feed)
    # (w meets the loop's output only in an Add the kernels leave native.)
    fn = pytensor.function([k, x, w], grad + w, mode=MODES["kernels"])
    with pytest.raises(ValueError, match=MISMATCH):
        fn(np.ones(3), np.ones(3), np.ones(1))
    np.testing.assert_allclose(fn(np.ones(3), np.ones(3), np.zeros(3)), f(np.ones(3), np.ones(3)))
