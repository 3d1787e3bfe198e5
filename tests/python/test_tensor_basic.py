"""Allocation and construction: Alloc, AllocEmpty, ARange, Eye, TensorFromScalar,
ScalarFromTensor, second/fill, zeros/ones/full(_like), tri/tril/triu."""

import numpy as np
import pytensor.tensor as pt
import pytest
from pytensor.tensor.basic import Alloc, AllocEmpty, ARange, Eye, ScalarFromTensor, TensorFromScalar
from pytensor.tensor.blockwise import Blockwise

from pytensor_onnx.testing import compare_onnx_and_py

from helpers import ALL_DTYPES, OPSETS, compare_raises, op_types


# --- Alloc ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_alloc_scalar_value_runtime_shape(dtype):
    value = pt.scalar("value", dtype=dtype)
    n = pt.scalar("n", dtype="int64")
    m = pt.scalar("m", dtype="int32")
    outputs = [pt.alloc(value, n, m), pt.alloc(value, 2, n, 3), pt.alloc(value)]
    fn, _ = compare_onnx_and_py([value, n, m], outputs, [np.array(1, dtype=dtype), 3, 2])
    assert Alloc in op_types(fn)


def test_alloc_broadcasts_a_tensor_value(rng):
    v = pt.vector("v")
    row = pt.tensor("row", shape=(1, None))
    n = pt.scalar("n", dtype="int64")
    outputs = [pt.alloc(v, n, v.shape[0]), pt.alloc(row, 2, n, row.shape[1]), pt.alloc(v, 0, v.shape[0])]
    fn, _ = compare_onnx_and_py([v, row, n], outputs, [rng.normal(size=3), rng.normal(size=(1, 4)), 2])
    assert Alloc in op_types(fn)


def test_alloc_empty_and_static_shapes():
    value = pt.scalar("value")
    n = pt.scalar("n", dtype="int64")
    outputs = [pt.alloc(value, n, 3), pt.alloc(value, 3, 0, 2)]
    compare_onnx_and_py([value, n], outputs, [1.5, 0])


def test_alloc_of_a_size_one_value_dim_not_known_to_broadcast_raises():
    # PyTensor forbids run-time broadcasting of a dim it does not know is 1;
    # ONNX Expand would broadcast silently.
    v = pt.vector("v")
    n = pt.scalar("n", dtype="int64")
    compare_raises([v, n], pt.alloc(v, n, 3), [np.ones(1), 2], ValueError, "Runtime broadcasting not allowed", onnx_fails="check")


def test_alloc_with_a_requested_size_smaller_than_the_value_raises():
    v = pt.vector("v")
    n = pt.scalar("n", dtype="int64")
    compare_raises([v, n], pt.alloc(v, 2, n), [np.ones(3), 1], ValueError, "could not broadcast|not allowed", onnx_fails="check")


def test_alloc_negative_size_raises():
    value = pt.scalar("value")
    n = pt.scalar("n", dtype="int64")
    compare_raises([value, n], pt.alloc(value, n, 2), [1.0, -1], ValueError, "negative dimensions", onnx_fails="check")


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_alloc_empty(dtype):
    n = pt.scalar("n", dtype="int64")
    outputs = [pt.empty((n, 3), dtype=dtype), pt.empty((), dtype=dtype), pt.empty((2, 0, n), dtype=dtype)]

    def same_shape_and_dtype(onnx_value, py_value):
        # The values of an uninitialised array are undefined.
        assert onnx_value.dtype == py_value.dtype
        assert onnx_value.shape == py_value.shape

    fn, _ = compare_onnx_and_py([n], outputs, [4], assert_fn=same_shape_and_dtype)
    assert AllocEmpty in op_types(fn)


def test_alloc_empty_negative_size_raises():
    n = pt.scalar("n", dtype="int64")
    compare_raises([n], pt.empty((n, 3)), [-2], ValueError, "negative dimensions", onnx_fails="check")


# --- zeros, ones, full, second/fill ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "uint64", "bool"])
def test_zeros_ones_full(dtype):
    n = pt.scalar("n", dtype="int64")
    outputs = [
        pt.zeros((n, 3), dtype=dtype),
        pt.ones((2, n), dtype=dtype),
        pt.full((n,), 1, dtype=dtype),
        pt.zeros((), dtype=dtype),
        pt.ones((n, 0), dtype=dtype),
    ]
    compare_onnx_and_py([n], outputs, [3])


@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "uint8", "bool"])
def test_like_constructors(dtype, rng):
    x = pt.tensor("x", dtype=dtype, shape=(None, None))
    outputs = [
        pt.zeros_like(x),
        pt.ones_like(x),
        pt.full_like(x, 1),
        pt.zeros_like(x, dtype="float32"),
        pt.ones_like(x, dtype="int8"),
    ]
    compare_onnx_and_py([x], outputs, [np.zeros((2, 3), dtype=dtype)])
    compare_onnx_and_py([x], outputs, [np.zeros((0, 3), dtype=dtype)])


