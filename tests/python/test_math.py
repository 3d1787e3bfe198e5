"""Reductions (Sum, Prod, Max, Min, All, Any, ProdWithoutZeros), Argmax, and Dot."""

import inspect
from functools import partial

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.math import Argmax, Dot, Max, Prod, ProdWithoutZeros, Sum

import pytensor_onnx
from pytensor_onnx.testing import compare_onnx_and_py

from helpers import ALL_DTYPES, INT_DTYPES, OPSETS, compare_raises, onnx_op_types, op_types
from helpers import sample as _sample

AXES = [None, 0, -1, (0, 2), (-1, -3), (2, 0, 1)]

# Floats here are uniform over [low, high), like the integers, not normal (some tests narrow the range).
sample = partial(_sample, floats="uniform")


# --- CAReduce ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("reduction", [pt.sum, pt.max, pt.min, pt.all, pt.any])
def test_reduction_axes_and_keepdims(reduction, dtype, rng):
    x = pt.tensor("x", dtype=dtype, shape=(None, None, None))
    outputs = [reduction(x, axis=axis, keepdims=keepdims) for axis in AXES for keepdims in (False, True)]
    fn, _ = compare_onnx_and_py([x], outputs, [sample(rng, (2, 3, 4), dtype)])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_prod_axes_and_keepdims(dtype, rng):
    # Small factors: ONNX Runtime's integer products are exact below 2**53
    # (test_integer_prod_beyond_2_53_follows_onnx_runtime covers the rest).
    x = pt.tensor("x", dtype=dtype, shape=(None, None, None))
    outputs = [pt.prod(x, axis=axis, keepdims=keepdims) for axis in AXES for keepdims in (False, True)]
    fn, _ = compare_onnx_and_py([x], outputs, [sample(rng, (2, 3, 4), dtype, low=-3, high=3)])
    assert Prod in op_types(fn)


@pytest.mark.parametrize(
    "dtype, expected",
    [
        ("bool", "int64"),
        ("int8", "int64"),
        ("int16", "int64"),
        ("int32", "int64"),
        ("int64", "int64"),
        ("uint8", "uint64"),
        ("uint16", "uint64"),
        ("uint32", "uint64"),
        ("uint64", "uint64"),
        ("float32", "float32"),
    ],
)
def test_sum_and_prod_output_dtypes(dtype, expected, rng):
    x = pt.tensor("x", dtype=dtype, shape=(None, None))
    outputs = [x.sum(axis=0), x.prod(axis=1)]
    assert [out.dtype for out in outputs] == [expected, expected]
    compare_onnx_and_py([x], outputs, [sample(rng, (3, 4), dtype, low=-5, high=5)])


def test_sum_with_explicit_dtype_and_acc_dtype(rng):
    x = pt.matrix("x", dtype="int8")
    values = np.full((3, 200), 100, dtype=np.int8)
    outputs = [
        x.sum(axis=1, dtype="int8"),  # accumulates in int64, then wraps into int8
        x.sum(axis=1, dtype="int16", acc_dtype="int16"),  # wraps while accumulating
        x.sum(axis=0, acc_dtype="float64"),  # a float accumulator for ints
        x.sum(dtype="float32"),
        x.prod(axis=0, dtype="int16"),
    ]
    compare_onnx_and_py([x], outputs, [values])


