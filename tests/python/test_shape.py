"""Shape ops (dispatch/shape.py; MakeVector, Join and Split: tensor_basic.py):
Shape, Shape_i, SpecifyShape, Reshape, JoinDims/SplitDims, MakeVector, Join,
Split, and the DimShuffle-based
squeeze/expand_dims/stack built from them, on static and unknown dims.
"""

import warnings

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.basic import Join, MakeVector, Split
from pytensor.tensor.reshape import JoinDims, SplitDims
from pytensor.tensor.shape import Reshape, Shape, Shape_i, SpecifyShape

import pytensor_onnx.mode
from pytensor_onnx import compat
from pytensor_onnx.dispatch.utils import DATA_CHECK
from pytensor_onnx.testing import check_model, compare_onnx_and_py, py_function

from helpers import ALL_DTYPES, OPSETS, compare_raises, onnx_op_types, op_types, sample


@pytest.fixture
def without_reshape_canonicalization(monkeypatch):
    """The ONNX mode without the rewrites that turn JoinDims/SplitDims into Reshape."""
    rewrites = pytensor_onnx.mode.ONNX_REWRITES.excluding(*compat.RESHAPE_DIMS_REWRITES)
    monkeypatch.setattr(pytensor_onnx.mode, "ONNX_REWRITES", rewrites)
    monkeypatch.setattr(pytensor_onnx.mode, "ONNX", pytensor_onnx.mode.onnx_mode())
    monkeypatch.setattr(pytensor_onnx.mode, "PORTABLE_ONNX", pytensor_onnx.mode.onnx_mode(kernels=False))


# --- Shape and Shape_i ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0, 4), (2, 3, 4)])
def test_shape_and_shape_i(dtype, shape, rng):
    x = pt.tensor("x", dtype=dtype, shape=(None,) * len(shape))
    outputs = [x.shape, *[x.shape[i] for i in range(len(shape))], *[x.shape[-i - 1] for i in range(len(shape))]]
    fn, results = compare_onnx_and_py([x], outputs, [sample(rng, shape, dtype)])
    assert results[0].dtype == np.int64
    if shape:
        assert Shape_i in op_types(fn)


def test_shape_of_partly_static_input_keeps_unknown_dims_dynamic(rng):
    x = pt.tensor("x", shape=(2, None, 4))
    fn, results = compare_onnx_and_py([x], [x.shape, x.shape[1], x.shape[0] * x.shape[2]], [rng.normal(size=(2, 5, 4))])
    assert list(results[0]) == [2, 5, 4]


def test_shape_with_runtime_index(rng):
    x = pt.tensor("x", shape=(None, None, None))
    i = pt.iscalar("i")
    for index in (0, 2, -1, -3):
        compare_onnx_and_py([x, i], [x.shape[i]], [rng.normal(size=(2, 3, 4)), np.int32(index)])


def test_shape_op_survives_as_onnx_shape(rng):
    x = pt.tensor("x", shape=(None, None))
    fn, _ = compare_onnx_and_py([x], [x.shape * 2], [rng.normal(size=(3, 0))])
    assert Shape in op_types(fn) or Shape_i in op_types(fn)
    assert "Shape" in onnx_op_types(fn)


# --- SpecifyShape -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
def test_specify_shape_is_the_identity_and_records_static_sizes(dtype, rng):
    x = pt.tensor("x", dtype=dtype, shape=(None, None, None))
    y = pt.specify_shape(x, (2, None, 4))
    fn, _ = compare_onnx_and_py([x], [y], [sample(rng, (2, 3, 4), dtype)])
    assert SpecifyShape in op_types(fn)
    (output,) = fn.maker.linker.onnx_model.graph.output
    dims = output.type.tensor_type.shape.dim
    assert [d.dim_value if d.HasField("dim_value") else None for d in dims] == [2, None, 4]


