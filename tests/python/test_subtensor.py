"""Indexing (dispatch/subtensor.py): Subtensor, IncSubtensor, AdvancedSubtensor1,
AdvancedSubtensor, AdvancedIncSubtensor1 and AdvancedIncSubtensor, against
PyTensor's Python implementation (NumPy indexing).

PyTensor 3.3 removed AdvancedSubtensor1/AdvancedIncSubtensor1 (a vector index
is an AdvancedSubtensor there); the tests check for whichever Op the
installed line uses (``pytensor_onnx.compat``).
"""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.subtensor import (
    AdvancedIncSubtensor,
    AdvancedSubtensor,
    IncSubtensor,
    Subtensor,
)

from pytensor_onnx import compat
from pytensor_onnx.mode import onnx_mode
from pytensor_onnx.testing import compare_onnx_and_py, py_function

from helpers import ALL_DTYPES, OPSETS, compare_raises, onnx_op_types, op_types, sample


#: The Op a vector index ``x[v]`` becomes, and its set/inc form, on this PyTensor line.
VECTOR_INDEX_OP = compat.AdvancedSubtensor1 or AdvancedSubtensor
VECTOR_INC_OP = compat.AdvancedIncSubtensor1 or AdvancedIncSubtensor


def tensor3(dtype="float64", name="x"):
    return pt.tensor(name, dtype=dtype, shape=(None, None, None))


# --- Subtensor ----------------------------------------------------------------------

SLICES = [
    np.s_[1:],
    np.s_[:-1],
    np.s_[::2],
    np.s_[::-1],
    np.s_[::-2],
    np.s_[1::-1],
    np.s_[-1::-1],
    np.s_[-2:0:-1],
    np.s_[:-10:-1],
    np.s_[-10::-1],  # before the first element with a negative step: empty
    np.s_[-10:],
    np.s_[10:],
    np.s_[:10],
    np.s_[10::-1],
    np.s_[2:1],
    np.s_[-100:100:3],
    np.s_[100:-100:-3],
    np.s_[1, ::-1],
    np.s_[-1, 1:, -2],
    np.s_[:, -3],
    np.s_[0, 0, 0],
    np.s_[-3:, :2, ::-3],
    np.s_[:, :, 3:-1:-1],
]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_subtensor_constant_slices_and_indices(dtype, rng):
    x = tensor3(dtype)
    outputs = [x[index] for index in SLICES]
    fn, _ = compare_onnx_and_py([x], outputs, [sample(rng, (3, 4, 5), dtype)])
    assert Subtensor in op_types(fn)


def test_subtensor_of_static_shapes_infers_static_outputs(rng):
    x = pt.tensor("x", shape=(3, 4, 5))
    outputs = [x[index] for index in SLICES]
    fn, _ = compare_onnx_and_py([x], outputs, [rng.normal(size=(3, 4, 5))])
    for var, output in zip(fn.maker.fgraph.outputs, fn.maker.linker.onnx_model.graph.output):
        assert [d.dim_value for d in output.type.tensor_type.shape.dim] == list(var.type.shape)


@pytest.mark.parametrize("shape", [(0, 4, 5), (3, 0, 1), (1, 1, 1)])
def test_subtensor_of_empty_and_unit_axes(shape, rng):
    x = tensor3()
    outputs = [x[index] for index in SLICES if not isinstance(index, tuple)]
    compare_onnx_and_py([x], outputs, [rng.normal(size=shape)])


def test_subtensor_of_vectors_and_scalar_results(rng):
    v = pt.tensor("v", shape=(None,))
    outputs = [v[0], v[-1], v[::-1], v[1:-1], v[-7::-2]]
    compare_onnx_and_py([v], outputs, [rng.normal(size=7)])


# (Unsigned slice bounds trip an assertion in PyTensor's own rewrites.)
@pytest.mark.parametrize("index_dtype", ["int64", "int32", "int16", "int8"])
def test_subtensor_runtime_bounds(index_dtype, rng):
    x = tensor3()
    a = pt.scalar("a", dtype=index_dtype)
    b = pt.scalar("b", dtype=index_dtype)
    slices = [x[a:], x[:b], x[a:b], x[::2, b:a:-1], x[a::-1], x[:, :, b:a]]
    indexed = [x[a, b:], x[:, a, b]]
    values = rng.normal(size=(6, 5, 7))
    for start, stop in [(1, 4), (0, 0), (4, 1), (5, 2), (-2, -5), (-9, 3), (2, -9), (100, -100)]:
        if index_dtype == "int8" and start == 100:
            continue
        in_range = max(abs(start), abs(stop)) < 5
        outputs = slices + indexed if in_range else slices
        compare_onnx_and_py([x, a, b], outputs, [values, np.array(start, index_dtype), np.array(stop, index_dtype)])