@pytest.mark.parametrize("dtype", ["int64", "uint64", "int32", "uint32"])
def test_integer_sum_wraps_like_numpy(dtype):
    # ONNX Runtime's ReduceSum accumulates integers in double (inexact above
    # 2**53, saturating at the limits); NumPy wraps. The rule accumulates in
    # the integer type.
    info = np.iinfo(dtype)
    x = pt.matrix("x", dtype=dtype)
    values = np.array(
        [[info.max, 1, 0], [info.max, info.max, 3], [info.min, info.min, 2], [info.max // 2 + 1, info.max // 2 + 1, 7]],
        dtype=dtype,
    )
    if dtype.endswith("64"):
        values = np.vstack([values, np.array([[2**53 + 1, 2, 0]], dtype=dtype)])
    outputs = [x.sum(axis=1, dtype=dtype), x.sum(axis=0, dtype=dtype), x.sum(dtype=dtype)]
    _, results = compare_onnx_and_py([x], outputs, [values])
    assert results[0][0] == info.min  # wrapped, not saturated at info.max
    if dtype.endswith("64"):
        assert results[0][-1] == 2**53 + 3  # not rounded to a double


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_prod_is_exact_and_wraps_like_numpy(dtype, rng):
    # ReduceProd multiplies in double in some ONNX Runtime releases (rounded
    # past 2**53, saturated at the limits); the rule multiplies pairs exactly.
    x = pt.vector("x", dtype=dtype)
    m = pt.tensor("m", dtype=dtype, shape=(None, None, None))
    info = np.iinfo(dtype)
    cases = [np.array([3**20, 3**19]), np.array([2**32, 2**32]), np.full(41, 3), np.array([info.max, info.max, -1 if info.min else 7])]
    for values in cases:
        compare_onnx_and_py([x], x.prod(), [values.astype(dtype)])  # casts wrap like the dtype
    compare_onnx_and_py([x], x.prod(), [np.array([], dtype=dtype)])
    values = _sample(rng, (3, 5, 4), dtype, low=-7, high=7)
    compare_onnx_and_py([m], [m.prod(axis=0), m.prod(axis=(0, 2)), m.prod(axis=-1), m.prod()], [values])
    compare_onnx_and_py([m], [m.prod(axis=(1, 2)), m.prod(axis=0)], [np.zeros((2, 0, 3), dtype)])


def test_integer_prod_over_static_lengths(rng):
    # Lengths known when the model is built: the halvings are unrolled.
    for n in [1, 2, 3, 7, 8, 9, 64, 65]:
        x = pt.tensor("x", dtype="int64", shape=(2, n))
        values = rng.integers(-5, 5, size=(2, n))
        compare_onnx_and_py([x], [x.prod(axis=1), x.prod()], [values])


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_max_min_at_type_limits(dtype):
    info = np.iinfo(dtype)
    x = pt.matrix("x", dtype=dtype)
    values = np.array(
        [[info.max, info.min, 0], [info.min, info.min + 1, 1], [info.max - 1, info.max, info.max]], dtype=dtype
    )
    compare_onnx_and_py([x], [x.max(axis=0), x.max(), pt.argmax(x, axis=1)], [values])
    # pt.min and pt.argmin negate signed ints (-max(-x)), which wraps at
    # info.min in PyTensor's own graph; the ONNX mode's rewrites turn it into
    # a real min, so keep info.min out of those.
    values = np.maximum(values, info.min + 1)
    compare_onnx_and_py([x], [x.min(axis=1), x.min(), pt.argmin(x, axis=0)], [values])


@pytest.mark.parametrize("dtype", ["int64", "uint64", "uint32"])
def test_wide_integer_max_min_compare_whole_values(dtype, rng):
    # ONNX Runtime's int64 ReduceMax/ReduceMin compare the 32-bit halves of
    # each value separately (max(2**32 - 2, 1, 0, 0) gives 1); uint32 and
    # uint64 reductions run on int64 in the builder.
    x = pt.matrix("x", dtype=dtype)
    pool = [0, 1, 5, 2**31 - 1, 2**31, 2**32 - 2, 2**32 - 1]
    if dtype != "uint32":
        pool += [2**32, 2**32 + 1, 2**62, 2**63 - 1]
    if dtype == "int64":
        # (no -2**63: pt.min negates, which wraps there in PyTensor's own graph)
        pool += [-1, -5, -(2**31), -(2**32), -(2**32) + 2, -(2**63) + 1]
    values = rng.choice(np.array(pool, dtype=dtype), size=(6, 40))
    values[0] = np.resize(np.array([2**32 - 2, 1, 0, 0], dtype=dtype), 40)
    outputs = [x.max(axis=1), x.max(axis=0), x.max(), pt.max(x, axis=(0, 1), keepdims=True)]
    outputs += [pt.min(x, axis=1), pt.min(x, axis=0), pt.min(x)]
    _, results = compare_onnx_and_py([x], outputs, [values])
    assert results[0][0] == 2**32 - 2


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_max_min_propagate_nan_and_inf(dtype):
    x = pt.matrix("x", dtype=dtype)
    nan, inf = np.nan, np.inf
    values = np.array(
        [[nan, 1, 3], [1, nan, 3], [1, 3, nan], [-inf, inf, 2], [inf, inf, inf], [nan, nan, nan], [-inf, nan, inf]],
        dtype=dtype,
    )
    outputs = [x.max(axis=1), x.min(axis=1), x.max(axis=0), x.min(axis=0), x.max(), x.min()]
    _, results = compare_onnx_and_py([x], outputs, [values])
    assert np.isnan(results[0][1])  # a NaN in the middle is kept (ONNX Runtime alone drops it)


def test_reductions_of_empty_arrays():
    x = pt.tensor("x", shape=(None, None))
    xi = pt.tensor("xi", dtype="int32", shape=(None, None))
    b = pt.tensor("b", dtype="bool", shape=(None, None))
    outputs = [
        x.sum(),
        x.sum(axis=0),
        x.sum(axis=1),
        x.prod(),
        x.prod(axis=0),
        xi.sum(),
        xi.sum(axis=0),
        xi.prod(axis=(0, 1)),
        b.all(),
        b.any(),
        b.all(axis=0),
        b.any(axis=0),
        x.max(axis=1),  # nothing reduced over an empty axis: an empty result
        pt.argmax(x, axis=1),
    ]
    values = [np.zeros((0, 3)), np.zeros((0, 3), "int32"), np.zeros((0, 3), bool)]
    _, results = compare_onnx_and_py([x, xi, b], outputs, values)
    assert results[3] == 1.0 and results[8] and not results[9]


@pytest.mark.parametrize(
    "build",
    [
        lambda x: x.max(axis=0),
        lambda x: x.min(),
        lambda x: pt.argmax(x, axis=0),
        lambda x: pt.argmin(x),
    ],
)
def test_max_min_argmax_of_empty_set_raise(build):
    x = pt.matrix("x")
    # max/min fail in the rule's check of the empty set; argmax/argmin where
    # ONNX Runtime's ArgMax kernel refuses the empty axis.
    compare_raises([x], build(x), [np.zeros((0, 3))], ValueError, "zero-size array|empty sequence", onnx_fails=("check", "ArgMax"))


def test_max_of_empty_set_with_static_shape_raises():
    x = pt.tensor("x", shape=(0, 3))
    compare_raises([x], x.max(axis=0), [np.zeros((0, 3))], ValueError, "zero-size array", onnx_fails="check")


@pytest.mark.parametrize("reduction", [pt.sum, pt.prod, pt.max, pt.min, pt.all, pt.any])
def test_reductions_of_0d_and_static_shapes(reduction, rng):
    s = pt.scalar("s")
    m = pt.tensor("m", shape=(2, 3))
    outputs = [reduction(s), reduction(s, keepdims=True), reduction(m, axis=1), reduction(m, keepdims=True)]
    compare_onnx_and_py([s, m], outputs, [np.float64(-2.5), rng.normal(size=(2, 3))])


def test_all_any_on_numbers_and_bools(rng):
    x = pt.matrix("x", dtype="int16")
    f = pt.vector("f")
    outputs = [pt.all(x, axis=0), pt.any(x, axis=1), pt.all(f), pt.any(f)]
    values = [np.array([[0, 1, 2], [3, 4, 0]], dtype="int16"), np.array([np.nan, 0.0, -1.0])]
    compare_onnx_and_py([x, f], outputs, values)


def test_prod_without_zeros():
    x = pt.matrix("x")
    outputs = [ProdWithoutZeros(axis=axis)(x) for axis in [None, (0,), (1,)]]
    values = np.array([[0.0, 2.0, 0.0], [3.0, 0.0, 0.0], [0.5, 4.0, 0.0]])
    fn, results = compare_onnx_and_py([x], outputs, [values])
    assert results[2][2] == 2.0 and results[1][2] == 0.0  # all zeros: 0, MulWithoutZeros' identity
    assert ProdWithoutZeros in op_types(fn)
    compare_onnx_and_py([x], outputs, [np.zeros((0, 3))])


def test_gradient_of_prod(rng):
    # The gradient of prod uses ProdWithoutZeros when zeros are possible.
    x = pt.matrix("x")
    grad = pytensor.grad(pt.prod(x), x)
    compare_onnx_and_py([x], grad, [rng.normal(size=(2, 3))])
    compare_onnx_and_py([x], grad, [np.array([[1.0, 0.0, 2.0], [3.0, 4.0, 5.0]])])


def test_bitwise_reductions_are_not_supported():
    from pytensor.scalar import and_
    from pytensor.tensor.elemwise import CAReduce

    x = pt.vector("x", dtype="int32")
    with pytest.raises(NotImplementedError, match="bitwise reduction"):
        pytensor.function([x], CAReduce(and_, axis=None)(x), mode="ONNX")


@pytest.mark.parametrize("opset", OPSETS)
def test_reductions_across_opsets(opset, rng):
    # Reduce* axes moved from attribute to input (ReduceSum at 13, the others
    # at 18); boolean ReduceMax/Min arrived at 20.
    x = pt.tensor("x", shape=(None, None, None))
    xi = pt.tensor("xi", dtype="int64", shape=(None, None, None))
    b = pt.tensor("b", dtype="bool", shape=(None, None))
    outputs = [
        x.sum(axis=(0, 2)),
        x.prod(axis=-1, keepdims=True),
        x.max(axis=1),
        x.min(),
        xi.sum(axis=(1, 2)),
        xi.max(axis=0),
        pt.argmax(x, axis=(0, 2)),
        pt.argmin(xi, axis=-1),
        b.all(axis=1),
        b.any(),
    ]
    values = [rng.normal(size=(2, 3, 4)), sample(rng, (2, 3, 4), "int64"), rng.random((3, 2)) < 0.5]
    compare_onnx_and_py([x, xi, b], outputs, values, opset_version=opset)


# --- Mean, var, std, logsumexp ------------------------------------------------------------


@pytest.mark.parametrize("shape", [(3, 4), (None, None)])
def test_mean_var_std(shape, rng):
    x = pt.tensor("x", shape=shape)
    outputs = [x.mean(), x.mean(axis=0), x.var(axis=1), x.std(), x.std(axis=-1, keepdims=True), x.var(ddof=1)]
    compare_onnx_and_py([x], outputs, [rng.normal(size=(3, 4))])


def test_mean_of_integers(rng):
    x = pt.matrix("x", dtype="int32")
    outputs = [x.mean(axis=0), x.mean()]
    compare_onnx_and_py([x], outputs, [sample(rng, (3, 4), "int32")])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_logsumexp(dtype, rng):
    x = pt.matrix("x", dtype=dtype)
    outputs = [pt.logsumexp(x, axis=1), pt.logsumexp(x, axis=0, keepdims=True), pt.logsumexp(x)]
    values = rng.normal(scale=5, size=(4, 3)).astype(dtype)
    values[1, 2] = -np.inf
    compare_onnx_and_py([x], outputs, [values])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_logsumexp_is_stable_at_extremes(dtype):
    # PyTensor's logsumexp graph is log(sum(exp(x))); the fast_run rewrites
    # (which the ONNX mode runs) make it max + log(sum(exp(x - max))). The
    # unrewritten reference overflows here, so compare with SciPy.
    from scipy.special import logsumexp

    x = pt.matrix("x", dtype=dtype)
    inf = np.inf
    values = np.array(
        [[1000.0, 1000.0, 0.0], [-1000.0, -1001.0, -inf], [-inf, -inf, -inf], [inf, 1.0, 2.0], [0.0, 1e-30, -1e-30]],
        dtype=dtype,
    )

    def close_to_scipy(onnx_value, py_value):
        expected = logsumexp(values.astype("float64"), axis=1).astype(dtype)
        assert onnx_value.dtype == np.dtype(dtype)
        np.testing.assert_allclose(onnx_value, expected, rtol=1e-6 if dtype == "float32" else 1e-14)

    compare_onnx_and_py([x], pt.logsumexp(x, axis=1), [values], assert_fn=close_to_scipy)


# --- Argmax / argmin -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_argmax_argmin_axes(dtype, rng):
    x = pt.tensor("x", dtype=dtype, shape=(None, None, None))
    outputs = [
        f(x, axis=axis, keepdims=keepdims)
        for f in (pt.argmax, pt.argmin)
        for axis in AXES
        for keepdims in (False, True)
    ]
    # Few distinct values: many ties, where the first index wins.
    fn, _ = compare_onnx_and_py([x], outputs, [sample(rng, (2, 3, 4), dtype, low=0, high=2)])
    assert Argmax in op_types(fn)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_argmax_returns_first_nan(dtype, rng):
    # NumPy's argmax/argmin stop at the first NaN; ONNX Runtime's ArgMax
    # skips NaN depending on where it sits.
    x = pt.matrix("x", dtype=dtype)
    nan, inf = np.nan, np.inf
    values = np.array(
        [[1, nan, 3, nan], [nan, 5, 3, 1], [2, 2, inf, nan], [-inf, 0, nan, -inf], [1, 2, 3, 4]], dtype=dtype
    )
    outputs = [pt.argmax(x, axis=1), pt.argmin(x, axis=1), pt.argmax(x, axis=0), pt.argmin(x, axis=0), pt.argmax(x)]
    _, results = compare_onnx_and_py([x], outputs, [values])
    np.testing.assert_array_equal(results[0], [1, 0, 3, 2, 3])


def test_argmax_of_0d_and_static_shapes(rng):
    s = pt.scalar("s", dtype="int32")
    m = pt.tensor("m", shape=(3, 1, 2))
    outputs = [pt.argmax(s), pt.argmin(s), pt.argmax(m, axis=(0, 2)), pt.argmax(m, axis=1), pt.argmax(m, keepdims=True)]
    compare_onnx_and_py([s, m], outputs, [np.int32(4), rng.normal(size=(3, 1, 2))])


def test_max_and_argmax(rng):
    # pytensor 3 has no MaxAndArgmax Op: max_and_argmax builds Max and Argmax.
    x = pt.matrix("x")
    fn, _ = compare_onnx_and_py([x], pt.max_and_argmax(x, axis=0), [rng.normal(size=(3, 4))])
    assert {Max, Argmax} <= op_types(fn)


# --- Dot -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "x_dtype, y_dtype",
    [
        ("float64", "float64"),
        ("float32", "float32"),
        ("float32", "float64"),
        ("int8", "float32"),
        ("int8", "int8"),
        ("uint8", "uint8"),
        ("int16", "int16"),
        ("int32", "int32"),
        ("int64", "int64"),
        ("uint64", "uint64"),
        ("bool", "bool"),
        ("int32", "float32"),
    ],
)
def test_dot_matrices(x_dtype, y_dtype, rng):
    x = pt.matrix("x", dtype=x_dtype)
    y = pt.matrix("y", dtype=y_dtype)
    fn, _ = compare_onnx_and_py([x, y], pt.dot(x, y), [sample(rng, (3, 5), x_dtype), sample(rng, (5, 2), y_dtype)])
    assert Dot in op_types(fn)


def test_dot_integer_overflow_wraps():
    x = pt.matrix("x", dtype="int8")
    y = pt.matrix("y", dtype="int64")
    a = np.full((2, 4), 100, dtype=np.int8)
    b = np.full((2, 2), 2**62, dtype=np.int64)
    compare_onnx_and_py([x, y], [pt.dot(x, x.T), pt.dot(y, y)], [a, b])


@pytest.mark.parametrize("dtype", ["float64", "uint64", "uint32", "int16"])
@pytest.mark.parametrize("x_shape, y_shape", [((3, 0), (0, 4)), ((0, 3), (3, 4)), ((3, 2), (2, 0))])
def test_dot_empty(x_shape, y_shape, dtype):
    # (ONNX Runtime's unsigned MatMul fails on an empty inner dim)
    x = pt.matrix("x", dtype=dtype)
    y = pt.matrix("y", dtype=dtype)
    compare_onnx_and_py([x, y], pt.dot(x, y), [np.ones(x_shape, dtype), np.ones(y_shape, dtype)])


def test_dot_vector_forms(rng):
    v = pt.vector("v")
    w = pt.vector("w")
    m = pt.matrix("m")
    outputs = [pt.dot(v, w), pt.dot(m, v), pt.dot(v, m.T), m @ m.T]
    compare_onnx_and_py([v, w, m], outputs, [rng.normal(size=3), rng.normal(size=3), rng.normal(size=(4, 3))])


# Float64 products of transposed batched operands become Einsum (ONNX
# Runtime < 1.26 has no float64 FusedMatMul), and its Einsum crashes
# (SIGSEGV, ORT 1.21) on an operand with an empty dim: the builder computes
# those as a broadcast product and a sum instead.
@pytest.mark.parametrize("static", [True, False], ids=["static_shapes", "unknown_shapes"])
@pytest.mark.parametrize(
    "x_shape, y_shape",
    [
        ((0, 3, 2), (0, 3, 4)),
        ((2, 0, 3), (2, 0, 4)),
        ((2, 3, 0), (2, 3, 4)),
        ((2, 3, 2), (2, 3, 0)),
        ((0, 0, 0), (0, 0, 0)),
        ((2, 3, 2), (2, 3, 4)),
    ],
)
def test_float64_batched_product_of_transposed_with_empty_dims(x_shape, y_shape, static, rng):
    def tensor(name, shape):
        return pt.tensor(name, dtype="float64", shape=shape if static else (None,) * len(shape))

    z_shape = (*y_shape[:-2], y_shape[-1], y_shape[-2])
    x, y, z = tensor("x", x_shape), tensor("y", y_shape), tensor("z", z_shape)
    outputs = [pt.matmul(x.mT, y), pt.matmul(x.mT, z.mT), pt.matmul(y.mT, x)]
    values = [rng.normal(size=shape) for shape in (x_shape, y_shape, z_shape)]
    fn, _ = compare_onnx_and_py([x, y, z], outputs, values)
    assert "Einsum" in onnx_op_types(fn) or "If" in onnx_op_types(fn)


# ONNX Runtime 1.21's float32 FusedMatMul (a MatMul of a transposed operand)
# leaves every batch entry after the first uninitialised when the contracted
# dim is empty: without the builder's guard the product holds whatever an
# earlier node left in the arena (here exp(w) * 27), not zeros. Found by the
# fuzzer (det of t @ t.T + I with t of shape (2, 3, 0)).
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("x_shape", [(2, 3, 0), (3, 2, 0)])
def test_batched_product_of_transposed_with_empty_contraction_is_zero(dtype, x_shape, rng):
    x = pt.tensor("x", dtype=dtype, shape=(None,) * len(x_shape))
    w = pt.tensor("w", dtype=dtype, shape=(None,) * len(x_shape))
    v = pt.vector("v", dtype=dtype)
    y = pt.tensor("y", dtype=dtype, shape=(None,) * len(x_shape))
    n = x_shape[-2]
    outputs = [
        (pt.exp(w) * 27).sum(),  # an intermediate whose buffer is freed before the products
        pt.matmul(x, pt.swapaxes(x, -1, -2)) + pt.eye(n, dtype=dtype),
        pt.matmul(v, y),
    ]
    values = [np.zeros(x_shape, dtype), rng.normal(size=(*x_shape[:-1], n)).astype(dtype)]
    values += [np.zeros(0, dtype), np.zeros((x_shape[0], 0, n), dtype)]
    compare_onnx_and_py([x, w, v, y], outputs, values)


@pytest.mark.parametrize("opset", OPSETS)
def test_dot_across_opsets(opset, rng):
    x = pt.tensor("x", dtype="int8", shape=(None, 3))
    y = pt.tensor("y", shape=(3, None))
    outputs = [pt.dot(x, x.T), pt.dot(x, y)]
    compare_onnx_and_py([x, y], outputs, [sample(rng, (2, 3), "int8"), rng.normal(size=(3, 2))], opset_version=opset)


def test_sum_rule_uses_matmul_for_integers_only(rng):
    # Integer sums contract with ones (exact, wrapping); float sums use
    # ReduceSum in the portable graph, the kernels' Reduce in mode ONNX.
    x = pt.matrix("x", dtype="int64")
    f = pt.matrix("f")
    values = [sample(rng, (2, 3), "int64"), rng.normal(size=(2, 3))]
    fn, _ = compare_onnx_and_py([x, f], [x.sum(axis=0), f.sum(axis=0)], values)
    assert Sum in op_types(fn)
    node_types = onnx_op_types(fn)
    assert "MatMul" in node_types and "Reduce_float64" in node_types
    portable = {n.op_type for n in pytensor_onnx.export_onnx([x, f], [x.sum(axis=0), f.sum(axis=0)]).graph.node}
    assert "MatMul" in portable and "ReduceSum" in portable


MAX_TAKES_INITIAL = "initial" in inspect.signature(pt.max).parameters


# Found by the differential fuzzer (tests/python/test_fuzz.py): FAST_RUN turns
# logsumexp into max(x, initial=-inf) + ... on PyTensor 3.3, whose empty
# reduction is -inf; the rule treated every empty max as NumPy's error.
# (Before 3.3 an empty max raises, and 2.38's FAST_RUN never finishes
# rewriting logsumexp of an int64 tensor with keepdims=True.)
@pytest.mark.skipif(not MAX_TAKES_INITIAL, reason="max(initial=...) exists from PyTensor 3.3")
@pytest.mark.parametrize("shape, axis", [((2, 0), 1), ((1, 0, 1), (-2, 2)), ((0,), None), ((2, 3), 0)])
def test_logsumexp_over_an_empty_axis(shape, axis):
    x = pt.tensor("x", shape=(None,) * len(shape))
    xi = pt.tensor("xi", dtype="int64", shape=(None,) * len(shape))
    outputs = [pt.logsumexp(x, axis=axis), pt.logsumexp(xi, axis=axis, keepdims=True)]
    compare_onnx_and_py([x, xi], outputs, [np.ones(shape), np.ones(shape, dtype="int64")])



@pytest.mark.skipif(not MAX_TAKES_INITIAL, reason="max(initial=...) exists from PyTensor 3.3")
@pytest.mark.parametrize("opset", [13, 18, OPSETS[-1]])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int8", "uint64", "uint16", "bool"])
def test_max_min_with_initial_give_the_identity_when_empty(dtype, opset, rng):
    x = pt.tensor("x", dtype=dtype, shape=(None, None, None))
    outputs = [
        pt.max(x, axis=(0, 1), initial=-np.inf),
        pt.min(x, axis=(0, 1), initial=np.inf),
        pt.max(x, axis=-1, initial=-np.inf, keepdims=True),
        pt.min(x, axis=None, initial=np.inf),
    ]
    for shape in [(1, 0, 2), (2, 3, 0), (2, 3, 4)]:
        compare_onnx_and_py([x], outputs, [sample(rng, shape, dtype)], opset_version=opset, optimize=False)


def test_argmax_over_several_axes_one_of_them_empty_raises(rng):
    # Found by test_reductions_hypothesis: the flattening Reshape read the
    # empty reduced size as "copy the input dim" (1), so no error was raised.
    x = pt.tensor("x", shape=(None, None, None))
    compare_raises([x], [pt.argmax(x, axis=(1, 2))], [np.zeros((0, 1, 0))], ValueError, "zero-size|empty", onnx_fails="check")
    compare_raises([x], [pt.argmax(x, axis=(1, 2))], [np.zeros((2, 1, 0))], ValueError, "zero-size|empty", onnx_fails="Reshape")
