"""extra_ops: CumOp, SearchsortedOp, Repeat, FillDiagonal(Offset), Bartlett,
RavelMultiIndex, UnravelIndex, Unique, and Nonzero."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.basic import Nonzero
from pytensor.tensor.extra_ops import (
    Bartlett,
    CumOp,
    FillDiagonal,
    FillDiagonalOffset,
    RavelMultiIndex,
    Repeat,
    SearchsortedOp,
    Unique,
    UnravelIndex,
    bartlett,
    fill_diagonal,
    fill_diagonal_offset,
    ravel_multi_index,
    unique,
    unravel_index,
)

from pytensor_onnx.mode import onnx_mode
from pytensor_onnx.testing import assert_same_result, compare_onnx_and_py

from helpers import ALL_DTYPES, OPSETS, compare_raises, op_types, sample


def onnx_fn(inputs, outputs, opset_version=None):
    return pytensor.function(inputs, outputs, mode=onnx_mode(opset_version=opset_version))


# --- CumOp ------------------------------------------------------------------------------------

# PyTensor types cumsum/cumprod in the input's dtype (and its C code computes
# them so); its Python perform lets NumPy promote small integers and bool to
# int64. These dtypes are compared with NumPy in the typed dtype.
_PROMOTED_BY_NUMPY = {"bool", "int8", "int16", "int32", "uint8", "uint16", "uint32"}


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_cumsum_cumprod_every_dtype_and_axis(dtype, opset, rng):
    x = pt.tensor3("x", dtype=dtype)
    value = sample(rng, (2, 3, 4), dtype, low=-3, high=3)
    outputs = [f(x, axis=a) for f in (pt.cumsum, pt.cumprod) for a in (None, 0, 1, 2, -1)]
    if dtype in _PROMOTED_BY_NUMPY:
        results = onnx_fn([x], outputs, opset)(value)
        expected = [f(value, axis=a, dtype=dtype) for f in (np.cumsum, np.cumprod) for a in (None, 0, 1, 2, -1)]
        for got, want in zip(results, expected, strict=True):
            assert_same_result(got, want)
        return
    fn, _ = compare_onnx_and_py([x], outputs, [value], opset_version=opset)
    assert CumOp in op_types(fn)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("dtype", ["int64", "uint64", "int8", "int32"])
def test_cumulative_integers_wrap(dtype, opset):
    info = np.iinfo(dtype)
    value = np.array([info.max, info.max, 3, info.min, 7, info.max // 2 + 1, 2, 2], dtype=dtype)
    x = pt.vector("x", dtype=dtype)
    got_sum, got_prod = onnx_fn([x], [pt.cumsum(x), pt.cumprod(x)], opset)(value)
    with np.errstate(over="ignore"):
        assert_same_result(got_sum, np.cumsum(value, dtype=dtype))
        assert_same_result(got_prod, np.cumprod(value, dtype=dtype))


@pytest.mark.parametrize("opset", OPSETS)
def test_cumprod_symbolic_length_and_special_values(opset, rng):
    x = pt.matrix("x")
    value = np.array([[2.0, np.inf, 0.0, 3.0, np.nan, -1.0, 0.5], [1e200, 1e200, 1e-300, -2.0, 1.0, 1.0, 1.0]])
    outputs = [pt.cumprod(x, axis=1), pt.cumprod(x, axis=0), pt.cumsum(x, axis=1)]
    fn, _ = compare_onnx_and_py([x], outputs[1:], [value], opset_version=opset)
    # 1e200 * 1e200 overflows to inf on the way, which NumPy keeps: the
    # log-depth scan of opsets before 26 groups the product differently.
    got = onnx_fn([x], outputs[0], opset)(value)
    np.testing.assert_allclose(got[0], np.cumprod(value[0]), rtol=1e-12)
    for shape in [(0, 3), (3, 0), (1, 1), (4, 9)]:
        compare_onnx_and_py([x], outputs, [rng.normal(size=shape)], opset_version=opset)


def test_cumsum_gradient(rng):
    x = pt.matrix("x")
    cost = (pt.cumprod(x, axis=1) * pt.cumsum(x, axis=0)).sum()
    compare_onnx_and_py([x], [pytensor.grad(cost, x)], [rng.uniform(0.5, 2, size=(3, 4))], rtol=1e-10)


# --- SearchsortedOp ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_searchsorted_every_dtype_both_sides(dtype, rng):
    a = pt.vector("a", dtype=dtype)
    v = pt.matrix("v", dtype=dtype)
    sorted_ = np.sort(sample(rng, 12, dtype, low=-5, high=5))
    values = sample(rng, (3, 5), dtype, low=-7, high=7)
    outputs = [pt.searchsorted(a, v), pt.searchsorted(a, v, side="right")]
    fn, _ = compare_onnx_and_py([a, v], outputs, [sorted_, values])
    assert SearchsortedOp in op_types(fn)


@pytest.mark.parametrize("opset", OPSETS)
def test_searchsorted_nan_inf_sorter_and_shapes(opset, rng):
    a = pt.vector("a")
    v = pt.tensor("v", shape=(None,))
    s = pt.scalar("s")
    sorter = pt.vector("sorter", dtype="int32")
    sorted_ = np.array([-np.inf, 1.0, 2.0, 2.0, 3.0, np.inf, np.nan, np.nan])
    queries = np.array([-np.inf, 0.0, 1.0, 2.0, 2.5, 3.0, np.inf, np.nan, -0.0])
    outputs = [pt.searchsorted(a, v), pt.searchsorted(a, v, side="right"), pt.searchsorted(a, s, side="right")]
    compare_onnx_and_py([a, v, s], outputs, [sorted_, queries, np.array(2.0)], opset_version=opset)
    unsorted = rng.permutation(sorted_)
    order = np.argsort(unsorted, kind="stable").astype("int32")
    compare_onnx_and_py([a, v, sorter], [pt.searchsorted(a, v, sorter=sorter)], [unsorted, queries, order],
                        opset_version=opset)
    for n, m in [(0, 3), (3, 0), (0, 0), (1, 4)]:
        compare_onnx_and_py([a, v], outputs[:2], [np.sort(rng.normal(size=n)), rng.normal(size=m)], opset_version=opset)


def test_searchsorted_mixed_dtypes_compare_in_the_common_dtype():
    a = pt.vector("a", dtype="int64")
    v = pt.vector("v", dtype="float32")
    compare_onnx_and_py([a, v], [pt.searchsorted(a, v), pt.searchsorted(a, v, side="right")],
                        [np.array([1, 2, 3]), np.array([1.5, 2.0, -1.0, 4.0], dtype="float32")])
    b = pt.vector("b", dtype="uint64")
    w = pt.vector("w", dtype="int8")
    compare_onnx_and_py([b, w], [pt.searchsorted(b, w)], [np.array([1, 2, 2**63], dtype="uint64"),
                                                           np.array([-1, 2, 100], dtype="int8")])


# --- Repeat -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_repeat_per_element_runtime_repeats(dtype, rng):
    x = pt.matrix("x", dtype=dtype)
    r = pt.vector("r", dtype="int64")
    value = sample(rng, (3, 4), dtype)
    outputs = [pt.repeat(x, r, axis=1), pt.repeat(x, r[:3], axis=0)]
    fn, _ = compare_onnx_and_py([x, r], outputs, [value, np.array([2, 0, 1, 3])])
    assert Repeat in op_types(fn)


@pytest.mark.parametrize("opset", OPSETS)
def test_repeat_forms(opset, rng):
    x = pt.matrix("x")
    r = pt.vector("r", dtype="int32")
    n = pt.scalar("n", dtype="int64")
    outputs = [
        pt.repeat(x, np.array([1, 0, 2]), axis=0),  # constant repeats
        pt.repeat(x, r, axis=1),  # length-1 repeats broadcast
        pt.repeat(x, n, axis=0),  # scalar repeats
        pt.repeat(x, 2),  # axis=None flattens
        pt.repeat(x, r, axis=-1),
    ]
    compare_onnx_and_py([x, r, n], outputs, [rng.normal(size=(3, 4)), np.array([3], dtype="int32"), 2],
                        opset_version=opset)
    compare_onnx_and_py([x, r], [pt.repeat(x, r, axis=0)], [rng.normal(size=(0, 2)), np.zeros(0, dtype="int32")],
                        opset_version=opset)


def test_repeat_negative_repeats_raise():
    x = pt.vector("x")
    r = pt.vector("r", dtype="int64")
    compare_raises([x, r], pt.repeat(x, r, axis=0), [np.ones(2), np.array([1, -1])], ValueError, "negative", onnx_fails="check")


# --- FillDiagonal, FillDiagonalOffset ---------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_fill_diagonal_every_dtype(dtype, rng):
    a = pt.matrix("a", dtype=dtype)
    val = pt.scalar("val", dtype=dtype)
    fill = sample(rng, (), dtype)
    fn = None
    for shape in [(3, 3), (5, 2), (2, 5), (0, 3)]:
        fn, _ = compare_onnx_and_py([a, val], [fill_diagonal(a, val)], [sample(rng, shape, dtype), fill])
    assert FillDiagonal in op_types(fn)


def test_fill_diagonal_3d_and_unequal_dims_raise(rng):
    a = pt.tensor3("a")
    val = pt.scalar("val")
    compare_onnx_and_py([a, val], [fill_diagonal(a, val)], [rng.normal(size=(3, 3, 3)), 9.0])
    compare_raises([a, val], fill_diagonal(a, val), [rng.normal(size=(3, 2, 3)), 9.0], ValueError, "equal length", onnx_fails="check")


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int8", "uint16", "bool"])
def test_fill_diagonal_offset(dtype, opset, rng):
    a = pt.matrix("a", dtype=dtype)
    val = pt.scalar("val", dtype=dtype)
    offset = pt.scalar("offset", dtype="int32")
    fn = None
    # Offsets inside (-rows, columns); beyond, PyTensor's slice arithmetic
    # goes negative and wraps around (docs/semantics.md), where this fills nothing.
    for shape in [(4, 4), (6, 3), (3, 6)]:
        for k in (1 - shape[0], -2, 0, 1, shape[1] - 1):
            values = [sample(rng, shape, dtype), sample(rng, (), dtype), np.array(k, dtype="int32")]
            fn, _ = compare_onnx_and_py([a, val, offset], [fill_diagonal_offset(a, val, offset)], values,
                                        opset_version=opset, check_export=k == 1)
    a_value = sample(rng, (3, 4), dtype)
    for k in (-3, -9, 4, 9):
        got = onnx_fn([a, val, offset], fill_diagonal_offset(a, val, offset), opset)(a_value, sample(rng, (), dtype),
                                                                                    np.array(k, dtype="int32"))
        assert_same_result(got, a_value)
    assert FillDiagonalOffset in op_types(fn)


# --- Bartlett ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int8"])
def test_bartlett(dtype):
    m = pt.scalar("m", dtype=dtype)
    fn = None
    for size in (-2, 0, 1, 2, 5, 6, 51):
        if size < 0 and dtype.startswith("uint"):
            continue
        fn, _ = compare_onnx_and_py([m], [bartlett(m)], [np.array(size, dtype=dtype)], rtol=1e-15, atol=0)
    assert Bartlett in op_types(fn)


# --- RavelMultiIndex, UnravelIndex ------------------------------------------------------------


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_ravel_multi_index(mode, order):
    # (PyTensor types the result like the first index, so all have one rank.)
    i = pt.vector("i", dtype="int64")
    j = pt.vector("j", dtype="int32")
    k = pt.vector("k", dtype="int16")
    dims = pt.vector("dims", dtype="int64")
    out = ravel_multi_index((i, j, k), dims, mode=mode, order=order)
    if mode == "raise":
        values = [np.array([0, 2]), np.array([3, 0], dtype="int32"), np.array([1, 4], dtype="int16")]
    else:
        values = [np.array([-1, 7]), np.array([9, -4], dtype="int32"), np.array([5, -6], dtype="int16")]
    fn, _ = compare_onnx_and_py([i, j, k, dims], [out], [*values, np.array([3, 4, 5])])
    assert RavelMultiIndex in op_types(fn)


def test_ravel_multi_index_out_of_range_raises():
    i, j = pt.vector("i", dtype="int64"), pt.vector("j", dtype="int64")
    compare_raises([i, j], ravel_multi_index((i, j), (3, 4)), [np.array([0, 3]), np.array([1, 1])], ValueError,
                   "invalid entry", onnx_fails="check")


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("order", ["C", "F"])
def test_unravel_index(order, opset):
    flat = pt.matrix("flat", dtype="int32")
    coords = unravel_index(flat, (3, 4, 5), order=order)
    fn, _ = compare_onnx_and_py([flat], list(coords), [np.array([[0, 59, 7], [33, 20, 1]], dtype="int32")],
                                opset_version=opset)
    assert UnravelIndex in op_types(fn)


def test_unravel_index_out_of_range_raises():
    flat = pt.vector("flat", dtype="int64")
    compare_raises([flat], list(unravel_index(flat, (3, 4))), [np.array([1, 12])], ValueError, "out of bounds", onnx_fails="check")


# --- Nonzero ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_nonzero_every_dtype(dtype, rng):
    x = pt.tensor3("x", dtype=dtype)
    value = sample(rng, (2, 3, 4), dtype, low=-1, high=1)
    if dtype.startswith("float"):
        value[0, 0, :2] = [np.nan, -0.0]
    fn, _ = compare_onnx_and_py([x], list(pt.nonzero(x)) + [pt.flatnonzero(x)], [value])
    assert Nonzero in op_types(fn)
    compare_onnx_and_py([x], list(pt.nonzero(x)), [np.zeros((2, 0, 3), dtype=dtype)])


# --- Unique -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_unique_every_dtype_every_output(dtype, rng):
    x = pt.matrix("x", dtype=dtype)
    value = sample(rng, (4, 6), dtype, low=-3, high=3)
    outputs = [unique(x), *unique(x, return_index=True, return_inverse=True, return_counts=True)]
    outputs += [*unique(x, return_counts=True), *unique(x, return_inverse=True)]
    fn, _ = compare_onnx_and_py([x], outputs, [value])
    assert Unique in op_types(fn)


@pytest.mark.parametrize("opset", OPSETS)
def test_unique_nan_inf_zero_and_empty(opset):
    x = pt.vector("x")
    value = np.array([np.nan, 1.0, -0.0, np.inf, 0.0, np.nan, 1.0, -np.inf, np.nan])
    outputs = [*unique(x, return_index=True, return_inverse=True, return_counts=True)]
    compare_onnx_and_py([x], outputs, [value], opset_version=opset)
    compare_onnx_and_py([x], outputs, [np.zeros(0)], opset_version=opset)
    v = pt.vector("v", dtype="int64")
    compare_onnx_and_py([v], [*unique(v, return_counts=True, axis=0)], [np.array([3, 1, 3])], opset_version=opset)


def _with_repeated_slices(rng, shape, axis, dtype):
    """A tensor of ``shape`` whose slices along ``axis`` repeat (drawn from three distinct ones)."""
    base_shape = list(shape)
    base_shape[axis] = 3
    base = sample(rng, tuple(base_shape), dtype, low=-2, high=2)
    return np.take(base, rng.integers(0, 3, size=shape[axis]), axis=axis)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_unique_along_each_axis_every_dtype(dtype, rng):
    x = pt.tensor3("x", dtype=dtype)
    value = _with_repeated_slices(rng, (5, 6, 3), 0, dtype)
    outputs = []
    for axis in (0, 1, 2, -1):
        outputs += [unique(x, axis=axis), *unique(x, axis=axis, return_index=True, return_inverse=True, return_counts=True)]
    fn, _ = compare_onnx_and_py([x], outputs, [value])
    assert Unique in op_types(fn)
    for axis in (1, 2):
        compare_onnx_and_py([x], outputs, [_with_repeated_slices(rng, (3, 7, 4), axis, dtype)])


@pytest.mark.parametrize("opset", OPSETS)
def test_unique_along_an_axis_nan_inf_zero_and_unknown_dims(opset, rng):
    # NaN sorts last in each column, a slice holding NaN is unique (NumPy
    # compares slices without equal_nan), -0.0 equals 0.0.
    x = pt.matrix("x")
    value = np.array([[np.nan, 1], [0.0, 2], [np.nan, 1], [-0.0, 2], [1, np.nan], [1, 0], [np.inf, -np.inf], [1, 0]])
    outputs = [*unique(x, axis=0, return_index=True, return_inverse=True, return_counts=True)]
    outputs += [*unique(x, axis=1, return_index=True, return_inverse=True, return_counts=True)]
    fn, _ = compare_onnx_and_py([x], outputs, [value], opset_version=opset)
    assert Unique in op_types(fn)
    # More columns than the unrolled sort takes (a Loop over the columns).
    wide = _with_repeated_slices(rng, (9, 12), 0, "float64")
    compare_onnx_and_py([x], outputs, [wide], opset_version=opset)
    # Static columns (the unrolled sort), unknown rows.
    y = pt.tensor("y", shape=(None, 3), dtype="int32")
    compare_onnx_and_py([y], [*unique(y, axis=0, return_index=True, return_inverse=True, return_counts=True)],
                        [_with_repeated_slices(rng, (10, 3), 0, "int32")], opset_version=opset)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0), (2, 0, 3)])
def test_unique_along_an_axis_of_empty_tensors(shape):
    x = pt.tensor("x", shape=(None,) * len(shape))
    for axis in range(len(shape)):
        outputs = [*unique(x, axis=axis, return_index=True, return_inverse=True, return_counts=True)]
        compare_onnx_and_py([x], outputs, [np.zeros(shape)])


def test_unique_along_an_axis_orders_signed_and_unsigned_numbers():
    # Lexicographic order by value, not by bytes: negatives before positives,
    # large unsigned values last.
    x = pt.matrix("x", dtype="int16")
    value = np.array([[-1, 5], [300, -2], [-300, 7], [-1, 4], [300, -2]], dtype="int16")
    compare_onnx_and_py([x], [*unique(x, axis=0, return_inverse=True)], [value])
    u = pt.matrix("u", dtype="uint64")
    big = np.array([[2**63 + 1, 0], [1, 2], [2**63 + 1, 0], [1, 1]], dtype="uint64")
    compare_onnx_and_py([u], [*unique(u, axis=0, return_index=True, return_counts=True)], [big])


