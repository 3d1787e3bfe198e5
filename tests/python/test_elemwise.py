"""Elemwise (broadcasting, 0-d, empty, mixed dtypes), DimShuffle, constants and
identity-like ops (dispatch/elemwise.py, dispatch/basic.py)."""

from functools import partial

import numpy as np
import pytensor
import pytensor.scalar as ps
import pytensor.tensor as pt
import pytest
from pytensor.compile.ops import DeepCopyOp, ViewOp, view_op
from pytensor.tensor.elemwise import DimShuffle, Elemwise

import pytensor_onnx
from pytensor_onnx.testing import compare_onnx_and_py

from helpers import ALL_DTYPES
from helpers import sample as _sample

# Floats here spread wider than the shared default (standard deviation 3, not 1).
sample = partial(_sample, scale=3.0)


def compare_without_rewrites(graph_inputs, graph_outputs, test_inputs, *, node_type=None):
    """Export the graph exactly as built (no PyTensor rewrites) and compare with the py linker.

    Needed for ops that PyTensor's rewrites always replace (fill, tensor_copy,
    ViewOp), but that a graph built by hand or a function compiled in another
    mode still contains. Checks that ``node_type`` is really in the graph.
    """
    if node_type is not None:
        graph = pytensor.graph.fg.FunctionGraph(graph_inputs, graph_outputs, clone=False)
        assert any(node_type(node) for node in graph.apply_nodes)
    compare_onnx_and_py(graph_inputs, graph_outputs, test_inputs, optimize=False)


# Broadcasting


@pytest.mark.parametrize(
    "x_shape, y_shape",
    [
        ((), ()),
        ((), (4,)),
        ((3,), ()),
        ((2, 3, 4), (2, 3, 4)),
        ((3, 1, 4), (1, 5, 1)),
        ((1, 1, 1), (2, 3, 4)),
        ((2, 3, 4), ()),
        ((0, 3), (1, 3)),
        ((0,), ()),
        ((2, 0, 4), (2, 1, 4)),
    ],
)
@pytest.mark.parametrize("dtype", ["float64", "int8", "uint64", "bool"])
def test_broadcasting(x_shape, y_shape, dtype, rng):
    # Static shapes with 1s broadcast; the rule relies on ONNX's NumPy broadcasting.
    x = pt.tensor("x", dtype=dtype, shape=x_shape)
    y = pt.tensor("y", dtype=dtype, shape=y_shape)
    outs = [x + y, x * y, pt.maximum(x, y), pt.eq(x, y), pt.switch(pt.lt(x, y), x, y)]
    compare_onnx_and_py([x, y], outs, [sample(rng, x_shape, dtype), sample(rng, y_shape, dtype)])


def test_broadcasting_unknown_dims(rng):
    # Dims unknown to PyTensor stay symbolic, each with its own name.
    x = pt.tensor("x", dtype="float32", shape=(None, 1, None))
    y = pt.tensor("y", dtype="int16", shape=(1, None, None))
    z = pt.tensor("z", dtype="float32", shape=(None,))
    out = (x * y + z) // 2
    for shapes in [((2, 1, 3), (1, 4, 3), (3,)), ((1, 1, 1), (1, 1, 1), (1,)), ((0, 1, 2), (1, 3, 2), (2,))]:
        values = [sample(rng, shapes[0], "float32"), sample(rng, shapes[1], "int16"), sample(rng, shapes[2], "float32")]
        compare_onnx_and_py([x, y, z], [out], values)


