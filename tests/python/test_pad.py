"""Pad: every mode PyTensor has (``median`` and odd reflection raise in
PyTensor itself), every dtype, constant and run-time widths, widths larger
than the axis, empty and unknown dims. (A 0-d input: NumPy and PyTensor
raise for any width.)"""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from pytensor_onnx.mode import onnx_mode
from pytensor_onnx.testing import compare_onnx_and_py, py_function

from helpers import ALL_DTYPES, OPSETS, compare_raises, onnx_op_types, sample

GATHER_MODES = ["wrap", "symmetric", "reflect"]


def compare_with_pytensor_or_numpy(inputs, outputs, values, expected, opset_version=None):
    """Parity with PyTensor's reference where its own graph runs; with NumPy where
    it fails (PyTensor 2.38's reflect divides by a zero period on a length-1
    axis, and its gather modes reshape an empty axis with -1; 3.3 runs both)."""
    try:
        py_function(inputs, outputs)(*values)
    except (ZeroDivisionError, ValueError):
        kwargs = {} if opset_version is None else {"opset_version": opset_version}
        fn = pytensor.function(inputs, outputs, mode=onnx_mode(**kwargs))
        for got, want in zip(fn(*values), expected, strict=True):
            np.testing.assert_allclose(got, want)
        return
    compare_onnx_and_py(inputs, outputs, values, opset_version=opset_version)
STAT_MODES = ["maximum", "minimum", "mean"]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("mode", ["constant", "edge", *GATHER_MODES])
def test_pad_every_dtype(mode, dtype, rng):
    x = pt.matrix("x", dtype=dtype)
    kwargs = {"constant_values": np.array(5, dtype=dtype)} if mode == "constant" else {}
    try:
        out = pt.pad(x, ((1, 2), (3, 0)), mode=mode, **kwargs)
    except TypeError as error:  # PyTensor 2.38 builds wrap from Repeat, which refuses uint64
        assert dtype == "uint64" and mode == "wrap", error
        pytest.skip(f"PyTensor cannot build this graph: {error}")
    fn, _ = compare_onnx_and_py([x], [out], [sample(rng, (3, 4), dtype)])
    # The rule itself ran: ONNX Pad for constant/edge, Gathers otherwise.
    assert ("Pad" if mode in ("constant", "edge") else "Gather") in onnx_op_types(fn)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("mode", GATHER_MODES)
def test_periodic_modes_widths_larger_than_the_axis(mode, opset, rng):
    x = pt.tensor3("x")
    value = rng.normal(size=(2, 3, 4))
    outputs = [pt.pad(x, ((0, 5), (7, 4), (3, 9)), mode=mode), pt.pad(x, 2, mode=mode), pt.pad(x, (1, 0), mode=mode)]
    compare_onnx_and_py([x], outputs, [value], opset_version=opset)
    # A length-1 axis (reflect repeats its one value): PyTensor 2.38's graph
    # divides by zero there, so the reference is NumPy.
    single = rng.normal(size=(2, 1))
    m = pt.matrix("m")
    fn = pytensor.function([m], pt.pad(m, ((1, 1), (2, 3)), mode=mode), mode=onnx_mode(opset_version=opset))
    np.testing.assert_array_equal(fn(single), np.pad(single, ((1, 1), (2, 3)), mode=mode))


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("mode", ["constant", "edge", *GATHER_MODES, "linear_ramp", *STAT_MODES])
def test_every_mode_with_run_time_widths_and_unknown_dims(mode, opset, rng):
    x = pt.matrix("x")
    widths = pt.matrix("widths", dtype="int64")
    out = pt.pad(x, widths, mode=mode)
    for shape, width in [((3, 4), [[1, 2], [0, 3]]), ((1, 5), [[0, 0], [2, 2]]), ((2, 2), [[4, 1], [1, 5]])]:
        value = rng.normal(size=shape)
        compare_with_pytensor_or_numpy([x, widths], [out], [value, np.array(width)],
                                       [np.pad(value, width, mode=mode)], opset_version=opset)


@pytest.mark.parametrize("opset", OPSETS)
def test_per_axis_values_ramps_and_stat_lengths(opset, rng):
    x = pt.matrix("x")
    value = rng.normal(size=(4, 5))
    outputs = [
        pt.pad(x, ((1, 2), (2, 1)), mode="constant", constant_values=((1.5, -2.0), (3.0, 4.0))),
        pt.pad(x, ((1, 2), (2, 1)), mode="linear_ramp", end_values=((1.0, -1.0), (10.0, 0.5))),
        pt.pad(x, ((3, 0), (0, 4)), mode="linear_ramp"),
    ]
    outputs += [pt.pad(x, ((1, 2), (2, 1)), mode=m, stat_length=((2, 3), (1, 4))) for m in STAT_MODES]
    outputs += [pt.pad(x, 2, mode=m) for m in STAT_MODES]
    compare_onnx_and_py([x], outputs, [value], opset_version=opset)


@pytest.mark.parametrize("dtype", ["int64", "int8", "uint16", "float32"])
def test_stat_and_ramp_modes_on_other_dtypes(dtype, rng):
    x = pt.matrix("x", dtype=dtype)
    outputs = [pt.pad(x, ((1, 1), (2, 0)), mode=m) for m in ["linear_ramp", "maximum", "minimum"]]
    compare_onnx_and_py([x], outputs, [sample(rng, (3, 4), dtype, low=0, high=50)])


def test_empty_axes(rng):
    x = pt.matrix("x")
    # An empty axis padded by zero; the other axis padded in every mode.
    modes = ["constant", *GATHER_MODES]
    outputs = [pt.pad(x, ((0, 0), (1, 2)), mode=m) for m in modes]
    empty = np.zeros((0, 3))
    compare_with_pytensor_or_numpy([x], outputs, [empty], [np.pad(empty, ((0, 0), (1, 2)), mode=m) for m in modes])
    # PyTensor's edge graph fails its own shape check here; NumPy pads.
    edge = pytensor.function([x], pt.pad(x, ((0, 0), (1, 2)), mode="edge"), mode=onnx_mode())
    assert edge(np.zeros((0, 3))).shape == np.pad(np.zeros((0, 3)), ((0, 0), (1, 2)), mode="edge").shape == (0, 6)
    compare_onnx_and_py([x], [pt.pad(x, 2, mode="constant", constant_values=7.0)], [np.zeros((0, 0))])


def test_negative_widths_raise(rng):
    x = pt.vector("x")
    widths = pt.vector("widths", dtype="int64")
    values = [rng.normal(size=3), np.array([1, -1])]
    for mode in ["constant", "edge"]:
        compare_raises([x, widths], pt.pad(x, widths, mode=mode), values, ValueError, "broadcast", onnx_fails="check")
    # NumPy raises for every mode; PyTensor's wrap graph returns some values
    # (docs/semantics.md): the model fails as NumPy does.
    fn = pytensor.function([x, widths], pt.pad(x, widths, mode="wrap"), mode=onnx_mode())
    with pytest.raises(RuntimeError, match="ONNX Runtime failed to run the model"):
        fn(*values)