def test_specify_shape_with_runtime_sizes(rng):
    x = pt.tensor("x", shape=(None, None))
    n = pt.lscalar("n")
    y = pt.specify_shape(x, (n, None))
    fn, _ = compare_onnx_and_py([x, n], [y], [rng.normal(size=(3, 2)), np.int64(3)])
    assert SpecifyShape in op_types(fn)
    compare_raises([x, n], [y], [rng.normal(size=(3, 2)), np.int64(4)], AssertionError, "SpecifyShape", onnx_fails="check")


@pytest.mark.parametrize("opset", [13, 18])
def test_specify_shape_mismatch_raises(opset, rng):
    x = pt.tensor("x", shape=(None, None, None))
    y = pt.specify_shape(x, (2, None, 4))
    compare_raises([x], [y], [rng.normal(size=(4, 3, 2))], AssertionError, "SpecifyShape", opset_version=opset, onnx_fails="check")
    compare_raises([x], [y], [rng.normal(size=(2, 3, 5))], AssertionError, "SpecifyShape", opset_version=opset, onnx_fails="check")


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("kernels", [True, False])
def test_specify_shape_typed_against_its_sizes_builds_and_fails_at_run(kernels, opset):
    # FAST_RUN rewrites flatten(x, 2) of a (0, 1, 1) x into
    # SpecifyShape(Reshape(x, [0, -1]), 0, 1), typed (0, 0): its static
    # shape computed the -1 as 0 // 0. No run can give both; PyTensor's
    # raises (the reshape's ValueError; in Numba, SpecifyShape's
    # AssertionError), so must every ONNX side, not
    # refuse to build (FUZZ_SEED=3876483234: "produced size 1 on axis 1 ...,
    # but PyTensor's type says 0").
    from pytensor_onnx.export import export_function_onnx
    from pytensor_onnx.runtime import quiet_session_options

    x = pt.tensor("x", shape=(0, 1, 1))
    y = pt.flatten(x, 2)
    value = np.zeros((0, 1, 1))
    with pytest.raises(ValueError, match="cannot reshape"):
        py_function([x], [y])(value)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (PyTensor's 0 // 0)
        fast_run = pytensor.function([x], y, mode="FAST_RUN")
        node = fast_run.maker.fgraph.outputs[0].owner.inputs[0].owner
        # (PyTensor 3.3 types it (0, 0); 2.38 (None, 1), which agrees.)
        assert isinstance(node.op, SpecifyShape) and node.outputs[0].type.shape in ((0, 0), (None, 1))
        with pytest.raises((ValueError, AssertionError)):  # (the reshape, or SpecifyShape after Numba's)
            fast_run(value)
        onnx_fn = pytensor.function([x], y, mode=pytensor_onnx.mode.onnx_mode(opset_version=opset, kernels=kernels))
        assert SpecifyShape in op_types(onnx_fn)
        model = export_function_onnx(fast_run, opset_version=opset)
    with pytest.raises(RuntimeError, match="ONNX Runtime failed to run the model"):
        onnx_fn(value)
    check_model(model)
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), quiet_session_options(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception, match=DATA_CHECK + "|Reshape"):
        session.run(None, {session.get_inputs()[0].name: value})


def test_specify_broadcastable(rng):
    x = pt.tensor("x", shape=(None, None))
    y = pt.specify_broadcastable(x, 0) + pt.tensor("z", shape=(None, None))
    z = y.owner.inputs[1]
    compare_onnx_and_py([x, z], [y], [rng.normal(size=(1, 3)), rng.normal(size=(4, 3))])


# --- Reshape, flatten, JoinDims, SplitDims -------------------------------------------


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_reshape_constant_targets(dtype, opset, rng):
    x = pt.tensor("x", dtype=dtype, shape=(None, None, None))
    outputs = [x.reshape((4, 6)), x.reshape((-1,)), x.reshape((2, -1, 3)), x.reshape((1, 24, 1, 1)), x.reshape((-1, 4))]
    fn, _ = compare_onnx_and_py([x], outputs, [sample(rng, (2, 3, 4), dtype)], opset_version=opset)
    assert Reshape in op_types(fn)


