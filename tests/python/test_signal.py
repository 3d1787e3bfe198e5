"""Convolve1d: np.convolve in modes full, valid and same (valid of a padded
input), every dtype, either input longer, run-time mode, gradients."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.signal import convolve1d, convolve2d
from pytensor.tensor.blockwise import Blockwise
from pytensor.tensor.signal.conv import Convolve1d, Convolve2d

from pytensor_onnx.mode import onnx_mode
from pytensor_onnx.testing import compare_onnx_and_py

from helpers import ALL_DTYPES, OPSETS, compare_raises, op_types, sample


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_convolve1d_every_dtype_and_mode(dtype, rng):
    a = pt.vector("a", dtype=dtype)
    v = pt.vector("v", dtype=dtype)
    outputs = [convolve1d(a, v, mode=m) for m in ("full", "valid", "same")]
    fn, _ = compare_onnx_and_py([a, v], outputs, [sample(rng, 7, dtype, low=-9, high=9),
                                                  sample(rng, 3, dtype, low=-9, high=9)])
    assert Convolve1d in op_types(fn)


@pytest.mark.parametrize("opset", OPSETS)
def test_convolve1d_either_input_longer_and_unknown_lengths(opset, rng):
    a = pt.vector("a")
    v = pt.vector("v")
    outputs = [convolve1d(a, v, mode=m) for m in ("full", "valid", "same")]
    for n, k in [(6, 4), (4, 6), (1, 1), (1, 5), (5, 5), (9, 2)]:
        compare_onnx_and_py([a, v], outputs, [rng.normal(size=n), rng.normal(size=k)], opset_version=opset)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64"])
def test_integer_convolution_wraps(dtype, rng):
    info = np.iinfo(dtype)
    a = pt.vector("a", dtype=dtype)
    v = pt.vector("v", dtype=dtype)
    values = [np.array([info.max, info.max - 1, 3, info.min], dtype=dtype), np.array([info.max, 2, 7], dtype=dtype)]
    compare_onnx_and_py([a, v], [convolve1d(a, v), convolve1d(a, v, mode="valid")], values)


@pytest.mark.parametrize("opset", OPSETS)
def test_run_time_mode(opset, rng):
    a, v = pt.vector("a"), pt.vector("v")
    full = pt.scalar("full", dtype="bool")
    out = Convolve1d()(a, v, full)
    for flag in (True, False):
        fn, _ = compare_onnx_and_py([a, v, full], [out], [rng.normal(size=5), rng.normal(size=3), np.array(flag)],
                                    opset_version=opset)
    assert Convolve1d in op_types(fn)


def test_empty_input_raises(rng):
    a, v = pt.vector("a"), pt.vector("v")
    compare_raises([a, v], convolve1d(a, v), [np.zeros(0), rng.normal(size=3)], ValueError, "", onnx_fails="check")


def test_convolve1d_gradient(rng):
    a, v = pt.vector("a"), pt.vector("v")
    cost = (convolve1d(a, v, mode="valid") ** 2).sum() + convolve1d(a, v).sum()
    compare_onnx_and_py([a, v], pytensor.grad(cost, [a, v]), [rng.normal(size=6), rng.normal(size=3)])


# --- batched (Blockwise) ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_batched_convolve1d_every_dtype_and_mode(dtype, rng):
    a = pt.matrix("a", dtype=dtype)
    v = pt.vector("v", dtype=dtype)
    outputs = [convolve1d(a, v, mode=m) for m in ("full", "valid", "same")]
    fn, _ = compare_onnx_and_py([a, v], outputs, [sample(rng, (3, 7), dtype, low=-9, high=9),
                                                  sample(rng, 3, dtype, low=-9, high=9)])
    assert Blockwise in op_types(fn)


@pytest.mark.parametrize("opset", OPSETS)
def test_batched_convolve1d_broadcasts_batch_dims(opset, rng):
    a = pt.tensor("a", shape=(None, 1, None))
    v = pt.matrix("v")
    outputs = [convolve1d(a, v, mode=m) for m in ("full", "valid", "same")]
    for a_shape, v_shape in [((2, 1, 6), (4, 3)), ((3, 1, 4), (2, 6)), ((1, 1, 1), (2, 5)), ((2, 1, 5), (1, 5))]:
        fn, _ = compare_onnx_and_py([a, v], outputs, [rng.normal(size=a_shape), rng.normal(size=v_shape)],
                                    opset_version=opset)
    assert Blockwise in op_types(fn)
    # An empty batch gives an empty result of np.convolve's length (PyTensor's
    # own Blockwise refuses zero-size batches, so only the shapes are checked).
    fn = pytensor.function([a, v], outputs, mode=onnx_mode(opset_version=opset))
    got = fn(rng.normal(size=(0, 1, 6)), rng.normal(size=(2, 3)))
    assert [r.shape for r in got] == [(0, 2, 8), (0, 2, 4), (0, 2, 6)]


def test_batched_convolve1d_gradient(rng):
    a, v = pt.matrix("a"), pt.matrix("v")
    cost = (convolve1d(a, v, mode="valid") ** 2).sum() + convolve1d(a, v, mode="same").sum()
    compare_onnx_and_py([a, v], pytensor.grad(cost, [a, v]), [rng.normal(size=(2, 6)), rng.normal(size=(2, 3))])


@pytest.mark.parametrize("opset", OPSETS)
def test_batched_convolve1d_with_a_symbolic_batched_mode(opset, rng):
    a, v = pt.matrix("a"), pt.matrix("v")
    full = pt.vector("full", dtype="bool")
    out = Blockwise(Convolve1d())(a, v, full)
    values = [rng.normal(size=(3, 6)), rng.normal(size=(3, 4))]
    for flag in (True, False):
        compare_onnx_and_py([a, v, full], [out], [*values, np.full(3, flag)], opset_version=opset)
    # One batch asking for both modes: PyTensor fails, so does the model.
    compare_raises([a, v, full], out, [*values, np.array([True, False, True])], ValueError, "", onnx_fails="check")


def test_batched_convolve1d_with_both_constant_modes_is_refused():
    a, v = pt.matrix("a"), pt.matrix("v")
    out = Blockwise(Convolve1d())(a, v, pt.constant(np.array([True, False])))
    with pytest.raises(NotImplementedError, match="both modes"):
        pytensor.function([a, v], out, mode=onnx_mode())


# --- Convolve2d -------------------------------------------------------------------------------

NON_BOOL_DTYPES = [d for d in ALL_DTYPES if d != "bool"]


def _float_rtol(dtype):
    # SciPy may convolve floats by FFT ("auto"): equal up to rounding
    return {"float64": 1e-10, "float32": 1e-4}.get(dtype)


@pytest.mark.parametrize("dtype", NON_BOOL_DTYPES)
def test_convolve2d_every_dtype_and_mode(dtype, rng):
    a = pt.matrix("a", dtype=dtype)
    v = pt.matrix("v", dtype=dtype)
    outputs = [convolve2d(a, v, mode=m) for m in ("full", "valid", "same")]
    fn, _ = compare_onnx_and_py([a, v], outputs, [sample(rng, (5, 6), dtype, low=-9, high=9),
                                                  sample(rng, (3, 2), dtype, low=-9, high=9)], rtol=_float_rtol(dtype))
    assert Convolve2d in op_types(fn) or Blockwise in op_types(fn)


@pytest.mark.parametrize("opset", [13, 18, OPSETS[-1]])
def test_convolve2d_either_input_larger_boundaries_and_batches(opset, rng):
    a = pt.tensor("a", shape=(None, 1, None, None))
    v = pt.matrix("v")
    outputs = [convolve2d(a, v, mode=m) for m in ("full", "valid")]
    outputs.append(convolve2d(a, v, mode="same", boundary="wrap"))
    for a_shape, v_shape in [((2, 1, 6, 5), (3, 2)), ((1, 1, 3, 2), (4, 4))]:
        fn, _ = compare_onnx_and_py([a, v], outputs, [rng.normal(size=a_shape), rng.normal(size=v_shape)],
                                    opset_version=opset, rtol=1e-10)
    assert Blockwise in op_types(fn)


def test_convolve2d_valid_mode_needs_one_input_larger_on_both_axes(rng):
    a, v = pt.matrix("a"), pt.matrix("v")
    out = convolve2d(a, v, mode="valid")
    compare_raises([a, v], out, [rng.normal(size=(4, 2)), rng.normal(size=(2, 4))], ValueError, "at least as large", onnx_fails="check")
    compare_raises([a, v], convolve2d(a, v), [np.zeros((0, 3)), rng.normal(size=(2, 2))], ValueError, "", onnx_fails="check")


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_integer_convolution2d_wraps(dtype):
    a, v = pt.matrix("a", dtype=dtype), pt.matrix("v", dtype=dtype)
    value = np.full((2, 2), np.iinfo(dtype).max // 2 + 28, dtype=dtype)
    compare_onnx_and_py([a, v], [convolve2d(a, v)], [value, value])


def test_convolve2d_of_bools_is_refused():
    a, v = pt.matrix("a", dtype="bool"), pt.matrix("v", dtype="bool")
    with pytest.raises(NotImplementedError, match="bool"):
        pytensor.function([a, v], convolve2d(a, v), mode=onnx_mode())


def test_convolve2d_gradient(rng):
    a, v = pt.matrix("a"), pt.matrix("v")
    cost = (convolve2d(a, v, mode="valid") ** 2).sum() + convolve2d(a, v).sum()
    compare_onnx_and_py([a, v], pytensor.grad(cost, [a, v]), [rng.normal(size=(5, 4)), rng.normal(size=(2, 3))],
                        rtol=1e-10)
