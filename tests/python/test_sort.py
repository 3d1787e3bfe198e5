"""SortOp and ArgSortOp: NumPy's stable order, NaN last, every dtype, every axis."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.sort import ArgSortOp, SortOp

from pytensor_onnx.mode import onnx_mode
from pytensor_onnx.testing import compare_onnx_and_py

from helpers import ALL_DTYPES, OPSETS, op_types, sample


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_sort_and_stable_argsort_every_dtype_with_ties(dtype, rng):
    x = pt.matrix("x", dtype=dtype)
    # Few distinct values: many ties, so a non-stable argsort would show.
    value = sample(rng, (5, 40), dtype, low=-3, high=3)
    outputs = [pt.sort(x), pt.sort(x, axis=0), pt.argsort(x, stable=True), pt.argsort(x, axis=0, stable=True)]
    fn, _ = compare_onnx_and_py([x], outputs, [value])
    assert {SortOp, ArgSortOp} <= op_types(fn)


@pytest.mark.parametrize("dtype", ["uint64", "int64", "uint8", "int8", "int16", "uint32"])
def test_sort_integer_extremes(dtype):
    info = np.iinfo(dtype)
    value = np.array([info.max, 0, info.min, info.max - 1, 1, info.min + 1, info.max], dtype=dtype)
    x = pt.vector("x", dtype=dtype)
    compare_onnx_and_py([x], [pt.sort(x), pt.argsort(x, stable=True)], [value])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_nan_sorts_last_and_signed_zeros_keep_their_order(dtype):
    value = np.array([[3, np.nan, 1, 1, -0.0, 0.0, np.inf, np.nan, -np.inf, -0.0]], dtype=dtype)
    x = pt.matrix("x", dtype=dtype)
    # (Zero signs: NumPy's default sort, PyTensor's, orders equal keys as its
    # quicksort leaves them; this sort is stable, asserted below.)
    fn, (sorted_, order) = compare_onnx_and_py([x], [pt.sort(x), pt.argsort(x, stable=True)], [value], zero_signs=False)
    np.testing.assert_array_equal(order[0], [8, 4, 5, 9, 2, 3, 0, 6, 1, 7])
    # -0.0 before +0.0 exactly where the input had them
    np.testing.assert_array_equal(np.signbit(sorted_[0, 1:4]), [True, False, True])


@pytest.mark.parametrize("opset", OPSETS)
def test_sort_across_opsets_axes_and_none(opset, rng):
    x = pt.tensor3("x")
    value = np.round(rng.normal(size=(2, 3, 4)), 1)
    outputs = [pt.sort(x, axis=a) for a in (0, 1, 2, -1, None)] + [pt.argsort(x, axis=a, stable=True) for a in (0, -2, None)]
    compare_onnx_and_py([x], outputs, [value], opset_version=opset)


def test_symbolic_and_empty_dims(rng):
    x = pt.matrix("x")
    outputs = [pt.sort(x, axis=0), pt.argsort(x, axis=1, stable=True)]
    for shape in [(0, 3), (3, 0), (1, 1), (7, 2)]:
        compare_onnx_and_py([x], outputs, [rng.normal(size=shape)])


def test_default_quicksort_argsort_is_a_valid_argsort(rng):
    # NumPy's quicksort orders ties as it likes; ours is the stable order,
    # one NumPy could return, and it sorts the input.
    x = pt.vector("x")
    value = rng.integers(0, 4, size=500).astype("float64")
    fn = pytensor.function([x], pt.argsort(x), mode=onnx_mode())
    order = fn(value)
    np.testing.assert_array_equal(value[order], np.sort(value))
    np.testing.assert_array_equal(order, np.argsort(value, kind="stable"))


def test_sort_gradient_graph(rng):
    x = pt.vector("x")
    cost = (pt.sort(x) * pt.arange(5)).sum()
    compare_onnx_and_py([x], [pytensor.grad(cost, x)], [rng.normal(size=5)])
