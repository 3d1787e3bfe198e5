"""pytensor_onnx.testing's comparison: what it lets through and what it catches.

compare_onnx_and_py is how every rule is tested, so its default tolerance
decides what a wrong result must look like to be caught: values are held to a
relative tolerance however small they are (an absolute one only bounds
references that are exactly zero), infinities and NaN must match exactly.
"""

import numpy as np
import pytest

from pytensor_onnx.testing import DEFAULT_TOLERANCES, assert_same_result


def _fails(got, want, **kwargs):
    try:
        assert_same_result(np.asarray(got), np.asarray(want), **kwargs)
    except AssertionError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_tiny_values_are_held_to_rtol(dtype):
    # Sigmoid tails and the like: results far below the dtype's atol.
    want = np.array([1e-30, 4.2e-18, 2e-9, 0.5], dtype=dtype)
    rtol = DEFAULT_TOLERANCES[dtype][0]
    assert _fails(want * (1 + rtol / 4), want) is None  # within the tolerance
    zeroed = want.copy()
    zeroed[:3] = 0
    assert "3 of 4 values differ" in _fails(zeroed, want)
    too_large = want.copy()
    too_large[1] *= 1e4
    message = _fails(too_large, want)
    assert "at (1,)" in message


def test_exact_zero_reference_gets_the_absolute_tolerance():
    want = np.array([0.0, -0.0, 1.0])
    assert _fails(np.array([1e-13, -1e-13, 1.0]), want) is None
    assert "at (0,)" in _fails(np.array([1e-11, 0.0, 1.0]), want)
    assert _fails(np.array([0.0, 1e-7, 1.0], dtype="float32"), want.astype("float32")) is None


def test_below_the_smallest_normal_number():
    # Subnormals carry fewer bits: they are held to rtol times the smallest
    # normal number (a flush of 5e-324 to 0 is for tests claiming every bit
    # to check themselves, as test_elemwise.test_constant_extremes does).
    tiny = np.finfo("float64").tiny
    want = np.array([tiny / 2**10, tiny])
    assert _fails(want + 2 ** -1074, want) is None
    assert _fails(np.array([tiny / 2**10 + tiny * 1e-9, tiny]), want) is not None


def test_infinities_and_nan_must_match():
    want = np.array([np.inf, -np.inf, np.nan, 1.0])
    assert _fails(want.copy(), want) is None
    assert _fails(np.array([1e308, -np.inf, np.nan, 1.0]), want) is not None
    assert _fails(np.array([np.inf, np.inf, np.nan, 1.0]), want) is not None
    assert _fails(np.array([np.inf, -np.inf, 0.0, 1.0]), want) is not None
    assert _fails(np.array([np.inf, -np.inf, np.nan, np.nan]), want) is not None


def test_explicit_atol_is_assert_allclose_s():
    # Callers whose function's conditioning leaves results near zero known
    # only to an absolute error pass atol: atol + rtol * |want| everywhere,
    # as before; an array atol bounds each element.
    want = np.array([1e-20, 1.0])
    assert _fails(np.array([1e-13, 1.0]), want, atol=1e-12) is None
    assert _fails(np.array([1e-13, 1.0]), want) is not None
    assert _fails(np.array([1e-13, 1.0]), want, rtol=0, atol=np.array([1e-12, 0.0])) is None
    assert "per element" in _fails(np.array([1e-13, 1.0 + 1e-15]), want, rtol=0, atol=np.array([1e-12, 0.0]))


def test_complex_uses_its_parts_tolerance():
    want = np.array([1 + 1e-20j])
    assert _fails(np.array([1 + 1e-20j + 1e-13]), want) is None
    assert _fails(np.array([1 + 1e-9j]), want) is not None


def test_dtype_shape_and_integers_exact():
    assert "dtype" in _fails(np.zeros(2, "float32"), np.zeros(2))
    assert "shape" in _fails(np.zeros(3), np.zeros(2))
    assert _fails(np.array([2**53 + 1], dtype="int64"), np.array([2**53], dtype="int64")) is not None


def test_reference_function_runs_with_pure_python_flags_and_copies():
    # py_function's calls run with PY_MODE as PyTensor's default mode and no
    # C++ compiler, so an inner graph compiled at its first run (PyTensor
    # 2.38's OpFromGraph) is pure Python too; the caller's flags are back
    # afterwards. Its function copies like a PyTensor function (a copy asked
    # the wrapper for its attribute before it had one, and recursed).
    import copy

    import pytensor
    import pytensor.tensor as pt
    from pytensor.graph.basic import Apply
    from pytensor.graph.op import Op

    from pytensor_onnx.testing import PY_MODE, py_function

    seen = []

    class RecordFlags(Op):
        def make_node(self, x):
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, outputs):
            seen.append((pytensor.config.mode, pytensor.config.cxx))
            outputs[0][0] = inputs[0] * 2

    x = pt.vector("x")
    f = py_function([x], [RecordFlags()(x)])
    with pytensor.config.change_flags(mode="FAST_RUN"):
        out = f(np.arange(3.0))
        assert pytensor.config.mode == "FAST_RUN"
    np.testing.assert_array_equal(out[0], [0.0, 2.0, 4.0])
    assert seen == [(PY_MODE, "")]
    for twin in (copy.copy(f), copy.deepcopy(f)):
        np.testing.assert_array_equal(twin(np.arange(3.0))[0], [0.0, 2.0, 4.0])