@pytest.mark.parametrize("opset", [13, 18])
def test_subtensor_runtime_start_stop_step(opset, rng):
    x = tensor3()
    a, b, c = pt.lscalar("a"), pt.lscalar("b"), pt.lscalar("c")
    outputs = [x[a:b:c], x[a::c], x[:b:c], x[::c], x[1, a:b:c], x[:, ::c, -1]]
    values = rng.normal(size=(4, 5, 6))
    for start, stop, step in [(1, 3, 1), (3, 0, -1), (-1, -10, -2), (-10, 10, -1), (-10, 2, 2), (10, -10, -3), (0, 4, 5)]:
        compare_onnx_and_py([x, a, b, c], outputs, [values, np.int64(start), np.int64(stop), np.int64(step)], opset_version=opset)


@pytest.mark.parametrize("opset", [13, 18])
def test_subtensor_int64_limits_as_bounds(opset, rng):
    # ONNX Runtime reads an end of INT64_MAX as "through element 0" when the
    # step is negative; Python's slice is empty there.
    x = pt.tensor("x", shape=(None,))
    b, c = pt.lscalar("b"), pt.lscalar("c")
    big, small = 2**63 - 1, -(2**63)
    outputs = [x[:b:-1], x[:b:c], x[2:b:c], x[b::c], x[:big:-1], x[-1:big:-2], x[small:big], x[big:small:-1]]
    for stop, step in [(big, -1), (big, 1), (small, -1), (small, 2)]:
        compare_onnx_and_py([x, b, c], outputs, [rng.normal(size=4), np.int64(stop), np.int64(step)], opset_version=opset)


@pytest.mark.parametrize("opset", [13, 18])
def test_subtensor_int32_max_as_end(opset, rng):
    # ONNX Runtime reads INT32_MAX as an end like INT64_MAX ("through element
    # 0" with a negative step): x[0:2**31-1:-1] gave [x[0]] (found by the core
    # fuzzer on ONNX Runtime 1.21; 1.32 does the same).
    x = pt.tensor("x", shape=(None,))
    b, c = pt.lscalar("b"), pt.lscalar("c")
    b32 = pt.scalar("b32", dtype="int32")
    int32_max = 2**31 - 1
    outputs = [x[0:int32_max:-1], x[2:int32_max:-2], x[:b:-1], x[1:b:c], x[b32::-1], x[:b32:-1]]
    for stop, step in [(int32_max, -1), (int32_max, 1), (int32_max - 1, -1), (2, -1)]:
        compare_onnx_and_py([x, b, c, b32], outputs,
                            [rng.normal(size=4), np.int64(stop), np.int64(step), np.int32(stop)], opset_version=opset)


def test_subtensor_out_of_range_integer_index_raises(rng):
    x = tensor3()
    i = pt.lscalar("i")
    for index in (3, -4):
        compare_raises([x, i], [x[1, i]], [rng.normal(size=(2, 3, 4)), np.int64(index)], IndexError, "out of bounds")
    compare_raises([x], [x[:, 7]], [rng.normal(size=(2, 3, 4))], IndexError, "out of bounds")


def test_subtensor_zero_step_raises(rng):
    x = tensor3()
    c = pt.lscalar("c")
    compare_raises([x, c], [x[::c]], [rng.normal(size=(2, 3, 4)), np.int64(0)], ValueError, "slice step cannot be zero", onnx_fails="Slice")



