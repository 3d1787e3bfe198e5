"""Scan -> ONNX Loop: every tap kind, n_steps forms, while loops, buffers, nesting.

Results are compared with PyTensor's Python implementation (Scan.perform),
which defines the layout of every output (initial taps included). Gradients
are in test_scan_grad.py.
"""

import warnings

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from helpers import OPSETS, onnx_op_types
from pytensor.scan.op import Scan
from pytensor.scan.utils import until

from pytensor_onnx import export_onnx
from pytensor_onnx.compat import ifelse
from pytensor_onnx.testing import compare_onnx_and_py, py_function


def scan(*args, **kwargs):
    """``pytensor.scan`` returning the outputs only (both lines' API)."""
    return pytensor.scan(*args, return_updates=False, **kwargs)


def scan_info(fn):
    """The ScanInfo of every Scan in a compiled function (after rewrites)."""
    return [node.op.info for node in fn.maker.fgraph.apply_nodes if isinstance(node.op, Scan)]


def _ar1(rng):
    x = pt.vector("x")
    x0 = pt.scalar("x0")
    a = pt.scalar("a")
    ys = scan(lambda xt, prev, a: a * prev + xt, sequences=[x], outputs_info=[x0], non_sequences=[a])
    return [x, x0, a], ys, [rng.normal(size=6), np.float64(0.5), np.float64(0.9)]


@pytest.mark.parametrize("opset", OPSETS)
def test_sit_sot_with_sequence_and_non_sequence_across_opsets(opset, rng):
    inputs, ys, values = _ar1(rng)
    fn, _ = compare_onnx_and_py(inputs, [ys], values, opset_version=opset)
    assert "Loop" in onnx_op_types(fn)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32"])
def test_sit_sot_dtypes_and_matrix_states(dtype, rng):
    x = pt.tensor("x", dtype=dtype, shape=(None, 2, 3))
    s0 = pt.tensor("s0", dtype=dtype, shape=(2, 3))
    ys = scan(lambda xt, prev: prev * 2 - xt, sequences=[x], outputs_info=[s0])
    values = [rng.integers(-5, 5, size=(4, 2, 3)).astype(dtype), rng.integers(-5, 5, size=(2, 3)).astype(dtype)]
    compare_onnx_and_py([x, s0], [ys], values)


def test_nit_sots_of_several_shapes(rng):
    x = pt.matrix("x")
    w = pt.vector("w")

    def step(row, w):
        return row * w, (row**2).sum(), pt.outer(row, row)

    outs = scan(step, sequences=[x], non_sequences=[w])
    compare_onnx_and_py([x, w], outs, [rng.normal(size=(5, 3)), rng.normal(size=3)])


def test_nit_sot_and_sit_sot_mixed_with_empty_sequences(rng):
    x = pt.matrix("x")
    s0 = pt.vector("s0")
    total, rows = scan(lambda row, acc: (acc + row, acc.sum() * row), sequences=[x], outputs_info=[s0, None])
    for length in (4, 1, 0):
        compare_onnx_and_py([x, s0], [total, rows], [rng.normal(size=(length, 3)), rng.normal(size=3)])


@pytest.mark.parametrize("taps", [(-2, -1), (-3, -1), (-3, -2, -1)])
def test_mit_sot(taps, rng):
    init = pt.vector("init")
    n = pt.lscalar("n")
    weights = [1.0, -0.5, 0.25][: len(taps)]

    def step(*args):
        return sum(w * a for w, a in zip(weights, args)) + 1

    ys = scan(step, outputs_info=[dict(initial=init, taps=list(taps))], n_steps=n)
    depth = -min(taps)
    for steps in (7, 1, 0):
        compare_onnx_and_py([init, n], [ys], [rng.normal(size=depth), np.int64(steps)])


def test_mit_sot_matrix_rows_and_sit_sot_together(rng):
    init = pt.matrix("init")
    s0 = pt.scalar("s0")
    a, b = scan(
        lambda m2, m1, s: (m1 * 0.5 + m2 * s, s + m1.sum()),
        outputs_info=[dict(initial=init, taps=[-2, -1]), s0],
        n_steps=5,
    )
    compare_onnx_and_py([init, s0], [a, b], [rng.normal(size=(2, 3)), np.float64(0.1)])


