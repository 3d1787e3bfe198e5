"""CheckAndRaise / Assert: the value passes when the conditions hold; running
the model fails when one does not (PyTensor raises). FAST_RUN inserts them
(a one-way split, found by the differential fuzzer, failed to convert)."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.raise_op import Assert, CheckAndRaise

from pytensor_onnx.testing import compare_onnx_and_py

from helpers import OPSETS, compare_raises, onnx_op_types


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("dtype", ["float64", "int8", "bool", "uint64"])
def test_assert_passes_the_value_when_conditions_hold(opset, dtype, rng):
    x = pt.vector("x", dtype=dtype)
    n = pt.lscalar("n")
    checked = Assert("sizes differ")(x, pt.eq(x.shape[0], n), pt.ge(n, 0))
    values = [np.asarray(rng.integers(0, 2, size=4), dtype=dtype), np.int64(4)]
    fn, _ = compare_onnx_and_py([x, n], [checked], values, opset_version=opset, optimize=False)
    assert "Where" in onnx_op_types(fn)  # the check is in the model


def test_assert_fails_at_run_time_when_a_condition_does_not_hold():
    x = pt.vector("x")
    n = pt.lscalar("n")
    checked = Assert("sizes differ")(x, pt.eq(x.shape[0], n))
    compare_raises([x, n], [checked], [np.ones(3), np.int64(2)], AssertionError, "sizes differ")


def test_check_and_raise_with_its_own_exception_type_fails_too():
    x = pt.scalar("x")
    checked = CheckAndRaise(ValueError, "x must be positive")(x, pt.gt(x, 0))
    compare_raises([x], [checked * 2], [np.float64(-1.0)], ValueError, "x must be positive")


def test_constant_true_conditions_are_dropped():
    x = pt.matrix("x")
    checked = Assert("never fails")(x, pt.as_tensor(np.array(True)))
    fn, _ = compare_onnx_and_py([x], [checked + 1], [np.ones((2, 3))], optimize=False)
    assert "Where" not in onnx_op_types(fn)


@pytest.mark.parametrize("runtime_sizes", [False, True])
def test_one_way_split_runs_in_mode_onnx(runtime_sizes, rng):
    # FAST_RUN rewrites split(x, [n], n_splits=1) to Assert(x, eq(x.shape[axis], n)).
    x = pt.matrix("x")
    sizes = pt.lvector("sizes") if runtime_sizes else [3]
    inputs = [x, sizes] if runtime_sizes else [x]
    part = pt.split(x, sizes, n_splits=1, axis=1)  # one split: a tensor, not a list
    values = [rng.normal(size=(2, 3))] + ([np.array([3])] if runtime_sizes else [])
    fn, _ = compare_onnx_and_py(inputs, [part * 2], values)
    assert any(isinstance(node.op, CheckAndRaise) for node in fn.maker.fgraph.apply_nodes) or not runtime_sizes
    if runtime_sizes:
        with pytest.raises(RuntimeError, match="ONNX Runtime failed to run the model"):
            fn(values[0], np.array([2]))