@pytest.mark.parametrize("kernels", [True, False])
def test_subtensor_checks_indices_and_runtime_steps_left_to_right(kernels, rng):
    # NumPy checks the indices from left to right: an integer out of range
    # before a zero step raises IndexError, after it the step's ValueError
    # (FUZZ_SEED=3069807091: mode ONNX failed in the Slice for x[0, i, ::c]).
    x = tensor3()
    i, c, d = pt.lscalar("i"), pt.lscalar("c"), pt.lscalar("d")
    inputs = [x, i, c, d]
    mode = onnx_mode(kernels=kernels)
    cases = [  # (output, values of i, c and d, the error)
        (x[0, i, ::c], (5, 0, 1), IndexError),
        (x[::c, i], (5, 0, 1), ValueError),
        (x[::d, i, ::c], (5, 0, 1), IndexError),
        (x[::d, i, ::c], (5, 1, 0), ValueError),
        (x[i, ::d, 1:c], (-3, 1, 0), IndexError),
    ]
    for output, values, error in cases:
        values = [rng.normal(size=(2, 3, 4)), *map(np.int64, values)]
        with pytest.raises(error):
            py_function(inputs, [output], on_unused_input="ignore")(*values)
        with pytest.raises(IndexError if error is IndexError else RuntimeError) as info:
            pytensor.function(inputs, output, mode=mode, on_unused_input="ignore")(*values)
        if error is ValueError:
            assert "'step' value cannot be 0" in str(info.value) and not isinstance(info.value, IndexError)
    outputs = [case[0] for case in cases]
    for values in [(1, -1, 1), (-1, 2, -2), (0, -3, 3)]:
        compare_onnx_and_py(inputs, outputs, [rng.normal(size=(2, 3, 4)), *map(np.int64, values)],
                            onnx_mode_kwargs={"kernels": kernels})

# --- IncSubtensor ---------------------------------------------------------------------

WRITE_SLICES = [
    np.s_[1:],
    np.s_[::-1],
    np.s_[::-2],
    np.s_[-10::-1],
    np.s_[1, ::-2],
    np.s_[-1, 1:, -2],
    np.s_[0, 0, 0],
    np.s_[:, -3:100, 3:-1:-1],
    np.s_[2:1],
]


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_set_and_inc_subtensor(dtype, opset, rng):
    x = tensor3(dtype)
    y = pt.tensor("y", dtype=dtype, shape=())
    outputs = []
    for index in WRITE_SLICES:
        outputs += [pt.set_subtensor(x[index], y), pt.inc_subtensor(x[index], y)]
    fn, _ = compare_onnx_and_py([x, y], outputs, [sample(rng, (3, 4, 5), dtype), sample(rng, (), dtype)], opset_version=opset)
    assert IncSubtensor in op_types(fn)


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_inc_subtensor_broadcasts_the_increment(dtype, rng):
    x = tensor3(dtype)
    row = pt.tensor("row", dtype=dtype, shape=(None,))
    block = pt.tensor("block", dtype=dtype, shape=(None, None))
    outputs = [
        pt.inc_subtensor(x[1:, ::-2], row),
        pt.set_subtensor(x[0], block),
        pt.inc_subtensor(x[:, 1, 1:3], block),
        pt.set_subtensor(x[::-1, -1], row[:1]),
    ]
    values = [sample(rng, (3, 4, 5), dtype), sample(rng, (5,), dtype)]
    compare_onnx_and_py([x, row], [outputs[0], outputs[3]], values)
    compare_onnx_and_py([x, block], [outputs[1]], [values[0], sample(rng, (4, 5), dtype)])
    compare_onnx_and_py([x, block], [outputs[2]], [values[0], sample(rng, (3, 2), dtype)])


def test_inc_subtensor_with_runtime_bounds(rng):
    x = tensor3()
    y = pt.scalar("y")
    a, c = pt.lscalar("a"), pt.lscalar("c")
    outputs = [pt.inc_subtensor(x[a::c], y), pt.set_subtensor(x[1, a:, c], y)]
    for start, step in [(1, 1), (-1, -1), (-10, -2), (2, 2)]:
        compare_onnx_and_py([x, y, a, c], outputs, [rng.normal(size=(3, 4, 5)), 10.0, np.int64(start), np.int64(step)])


def test_inc_subtensor_of_a_scalar_and_an_empty_tensor(rng):
    x = tensor3()
    v = pt.tensor("v", shape=(None,))
    y = pt.scalar("y")
    outputs = [pt.inc_subtensor(x[1:], y), pt.set_subtensor(v[-1], y), pt.inc_subtensor(v[:], y)]
    compare_onnx_and_py([x, v, y], outputs, [np.zeros((0, 2, 3)), rng.normal(size=(4,)), 2.0])


