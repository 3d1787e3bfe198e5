"""Softmax and LogSoftmax (dispatch/special.py)."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
import scipy.special
from pytensor.tensor.special import LogSoftmax, Softmax, log_softmax, softmax

from pytensor_onnx import compat
from pytensor_onnx.testing import compare_onnx_and_py

OPS = {"softmax": softmax, "log_softmax": log_softmax}


def assert_converted(fn, op_class):
    # The rule itself must have run: the op reaches conversion intact.
    assert any(isinstance(node.op, op_class) for node in fn.maker.fgraph.apply_nodes)


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3, None, (0, 2), (1, 2), (0, 1, 2), (-1, 0)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_softmax_axes(name, axis, dtype, rng):
    x = pt.tensor("x", dtype=dtype, shape=(None, None, None))
    if isinstance(axis, tuple) and not compat.SOFTMAX_TAKES_AXIS_TUPLES:
        with pytest.raises(TypeError, match="axis must be an integer"):
            OPS[name](x, axis=axis)  # PyTensor 2.38 normalizes over one axis or all
        return
    out = OPS[name](x, axis=axis)
    value = rng.normal(scale=5, size=(2, 3, 4)).astype(dtype)
    # log_softmax is x - logsumexp(x): near the largest entries the two nearly
    # cancel, so the result carries an absolute rounding error of a few ulps
    # of |x|, not a relative one (float32: 1e-7 off -0.0098 is 1.2e-5 relative).
    atol = 16 * np.finfo(dtype).eps * np.abs(value).max() if name == "log_softmax" else None
    fn, _ = compare_onnx_and_py([x], [out], [value], atol=atol)
    assert_converted(fn, Softmax if name == "softmax" else LogSoftmax)


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("axis", [0, -1, None])
def test_softmax_infinities_and_nan(name, axis):
    # -inf entries get probability 0 (log: -inf); an all -inf or a +inf or NaN
    # slice is NaN throughout (x - max(x) is NaN there), as in PyTensor's graph.
    inf, nan = np.inf, np.nan
    values = np.array(
        [[-inf, 0.0, 1.0, -inf],
         [-inf, -inf, -inf, -inf],
         [inf, 1.0, 2.0, 3.0],
         [nan, 1.0, 2.0, 3.0],
         [1e300, -1e300, 0.0, 700.0]]
    )  # fmt: skip
    x = pt.tensor("x", dtype="float64", shape=(None, None))
    fn, _ = compare_onnx_and_py([x], [OPS[name](x, axis=axis)], [values])


@pytest.mark.parametrize("name", list(OPS))
def test_softmax_large_values_stable(name):
    x = pt.tensor("x", dtype="float32", shape=(None,))
    compare_onnx_and_py([x], [OPS[name](x, axis=0)], [np.array([1000.0, 999.0, -1000.0, 0.0], "float32")])


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("value", [0.0, -3.0, np.inf, -np.inf, np.nan])
def test_softmax_zero_d(name, value):
    # One finite element normalizes to 1 (log: 0); ±inf and NaN give NaN
    # (x - max(x) is inf - inf), as in SciPy.
    x = pt.tensor("x", dtype="float64", shape=())
    _, result = compare_onnx_and_py([x], [OPS[name](x)], [np.array(value)])
    want = getattr(scipy.special, name)(np.array(value))
    np.testing.assert_array_equal(result, want)


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("axis", [0, 1, None])
def test_softmax_empty_and_size_one(name, axis):
    x = pt.tensor("x", dtype="float64", shape=(None, None))
    compare_onnx_and_py([x], [OPS[name](x, axis=axis)], [np.array([[2.0, -1.0, 5.0]])])
    if axis == 1:
        compare_onnx_and_py([x], [OPS[name](x, axis=axis)], [np.zeros((0, 3))])
    else:
        # Normalizing over an empty axis: PyTensor's Python implementation
        # raises (the max of nothing); there is nothing to normalize, and
        # ONNX returns the empty result.
        fn = pytensor.function([x], OPS[name](x, axis=axis), mode="ONNX")
        result = fn(np.zeros((0, 3)))
        assert result.shape == (0, 3) and result.dtype == np.float64


@pytest.mark.parametrize("name", list(OPS))
def test_softmax_among_element_wise_work_is_stages_of_one_kernel_node(name, rng):
    # Mode ONNX: PyMC's simplex transform puts a softmax between element-wise
    # work. Built from the Reduce kernel's max (NaN propagates) and
    # element-wise ops, it merges with the kernel nodes around it, where a
    # Softmax or ReduceMax node of ONNX Runtime's kept them apart.
    x = pt.vector("x")
    out = (OPS[name](2.0 * x) * x).sum()
    inf, nan = np.inf, np.nan
    for value in [rng.normal(size=7), np.array([1.0, nan, 2.0]), np.array([-inf, 0.0, 1.0]), np.array([inf, 0.0]),
                  np.array([3.0]), rng.normal(size=3000)]:
        fn, _ = compare_onnx_and_py([x], [out], [value])
        kinds = [n.op_type for n in fn.maker.linker.onnx_model.graph.node]
        assert kinds == ["Elemwise_float64"], kinds
        default = pytensor.function([x], out)  # (PyTensor's default mode)
        np.testing.assert_allclose(fn(value), default(value), rtol=1e-13)


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("axis", [0, 1, None, (0, 1)])
def test_softmax_opset13(name, axis, rng):
    x = pt.tensor("x", dtype="float32", shape=(None, None))
    if isinstance(axis, tuple) and not compat.SOFTMAX_TAKES_AXIS_TUPLES:
        axis = None  # the same axes, as PyTensor 2.38 spells them
    compare_onnx_and_py([x], [OPS[name](x, axis=axis)], [rng.normal(size=(3, 4)).astype("float32")], opset_version=13)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int64", "uint8", "uint32"])
def test_softmax_of_ints(dtype, rng):
    # PyTensor upgrades integer inputs to a float output, after computing
    # x - max(x) in the integer dtype (so uint8 wraps: NaN where x < max).
    # (log_softmax of ints is not compared: PyTensor's own Python evaluation
    # of it never returns, its local_log_sum_exp rewrite loops there.)
    # PyTensor 2.38 types the result as the integer dtype (and its C code
    # refuses it): conversion raises a clear NotImplementedError there.
    x = pt.tensor("x", dtype=dtype, shape=(None, None))
    info = np.iinfo(dtype)
    values = np.array([[0, 5, 2], [info.min, info.max, 3]], dtype=dtype)
    outputs = [softmax(x, axis=1), softmax(x, axis=None), softmax(x, axis=0)]
    if outputs[0].dtype == dtype:
        with pytest.raises(NotImplementedError, match="Cast the input to a float dtype"):
            pytensor.function([x], outputs, mode="ONNX")
        return
    compare_onnx_and_py([x], outputs, [values])


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize(
    "shape, axis, values",
    [
        ((None, 1), 1, [[np.inf], [np.nan]]),
        ((2, 1), -1, [[-np.inf], [3.0]]),
        ((1, 1), None, [[np.nan]]),
        ((1, None), 0, [[np.inf, np.nan, 2.0]]),
    ],
)
def test_softmax_over_static_size_one_axes(name, shape, axis, values):
    # Size-1 axes known statically: 1 (log: 0) for finite values, NaN for inf and NaN.
    x = pt.tensor("x", dtype="float64", shape=shape)
    compare_onnx_and_py([x], [OPS[name](x, axis=axis)], [np.array(values)])


def test_softmax_gradient_graph(rng):
    # The gradient graph (softmax and its derivative) runs as well.
    x = pt.tensor("x", dtype="float64", shape=(None, None))
    cost = (log_softmax(x, axis=1) * pt.arange(3)).sum()
    compare_onnx_and_py([x], [pt.grad(cost, x)], [rng.normal(size=(2, 3))])


@pytest.mark.parametrize("axis", [0, 1, -1, None])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_training_through_softmax(axis, dtype, rng):
    # PyTensor 2.38 differentiates softmax with its SoftmaxGrad Op; 3.x
    # differentiates the softmax graph itself. Both must train.
    x = pt.tensor("x", dtype=dtype, shape=(None, None))
    w = pt.tensor("w", dtype=dtype, shape=(None, None))
    cost = (softmax(x, axis=axis) * w).sum() + (softmax(2 * x, axis=axis) ** 2).sum()
    values = [rng.normal(size=(3, 4)).astype(dtype), rng.normal(size=(3, 4)).astype(dtype)]
    fn, _ = compare_onnx_and_py([x, w], [pt.grad(cost, x)], values, rtol=1e-4 if dtype == "float32" else None)
    if compat.SoftmaxGrad is not None:
        assert_converted(fn, compat.SoftmaxGrad)