def test_sequence_taps(rng):
    x = pt.vector("x")
    s0 = pt.scalar("s0")
    # A recurrence keeps the taps inside the loop (no push-out).
    ys = scan(
        lambda before, now, after, prev: prev * 0.5 + before - 2 * now + after,
        sequences=[dict(input=x, taps=[-1, 0, 2])],
        outputs_info=[s0],
    )
    compare_onnx_and_py([x, s0], [ys], [rng.normal(size=8), np.float64(1.0)])


def test_symbolic_n_steps_with_and_without_sequences(rng):
    x = pt.vector("x")
    n = pt.lscalar("n")
    s0 = pt.scalar("s0")
    with_seq = scan(lambda xt, prev: prev + xt, sequences=[x], outputs_info=[s0], n_steps=n)
    without_seq = scan(lambda prev: prev * 1.5, outputs_info=[s0], n_steps=n)
    for steps in (3, 5, 0):
        compare_onnx_and_py([x, n, s0], [with_seq, without_seq], [rng.normal(size=5), np.int64(steps), np.float64(2)])


def test_bad_n_steps_fail_like_pytensor(rng):
    x = pt.vector("x")
    n = pt.lscalar("n")
    s0 = pt.scalar("s0")
    ys = scan(lambda xt, prev: prev + xt, sequences=[x], outputs_info=[s0], n_steps=n)
    fn = pytensor.function([x, n, s0], ys, mode="ONNX")
    reference = py_function([x, n, s0], ys)
    with pytest.raises(ValueError, match="shorter"):
        fn(rng.normal(size=3), np.int64(4), np.float64(0))
    with pytest.raises(ValueError):
        reference(rng.normal(size=3), np.int64(4), np.float64(0))
    # PyTensor's scan() wraps n_steps in a guard of its own; the Loop checks too.
    without_seq = scan(lambda prev: prev * 1.5, outputs_info=[s0], n_steps=n)
    fn = pytensor.function([n, s0], without_seq, mode="ONNX")
    with pytest.raises((IndexError, ValueError, RuntimeError)):
        fn(np.int64(-2), np.float64(0))


def test_go_backwards(rng):
    x = pt.matrix("x")
    s0 = pt.vector("s0")
    ys = scan(lambda row, prev: prev * 0.9 + row, sequences=[x], outputs_info=[s0], go_backwards=True)
    compare_onnx_and_py([x, s0], [ys], [rng.normal(size=(5, 2)), rng.normal(size=2)])


def test_while_loop(rng):
    s0 = pt.scalar("s0")
    limit = pt.scalar("limit")

    def step(prev, limit):
        new = prev * 2
        return [new, new + 1], until(new > limit)

    doubled, plus_one = scan(step, outputs_info=[s0, None], non_sequences=[limit], n_steps=20)
    for limit_value in (100.0, 1e9, 0.5):
        fn, _ = compare_onnx_and_py([s0, limit], [doubled, plus_one], [np.float64(1.0), np.float64(limit_value)])
    assert all(info.as_while for info in scan_info(fn))


def test_while_loop_with_sequences_and_mit_sot(rng):
    x = pt.vector("x")
    init = pt.vector("init")

    def step(xt, m2, m1):
        new = m1 + m2 * xt
        return new, until(pt.abs(new) > 50)

    ys = scan(step, sequences=[x], outputs_info=[dict(initial=init, taps=[-2, -1])])
    compare_onnx_and_py([x, init], [ys, ys[-1]], [np.linspace(1, 3, 12), np.array([1.0, 2.0])])


def test_shared_variables_read_and_updated_in_the_body(rng):
    w = pytensor.shared(np.float64(2.0), name="w")
    counter = pytensor.shared(np.int64(0), name="counter")
    x = pt.vector("x")

    def step(xt, prev):
        return prev * w + xt, {counter: counter + 1}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ys, updates = pytensor.scan(step, sequences=[x], outputs_info=[pt.constant(np.float64(0))])
    value = rng.normal(size=4)
    fn = pytensor.function([x], ys, updates=updates, mode="ONNX")
    for call in range(1, 3):
        np.testing.assert_allclose(fn(value), _ar(value, 2.0), rtol=1e-14)
        assert counter.get_value() == 4 * call
    w.set_value(np.float64(-1.0))
    np.testing.assert_allclose(fn(value), _ar(value, -1.0), rtol=1e-14)