@pytest.mark.parametrize("opset", OPSETS)
def test_reshape_zero_sizes_are_sizes(opset):
    # NumPy reads 0 as a size; ONNX Reshape copies the input dim unless allowzero=1.
    x = pt.tensor("x", shape=(None, None, None))
    empty = np.zeros((2, 0, 3))
    outputs = [x.reshape((0, 7)), x.reshape((3, 0)), x.reshape((0,)), x.reshape((5, 0, 2)), x.reshape((-1, 6))]
    compare_onnx_and_py([x], outputs, [empty], opset_version=opset)


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize(
    "in_shape, target",
    [
        ((2, 3, 4), [6, 4]),
        ((2, 3, 4), [-1, 2]),
        ((2, 3, 4), [4, -1]),
        ((2, 0, 4), [0, 5]),
        ((2, 0, 4), [3, 0]),
        ((2, 0, 4), [-1, 4]),
        ((1, 1, 1), [1, 1]),
    ],
)
def test_reshape_runtime_target(in_shape, target, opset, rng):
    x = pt.tensor("x", shape=(None, None, None))
    shape = pt.lvector("shape")
    y = x.reshape(shape, ndim=2)
    fn, _ = compare_onnx_and_py([x, shape], [y], [rng.normal(size=in_shape), np.array(target)], opset_version=opset)
    assert Reshape in op_types(fn)


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("dtype", ["int32", "int8", "int16"])
def test_reshape_runtime_target_of_other_int_dtypes(dtype, opset, rng):
    x = pt.tensor("x", shape=(None, None))
    shape = pt.tensor("shape", dtype=dtype, shape=(3,))
    compare_onnx_and_py([x, shape], [x.reshape(shape)], [rng.normal(size=(4, 6)), np.array([2, 3, 4], dtype=dtype)], opset_version=opset)


@pytest.mark.parametrize("opset", [13, 18])
def test_reshape_target_from_shape_pieces(opset, rng):
    x = pt.tensor("x", shape=(None, None, None))
    n = pt.lscalar("n")
    outputs = [
        x.reshape((x.shape[0], -1)),
        x.reshape((x.shape[2], x.shape[0] * x.shape[1])),
        x.reshape((n, -1, x.shape[2])),
        x.reshape((x.shape[0], x.shape[1], n, -1)),
    ]
    compare_onnx_and_py([x, n], outputs, [rng.normal(size=(2, 3, 4)), np.int64(1)], opset_version=opset)
    compare_onnx_and_py([x, n], outputs[:3], [rng.normal(size=(2, 0, 4)), np.int64(2)], opset_version=opset)
    compare_onnx_and_py([x, n], outputs[1:2], [rng.normal(size=(0, 3, 4)), np.int64(0)], opset_version=opset)


@pytest.mark.parametrize("opset", [13, 18])
def test_reshape_to_and_from_scalars(opset):
    x = pt.tensor("x", shape=(None, None))
    s = pt.scalar("s")
    outputs = [x.reshape(()), s.reshape((1, 1)), s.reshape((-1,))]
    compare_onnx_and_py([x, s], outputs, [np.array([[2.5]]), np.float64(-1.0)], opset_version=opset)


def test_reshape_of_static_input_has_static_output_shape(rng):
    x = pt.tensor("x", shape=(2, 3, 4))
    fn, _ = compare_onnx_and_py([x], [x.reshape((4, -1))], [rng.normal(size=(2, 3, 4))])
    (output,) = fn.maker.linker.onnx_model.graph.output
    assert [d.dim_value for d in output.type.tensor_type.shape.dim] == [4, 6]
    assert onnx_op_types(fn) == ["Reshape"]


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("target", [[5, 5], [-1, 5], [2, -1, -1], [-2, -1]])
def test_reshape_invalid_runtime_target_raises(target, opset, rng):
    x = pt.tensor("x", shape=(None, None, None))
    shape = pt.lvector("shape")
    y = x.reshape(shape, ndim=len(target))
    compare_raises([x, shape], [y], [rng.normal(size=(2, 3, 4)), np.array(target)], ValueError, "reshape|unknown dimension", opset_version=opset, onnx_fails="check" if opset < 14 else "Reshape")


