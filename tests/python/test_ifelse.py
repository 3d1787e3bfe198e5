"""IfElse -> ONNX If: lazy branches, several outputs, nesting, any scalar condition."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from helpers import ALL_DTYPES, OPSETS, sample
from pytensor.compile.builders import OpFromGraph

from pytensor_onnx import export_onnx
from pytensor_onnx.compat import IfElse, LazyIfElse, ifelse
from pytensor_onnx.testing import compare_onnx_and_py


def _if_nodes(graph):
    return [node for node in graph.node if node.op_type == "If"]


def _branch_op_types(node):
    return {attr.name: [n.op_type for n in attr.g.node] for attr in node.attribute}


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("taken", [True, False])
def test_ifelse_several_outputs_across_opsets(opset, taken, rng):
    c = pt.scalar("c")
    x = pt.matrix("x")
    v = pt.vector("v")
    outs = ifelse(c > 0, [pt.exp(x), v.sum(), v[::-1]], [x.T @ x, v.max(), v * 2])
    values = [np.float64(1.0 if taken else -1.0), rng.normal(size=(3, 3)), rng.normal(size=4)]
    compare_onnx_and_py([c, x, v], outs, values, opset_version=opset)


@pytest.mark.parametrize("cond_dtype", ALL_DTYPES)
def test_condition_of_any_dtype_is_true_unless_zero(cond_dtype, rng):
    c = pt.scalar("c", dtype=cond_dtype)
    x = pt.vector("x")
    y = ifelse(c, pt.exp(x), -x)
    x_value = rng.normal(size=3)
    for value in {0, 1, 5} if cond_dtype != "bool" else {0, 1}:
        compare_onnx_and_py([c, x], [y], [np.asarray(value, dtype=cond_dtype), x_value])


def test_nan_condition_is_true():
    c = pt.scalar("c")
    x = pt.vector("x")
    compare_onnx_and_py([c, x], [ifelse(c, x + 1, x - 1)], [np.float64(np.nan), np.zeros(2)])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_branch_values_of_every_dtype(dtype, rng):
    c = pt.scalar("c", dtype="bool")
    x = pt.tensor("x", dtype=dtype, shape=(None,))
    y = pt.tensor("y", dtype=dtype, shape=(None,))
    outs = ifelse(c, [x, y[:1]], [y, x[1:]])
    for cond in (True, False):
        compare_onnx_and_py([c, x, y], outs, [np.bool_(cond), sample(rng, 3, dtype), sample(rng, 2, dtype)])


def test_branches_of_different_shapes_and_symbolic_dims(rng):
    c = pt.lscalar("c")
    x = pt.matrix("x")
    y = ifelse(c, x[:, :2], pt.concatenate([x, x], axis=0))
    for cond in (0, 1):
        compare_onnx_and_py([c, x], [y], [np.int64(cond), rng.normal(size=(2, 5))])


def test_only_the_taken_branch_runs(rng):
    # The else branch indexes out of range when the then branch is taken:
    # had it run, ONNX Runtime would fail. Its work lives in the If branch.
    c = pt.scalar("c")
    x = pt.vector("x")
    i = pt.lscalar("i")
    y = ifelse(c > 0, pt.exp(x).sum(), x[i] * 2)
    fn = pytensor.function([c, x, i], y, mode="ONNX")
    x_value = rng.normal(size=3)
    np.testing.assert_allclose(fn(np.float64(1), x_value, np.int64(10)), np.exp(x_value).sum(), rtol=1e-14)
    assert fn(np.float64(-1), x_value, np.int64(1)) == x_value[1] * 2
    with pytest.raises(RuntimeError, match="ONNX Runtime failed"):
        fn(np.float64(-1), x_value, np.int64(10))
    graph = fn.maker.linker.onnx_model.graph
    (if_node,) = _if_nodes(graph)
    branches = _branch_op_types(if_node)
    # (exp(x).sum() is one kernel node in mode ONNX, Exp and ReduceSum without the kernels.)
    assert {"Exp", "Elemwise_float64"} & set(branches["then_branch"]) and "Gather" in branches["else_branch"]
    assert not {"Exp", "Gather"} & {n.op_type for n in graph.node}


def test_work_shared_by_both_branches_or_the_condition_stays_outside(rng):
    c = pt.scalar("c")
    x = pt.vector("x")
    shared_work = pt.exp(x)
    y = ifelse(shared_work.sum() > c, shared_work * 2, shared_work + 3)
    # The portable graph (the kernels would hide the Exp in a fused node).
    fn, _ = compare_onnx_and_py(
        [c, x], [y], [np.float64(3.0), rng.normal(size=3)], onnx_mode_kwargs={"kernels": False}
    )
    graph = fn.maker.linker.onnx_model.graph
    assert [n.op_type for n in graph.node].count("Exp") == 1
    (if_node,) = _if_nodes(graph)
    assert all("Exp" not in types for types in _branch_op_types(if_node).values())


def test_branch_work_also_used_outside_stays_correct(rng):
    c = pt.scalar("c")
    x = pt.vector("x")
    e = pt.exp(x)
    outs = [ifelse(c > 0, e.sum(), x.sum()), e]
    for cond in (1.0, -1.0):
        compare_onnx_and_py([c, x], outs, [np.float64(cond), rng.normal(size=3)])


def test_branches_reading_outer_values_and_nested_ifelse(rng):
    a = pt.scalar("a")
    b = pt.scalar("b")
    x = pt.vector("x")
    outer = x * 3  # used inside both nested levels
    inner = ifelse(b > 0, pt.exp(outer).sum(), (outer**2).sum())
    y = ifelse(a > 0, inner + outer.sum(), -inner)
    z = ifelse(a > 0, ifelse(b > 0, x[0], x[1]), ifelse(b > 0, x[2], x.sum()))
    for a_value in (1.0, -1.0):
        for b_value in (1.0, -1.0):
            compare_onnx_and_py([a, b, x], [y, z], [np.float64(a_value), np.float64(b_value), rng.normal(size=3)])


def test_nested_ifelse_is_lazy_at_every_level(rng):
    a = pt.scalar("a")
    b = pt.scalar("b")
    x = pt.vector("x")
    i = pt.lscalar("i")
    y = ifelse(a > 0, ifelse(b > 0, x[i], x.sum()), x.prod())
    fn = pytensor.function([a, b, x, i], y, mode="ONNX")
    x_value = rng.normal(size=3)
    # i is out of range: only the innermost then branch reads it.
    np.testing.assert_allclose(fn(np.float64(1), np.float64(-1), x_value, np.int64(7)), x_value.sum(), rtol=1e-14)
    np.testing.assert_allclose(fn(np.float64(-1), np.float64(1), x_value, np.int64(7)), x_value.prod(), rtol=1e-14)
    assert fn(np.float64(1), np.float64(1), x_value, np.int64(2)) == x_value[2]


def test_ifelse_as_view_and_named(rng):
    c = pt.scalar("c")
    x = pt.vector("x")
    y = pt.vector("y")
    op = IfElse(n_outs=2, as_view=True, name="my branch")
    outs = op(c, x + 1, y, y, x - 1, return_list=True)
    for cond in (0.0, 2.0):
        fn, _ = compare_onnx_and_py([c, x, y], outs, [np.float64(cond), rng.normal(size=3), rng.normal(size=3)],
                                    optimize=False)
    (if_node,) = _if_nodes(fn.maker.linker.onnx_model.graph)
    assert [attr.g.name for attr in if_node.attribute] == ["my_branch_then", "my_branch_else"]


def test_gradient_through_ifelse(rng):
    c = pt.scalar("c")
    x = pt.vector("x")
    y = ifelse(c > 0, (x**2).sum(), pt.exp(x).sum())
    grads = pytensor.grad(y, x)
    for cond in (1.0, -1.0):
        compare_onnx_and_py([c, x], [y, grads], [np.float64(cond), rng.normal(size=4)])


def test_export_without_graph_rewrites_computes_both_branches(rng):
    # Without the passes the branch work stays in the enclosing graph too
    # (not lazy, as PyTensor's non-lazy linkers); results are the same.
    c = pt.scalar("c")
    x = pt.vector("x")
    y = ifelse(c > 0, pt.exp(x), -x)
    for cond in (1.0, -1.0):
        compare_onnx_and_py([c, x], [y], [np.float64(cond), rng.normal(size=3)], optimize=False)
    model = export_onnx([c, x], [y], optimize=False)
    assert "Exp" in {n.op_type for n in model.graph.node}


@pytest.mark.skipif(LazyIfElse is None, reason="this PyTensor line has no LazyIfElse (3.3+)")
def test_lazy_ifelse(rng):
    c = pt.scalar("c")
    x = pt.vector("x")
    a, b = pt.vector("a"), pt.vector("b")
    true_branch = OpFromGraph([a, b], [pt.exp(a) + b, a.sum()])
    false_branch = OpFromGraph([a, b], [a - b, b.sum()])
    outs = LazyIfElse(true_branch, false_branch, [x.type, pt.dscalar().type])(c, x, x * 2, return_list=True)
    for cond in (1.0, 0.0):
        fn, _ = compare_onnx_and_py([c, x], outs, [np.float64(cond), rng.normal(size=3)], optimize=False)
    (if_node,) = _if_nodes(fn.maker.linker.onnx_model.graph)
    # (Its exp: ONNX's Exp, or a stage of a kernel node where the branch's
    # sum is a kernel node and its arithmetic merges into it.)
    then_ops = _branch_op_types(if_node)["then_branch"]
    assert "Exp" in then_ops or "Elemwise_float64" in then_ops, then_ops