def _ar(x, a):
    out, prev = [], 0.0
    for xt in x:
        prev = prev * a + xt
        out.append(prev)
    return np.array(out)


def test_nested_scans(rng):
    x = pt.matrix("x")
    s0 = pt.scalar("s0")

    def outer_step(row, prev):
        inner = scan(lambda v, acc: acc * 0.5 + v, sequences=[row], outputs_info=[prev])
        return inner[-1] + inner.sum()

    ys = scan(outer_step, sequences=[x], outputs_info=[s0])
    fn, _ = compare_onnx_and_py([x, s0], [ys], [rng.normal(size=(4, 3)), np.float64(0.3)])
    (loop,) = [node for node in fn.maker.linker.onnx_model.graph.node if node.op_type == "Loop"]
    body = loop.attribute[0].g
    assert "Loop" in [node.op_type for node in body.node]


@pytest.mark.parametrize("select", ["last", "last_three", "second_last", "first_after_init"])
def test_partly_used_outputs_scan_save_mem(select, rng):
    x = pt.vector("x")
    s0 = pt.scalar("s0")
    init = pt.vector("init")
    sit, mit, nit = scan(
        lambda xt, prev, m2, m1: (prev * 0.5 + xt, m1 - m2 * 0.1 + xt, xt * prev),
        sequences=[x],
        outputs_info=[s0, dict(initial=init, taps=[-2, -1]), None],
    )
    pick = {
        "last": lambda v: v[-1],
        "last_three": lambda v: v[-3:],
        "second_last": lambda v: v[-2],
        "first_after_init": lambda v: v[0],
    }[select]
    outputs = [pick(sit), pick(mit), pick(nit)]
    for length in (9, 3):
        compare_onnx_and_py([x, s0, init], outputs, [rng.normal(size=length), np.float64(1), rng.normal(size=2)])


def test_ifelse_and_assert_inside_scan(rng):
    from pytensor.raise_op import Assert

    x = pt.vector("x")
    s0 = pt.scalar("s0")

    def step(xt, prev):
        checked = Assert("prev must be finite")(prev, pt.lt(pt.abs(prev), np.inf))
        return ifelse(xt > 0, checked + xt, checked * 0.5)

    ys = scan(step, sequences=[x], outputs_info=[s0])
    compare_onnx_and_py([x, s0], [ys], [rng.normal(size=6), np.float64(1.0)])
    fn = pytensor.function([x, s0], ys, mode="ONNX")
    with pytest.raises(AssertionError, match="prev must be finite"):
        fn(rng.normal(size=3), np.float64(np.inf))


def test_scan_inside_an_ifelse_branch(rng):
    c = pt.scalar("c")
    x = pt.vector("x")
    ys = scan(lambda xt, prev: prev * 0.5 + xt, sequences=[x], outputs_info=[pt.constant(np.float64(0))])
    y = ifelse(c > 0, ys.sum(), x.sum())
    for cond in (1.0, -1.0):
        compare_onnx_and_py([c, x], [y], [np.float64(cond), rng.normal(size=4)])