def test_inc_subtensor_out_of_range_index_raises(rng):
    x = tensor3()
    y = pt.scalar("y")
    i = pt.lscalar("i")
    compare_raises([x, y, i], [pt.set_subtensor(x[:, i], y)], [rng.normal(size=(2, 3, 4)), 1.0, np.int64(-4)], IndexError, "out of bounds")


# --- AdvancedSubtensor1 / take --------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("index_dtype", ["int64", "int32", "int8", "uint8"])
def test_advanced_subtensor1(dtype, index_dtype, rng):
    x = tensor3(dtype)
    v = pt.tensor("v", dtype=index_dtype, shape=(None,))
    fn, _ = compare_onnx_and_py([x, v], [x[v]], [sample(rng, (4, 2, 3), dtype), np.array([0, 3, 3, 1], index_dtype)])
    assert VECTOR_INDEX_OP in op_types(fn)
    if not index_dtype.startswith("u"):
        compare_onnx_and_py([x, v], [x[v]], [sample(rng, (4, 2, 3), dtype), np.array([-1, -4, 2], index_dtype)])
    compare_onnx_and_py([x, v], [x[v]], [sample(rng, (4, 2, 3), dtype), np.array([], index_dtype)])


def test_advanced_subtensor1_out_of_range_raises(rng):
    x = tensor3()
    v = pt.lvector("v")
    for index in ([0, 4], [-5]):
        compare_raises([x, v], [x[v]], [rng.normal(size=(4, 2, 3)), np.array(index)], IndexError, "out of bounds")


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_take(axis, rng):
    x = tensor3()
    v = pt.lvector("v")
    m = pt.lmatrix("m")
    outputs = [pt.take(x, v, axis=axis), pt.take(x, m, axis=axis)]
    compare_onnx_and_py([x, v, m], outputs, [rng.normal(size=(3, 4, 3)), np.array([2, -1, 0, 2]), np.array([[1, -2], [0, 0]])])


# --- AdvancedSubtensor ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "uint64", "bool"])
def test_advanced_subtensor_integer_arrays(dtype, rng):
    x = tensor3(dtype)
    a = pt.lvector("a")
    b = pt.lvector("b")
    m = pt.lmatrix("m")
    outputs = [
        x[a, b],  # consecutive, in front
        x[:, a, b],  # consecutive, after a slice: index dims stay in place
        x[a, :, b],  # separated by a slice: index dims move to the front
        x[a, 1:, b],
        x[::-1, a, ::2],
        x[m, a],  # broadcast (2, 3) with (3,)
        x[1, a, b],  # scalar, broadcast with the arrays
        x[a, -1],
        x[:, m],
        x[m],
        x[a, b, a],
    ]
    values = [sample(rng, (4, 5, 6), dtype), np.array([0, -1, 3]), np.array([2, 2, -4]), np.array([[0, 1, -1], [3, 3, 2]])]
    fn, _ = compare_onnx_and_py([x, a, b, m], outputs, values)
    assert AdvancedSubtensor in op_types(fn)


def test_advanced_subtensor_empty_indices(rng):
    x = tensor3()
    a = pt.lvector("a")
    b = pt.lvector("b")
    outputs = [x[a, b], x[:, a, b], x[a, :, b]]
    compare_onnx_and_py([x, a, b], outputs, [rng.normal(size=(4, 5, 6)), np.array([], "int64"), np.array([], "int64")])