@pytest.mark.parametrize("opset", [13, 14, 18])
@pytest.mark.parametrize("kernels", [True, False])
@pytest.mark.parametrize("target_of", ["vector", "pieces"])
@pytest.mark.parametrize("sizes", [(0, -1), (-1, 0), (0, -7)])
def test_reshape_to_a_runtime_inferred_size_beside_a_zero_raises(sizes, target_of, kernels, opset):
    # NumPy refuses to infer a size beside a 0 whatever the input; ONNX
    # Runtime infers one. A target known only at run time returned (0, 1)
    # in both paths (found by the fuzzer, FUZZ_SEED=3743763509).
    x = pt.tensor("x", shape=(None, None, None))
    if target_of == "vector":
        target = pt.lvector("target")
        y, inputs, values = x.reshape(target, ndim=2), [x, target], [np.zeros((0, 3, 1)), np.array(sizes)]
    else:
        n, m = pt.lscalar("n"), pt.lscalar("m")
        y, inputs, values = x.reshape((n, m)), [x, n, m], [np.zeros((0, 3, 1)), *map(np.int64, sizes)]
    with pytest.raises(ValueError, match="cannot reshape"):
        py_function(inputs, [y])(*values)
    fn = pytensor.function(inputs, y, mode=pytensor_onnx.mode.onnx_mode(opset_version=opset, kernels=kernels))
    with pytest.raises(RuntimeError, match="ONNX Runtime failed to run the model"):
        fn(*values)
    # (The same target with a size that is not 0 runs.)
    values[1:] = [np.array([2, -1])] if target_of == "vector" else [np.int64(2), np.int64(-1)]
    compare_onnx_and_py(inputs, [y], [np.zeros((2, 3, 1)), *values[1:]], opset_version=opset)


@pytest.mark.parametrize("opset", [14, 18])
def test_reshape_target_of_dims_needs_no_check(opset):
    # Dims read from shapes are never the inferred size: their reshape is
    # not checked for a -1 beside a 0 (no data check in the model; opset 13
    # reshapes to zero sizes with a check of its own).
    x = pt.tensor("x", shape=(None, None, None))
    fn, _ = compare_onnx_and_py([x], [x.reshape((x.shape[1], x.shape[0], x.shape[2]))], [np.zeros((2, 0, 3))], opset_version=opset)
    assert not any(DATA_CHECK in node.name for node in fn.maker.linker.onnx_model.graph.node)