def test_export_of_a_symbolic_scan_with_symbolic_dims(rng):
    x = pt.matrix("x")
    s0 = pt.vector("s0")
    ys = scan(lambda row, prev: pt.tanh(prev + row), sequences=[x], outputs_info=[s0])
    model = export_onnx([x, s0], [ys])
    dims = [d.dim_param or d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    assert all(isinstance(d, str) for d in dims)
    compare_onnx_and_py([x, s0], [ys], [rng.normal(size=(3, 4)), rng.normal(size=4)])
    compare_onnx_and_py([x, s0], [ys], [rng.normal(size=(7, 2)), rng.normal(size=2)])


def test_scan_carrying_a_random_generator_is_unsupported():
    from pytensor.graph.fg import FunctionGraph

    from pytensor_onnx import _core
    from pytensor_onnx.dispatch import onnx_funcify

    rng_shared = pytensor.shared(np.random.default_rng(0))
    x = pt.vector("x")

    def step(xt, prev, rng):
        next_rng, draw = pt.random.normal(rng=rng).owner.outputs
        return prev + xt + draw, {rng: next_rng}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ys, updates = pytensor.scan(step, sequences=[x], outputs_info=[pt.constant(np.float64(0))],
                                    non_sequences=[rng_shared])
    (node,) = [n for n in FunctionGraph([x, rng_shared], [ys, *updates.values()]).apply_nodes if isinstance(n.op, Scan)]
    g = _core.GraphBuilder(18)
    values = [g.input(f"i{k}", v.type.dtype, [None] * v.type.ndim) if hasattr(v.type, "ndim") else None
              for k, v in enumerate(node.inputs)]
    with pytest.raises(NotImplementedError, match="Scan.*carries.*RandomGeneratorType"):
        onnx_funcify(node.op, node, g, *values)


@pytest.mark.parametrize("select", ["last", "last_two"])
def test_buffer_of_static_length_carries_only_the_taps(select, rng):
    # With a buffer PyTensor knows holds just the taps, the Loop carries the
    # last values and stacks nothing.
    init = pt.tensor("init", shape=(2,))
    n = pt.lscalar("n")
    fib = scan(lambda f2, f1: f1 + 0.5 * f2, outputs_info=[dict(initial=init, taps=[-2, -1])], n_steps=n)
    out = fib[-1] if select == "last" else fib[-2:]
    for steps in (6, 1) if select == "last" else (6, 1, 0):  # fib[-1] of no steps is an IndexError
        fn, _ = compare_onnx_and_py([init, n], [out], [rng.normal(size=2), np.int64(steps)])
    (scan_node,) = [node for node in fn.maker.fgraph.apply_nodes if isinstance(node.op, Scan)]
    (loop,) = [node for node in fn.maker.linker.onnx_model.graph.node if node.op_type == "Loop"]
    if scan_node.inputs[1].type.shape[0] == 2:
        assert len(loop.output) == 2  # the two carried taps, no stacked history


@pytest.mark.parametrize("opset", OPSETS)
def test_every_tap_kind_in_one_scan_across_opsets(opset, rng):
    x = pt.vector("x")
    s0 = pt.scalar("s0")
    init = pt.vector("init")
    counter = pytensor.shared(np.float64(0.0), name="counter")

    def step(before, now, prev, m2, m1):
        return (prev * 0.5 + before - now, m1 - 0.25 * m2 + now, prev * now), {counter: counter + now}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        (sit, mit, nit), updates = pytensor.scan(
            step,
            sequences=[dict(input=x, taps=[-1, 0])],
            outputs_info=[s0, dict(initial=init, taps=[-2, -1]), None],
        )
    outputs = [sit, mit, nit, *updates.values()]
    compare_onnx_and_py([x, s0, init], outputs, [rng.normal(size=6), np.float64(1), rng.normal(size=2)],
                        opset_version=opset)


@pytest.mark.parametrize("select", ["last", "last_three"])
def test_export_of_a_function_compiled_for_the_c_backend(select, rng):
    # The C backend's rewrites keep one extra slot in shrunk buffers
    # (preallocation) and make the Scan work in place; the export still
    # gives PyTensor's results.
    from pytensor.compile.mode import Mode

    from pytensor_onnx import export_function_onnx
    from helpers import run_model

    x = pt.vector("x")
    s0 = pt.scalar("s0")
    init = pt.vector("init")
    sit, mit = scan(lambda xt, prev, m2, m1: (prev * 0.5 + xt, m1 - 0.25 * m2 + xt), sequences=[x],
                    outputs_info=[s0, dict(initial=init, taps=[-2, -1])])
    pick = (lambda v: v[-1]) if select == "last" else (lambda v: v[-3:])
    c_fn = pytensor.function([x, s0, init], [pick(sit), pick(mit), sit.sum()],
                             mode=Mode(linker="cvm", optimizer="fast_run"))
    model = export_function_onnx(c_fn)
    values = [rng.normal(size=7), np.array(0.5), rng.normal(size=2)]
    for got, want in zip(run_model(model, *values), c_fn(*values)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