def test_advanced_subtensor_out_of_range_raises(rng):
    x = tensor3()
    a = pt.lvector("a")
    b = pt.lvector("b")
    compare_raises([x, a, b], [x[a, :, b]], [rng.normal(size=(4, 5, 6)), np.array([0, 1]), np.array([6, 0])], IndexError, "out of bounds")


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
def test_advanced_subtensor_boolean_masks(dtype, rng):
    x = tensor3(dtype)
    values = sample(rng, (3, 4, 5), dtype)
    mask3 = pt.tensor("mask3", dtype="bool", shape=(None, None, None))
    mask2 = pt.tensor("mask2", dtype="bool", shape=(None, None))
    mask1 = pt.tensor("mask1", dtype="bool", shape=(None,))
    a = pt.lvector("a")
    outputs = [
        x[mask3],
        x[mask2],
        x[:, mask2],
        x[1, mask2],
        x[mask1],
        x[:, :, mask1[:5]],
        x[::-1, mask1],
        x[mask1[:3], a],  # a mask with an integer array: both advanced
    ]
    masks = [rng.random((3, 4, 5)) < 0.5, rng.random((3, 4)) < 0.5, rng.random((4, 5)) < 0.5]
    masks[1][0, 0] = True
    m3, m2, m1 = masks[0], masks[1], np.array([True, False, True, True, True])
    fn, _ = compare_onnx_and_py([x, mask3, mask2, mask1, a], outputs[:2], [values, m3, m2, m1, np.array([0])])
    assert AdvancedSubtensor in op_types(fn)
    compare_onnx_and_py([x, mask3, mask2, mask1, a], outputs[2:4], [values, m3, masks[2], m1, np.array([0])])
    # 1-d masks on axis 2 (length 5), axis 0 (length 3) and axis 1 (length 4)
    compare_onnx_and_py([x, mask1, a], [outputs[5]], [values, m1, np.array([0])])
    compare_onnx_and_py([x, mask1, a], [outputs[4], outputs[7]], [values, m1[:3], np.array([2, -1])])
    compare_onnx_and_py([x, mask1, a], [outputs[6]], [values, m1[:4], np.array([0])])


@pytest.mark.parametrize("shape", [(3, 4, 5), (0, 0, 2)])
def test_slices_after_a_mask_of_several_axes(shape, rng):
    # A 2-d mask spans two axes: the slice after it is on the third (the rule
    # sliced the second: x[m, :0] gave (0, 2) for a (0, 0, 2) x, and a data
    # check failed for a (3, 4, 5) one; FUZZ_SEED=668176363).
    x = tensor3()
    mask = pt.tensor("mask", dtype="bool", shape=(None, None))
    y = pt.tensor("y", shape=(None, None))
    outputs = [x[mask, :0], x[mask, 1:], x[mask, ::-2], pt.set_subtensor(x[mask, 1:], 7.0), pt.inc_subtensor(x[mask, :2], y)]
    m = rng.random(shape[:2]) < 0.5
    updates = rng.normal(size=(int(m.sum()), min(2, shape[2])))
    compare_onnx_and_py([x, mask, y], outputs, [rng.normal(size=shape), m, updates])


def test_advanced_subtensor_all_false_and_empty_masks(rng):
    x = tensor3()
    mask = pt.tensor("mask", dtype="bool", shape=(None, None))
    compare_onnx_and_py([x, mask], [x[mask], x[:, mask]], [rng.normal(size=(3, 3, 3)), np.zeros((3, 3), bool)])
    compare_onnx_and_py([x, mask], [x[mask]], [np.zeros((0, 3, 2)), np.zeros((0, 3), bool)])


def test_advanced_subtensor_mask_shape_mismatch_raises(rng):
    x = tensor3()
    mask = pt.tensor("mask", dtype="bool", shape=(None,))
    compare_raises([x, mask], [x[:, mask]], [rng.normal(size=(2, 3, 4)), np.ones(4, bool)], IndexError, "boolean index", onnx_fails="check")
    compare_raises([x, mask], [x[mask]], [rng.normal(size=(2, 3, 4)), np.ones(1, bool)], IndexError, "boolean index", onnx_fails="check")


# --- AdvancedIncSubtensor1 ------------------------------------------------------------


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_advanced_inc_and_set_subtensor1(dtype, opset, rng):
    x = tensor3(dtype)
    y = pt.tensor("y", dtype=dtype, shape=(None, None, None))
    v = pt.lvector("v")
    outputs = [pt.inc_subtensor(x[v], y), pt.set_subtensor(x[v], y)]
    # Repeated indices: inc accumulates every increment, set keeps the last.
    index = np.array([1, -1, 3, 1, 1, 0])
    fn, results = compare_onnx_and_py(
        [x, y, v], outputs, [sample(rng, (4, 2, 3), dtype), sample(rng, (6, 2, 3), dtype), index], opset_version=opset
    )
    assert VECTOR_INC_OP in op_types(fn)