def test_mixed_dtypes_broadcast(rng):
    a = pt.tensor("a", dtype="int8", shape=(3, 1))
    b = pt.tensor("b", dtype="float32", shape=(1, 4))
    c = pt.tensor("c", dtype="uint8", shape=())
    d = pt.tensor("d", dtype="bool", shape=(4,))
    outs = [a * b, a + c, c - a, a // c, d + a, pt.maximum(d, c), b**a, pt.lt(c, a)]
    values = [
        sample(rng, (3, 1), "int8"),
        sample(rng, (1, 4), "float32"),
        np.array(200, "uint8"),
        np.array([True, False, True, True]),
    ]
    _, results = compare_onnx_and_py([a, b, c, d], outs, values)
    assert [r.dtype.name for r in results] == ["float32", "int16", "int16", "int16", "int8", "uint8", "float32", "bool"]


def test_many_inputs_one_elemwise(rng):
    # Canonicalization merges x + y + z + w into one Add with four inputs,
    # computed in the output dtype. (That also drops the int8 wrapping of
    # x0 * x1 that the unrewritten graph has; PyTensor's C backend does the
    # same, so values here stay clear of int8 overflow.)
    dtypes = ["int8", "int8", "int16", "float32"]
    xs = [pt.tensor(f"x{i}", dtype=dtype, shape=(None, 3)) for i, dtype in enumerate(dtypes)]
    total = xs[0] + xs[1] + xs[2] + xs[3]
    product = xs[0] * xs[1] * xs[2]
    fn, _ = compare_onnx_and_py(xs, [total, product], [rng.integers(-11, 12, (2, 3)).astype(d) for d in dtypes])
    assert any(len(node.inputs) == 4 for node in fn.maker.fgraph.apply_nodes)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_zero_d(dtype, rng):
    x = pt.tensor("x", dtype=dtype, shape=())
    y = pt.tensor("y", dtype=dtype, shape=())
    outs = [x + y, x * y, pt.maximum(x, y), pt.minimum(x, y), pt.neq(x, y), pt.switch(x, y, x)]
    if dtype != "bool":
        outs += [x - y, x // y, x % y, -x, abs(x), pt.sign(x)]
    compare_onnx_and_py([x, y], outs, [sample(rng, (), dtype), sample(rng, (), dtype)])


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool"])
def test_empty(dtype, rng):
    x = pt.tensor("x", dtype=dtype, shape=(None, 3))
    y = pt.tensor("y", dtype=dtype, shape=(None, 1))
    outs = [x + y, pt.maximum(x, y), pt.exp(x), pt.ge(x, y), pt.cast(x, "float64")]
    compare_onnx_and_py([x, y], outs, [sample(rng, (0, 3), dtype), sample(rng, (0, 1), dtype)])


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint16", "bool", "float32"])
def test_elemwise_opset13(dtype, rng):
    # Add on int8 and Where on int16/bool need the builder's cast-around at 13.
    x = pt.tensor("x", dtype=dtype, shape=(None, 1))
    y = pt.tensor("y", dtype=dtype, shape=(4,))
    outs = [x + y, x * y, pt.maximum(x, y), pt.switch(pt.gt(x, y), x, y), pt.eq(x, y)]
    if dtype != "bool":
        outs += [x - y, x // y, x % y, abs(x)]
    compare_onnx_and_py([x, y], outs, [sample(rng, (3, 1), dtype), sample(rng, (4,), dtype)], opset_version=13)


# DimShuffle


DIMSHUFFLES = [
    pytest.param((None, None, None), (2, 0, 1), (2, 3, 4), id="transpose"),
    pytest.param((None, None), (1, 0), (2, 3), id="matrix-T"),
    pytest.param((None, None), ("x", 0, "x", 1), (2, 3), id="expand"),
    pytest.param((None, None), (0, 1, "x"), (2, 3), id="expand-last"),
    pytest.param((1, None, 1), (1,), (1, 5, 1), id="drop"),
    pytest.param((None, 1, None), (2, "x", 0), (3, 1, 4), id="drop-transpose-expand"),
    pytest.param((1, None, None), ("x", 2, 1, "x"), (1, 3, 4), id="drop-first-transpose-expand"),
    pytest.param((), ("x", "x"), (), id="0d-in"),
    pytest.param((1, 1), (), (1, 1), id="0d-out"),
    pytest.param((1,), ("x",), (1,), id="drop-and-expand"),
    pytest.param((None, None, None), (1, 2, 0), (0, 2, 3), id="empty-transpose"),
    pytest.param((1, None, 1, None), (1, 3), (1, 4, 1, 2), id="drop-in-place"),
    pytest.param((1, None, 1, None), (3, 1), (1, 4, 1, 2), id="drop-and-transpose"),
]


@pytest.mark.parametrize("shape, order, value_shape", DIMSHUFFLES)
@pytest.mark.parametrize("dtype", ["float64", "int8", "bool"])
def test_dimshuffle(shape, order, value_shape, dtype, rng):
    x = pt.tensor("x", dtype=dtype, shape=shape)
    out = x.dimshuffle(*order)
    values = [sample(rng, value_shape, dtype)]
    compare_onnx_and_py([x], [out], values)
    compare_without_rewrites([x], [out], values, node_type=lambda n: isinstance(n.op, DimShuffle))


@pytest.mark.parametrize("shape, order, value_shape", DIMSHUFFLES)
def test_dimshuffle_opset13(shape, order, value_shape, rng):
    # Squeeze/Unsqueeze take axes as an input from opset 13 (the builder adapts).
    x = pt.tensor("x", dtype="float32", shape=shape)
    compare_onnx_and_py([x], [x.dimshuffle(*order)], [sample(rng, value_shape, "float32")], opset_version=13)


def test_dimshuffle_feeds_broadcasting(rng):
    # A row vector against a column vector: y.dimshuffle(0, "x") broadcasts.
    x = pt.tensor("x", dtype="float32", shape=(None,))
    y = pt.tensor("y", dtype="int32", shape=(None,))
    out = x.dimshuffle("x", 0) - y.dimshuffle(0, "x")
    compare_onnx_and_py([x, y], [out, out.T], [sample(rng, (4,), "float32"), sample(rng, (3,), "int32")])


def test_dropping_axes_where_the_rest_stay_in_order_is_one_squeeze(rng):
    # The dropped axes have length 1: no Transpose (a copy) in front of the Squeeze.
    x = pt.tensor("x", dtype="float64", shape=(1, None, 1, None))
    out = x.dimshuffle(1, 3)
    fn, _ = compare_onnx_and_py([x], [out], [sample(rng, (1, 4, 1, 2), "float64")])
    assert [n.op_type for n in fn.maker.linker.onnx_model.graph.node] == ["Squeeze"]
    assert [n.op_type for n in pytensor_onnx.export_onnx([x], [out]).graph.node] == ["Squeeze"]


def test_dimshuffle_unrewritten(rng):
    x = pt.tensor("x", dtype="uint16", shape=(1, None, 1, None))
    out = x.dimshuffle(3, "x", 1)
    values = [sample(rng, (1, 2, 1, 3), "uint16")]
    compare_without_rewrites([x], [out], values, node_type=lambda n: isinstance(n.op, DimShuffle))


# Constants, copies and views


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(), (3,), (0, 2)])
def test_constant_output(dtype, shape, rng):
    # An output that is a constant: DeepCopyOp of an initializer.
    x = pt.tensor("x", dtype="float32", shape=(None,))
    value = sample(rng, shape, dtype)
    fn, (result, copy) = compare_onnx_and_py([x], [pt.constant(value), x], [np.ones(2, "float32")])
    assert any(isinstance(node.op, DeepCopyOp) for node in fn.maker.fgraph.apply_nodes)
    np.testing.assert_array_equal(result, value)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_constant_operand(dtype, rng):
    x = pt.tensor("x", dtype=dtype, shape=(None,))
    value = sample(rng, (3,), dtype)
    c = pt.constant(value)
    outs = [pt.maximum(x, c), pt.eq(c, x)] + ([x + c] if dtype == "bool" else [x - c])
    compare_onnx_and_py([x], outs, [sample(rng, (3,), dtype)])


@pytest.mark.parametrize("dtype", ["uint64", "int64", "float64"])
def test_constant_extremes(dtype):
    # Initializers keep every bit (uint64 above 2**63, int64 near its limits, NaN/inf).
    x = pt.tensor("x", dtype=dtype, shape=(None,))
    values = {
        "uint64": [2**64 - 1, 2**63, 1],
        "int64": [-(2**63), 2**63 - 1, 2**53 + 1],
        "float64": [np.nan, -np.inf, 5e-324],
    }[dtype]
    c = pt.constant(np.array(values, dtype=dtype))
    _, (_, _, got) = compare_onnx_and_py([x], [pt.maximum(x, c), pt.eq(x, c), c], [np.zeros(3, dtype)])
    # Every bit, not values within a tolerance: the smallest subnormal
    # flushed to 0, or a NaN payload lost, is a changed constant.
    want = np.array(values, dtype=dtype)
    np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))


