"""Convolve1d: np.convolve in modes full, valid and same (valid of a padded
input), every dtype, either input longer, run-time mode, gradients."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.signal import convolve1d
from pytensor.tensor.signal.conv import Convolve1d

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
    compare_raises([a, v], convolve1d(a, v), [np.zeros(0), rng.normal(size=3)], ValueError, "")


def test_convolve1d_gradient(rng):
    a, v = pt.vector("a"), pt.vector("v")
    cost = (convolve1d(a, v, mode="valid") ** 2).sum() + convolve1d(a, v).sum()
    compare_onnx_and_py([a, v], pytensor.grad(cost, [a, v]), [rng.normal(size=6), rng.normal(size=3)])