@pytest.mark.parametrize("opset", [13, 16])
def test_advanced_inc_subtensor1_broadcasts_and_handles_empty_indices(opset, rng):
    x = tensor3()
    y = pt.scalar("y")
    row = pt.tensor("row", shape=(None,))
    v = pt.lvector("v")
    outputs = [pt.inc_subtensor(x[v], y), pt.inc_subtensor(x[v], row), pt.set_subtensor(x[v], row)]
    for index in ([2, 2, 0, 2], []):
        compare_onnx_and_py([x, y, row, v], outputs, [rng.normal(size=(3, 2, 4)), 1.5, rng.normal(size=4), np.array(index, "int64")], opset_version=opset)


@pytest.mark.filterwarnings("ignore:invalid value encountered in add:RuntimeWarning")  # inf - inf in NumPy
@pytest.mark.parametrize("opset", [13, 15, 16])
def test_advanced_inc_subtensor1_many_duplicates_and_special_values(opset, rng):
    # The pre-16 recipe sums runs of equal positions; check long runs, a
    # position hit once, NaN and infinities among the increments.
    x = pt.tensor("x", shape=(None,))
    y = pt.tensor("y", shape=(None,))
    v = pt.lvector("v")
    index = np.concatenate([np.full(300, 2), rng.integers(0, 4, size=200), [6], np.full(5, 4), np.full(3, 5)])
    rng.shuffle(index)
    increments = rng.normal(size=index.size)
    increments[index == 4] = [1.0, np.inf, 2.0, -1.0, 3.0]
    increments[index == 5] = [np.inf, -np.inf, 1.0]
    values = [rng.normal(size=8), increments, index]
    values[0][6] = np.nan
    fn, results = compare_onnx_and_py([x, y, v], [pt.inc_subtensor(x[v], y)], values, opset_version=opset)
    assert results[0][4] == np.inf and np.isnan(results[0][5]) and np.isnan(results[0][6])


@pytest.mark.parametrize("n_updates", [0, 1, 2, 3, 8, 11])
def test_advanced_inc_subtensor1_static_sizes_before_opset_16(n_updates, rng):
    # With static sizes the pre-16 recipe runs just enough doubling steps.
    x = pt.tensor("x", shape=(4, 2))
    y = pt.tensor("y", shape=(n_updates, 2))
    v = pt.tensor("v", dtype="int64", shape=(n_updates,))
    index = np.resize([3, 3, 0, -1, 3], n_updates)
    values = [rng.normal(size=(4, 2)), rng.normal(size=(n_updates, 2)), index]
    fn, _ = compare_onnx_and_py([x, y, v], [pt.inc_subtensor(x[v], y)], values, opset_version=13)
    # With no update at all the model is x itself (nothing is scattered).
    assert ("ScatterND" in onnx_op_types(fn)) == (n_updates > 0)


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "uint64"])
def test_advanced_inc_subtensor1_integer_increments_wrap(dtype, opset):
    x = pt.tensor("x", dtype=dtype, shape=(None,))
    y = pt.tensor("y", dtype=dtype, shape=(None,))
    v = pt.lvector("v")
    info = np.iinfo(dtype)
    values = [np.array([info.max, 0, 5], dtype), np.array([1, info.max, info.max, 3], dtype), np.array([0, 1, 1, 0])]
    compare_onnx_and_py([x, y, v], [pt.inc_subtensor(x[v], y)], values, opset_version=opset)


@pytest.mark.parametrize("opset", [13, 18])
def test_advanced_inc_subtensor1_out_of_range_raises(opset, rng):
    x = pt.tensor("x", shape=(None, None))
    v = pt.lvector("v")
    outputs = [pt.inc_subtensor(x[v], 1.0)]
    compare_raises([x, v], outputs, [rng.normal(size=(3, 2)), np.array([0, 3])], IndexError, "out of bounds", opset_version=opset)
    outputs = [pt.set_subtensor(x[v], 1.0)]
    compare_raises([x, v], outputs, [rng.normal(size=(3, 2)), np.array([-4])], IndexError, "out of bounds", opset_version=opset)