def test_same_output_twice_and_input_as_output(rng):
    x = pt.tensor("x", dtype="int16", shape=(None,))
    y = x * 2
    compare_onnx_and_py([x], [y, y, x], [sample(rng, (4,), "int16")])


def test_identity_and_view_ops_unrewritten(rng):
    x = pt.tensor("x", dtype="float32", shape=(None, 2))
    y = pt.tensor("y", dtype="int8", shape=(2,))
    copied = pt.tensor_copy(x)
    viewed = view_op(y)
    compare_onnx_and_py([x, y], [copied, viewed], [sample(rng, (3, 2), "float32"), sample(rng, (2,), "int8")])
    compare_without_rewrites(
        [x, y], [copied, viewed], [sample(rng, (3, 2), "float32"), sample(rng, (2,), "int8")],
        node_type=lambda n: isinstance(n.op, ViewOp),
    )  # fmt: skip
    compare_without_rewrites(
        [x], [copied + 1], [sample(rng, (3, 2), "float32")],
        node_type=lambda n: isinstance(n.op, Elemwise) and type(n.op.scalar_op).__name__ == "Identity",
    )  # fmt: skip


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint64", "bool"])
def test_fill_unrewritten(dtype, rng):
    # pt.fill / second(x, y): y broadcast to x's shape (rewrites turn it into Alloc).
    x = pt.tensor("x", dtype="float64", shape=(None, None))
    y = pt.tensor("y", dtype=dtype, shape=(None,))
    out = pt.second(x, y)
    values = [np.zeros((2, 3)), sample(rng, (3,), dtype)]
    compare_onnx_and_py([x, y], [out], values)
    compare_without_rewrites(
        [x, y], [out], values,
        node_type=lambda n: isinstance(n.op, Elemwise) and type(n.op.scalar_op).__name__ == "Second",
    )  # fmt: skip


@pytest.mark.parametrize("dtype", ["int8", "uint32", "bool"])
def test_isnan_isinf_of_ints_unrewritten(dtype, rng):
    # Integers are never NaN or inf (pt.isnan builds zeros for them; the Elemwise
    # itself appears in hand-built graphs).
    x = pt.tensor("x", dtype=dtype, shape=(None, 2))
    outs = [Elemwise(ps.isnan)(x), Elemwise(ps.isinf)(x)]
    compare_without_rewrites([x], outs, [sample(rng, (3, 2), dtype)])
    compare_without_rewrites([x], outs, [sample(rng, (0, 2), dtype)])