@pytest.mark.parametrize("opset", [13, 18])
def test_reshape_reads_any_negative_size_as_inferred(opset, rng):
    # NumPy accepts any negative number for the one inferred size.
    x = pt.tensor("x", shape=(None, None, None))
    shape = pt.lvector("shape")
    outputs = [x.reshape(shape, ndim=2)]
    compare_onnx_and_py([x, shape], outputs, [rng.normal(size=(2, 3, 4)), np.array([-2, 12])], opset_version=opset)


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 0, 4), (0, 3, 4)])
def test_flatten(ndim, shape, opset, rng):
    x = pt.tensor("x", shape=(None, None, None))
    values = rng.normal(size=shape)
    if ndim == 2 and shape[0] == 0:
        # PyTensor reshapes to (shape[0], -1): NumPy cannot infer a size next to a 0, and the
        # rule checks it (ONNX Runtime infers one: a (0, 2, 0, 2) array to (0, -1) gave (0, 4)).
        compare_raises([x], [pt.flatten(x, ndim)], [values], ValueError, "cannot reshape", opset_version=opset, onnx_fails="check")
        return
    compare_onnx_and_py([x], [pt.flatten(x, ndim)], [values], opset_version=opset)


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("static, shape", [((0, None, None), (0, 3, 4)), ((0, 3, 4), (0, 3, 4)), ((0, None, None, None), (0, 2, 3, 4))])
def test_flatten_of_a_static_leading_zero_raises_when_called(static, shape, opset):
    # PyTensor's target is then the constant (0, -1), which NumPy refuses for
    # every input and ONNX Runtime refuses when it loads the model; mode ONNX
    # must build and raise when called, as PyTensor does (found by the fuzzer,
    # FUZZ_SEED=1739086365: the function failed to build).
    x = pt.tensor("x", shape=static)
    compare_raises([x], [pt.flatten(x, 2)], [np.zeros(shape)], ValueError, "cannot reshape", opset_version=opset, onnx_fails="check")


@pytest.mark.parametrize("opset", [13, 15, 18])
@pytest.mark.parametrize(
    "start_axis, n_axes", [(0, None), (1, None), (0, 2), (1, 2), (2, 1), (1, 0), (3, 0), (0, 0)]
)
def test_join_dims(start_axis, n_axes, opset, rng, without_reshape_canonicalization):
    x = pt.tensor("x", shape=(None, None, None))
    y = pt.join_dims(x, start_axis=start_axis, n_axes=n_axes)
    fn, _ = compare_onnx_and_py([x], [y], [rng.normal(size=(2, 3, 4))], opset_version=opset)
    assert JoinDims in op_types(fn)


@pytest.mark.parametrize("opset", [13, 18])
def test_join_dims_of_empty_arrays(opset, without_reshape_canonicalization):
    # Sizes come from the product of the joined dims, never from a -1, so
    # empty arrays join like any other.
    x = pt.tensor("x", shape=(None, None, None))
    xs = pt.tensor("xs", shape=(2, 0, 3))
    outputs = [pt.join_dims(x, 1), pt.join_dims(x, 0, 2), pt.join_dims(xs, 0), pt.join_dims(xs, 1, 2)]
    fn, _ = compare_onnx_and_py([x, xs], outputs, [np.zeros((3, 0, 4)), np.zeros((2, 0, 3))], opset_version=opset)
    assert JoinDims in op_types(fn)


@pytest.mark.parametrize("opset", [13, 15, 18])
@pytest.mark.parametrize("axis, sizes", [(0, (1, 2)), (1, (3, 1)), (-1, (2, 2)), (1, (-1, 1)), (2, (2, 1, 2))])
def test_split_dims(axis, sizes, opset, rng, without_reshape_canonicalization):
    x = pt.tensor("x", shape=(None, None, None))
    y = pt.split_dims(x, sizes, axis=axis)
    fn, _ = compare_onnx_and_py([x], [y], [rng.normal(size=(2, 3, 4))], opset_version=opset)
    assert SplitDims in op_types(fn)


@pytest.mark.parametrize("opset", [13, 18])
def test_split_dims_with_runtime_and_zero_sizes(opset, rng, without_reshape_canonicalization):
    x = pt.tensor("x", shape=(None, None))
    sizes = pt.lvector("sizes", shape=(2,))
    y = pt.split_dims(x, sizes, axis=1)
    fn, _ = compare_onnx_and_py([x, sizes], [y], [rng.normal(size=(2, 6)), np.array([3, 2])], opset_version=opset)
    assert SplitDims in op_types(fn)
    compare_onnx_and_py([x, sizes], [y], [np.zeros((2, 0)), np.array([0, 5])], opset_version=opset)