# --- AdvancedIncSubtensor --------------------------------------------------------------


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint8", "bool"])
def test_advanced_inc_and_set_subtensor(dtype, opset, rng):
    x = tensor3(dtype)
    y = pt.tensor("y", dtype=dtype, shape=())
    a = pt.lvector("a")
    b = pt.lvector("b")
    indices = [np.s_[a, b], np.s_[:, a, b], np.s_[a, 1:, b], np.s_[::-1, a, -1], np.s_[a, b, a]]
    outputs = []
    for index in indices:
        outputs += [pt.inc_subtensor(x[index], y), pt.set_subtensor(x[index], y)]
    values = [sample(rng, (4, 4, 5), dtype), sample(rng, (), dtype), np.array([0, -1, 0, 0, 2]), np.array([1, 3, 1, 1, -4])]
    fn, _ = compare_onnx_and_py([x, y, a, b], outputs, values, opset_version=opset)
    assert AdvancedIncSubtensor in op_types(fn)


@pytest.mark.parametrize("opset", [13, 18])
def test_advanced_inc_subtensor_with_array_increments(opset, rng):
    x = tensor3()
    a = pt.lvector("a")
    m = pt.lmatrix("m")
    y = pt.tensor("y", shape=(None, None, None))
    outputs = [pt.inc_subtensor(x[m, a], y), pt.set_subtensor(x[m, a], y)]
    values = [rng.normal(size=(3, 4, 2)), np.array([0, 3, 3]), np.array([[1, 1, 1], [2, 1, -1]]), rng.normal(size=(2, 3, 2))]
    compare_onnx_and_py([x, a, m, y], outputs, values, opset_version=opset)


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("dtype", ["float64", "int8", "bool"])
def test_advanced_inc_subtensor_boolean_masks(dtype, opset, rng):
    x = tensor3(dtype)
    y = pt.tensor("y", dtype=dtype, shape=())
    mask = pt.tensor("mask", dtype="bool", shape=(None, None))
    outputs = [
        pt.set_subtensor(x[mask], y),
        pt.inc_subtensor(x[mask], y),
        pt.inc_subtensor(x[1, mask[0]], y),
    ]
    values = [sample(rng, (3, 4, 5), dtype), sample(rng, (), dtype), rng.random((3, 4)) < 0.5]
    fn, _ = compare_onnx_and_py([x, y, mask], outputs, values, opset_version=opset)
    assert AdvancedIncSubtensor in op_types(fn)


def test_advanced_inc_subtensor_ignoring_duplicates(rng):
    x = pt.tensor("x", shape=(None, None))
    y = pt.tensor("y", shape=(None,))
    a = pt.lvector("a")
    b = pt.lvector("b")
    out = pt.inc_subtensor(x[a, b], y, ignore_duplicates=True)
    values = [rng.normal(size=(3, 3)), np.array([1.0, 2.0, 4.0]), np.array([0, 0, 2]), np.array([1, 1, 0])]
    _, result = compare_onnx_and_py([x, y, a, b], [out], values)
    assert result[0][0, 1] == values[0][0, 1] + 2.0  # x[idx] += y: the last increment wins


def test_advanced_inc_subtensor_out_of_range_raises(rng):
    x = tensor3()
    a = pt.lvector("a")
    b = pt.lvector("b")
    outputs = [pt.inc_subtensor(x[a, :, b], 1.0)]
    values = [rng.normal(size=(2, 3, 4)), np.array([0, 1]), np.array([0, 4])]
    compare_raises([x, a, b], outputs, values, IndexError, "out of bounds")


# --- Constant indices of a static shape ------------------------------------------------


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("dtype", ["float64", "int8", "bool"])
def test_constant_indices_of_a_static_shape_are_constant_positions(dtype, opset, rng):
    # x's shape is in its type and every index is a constant: the model
    # reads and writes through constant positions (dispatch/subtensor.py,
    # constant_positions), with NumPy's order, repeats and negative indices.
    x = pt.tensor("x", dtype=dtype, shape=(4, 3, 5))
    y = pt.tensor("y", dtype=dtype, shape=())
    rows, cols = np.array([0, -1, 2, 0, 0]), np.array([1, 4, -5, 1, 1])
    mask = np.array([[True, False, True], [False, False, True], [True, True, False], [False, False, False]])
    indices = [np.s_[rows, :, cols], np.s_[rows, 1, cols], np.s_[1:, np.array([0, 2]), :2], np.s_[mask]]
    outputs = []
    for index in indices:
        outputs += [x[index], pt.inc_subtensor(x[index], y), pt.set_subtensor(x[index], y)]
    values = [sample(rng, (4, 3, 5), dtype), sample(rng, (), dtype)]
    fn, _ = compare_onnx_and_py([x, y], outputs, values, opset_version=opset)
    kinds = onnx_op_types(fn)
    if opset >= 16:  # (before 16, repeats add up in a recipe of its own)
        assert not {"Range", "Div", "Mod", "NonZero", "Concat"} & set(kinds), kinds