def test_second_fill(rng):
    x = pt.matrix("x")
    s = pt.scalar("s", dtype="int32")
    v = pt.vector("v")
    outputs = [pt.second(x, s), pt.fill(x, v), pt.second(x, 2.5)]
    compare_onnx_and_py([x, s, v], outputs, [rng.normal(size=(2, 3)), np.int32(7), rng.normal(size=3)])


# --- ARange -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "start, stop, step",
    [(0, 5, 1), (2, 11, 3), (10, 0, -2), (5, 5, 1), (5, 0, 1), (-3, 4, 2), (0.5, 4.2, 0.7), (1.0, -1.0, -0.25)],
)
def test_arange_static_bounds(start, stop, step):
    # PyTensor folds these into constants; the rule is exercised by the
    # run-time bounds below.
    compare_onnx_and_py([], pt.arange(start, stop, step), [])


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "int16", "int8"])
def test_arange_runtime_bounds(dtype, rng):
    start, stop, step = pt.scalar("start"), pt.scalar("stop"), pt.scalar("step")
    out = pt.arange(start, stop, step, dtype=dtype)
    for _ in range(5):
        if dtype.startswith("float"):
            bounds = [rng.uniform(-50, 50), rng.uniform(-50, 50), rng.choice([-1, 1]) * rng.uniform(0.05, 3)]
        else:
            bounds = [float(rng.integers(-20, 20)), float(rng.integers(-20, 100)), float(rng.integers(1, 4))]
        fn, _ = compare_onnx_and_py([start, stop, step], out, bounds)
    assert ARange in op_types(fn)


def test_arange_float_steps_do_not_drift():
    # ONNX Range adds the step repeatedly, which drifts (and stalls at 2**24
    # in float32); NumPy computes first + i * delta.
    start, stop, step = (pt.scalar(name, dtype="float32") for name in ("start", "stop", "step"))
    out = pt.arange(start, stop, step)
    assert out.dtype == "float32"
    bounds = [np.float32(0.1), np.float32(1000), np.float32(0.1)]
    compare_onnx_and_py([start, stop, step], out, bounds, rtol=0, atol=0)
    x = pt.scalar("x")
    compare_onnx_and_py([x], pt.arange(x, 2.0**24 + 40, 1.0, dtype="float32"), [2.0**24 - 5], rtol=0, atol=0)
    compare_onnx_and_py([x], pt.arange(x, 1e6, 0.37), [-12.5], rtol=0, atol=0)


def test_arange_mixed_input_dtypes():
    # Float bounds with an integer result truncate like NumPy's setitem.
    a = pt.scalar("a", dtype="float32")
    n = pt.scalar("n", dtype="int8")
    u = pt.scalar("u", dtype="uint16")
    outputs = [
        pt.arange(a, n, 1.5, dtype="int64"),
        pt.arange(n),
        pt.arange(u, 3 * u, 2),
        pt.arange(0.5, n, dtype="float32"),
    ]
    compare_onnx_and_py([a, n, u], outputs, [np.float32(0.5), np.int8(9), np.uint16(4)])


def test_arange_length_from_a_shape(rng):
    x = pt.matrix("x")
    outputs = [pt.arange(x.shape[0]), pt.arange(x.shape[1], -1, -1)]
    compare_onnx_and_py([x], outputs, [rng.normal(size=(3, 5))])


def test_arange_zero_step_raises():
    step = pt.scalar("step", dtype="int64")
    compare_raises([step], pt.arange(0, 5, step), [0], ZeroDivisionError, "division by zero", onnx_fails="check")


def test_arange_nan_bound_raises():
    stop = pt.scalar("stop")
    compare_raises([stop], pt.arange(0.0, stop, 1.0), [np.nan], ValueError, "cannot compute length", onnx_fails="check")


# --- Eye, tri, tril, triu -------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_eye_dtypes(dtype):
    n = pt.scalar("n", dtype="int64")
    fn, _ = compare_onnx_and_py([n], [pt.eye(n, dtype=dtype), pt.eye(3, 4, 1, dtype=dtype)], [3])
    assert Eye in op_types(fn)


@pytest.mark.parametrize(
    "n, m, k", [(3, 3, 0), (3, 5, 1), (5, 3, -2), (4, 4, 4), (4, 4, -7), (0, 3, 0), (3, 0, 0), (1, 1, 0)]
)
def test_eye_runtime_sizes_and_offsets(n, m, k):
    n_var = pt.scalar("n", dtype="int64")
    m_var = pt.scalar("m", dtype="int32")
    k_var = pt.scalar("k", dtype="int8")
    outputs = [pt.eye(n_var, m_var, k_var), pt.eye(n_var, m_var, k)]
    compare_onnx_and_py([n_var, m_var, k_var], outputs, [n, m, np.int8(k)])


def test_eye_negative_size_raises():
    n = pt.scalar("n", dtype="int64")
    compare_raises([n], pt.eye(n, 3), [-1], ValueError, "negative dimensions", onnx_fails="check")