# --- squeeze / expand_dims (DimShuffle) ------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_squeeze_and_expand_dims(dtype, rng):
    x = pt.tensor("x", dtype=dtype, shape=(1, None, 1, None))
    outputs = [
        pt.squeeze(x),
        pt.squeeze(x, axis=0),
        pt.squeeze(x, axis=-2),
        pt.expand_dims(x, 0),
        pt.expand_dims(x, (-1, 1)),
        pt.expand_dims(pt.squeeze(x), -1),
    ]
    compare_onnx_and_py([x], outputs, [sample(rng, (1, 3, 1, 0), dtype)])
    compare_onnx_and_py([x], outputs, [sample(rng, (1, 2, 1, 5), dtype)])


# --- MakeVector, stack --------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "uint64", "bool"])
def test_make_vector_of_scalars(dtype, rng):
    a = pt.tensor("a", dtype=dtype, shape=())
    b = pt.tensor("b", dtype=dtype, shape=())
    y = MakeVector(dtype)(a, b, a)
    fn, results = compare_onnx_and_py([a, b], [y], [sample(rng, (), dtype), sample(rng, (), dtype)])
    assert MakeVector in op_types(fn)


def test_make_vector_of_shape_pieces_is_int64(rng):
    x = pt.tensor("x", shape=(None, None, None))
    n = pt.iscalar("n")
    y = pt.stack([x.shape[2], n, x.shape[0]])
    fn, results = compare_onnx_and_py([x, n], y, [rng.normal(size=(2, 3, 4)), np.int32(-7)])
    assert results.dtype == np.int64 and MakeVector in op_types(fn)


def test_make_vector_with_no_and_constant_inputs():
    s = pt.scalar("s")
    empty = MakeVector("float64")()
    consts = MakeVector("int32")(pt.constant(1, dtype="int32"), pt.constant(-3, dtype="int32"))
    compare_onnx_and_py([s], [s + pt.sum(empty), consts], [np.float64(2.0)])


@pytest.mark.parametrize("dtype", ["float64", "int16", "bool"])
@pytest.mark.parametrize("axis", [0, 1, -1, 3, -4])
def test_stack_tensors(dtype, axis, rng):
    x = pt.tensor("x", dtype=dtype, shape=(None, None, None))
    y = pt.tensor("y", dtype=dtype, shape=(None, None, None))
    fn, _ = compare_onnx_and_py([x, y], [pt.stack([x, y, x], axis=axis)], [sample(rng, (2, 3, 4), dtype), sample(rng, (2, 3, 4), dtype)])
    assert Join in op_types(fn)


# --- Join / concatenate ------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_concatenate(dtype, axis, rng):
    x = pt.tensor("x", dtype=dtype, shape=(None, None, None))
    y = pt.tensor("y", dtype=dtype, shape=(None, None, None))
    shape_y = [2, 3, 4]
    shape_y[axis] = 1
    fn, _ = compare_onnx_and_py(
        [x, y], [pt.concatenate([x, y, x], axis=axis)], [sample(rng, (2, 3, 4), dtype), sample(rng, shape_y, dtype)]
    )
    assert Join in op_types(fn)


@pytest.mark.parametrize("static", [True, False])
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
def test_concatenate_of_two_operands_has_numpy_shape_and_values(axis, static, rng):
    # PyTensor 3.3 moved Join's axis from the inputs to the Op: reading the
    # first tensor as the axis returned one operand, silently.
    shape_x, shape_y = [2, 3, 4], [2, 3, 4]
    shape_y[axis] = 5
    x = pt.tensor("x", shape=tuple(shape_x) if static else (None, None, None))
    y = pt.tensor("y", shape=tuple(shape_y) if static else (None, None, None))
    values = [rng.normal(size=shape_x), rng.normal(size=shape_y)]
    fn, (joined, stacked) = compare_onnx_and_py([x, y], [pt.concatenate([x, y], axis=axis), pt.stack([x, x], axis=axis)], values)
    np.testing.assert_array_equal(joined, np.concatenate(values, axis=axis))
    np.testing.assert_array_equal(stacked, np.stack([values[0], values[0]], axis=axis))