def test_constant_indices_with_array_increments_and_repeats(rng):
    x = pt.tensor("x", shape=(3, 4))
    y = pt.tensor("y", shape=(2, 3))
    rows, cols = np.array([[0, 0, 2], [2, 2, 2]]), np.array([1, 1, -1])
    outputs = [
        pt.inc_subtensor(x[rows, cols], y),  # repeats add up (np.add.at)
        pt.set_subtensor(x[rows, cols], y),  # the last write wins
        pt.inc_subtensor(x[rows, cols], y, ignore_duplicates=True),  # x[idx] += y
    ]
    values = [rng.normal(size=(3, 4)), rng.normal(size=(2, 3))]
    _, results = compare_onnx_and_py([x, y], outputs, values)
    # (rows and cols broadcast to (2, 3): x[2, 3] is selected at [0, 2] and [1, 2].)
    assert results[0][2, 3] == pytest.approx(values[0][2, 3] + values[1][0, 2] + values[1][1, 2])
    assert results[1][2, 3] == values[1][1, 2]


def test_constant_indices_out_of_range_still_raise_when_run(rng):
    # NumPy refuses these indices: the model fails when run, as PyTensor
    # raises when called (ONNX Runtime 1.21 refused to load the general
    # form, whose constant indices it folds).
    x = pt.tensor("x", shape=(2, 3))
    refused = [
        pt.inc_subtensor(x[np.array([0, 1]), np.array([0, 3])], 1.0),
        pt.set_subtensor(x[np.array([-3, 1]), np.array([0, 1])], 1.0),
        x[np.array([0, 2]), np.array([0, 1])],
    ]
    for out in refused:
        compare_raises([x], [out], [rng.normal(size=(2, 3))], IndexError, "out of bounds", onnx_fails=(None, "check"))


def test_increments_of_the_rows_shape_are_scattered_as_they_are(rng):
    # PyMC's gradient of a[idx]: y has the shape of the rows it increments,
    # so the scatter reads it as it is (no Expand); a y that broadcasts is
    # expanded.
    x = pt.tensor("x", shape=(4, 2))
    v = pt.tensor("v", dtype="int64", shape=(3,))
    rows, row = pt.tensor("rows", shape=(3, 2)), pt.tensor("row", shape=(2,))
    values = [rng.normal(size=(4, 2)), np.array([1, -1, 1]), rng.normal(size=(3, 2)), rng.normal(size=2)]
    fn, _ = compare_onnx_and_py([x, v, rows, row], [pt.inc_subtensor(x[v], rows)], values)
    assert onnx_op_types(fn) == ["Unsqueeze", "ScatterND"], onnx_op_types(fn)  # (the indices as rows)
    fn, _ = compare_onnx_and_py([x, v, rows, row], [pt.inc_subtensor(x[v], row)], values)
    assert "Expand" in onnx_op_types(fn)


@pytest.mark.parametrize("set_values", [True, False])
def test_a_one_element_update_at_an_empty_index_array(set_values):
    # x[idx] = x with x = x0[None] (1,) and idx of static shape (0,): x
    # broadcasts to the no rows selected and is returned unchanged. The
    # Expand of the update to (0,) now has a constant target, which the
    # builder guards against ONNX Runtime's ExpandElimination: with the
    # target made from Shape(idx) ONNX Runtime dropped it, and ScatterND got
    # the (1,) update and failed (FUZZ_SEED=424242, case-6b0a9b77fc07).
    x0 = pt.scalar("x0", dtype="float64")
    idx = pt.tensor("idx", shape=(0,), dtype="int64")
    x = pt.expand_dims(x0, 0)
    out = pt.set_subtensor(x[idx], x) if set_values else pt.inc_subtensor(x[idx], x)
    _, (result,) = compare_onnx_and_py([x0, idx], [out], [np.array(2.5), np.zeros(0, dtype="int64")])
    np.testing.assert_array_equal(result, [2.5])