def test_tri_tril_triu(rng):
    x = pt.matrix("x")
    t = pt.tensor3("t", dtype="int32")
    n = pt.scalar("n", dtype="int64")
    outputs = [
        pt.tri(n, n + 2, k=-1),
        pt.tri(n, dtype="int8"),
        pt.tril(x),
        pt.tril(x, 1),
        pt.triu(x, -1),
        pt.triu(x, 2),
        pt.tril(t, -1),
        pt.triu(t),
    ]
    compare_onnx_and_py([x, t, n], outputs, [rng.normal(size=(4, 3)), np.arange(24, dtype="int32").reshape(2, 3, 4), 3])


# --- Scalar <-> tensor ------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_tensor_from_scalar_and_scalar_from_tensor():
    # (graph inputs of ScalarType are left out: the linker feeds them to ONNX
    # Runtime as NumPy scalars, which it rejects -- reported to the lead)
    f = pt.scalar("f")
    x = pt.scalar("x", dtype="int32")
    b = pt.scalar("b", dtype="int8")
    s, i = pt.scalar_from_tensor(f), pt.scalar_from_tensor(b)
    outputs = [
        pt.tensor_from_scalar(s * s),
        pt.tensor_from_scalar(i + i),  # int8 scalar arithmetic wraps
        pt.tensor_from_scalar(pt.scalar_from_tensor(x) * pt.scalar_from_tensor(x + 1)),
    ]
    fn, _ = compare_onnx_and_py([f, x, b], outputs, [1.25, np.int32(-7), np.int8(100)])
    assert {TensorFromScalar, ScalarFromTensor} <= op_types(fn)


# --- Opsets -------------------------------------------------------------------------------------


@pytest.mark.parametrize("opset", OPSETS)
def test_allocation_across_opsets(opset, rng):
    x = pt.matrix("x")
    n = pt.scalar("n", dtype="int64")
    start = pt.scalar("start")
    outputs = [
        pt.alloc(x[0], n, x.shape[1]),
        pt.empty((n, 2)).shape,
        pt.arange(start, 10.0, 0.5),
        pt.eye(n, n + 1, -1, dtype="int32"),
        pt.triu(x, 1),
        pt.ones_like(x, dtype="bool"),
    ]
    compare_onnx_and_py([x, n, start], outputs, [rng.normal(size=(3, 4)), 2, -1.25], opset_version=opset)


# Blockwise(Eye) and Blockwise(Alloc) appear in PyTensor 2.38's batched
# Eigh/SVD gradient graphs (test_linalg_spectral checks those end to end).
_BATCHED_EYE = Blockwise(Eye(dtype="float64"), signature="(),(),()->(n,m)")
_BATCHED_ALLOC = Blockwise(Alloc(), signature="(),(),()->(n,m)")


@pytest.mark.parametrize("opset", OPSETS)
def test_batched_eye_with_an_offset_per_entry(opset):
    n, m, k = pt.lvector("n"), pt.lscalar("m"), pt.lmatrix("k")
    fn, _ = compare_onnx_and_py(
        [n, m, k], [_BATCHED_EYE(n, m, k)], [np.array([3, 3]), 4, np.array([[0, 1], [-1, 5]])], opset_version=opset
    )
    assert "Blockwise{Eye" in str(fn.maker.fgraph.toposort())  # the batched rule ran


def test_batched_eye_with_sizes_differing_between_entries_fails_as_pytensor():
    n, k = pt.lvector("n"), pt.lvector("k")
    compare_raises([n, k], _BATCHED_EYE(n, n, k), [np.array([3, 2]), np.array([0, 0])], ValueError, "", onnx_fails="check")


@pytest.mark.parametrize("opset", OPSETS)
def test_batched_alloc_of_a_value_per_entry(opset):
    value, rows = pt.dvector("value"), pt.lvector("rows")
    compare_onnx_and_py(
        [value, rows], [_BATCHED_ALLOC(value, rows, 2)], [np.array([1.5, -2.0, 0.0]), np.array([3, 3, 3])],
        opset_version=opset,
    )


def test_batched_eye_and_alloc_with_an_empty_batch_fail_as_pytensor():
    # The core sizes are batched inputs: with no batch entry they are nowhere
    # to be read, and PyTensor refuses the empty batch.
    n, k = pt.lvector("n"), pt.lvector("k")
    empty = np.zeros(0, dtype="int64")
    compare_raises([n, k], _BATCHED_EYE(n, 3, k), [empty, empty], NotImplementedError, "zero size", onnx_fails="check")
    value, rows = pt.dvector("value"), pt.lvector("rows")
    compare_raises([value, rows], _BATCHED_ALLOC(value, rows, 2), [np.zeros(0), empty], NotImplementedError, "zero size", onnx_fails="check")


def test_batched_eye_with_a_constant_batched_size():
    # A size given as a constant of shape (1,) (broadcast over the batch) is
    # not a static scalar size; conversion used to fail reading it as one.
    n, k = pt.lvector("n"), pt.lvector("k")
    out = _BATCHED_EYE(n, pt.as_tensor(np.array([4])), k)
    compare_onnx_and_py([n, k], [out], [np.array([3, 3]), np.array([0, -1])])