def test_concatenate_upcasts_mixed_dtypes(rng):
    x = pt.tensor("x", dtype="int8", shape=(None,))
    y = pt.tensor("y", dtype="float32", shape=(None,))
    z = pt.tensor("z", dtype="uint16", shape=(None,))
    out = pt.concatenate([x, y, z])
    assert out.dtype == "float32"
    compare_onnx_and_py([x, y, z], [out, pt.concatenate([x, z])], [np.array([-3, 4], "int8"), np.array([0.5], "float32"), np.array([60000], "uint16")])


def test_concatenate_empty_and_static_inputs(rng):
    x = pt.tensor("x", shape=(None, 3))
    y = pt.tensor("y", shape=(2, 3))
    fn, results = compare_onnx_and_py([x, y], [pt.concatenate([x, y, x]), pt.concatenate([y, y], axis=1)], [np.zeros((0, 3)), rng.normal(size=(2, 3))])
    assert results[0].shape == (2, 3)


@pytest.mark.parametrize("opset", [13, 18])
def test_join_and_split_with_a_runtime_axis(opset, rng):
    # PyTensor before 3.3 takes the axis as a graph input; each possible axis
    # becomes an If branch. PyTensor 3.3 refuses symbolic axes itself.
    x = pt.tensor("x", shape=(None, None, None))
    y = pt.tensor("y", shape=(None, None, None))
    axis = pt.iscalar("axis")
    if compat.JOIN_AXIS_IS_PROPERTY:
        with pytest.raises(TypeError, match="must be a constant integer"):
            pt.join(axis, x, y)
        with pytest.raises(TypeError, match="must be a constant integer"):
            pt.split(x, [1, 1], n_splits=2, axis=axis)
        return
    outputs = [pt.join(axis, x, y, x), *pt.split(x, [1, 1], n_splits=2, axis=axis)]
    for a in [0, 1, 2, -1, -3]:
        shape_y = [2, 2, 2]
        shape_y[a] = 3
        fn, results = compare_onnx_and_py(
            [axis, x, y], outputs, [np.int32(a), rng.normal(size=(2, 2, 2)), rng.normal(size=shape_y)], opset_version=opset
        )
        expected_shape = [2, 2, 2]
        expected_shape[a] = 7
        assert results[0].shape == tuple(expected_shape)
    assert Join in op_types(fn) and Split in op_types(fn)
    compare_raises([axis, x, y], outputs, [np.int32(3), np.ones((2, 2, 2)), np.ones((2, 2, 2))], IndexError, "", onnx_fails="check")


# --- Split ---------------------------------------------------------------------------


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("dtype", ["float64", "int32", "uint8", "bool"])
def test_split_constant_sizes(dtype, opset, rng):
    x = pt.tensor("x", dtype=dtype, shape=(None, None, None))
    outputs = [
        *pt.split(x, [1, 3], n_splits=2, axis=-1),
        *pt.split(x, [0, 2, 0], n_splits=3, axis=0),
    ]
    fn, _ = compare_onnx_and_py([x], outputs, [sample(rng, (2, 3, 4), dtype)], opset_version=opset)
    assert Split in op_types(fn)


@pytest.mark.parametrize("opset", [13, 18])
def test_split_runtime_sizes(opset, rng):
    x = pt.tensor("x", shape=(None, None))
    sizes = pt.lvector("sizes")
    outputs = pt.split(x, sizes, n_splits=3, axis=1)
    fn, _ = compare_onnx_and_py([x, sizes], outputs, [rng.normal(size=(2, 5)), np.array([2, 0, 3])], opset_version=opset)
    assert Split in op_types(fn)
    compare_raises([x, sizes], outputs, [rng.normal(size=(2, 5)), np.array([2, 2, 2])], ValueError, "Split sizes sum", opset_version=opset, onnx_fails="Split")
