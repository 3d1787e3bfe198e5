"""Property tests: reductions and argmax/argmin agree with PyTensor's Python
implementation over dtypes, shapes (0-d, empty, static or not), axes
(None, int, tuples, negative), keepdims, and values (NaN, +-inf, type limits)."""

import math
import os

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pytensor_onnx.testing import compare_onnx_and_py, py_function

from helpers import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES
SPECIALS = [np.nan, np.inf, -np.inf]

pytestmark = pytest.mark.filterwarnings("ignore:(invalid value|overflow) encountered:RuntimeWarning")

# HYPOTHESIS_MAX_EXAMPLES=1000 for a longer search (800 per test passed).
SETTINGS = settings(
    max_examples=int(os.environ.get("HYPOTHESIS_MAX_EXAMPLES", 100)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@st.composite
def shapes_and_axes(draw, max_side=4):
    """(shape, static, axis, keepdims) with axis None, an int or a tuple, negatives included."""
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, max_side), min_size=ndim, max_size=ndim)))
    static = draw(st.booleans())
    if ndim == 0:
        axis = None
    else:
        kind = draw(st.sampled_from(["none", "int", "tuple"]))
        if kind == "none":
            axis = None
        elif kind == "int":
            axis = draw(st.integers(-ndim, ndim - 1))
        else:
            positions = draw(st.lists(st.integers(0, ndim - 1), unique=True, min_size=1, max_size=ndim))
            axis = tuple(p - ndim if draw(st.booleans()) else p for p in positions)
    return shape, static, axis, draw(st.booleans())


def reduced_size(shape, axis):
    if axis is None:
        axes = range(len(shape))
    else:
        axes = [a % len(shape) for a in np.atleast_1d(axis)]
    return math.prod(shape[a] for a in axes)


def elements(dtype, kind):
    """Values for ``dtype``: "any" covers the whole range (and NaN/inf for
    floats); "exact" gives floats whose sums are exact in any order; "small"
    keeps products small (ONNX Runtime multiplies integers in double: exact
    below 2**53)."""
    if dtype == "bool":
        return st.booleans()
    if dtype in FLOAT_DTYPES:
        width = 32 if dtype == "float32" else 64
        if kind == "any":
            finite = st.floats(allow_nan=False, allow_infinity=False, width=width)
        elif kind == "exact":
            finite = st.integers(-4000, 4000).map(lambda i: i / 4)
        else:
            finite = st.integers(-8, 8).map(lambda i: i / 2)
        return st.one_of(finite, finite, finite, st.sampled_from(SPECIALS))
    info = np.iinfo(dtype)
    if kind == "small":
        return st.integers(max(info.min, -2), 2)
    # Type limits and small values often, so that ties and wrap-around happen.
    return st.one_of(st.integers(info.min, info.max), st.sampled_from([info.min, info.max, 0, 1]))


def check(build, dtype, case, data, kind, raises_on_empty=False, low=None):
    shape, static, axis, keepdims = case
    x = pt.tensor("x", dtype=dtype, shape=shape if static else (None,) * len(shape))
    element_strategy = elements(dtype, kind)
    if low is not None:
        element_strategy = element_strategy.filter(lambda v: v >= low)
    value = data.draw(hnp.arrays(dtype, shape, elements=element_strategy))
    out = build(x, axis, keepdims)
    if raises_on_empty and reduced_size(shape, axis) == 0:
        fn = pytensor.function([x], out, mode="ONNX")
        with pytest.raises(RuntimeError, match="ONNX Runtime failed to run the model"):
            fn(value)
        py_fn = py_function([x], out)
        with pytest.raises(ValueError, match="zero-size array|empty sequence"):
            py_fn(value)
    else:
        compare_onnx_and_py([x], out, [value])


@SETTINGS
@given(dtype=st.sampled_from(ALL_DTYPES), case=shapes_and_axes(), data=st.data())
def test_sum(dtype, case, data):
    check(lambda x, axis, keepdims: pt.sum(x, axis=axis, keepdims=keepdims), dtype, case, data, "exact")


@SETTINGS
@given(dtype=st.sampled_from(ALL_DTYPES), case=shapes_and_axes(max_side=3), data=st.data())
def test_prod(dtype, case, data):
    check(lambda x, axis, keepdims: pt.prod(x, axis=axis, keepdims=keepdims), dtype, case, data, "small")


@SETTINGS
@given(
    dtype=st.sampled_from(ALL_DTYPES),
    reduction=st.sampled_from(["max", "min"]),
    case=shapes_and_axes(),
    data=st.data(),
)
def test_max_min(dtype, reduction, case, data):
    # pt.min of signed ints is -max(-x), which wraps at the type's minimum in
    # PyTensor's own graph (the ONNX mode's rewrites make it a real min).
    low = np.iinfo(dtype).min + 1 if reduction == "min" and dtype in INT_DTYPES and not dtype.startswith("u") else None
    build = getattr(pt, reduction)
    check(lambda x, axis, keepdims: build(x, axis=axis, keepdims=keepdims), dtype, case, data, "any", True, low)


@SETTINGS
@given(
    dtype=st.sampled_from(ALL_DTYPES),
    reduction=st.sampled_from(["all", "any"]),
    case=shapes_and_axes(),
    data=st.data(),
)
def test_all_any(dtype, reduction, case, data):
    build = getattr(pt, reduction)
    check(lambda x, axis, keepdims: build(x, axis=axis, keepdims=keepdims), dtype, case, data, "any")


@SETTINGS
@given(
    dtype=st.sampled_from(ALL_DTYPES),
    reduction=st.sampled_from(["argmax", "argmin"]),
    case=shapes_and_axes(),
    data=st.data(),
)
def test_argmax_argmin(dtype, reduction, case, data):
    # pt.argmin of signed ints is argmax(-x): keep the type's minimum out (see test_max_min).
    low = np.iinfo(dtype).min + 1 if reduction == "argmin" and dtype in INT_DTYPES and not dtype.startswith("u") else None
    build = getattr(pt, reduction)
    check(lambda x, axis, keepdims: build(x, axis=axis, keepdims=keepdims), dtype, case, data, "any", True, low)
