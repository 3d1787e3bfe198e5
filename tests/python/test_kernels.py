"""The kernel library (src/kernels, pytensor_onnx.kernels): mode ONNX's fused element-wise nodes.

Every scalar op the kernels evaluate runs, as a one-op Composite (which mode
ONNX always gives to the kernels), on every dtype it takes over edge values,
against PyTensor's ``py`` linker; ``compare_onnx_and_py`` also runs the
portable export of the same graph. Fused graphs, broadcasting, threads and the
switches that turn the kernels off are checked here; the rest of the suite
runs mode ONNX with the kernels on as well.
"""

import itertools
import logging
import math
import os

import numpy as np
import onnxruntime as ort
import pytensor
import pytensor.scalar as ps
import pytensor.scalar.math as psm
import pytensor.tensor as pt
import pytest
from pytensor.compile.mode import Mode
from pytensor.tensor.elemwise import Elemwise

import pytensor_onnx
from pytensor_onnx import compat, kernels
from pytensor_onnx.dispatch.kernel import _KERNEL_NAMES
from pytensor_onnx.testing import compare_onnx_and_py

from helpers import compare_raises, kernel_session
from test_scalar import all_pairs, edge_values

def kernel_nodes(fn):
    return [n for n in fn.maker.linker.onnx_model.graph.node if n.domain == kernels.DOMAIN]


def stages(fn):
    """The stages of every Elemwise kernel node of ``fn``'s model (kernels.elemwise_stages)."""
    return [s for n in kernel_nodes(fn) if n.op_type.startswith("Elemwise_") for s in kernels.elemwise_stages(n)]


def test_library_is_built_and_describes_what_the_dispatch_maps():
    # One home for the op table (src/kernels/ops.cc): every PyTensor op the
    # dispatch sends to the kernels is one the library evaluates.
    assert kernels.library_path() is not None
    table = kernels.ops()
    missing = sorted(set(_KERNEL_NAMES.values()) - set(table))
    assert not missing, f"mapped in dispatch/kernel.py but not in the library: {missing}"
    assert table["GammaLn"].dtypes == {"float32", "float64"}
    assert table["Add"].arity == 2 and "bool" in table["Add"].dtypes and "bool" not in table["Sub"].dtypes


def _cases():
    for cls, name in sorted(_KERNEL_NAMES.items(), key=lambda item: item[1]):
        op = kernels.ops().get(name)
        if op is None or op.signature == "switch":
            continue
        for dtype in sorted(op.dtypes):
            yield pytest.param(cls, dtype, id=f"{name}-{dtype}")


def _op_instance(cls):
    # PyTensor's own instances (pytensor.scalar.add, ...) carry the output
    # type rule each op is meant to have.
    import pytensor.scalar.basic as psb
    import pytensor.scalar.math as psm

    for module in (psb, psm):
        for value in vars(module).values():
            if type(value) is cls:
                return value
    raise LookupError(cls)


def _values(dtype, arity):
    if arity == 1:
        return [edge_values(dtype)]
    if arity == 2:
        return list(all_pairs(dtype, dtype))
    base = edge_values(dtype)
    tuples = list(itertools.product(base[:: max(1, len(base) // 6)], repeat=arity))
    return [np.array(column, dtype=dtype) for column in zip(*tuples, strict=True)]


@pytest.mark.parametrize("cls, dtype", list(_cases()))
def test_every_op_on_every_dtype(cls, dtype, monkeypatch):
    # The op as a lone Elemwise (PyTensor's reference evaluates it with
    # NumPy's ufuncs), given to the kernels even where mode ONNX would keep a
    # native ONNX node.
    import pytensor_onnx.dispatch.kernel as kernel_dispatch

    monkeypatch.setattr(kernel_dispatch, "_NATIVE", ())
    op = _op_instance(cls)
    arity = kernels.ops()[_KERNEL_NAMES[cls]].arity
    tensors = [pt.tensor(f"x{i}", dtype=dtype, shape=(None,)) for i in range(arity)]
    result = Elemwise(op)(*tensors)
    values = _values(dtype, arity)
    if cls is ps.Pow and np.dtype(dtype).kind in "iu":
        # (NumPy, PyTensor's reference, refuses negative integer powers; the
        # kernels give there what the portable graph gives: the test below.)
        keep = values[1] >= 0
        values = [v[keep] for v in values]
    if cls in (psm.GammaIncInv, psm.GammaIncCInv):
        # SciPy answers a = -0.0 unlike a = +0.0 out of the domain (0 where
        # +0.0 gives NaN); the kernels follow +0.0.
        keep = ~((values[0] == 0) & np.signbit(values[0]))
        values = [v[keep] for v in values]
    with np.errstate(all="ignore"):
        if cls in _SCIPY_DIFFERS_AT_THE_EDGES:
            fn = _matches_the_portable_graph(tensors, result, values)
        else:
            # The kernels against PyTensor; the portable recipes' edges are the
            # special-function test files' business.
            # (Zero signs, but where PyTensor leaves them open or the kernels
            # differ on purpose: a maximum or minimum of -0.0 and +0.0, and C's
            # round(), +0.0 at +0.0; docs/semantics.md.)
            fn, _ = compare_onnx_and_py(tensors, [result], values, optimize=False, check_export=False,
                                        zero_signs=cls not in (ps.Maximum, ps.Minimum, ps.RoundHalfAwayFromZero))
    assert [n.op_type for n in kernel_nodes(fn)] == [f"Elemwise_{result.type.dtype}"]


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
def test_integer_powers_wrap_and_match_the_portable_graph(dtype):
    # Squaring and multiplying with wrapping products (NumPy's power, which
    # overflows as its multiplications do), exponents of every magnitude,
    # and a negative one (NumPy refuses it) as the portable graph takes it.
    info = np.iinfo(dtype)
    bases = np.array([0, 1, 2, 3, 7, info.max, info.min, info.max // 3], dtype=dtype)
    exponents = np.array([0, 1, 2, 5, 13, 40, info.bits - 1, info.max], dtype=dtype)
    if info.min < 0:
        bases = np.concatenate([bases, np.array([-1, -2, -3], dtype=dtype)])
        exponents = np.concatenate([exponents, np.array([-1, -3, info.min], dtype=dtype)])
    b, e = (np.array(c, dtype=dtype) for c in zip(*itertools.product(bases, exponents), strict=True))
    x, y = pt.vector("x", dtype=dtype), pt.vector("y", dtype=dtype)
    fn = pytensor.function([x, y], x**y, mode="ONNX")
    assert [n.op_type for n in kernel_nodes(fn)] == [f"Elemwise_{dtype}"]
    got = fn(b, e)
    np.testing.assert_array_equal(got, pytensor.function([x, y], x**y, mode=pytensor_onnx.onnx_mode(kernels=False))(b, e))
    with np.errstate(over="ignore"):
        fine = e >= 0
        np.testing.assert_array_equal(got[fine], np.power(b[fine], e[fine]))


#: Kernels written from their portable recipes, whose values at the edges
#: (infinite and huge orders and arguments) are mpmath's where SciPy's
#: (PyTensor's reference) are not: tests/python/test_special_bessel_*.py and
#: test_special_hyp2f1.py check those against mpmath. Here the kernel must
#: give the recipe's values.
_SCIPY_DIFFERS_AT_THE_EDGES = {psm.Jv, psm.Ive, psm.Kve, psm.Hyp2F1, psm.J0, psm.J1} | (
    {compat.Iv} if compat.Iv is not None else set()
)  # (J0 and J1: SciPy 1.17's at x = +-1e30 are 30% off, 1.18's are not)


def _matches_the_portable_graph(tensors, result, values):
    fn = pytensor.function(tensors, result, mode="ONNX")
    portable = pytensor.function(tensors, result, mode=pytensor_onnx.onnx_mode(kernels=False))
    got, want = fn(*values), portable(*values)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    tol = 1e-12 if got.dtype == "float64" else 1e-6
    # (Signs of zero aside: ONNX Runtime's Where gives +0 for a -0 it
    # selects, so the portable graph's J1(-0) is +0 where SciPy's is -0.)
    np.testing.assert_allclose(got, want, rtol=tol, atol=0)
    return fn


def test_fused_graph_is_one_node_and_matches(rng):
    # (Static sizes: with unknown ones the model also checks that the inputs'
    # shared dims agree, dispatch/broadcast.py, which is shape work too.)
    x = pt.matrix("x", shape=(3, 5))
    y = pt.vector("y", shape=(5,))
    n = pt.vector("n", dtype="int64", shape=(5,))
    out = pt.gammaln(pt.exp(x) + 1) * y - pt.psi(y + 2) + pt.switch(x > 0, n, -n) // 3 + pt.erfinv(pt.tanh(x) / 2)
    fn, _ = compare_onnx_and_py(
        [x, y, n], [out], [rng.normal(size=(3, 5)), rng.normal(size=5), np.arange(-2, 3)], rtol=1e-13
    )
    # PyTensor's fusion stops at Erfinv (no C code) and at broadcasting
    # changes; every fused piece and special function is one kernel node, what
    # is left is native (Neg) or shape work.
    # The four pieces are stages of one node (src/core/passes/merge_kernel_stages.h).
    kinds = [node.op_type for node in fn.maker.linker.onnx_model.graph.node]
    assert kinds.count("Elemwise_float64") == 1
    assert len(stages(fn)) == 4
    assert set(kinds) <= {"Elemwise_float64", "Unsqueeze", "Neg"}, kinds


def test_outputs_of_several_dtypes_and_broadcasting(rng):
    x = pt.tensor("x", shape=(None, 1, None))
    y = pt.tensor("y", shape=(None, None))
    outs = [pt.exp(x) + y, pt.lt(x, y) | pt.isnan(y), pt.cast(x * 3, "int32") + 1]
    for shapes in [((2, 1, 3), (4, 3)), ((1, 1, 1), (1, 1)), ((0, 1, 3), (4, 3)), ((2, 1, 700), (4, 700))]:
        values = [rng.normal(size=shapes[0]), rng.normal(size=shapes[1])]
        fn, _ = compare_onnx_and_py([x, y], outs, values)
    # (How PyTensor fuses the three differs between its lines; the bool one
    # is fused on both.)
    assert "Elemwise_bool" in {n.op_type for n in kernel_nodes(fn)}


def test_large_arrays_run_on_the_thread_pool_with_the_serial_results(rng):
    # Above the parallel threshold the kernel splits the array into tasks for
    # ONNX Runtime's intra-op threads; 1 and 2 threads give the same bits.
    x = pt.vector("x")
    out = pt.gammaln(pt.abs(x) + 0.5) - pt.log1p(pt.exp(-x))
    value = rng.normal(size=200_003) * 10
    results = []
    for threads in (1, 2):
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        fn = pytensor.function([x], out, mode=pytensor_onnx.onnx_mode(session_options=options, kernels=True))
        assert kernel_nodes(fn)
        results.append(fn(value))
    np.testing.assert_array_equal(results[0], results[1])
    reference = pytensor.function([x], out, mode=pytensor_onnx.onnx_mode(kernels=False))(value)
    # (The difference cancels next to zero: the absolute error is the terms'.)
    np.testing.assert_allclose(results[0], reference, rtol=1e-12, atol=1e-14)


def test_shapes_that_do_not_broadcast_fail_the_run_with_their_shapes(monkeypatch):
    # The model's own broadcast check (dispatch/broadcast.py) fails such a
    # run first, with PyTensor's ValueError; without it (graphs it does not
    # cover, such as Scan bodies) the kernel's own check names the shapes.
    from pytensor_onnx.dispatch import broadcast

    monkeypatch.setattr(broadcast, "ENABLED", False)
    x, y = pt.vector("x"), pt.vector("y")
    fn = pytensor.function([x, y], pt.exp(x) * y, mode=pytensor_onnx.onnx_mode(kernels=True))
    assert kernel_nodes(fn)
    with pytest.raises(RuntimeError, match=r"Elemwise: Input dimension mismatch: input shapes \(\d,\) \(\d,\) do not broadcast") as info:
        fn(np.ones(3), np.ones(4))
    assert isinstance(info.value, ValueError)  # (PyTensor's, as the node's strict axes stand for its check)


def test_leading_axes_added_or_dropped_are_read_past(rng):
    # PyTensor's ExpandDims of a scalar parameter and Squeeze of a length-1
    # axis, everywhere in PyMC's graphs, are no nodes of their own in mode
    # ONNX: the kernel node reads their operands (src/core/passes/fold_into_kernels.h).
    x, s, v = pt.vector("x"), pt.scalar("s"), pt.vector("v", shape=(1,))
    outs = [pt.gammaln(pt.abs(x * s) + 1), pt.erf(v.squeeze()) * s]
    values = [rng.normal(size=5), np.array(0.7), np.array([0.3])]
    fn, results = compare_onnx_and_py([x, s, v], outs, values)
    assert [n.op_type for n in fn.maker.linker.onnx_model.graph.node] == ["Elemwise_float64"]
    assert len(stages(fn)) == 2
    assert [r.shape for r in results] == [(5,), ()]
    # The portable graph keeps them.
    exported = {n.op_type for n in pytensor_onnx.export_onnx([x, s, v], outs).graph.node}
    assert {"Unsqueeze", "Squeeze"} <= exported


def test_constant_inputs_of_kernel_nodes(rng):
    # A kernel node reads its session's constants (the graph's data, the
    # shared values mode ONNX bakes in) once, when ONNX Runtime creates it
    # (src/kernels/constant_inputs.h): results must follow every call's
    # inputs, a constant of fewer axes read past its folded leading axes, and
    # a shared value set anew (a new session's constants).
    data = rng.normal(size=(3, 4))
    weights = pytensor.shared(rng.normal(size=4), name="weights")
    x, s = pt.matrix("x"), pt.scalar("s")
    outs = [pt.exp(x * pt.constant(data) * s) + weights, (pt.log1p(x**2) * pt.constant(data[0])).sum()]
    fn, _ = compare_onnx_and_py([x, s], outs, [rng.normal(size=(3, 4)), np.float64(0.5)])
    assert all(n.op_type.startswith("Elemwise_") for n in fn.maker.linker.onnx_model.graph.node)
    default = pytensor.function([x, s], outs, mode="FAST_COMPILE")
    for _ in range(3):
        values = [rng.normal(size=(3, 4)), np.float64(rng.normal())]
        for got, want in zip(fn(*values), default(*values), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-15)
    weights.set_value(rng.normal(size=4))
    values = [rng.normal(size=(3, 4)), np.float64(0.25)]
    for got, want in zip(fn(*values), default(*values), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-15)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_sigmoid_is_scipys_expit_to_the_bit(rng, dtype):
    # PyTensor's py linker computes sigmoid with scipy.special.expit,
    # 1 / (1 + exp(-x)) in the dtype's precision (its C code too): below
    # -88 in float32 (-709 in float64) exp(-x) overflows and the result is
    # 0, and for negative x the other form, exp(x) / (1 + exp(x)), differs
    # in the last bit (FUZZ_SEED=455654170).
    from scipy.special import expit

    x = pt.vector("x", dtype=dtype)
    edges = [-88.0, -89.0, -100.0, -104.0, -709.0, -710.0, -720.0, -745.0, -746.0, -0.0, 0.0, 30.0, 90.0,
             np.inf, -np.inf, np.nan]
    value = np.concatenate([rng.uniform(-60, 60, 3000), edges]).astype(dtype)
    out = pt.sigmoid(x) * 2  # (a Composite: a kernel node; a lone sigmoid is ONNX Runtime's Sigmoid)
    fn, _ = compare_onnx_and_py([x], [out], [value])
    assert [n.op_type for n in fn.maker.linker.onnx_model.graph.node] == [f"Elemwise_{dtype}"]
    np.testing.assert_array_equal(fn(value)[0], expit(value) * np.asarray(2, dtype=dtype))


def test_a_kernel_node_refuses_to_squeeze_an_axis_that_is_not_1():
    # What the Squeeze it replaced would have refused (input of shape (2,)
    # where the node's output is 0-d).
    from onnx import TensorProto, helper

    node = helper.make_node(
        "Elemwise_float64", ["v"], ["y"], domain=kernels.DOMAIN,
        input_dtypes="float64", program="Neg float64 0", output_registers=[1], rank=0,
    )
    session = _kernel_session([node], [helper.make_tensor_value_info("v", TensorProto.DOUBLE, [None])],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [])])
    assert session.run(None, {"v": np.array([2.5])})[0] == -2.5
    with pytest.raises(Exception, match=r"input 0 of shape \(2,\) cannot be squeezed to rank 0"):
        session.run(None, {"v": np.array([1.0, 2.0])})


@pytest.mark.parametrize("size", [4, 300])
def test_dimshuffles_are_read_as_views(rng, size):
    # PyTensor's DimShuffles that add or drop axes anywhere, or transpose,
    # are no nodes of their own in mode ONNX: the kernel node reads their
    # operands through strides (attribute input_axes,
    # src/core/passes/fold_into_kernels.h). 300 x 300 float64 runs over many
    # blocks, and its 2-d transposes (innermost axis moved, 90,000 elements)
    # keep their Transpose nodes, as copying costs less than strided reads.
    x, v = pt.matrix("x", shape=(size, size)), pt.vector("v", shape=(size,))
    t = pt.tensor3("t", shape=(size, 1, 3))
    s = pt.tensor3("s", shape=(2, size, 3))
    outs = [
        pt.exp(x.T) * v[:, None] + x,
        pt.log1p(t.squeeze(1) ** 2) - v[:, None],
        s.transpose(1, 0, 2) * 2.5 + x[:, :1, None],
        pt.sqrt(pt.abs(v[None, :, None] + s)),
    ]
    values = [rng.normal(size=(size, size)), rng.normal(size=size), rng.normal(size=(size, 1, 3)),
              rng.normal(size=(2, size, 3))]
    fn, _ = compare_onnx_and_py([x, v, t, s], outs, values)
    ops = [n.op_type for n in fn.maker.linker.onnx_model.graph.node]
    assert not {"Unsqueeze", "Squeeze"} & set(ops), ops
    assert ops.count("Transpose") == (0 if size == 4 else 1), ops
    views = [s for s in stages(fn) if "input_axes" in s]
    assert len(views) >= 3
    # x and x.T, one value read twice (one node input of the merged node).
    assert any(len(set(s["sources"])) < len(s["sources"]) for s in views) == (size == 4)
    # The portable graph keeps them.
    exported = {n.op_type for n in pytensor_onnx.export_onnx([x, v, t, s], outs).graph.node}
    assert {"Transpose", "Unsqueeze", "Squeeze"} <= exported


@pytest.mark.parametrize("rows, cols", [(70, 3), (300, 3), (171, 7), (3, 700), (5, 1), (1, 6), (2000, 2)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int16", "int8"])
def test_matrix_broadcasts_in_blocks_that_start_mid_row(rng, rows, cols, dtype):
    # A column (rows, 1) and a row (cols,) broadcast against a matrix are
    # copied into each block of 512 elements by a walk of their own
    # (evaluate.cc, gather_matrix_broadcast): blocks start mid-row where cols
    # does not divide 512, a row of 700 is longer than a block, 2000 x 2
    # runs on the pool's tasks; elements of 8, 4, 2 and 1 bytes.
    x = pt.matrix("x", shape=(rows, cols), dtype=dtype)
    column = pt.matrix("column", shape=(rows, 1), dtype=dtype)
    row = pt.vector("row", shape=(cols,), dtype=dtype)
    outs = [x * column + row, pt.maximum(x, column[::-1]) - row[::-1], pt.lt(column, row) & pt.gt(x, 0)]
    if dtype.startswith("float"):
        outs[0] = pt.exp(outs[0] / 8)
    draw = (lambda shape: rng.normal(size=shape)) if dtype.startswith("float") else (
        lambda shape: rng.integers(-9, 10, size=shape))
    values = [draw(shape).astype(dtype) for shape in [(rows, cols), (rows, 1), (cols,)]]
    fn, results = compare_onnx_and_py([x, column, row], outs, values)
    # (The reversals are ONNX Slices; the rest is kernel nodes.)
    ops = [n.op_type for n in fn.maker.linker.onnx_model.graph.node]
    assert set(ops) - {"Slice"} <= {"Elemwise_bool", f"Elemwise_{dtype}"} and f"Elemwise_{dtype}" in ops, ops
    # (Independently of the kernels: NumPy's own broadcasting.)
    x_v, column_v, row_v = values
    np.testing.assert_array_equal(results[1], np.maximum(x_v, column_v[::-1]) - row_v[::-1])
    np.testing.assert_array_equal(results[2], (column_v < row_v) & (x_v > 0))


_kernel_session = kernel_session


def _one_kernel_node_session(inputs, output_rank, node_inputs=None, **attrs):
    # A session of one hand-made Elemwise_float64 node reading `inputs`
    # (name -> rank, None: any; the node's inputs `node_inputs`, by default
    # each once), y = x0 + x1 + ...
    from onnx import TensorProto, helper

    names = node_inputs or list(inputs)
    program = ";".join(f"Add float64 {0 if k == 0 else len(names) + k - 1} {k + 1}" for k in range(len(names) - 1))
    node = helper.make_node(
        "Elemwise_float64", names, ["y"], domain=kernels.DOMAIN, input_dtypes=" ".join(["float64"] * len(names)),
        program=program, output_registers=[2 * len(names) - 2], **attrs,
    )
    return _kernel_session(
        [node],
        [helper.make_tensor_value_info(n, TensorProto.DOUBLE, None if r is None else [None] * r)
         for n, r in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [None] * output_rank)],
    )


def test_a_view_refuses_what_its_dimshuffle_would(rng):
    # input_axes records (input, its rank, the output axis of each of its
    # axes or -1): a is (n, 1, m) read as (m, n) with its axis 1 dropped,
    # which must then be 1 as the Squeeze it replaced would require.
    session = _one_kernel_node_session({"a": None, "b": 2}, 2, rank=2, input_axes=[0, 3, 1, -1, 0])
    a, b = rng.normal(size=(4, 1, 3)), rng.normal(size=(3, 4))
    np.testing.assert_array_equal(session.run(None, {"a": a, "b": b})[0], a[:, 0, :].T + b)
    with pytest.raises(Exception, match=r"input 0 of shape \(4, 2, 3\) cannot be squeezed on axis 1"):
        session.run(None, {"a": rng.normal(size=(4, 2, 3)), "b": b})
    with pytest.raises(Exception, match=r"input 0 of shape \(4, 3\) is read as an array of rank 3"):
        session.run(None, {"a": rng.normal(size=(4, 3)), "b": b})
    with pytest.raises(Exception, match=r"do not broadcast"):
        session.run(None, {"a": a, "b": rng.normal(size=(4, 3))})


def test_one_value_read_as_two_views(rng):
    # b and b.T: the node's inputs 1 and 2 name one value, which the kernel
    # reads once and shares (same_value_as in src/kernels/elemwise.h).
    session = _one_kernel_node_session({"a": 2, "b": 2}, 2, node_inputs=["a", "b", "b"], rank=2,
                                       input_axes=[2, 2, 1, 0])
    for n in (3, 40):
        a, b = rng.normal(size=(n, n)), rng.normal(size=(n, n))
        np.testing.assert_array_equal(session.run(None, {"a": a, "b": b})[0], a + b + b.T)


@pytest.mark.parametrize(
    "attrs, message",
    [
        (dict(input_axes=[0, 2, 1, 0]), "needs the attribute 'rank'"),
        (dict(rank=2, input_axes=[0, 2, 1, 1]), "to axis 1 of an output of rank 2 \\(each axis at most once\\)"),
        (dict(rank=2, input_axes=[0, 2, 2, 0]), "to axis 2 of an output of rank 2"),
        (dict(rank=2, input_axes=[5, 2, 1, 0]), "names input 5"),
        (dict(rank=2, input_axes=[0, 2, 1, 0, 0, 2, 0, 1]), "names input 0"),
        (dict(rank=2, input_axes=[0, 3, 1, 0]), "ends inside a record"),
        (dict(rank=2**40, input_axes=[0, 2, 1, 0]), "attribute 'rank' is 1099511627776; at most 1024 dims"),
    ],
)
def test_malformed_input_axes_fail_the_session(attrs, message):
    with pytest.raises(Exception, match=f"input_axes' {message}" if "needs" in message else message):
        _one_kernel_node_session({"a": 2, "b": 2}, 2, **attrs)


def _declared_shapes_session(declared, **attrs):
    # y = a + b, one hand-made Elemwise_float64 node over inputs declared
    # with the shapes `declared` (name -> shape) and the node's `attrs`.
    from onnx import TensorProto, helper

    node = helper.make_node("Elemwise_float64", ["a", "b"], ["y"], domain=kernels.DOMAIN,
                            input_dtypes="float64 float64", program="Add float64 0 1", output_registers=[2], **attrs)
    return _kernel_session(
        [node],
        [helper.make_tensor_value_info(n, TensorProto.DOUBLE, s) for n, s in declared.items()],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)],
    )


def test_inputs_of_recorded_shapes_are_read_without_asking(rng):
    # input_shapes records (input, dtype, rank, dims) for graph inputs whose
    # shapes are checked before the run (src/core/passes/record_input_shapes.h):
    # a (3,) and b () here.
    session = _declared_shapes_session({"a": [3], "b": []}, input_shapes=[0, 11, 1, 3, 1, 11, 0])
    a, b = rng.normal(size=3), np.array(rng.normal())
    np.testing.assert_array_equal(session.run(None, {"a": a, "b": b})[0], a + b)
    # ONNX Runtime checks the vector's shape; the kernel never sees another.
    with pytest.raises(Exception, match="invalid dimensions for input: a"):
        session.run(None, {"a": rng.normal(size=4), "b": b})


@pytest.mark.parametrize(
    "records, message",
    [
        ([0, 11, 1, 4], "says input 0 is not what the model declares it is"),  # (a is (3,))
        ([1, 11, 1, 3], "says input 1 is not what the model declares it is"),  # (b is ())
        ([0, 1, 1, 3], "says input 0 is not what the model declares it is"),  # (a is float64)
        ([2, 11, 0], "names input 2: each of the node's 2 inputs once"),
        ([0, 11, 1, 3, 0, 11, 1, 3], "names input 0: each of the node's 2 inputs once"),
        ([0, 11, 2, 3], "gives input 0 a rank of 2 it has no dims for"),
        ([0, 11], "ends inside a record"),
        ([0, 11, 1, -3], "gives input 0 a negative size"),
    ],
)
def test_malformed_input_shapes_fail_the_session(records, message):
    # A record that differs from the model's own declaration would have the
    # kernel read past the end of a smaller array: refused.
    with pytest.raises(Exception, match=f"input_shapes' {message}"):
        _declared_shapes_session({"a": [3], "b": []}, input_shapes=records)


def _packed_node_session(packed_outputs, node_outputs=("e", "p")):
    # One hand-made Elemwise_float64 node over x (a vector): sum(exp(x)),
    # exp(x), sum(exp(x)), with attribute packed_outputs
    # (src/core/passes/pack_small_arrays.h).
    from onnx import TensorProto, helper

    node = helper.make_node("Elemwise_float64", ["x"], list(node_outputs), domain=kernels.DOMAIN, input_dtypes="float64",
                            program="Exp float64 0", output_registers=[1, 1, 1], output_reductions=[1, 0, 1],
                            packed_outputs=packed_outputs)
    return _kernel_session(
        [node],
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [None])],
        [helper.make_tensor_value_info(name, TensorProto.DOUBLE, None) for name in node_outputs],
    )


def test_packed_scalars_are_the_elements_of_the_last_output(rng):
    x = rng.normal(size=5)
    e, packed = _packed_node_session([1, -1, 0]).run(None, {"x": x})
    np.testing.assert_array_equal(e, np.exp(x))
    assert packed.shape == (2,) and packed.dtype == np.float64
    # (The kernel's sum of the same terms: the unpacked node's bits.)
    (s, e2, s2) = _packed_node_session(None, ("s", "e", "s2")).run(None, {"x": x})
    np.testing.assert_array_equal(packed, [s2, s])


@pytest.mark.parametrize(
    "packed_outputs, message",
    [
        ([0, -1], "has 2 entries for the stages' 3 outputs"),
        ([-1, -1, -1], "must pack some outputs into the node's last"),
        ([0, -1, 0], "must number the packed elements 0 to 1, each once"),
        ([0, -1, 2], "must number the packed elements 0 to 1, each once"),
    ],
)
def test_malformed_packed_outputs_fail_the_session(packed_outputs, message):
    with pytest.raises(Exception, match=f"packed_outputs' {message}"):
        _packed_node_session(packed_outputs)


def test_a_packed_output_that_is_not_a_scalar_fails_the_run(rng):
    # Element 0 is exp(x), a vector: never written as one element.
    session = _packed_node_session([-1, 0, 1], ("s", "p"))
    with pytest.raises(Exception, match=r"output 1 is packed as a scalar; the stage gives it shape \(5,\)"):
        session.run(None, {"x": rng.normal(size=5)})


def _packed_inputs_session(packed_inputs, declared=(3,)):
    # y = p[2] + x * p[0] by one hand-made Elemwise_float64 node reading the
    # vector p (declared `declared`) in two slots as scalars (attribute
    # packed_inputs, src/core/passes/pack_small_arrays.h).
    from onnx import TensorProto, helper

    node = helper.make_node("Elemwise_float64", ["p", "x", "p"], ["y"], domain=kernels.DOMAIN,
                            input_dtypes="float64 float64 float64", program="Mul float64 1 2;Add float64 0 3",
                            output_registers=[4], packed_inputs=packed_inputs)
    return _kernel_session(
        [node],
        [helper.make_tensor_value_info("p", TensorProto.DOUBLE, list(declared)),
         helper.make_tensor_value_info("x", TensorProto.DOUBLE, [None])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)],
    )


def test_packed_scalars_are_read_from_their_vector(rng):
    p, x = rng.normal(size=3), rng.normal(size=4)
    (y,) = _packed_inputs_session([2, -1, 0]).run(None, {"p": p, "x": x})
    np.testing.assert_array_equal(y, p[2] + x * p[0])
    # ONNX Runtime checks the vector's length against the model's.
    with pytest.raises(Exception, match="invalid dimensions for input: p"):
        _packed_inputs_session([2, -1, 0]).run(None, {"p": p[:2], "x": x})


@pytest.mark.parametrize(
    "packed_inputs, declared, message",
    [
        ([2, -1], (3,), "has 2 entries for the node's 3 inputs"),
        ([3, -1, 0], (3,), "reads element 3 of input 0, which the model does not declare a float64 vector of that"),
        ([0, -1, 0], (None,), "reads element 0 of input 0, which the model does not declare"),
        ([0, -1, 0], (3, 1), "reads element 0 of input 0, which the model does not declare"),
    ],
)
def test_malformed_packed_inputs_fail_the_session(packed_inputs, declared, message):
    with pytest.raises(Exception, match=f"packed_inputs' {message}"):
        _packed_inputs_session(packed_inputs, declared)


def _packed_arrays_session(packed_outputs, packed_output_shapes, length=5):
    # The node of _packed_node_session over x of static length `length`,
    # all three outputs packed into one, exp(x) as a vector (attribute
    # packed_output_shapes).
    from onnx import TensorProto, helper

    node = helper.make_node("Elemwise_float64", ["x"], ["p"], domain=kernels.DOMAIN, input_dtypes="float64",
                            program="Exp float64 0", output_registers=[1, 1, 1], output_reductions=[1, 0, 1],
                            packed_outputs=packed_outputs, packed_output_shapes=packed_output_shapes)
    return _kernel_session(
        [node],
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [length])],
        [helper.make_tensor_value_info("p", TensorProto.DOUBLE, None)],
    )


def test_packed_arrays_follow_each_other_in_the_last_output(rng):
    # Elements in order: element 0 (a scalar) at 0, element 1 (exp(x), (5,))
    # at 1 to 5, element 2 at 6.
    x = rng.normal(size=5)
    (packed,) = _packed_arrays_session([2, 1, 0], [1, 1, 5]).run(None, {"x": x})
    (s, e, s2) = _packed_node_session(None, ("s", "e", "s2")).run(None, {"x": x})
    np.testing.assert_array_equal(packed, np.concatenate([[s2], e, [s]]))


@pytest.mark.parametrize(
    "packed_output_shapes, message",
    [
        ([3, 1, 5], "names 3: each of 3 at most once"),
        ([1, 1, 5, 1, 1, 5], "names 1: each of 3 at most once"),
        ([1, 0], "gives 1 a rank of 0 it has no dims for"),
        ([1, 2, 5], "gives 1 a rank of 2 it has no dims for"),
        ([1, 1, -5], "gives 1 a negative size"),
    ],
)
def test_malformed_packed_output_shapes_fail_the_session(packed_output_shapes, message):
    with pytest.raises(Exception, match=f"packed_output_shapes' {message}"):
        _packed_arrays_session([2, 1, 0], packed_output_shapes)


def test_a_packed_array_of_another_shape_fails_the_run(rng):
    # exp(x) is declared (4,) where x (and so exp(x)) has 5 elements: the
    # run fails rather than writing past the packed output's end.
    session = _packed_arrays_session([2, 1, 0], [1, 1, 4])
    with pytest.raises(Exception, match=r"output 1 is packed as an array of shape \(4,\); the stage gives it shape \(5,\)"):
        session.run(None, {"x": rng.normal(size=5)})


def _packed_vector_session(packed_inputs, packed_input_shapes, declared=(4,)):
    # y = v + x * p[3] by one hand-made Elemwise_float64 node reading the
    # vector p (declared `declared`) in two slots: v, a (3,) vector of it
    # (attribute packed_input_shapes), and a scalar.
    from onnx import TensorProto, helper

    node = helper.make_node("Elemwise_float64", ["p", "x", "p"], ["y"], domain=kernels.DOMAIN,
                            input_dtypes="float64 float64 float64", program="Mul float64 1 2;Add float64 0 3",
                            output_registers=[4], packed_inputs=packed_inputs, packed_input_shapes=packed_input_shapes)
    return _kernel_session(
        [node],
        [helper.make_tensor_value_info("p", TensorProto.DOUBLE, list(declared)),
         helper.make_tensor_value_info("x", TensorProto.DOUBLE, [3])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)],
    )


def test_packed_arrays_are_read_from_their_vector(rng):
    p, x = rng.normal(size=4), rng.normal(size=3)
    (y,) = _packed_vector_session([0, -1, 3], [0, 1, 3]).run(None, {"p": p, "x": x})
    np.testing.assert_array_equal(y, p[:3] + x * p[3])
    (y,) = _packed_vector_session([1, -1, 0], [0, 1, 3]).run(None, {"p": p, "x": x})
    np.testing.assert_array_equal(y, p[1:] + x * p[0])


@pytest.mark.parametrize(
    "packed_inputs, packed_input_shapes, message",
    [
        ([2, -1, 0], [0, 1, 3], "reads elements 2 to 4 of input 0, which the model does not declare a float64 vector"),
        ([0, -1, 3], [0, 1, 3, 1, 1, 3], "does not pack input 1, which 'packed_input_shapes' shapes"),
        ([0, -1, 3], [3, 1, 3], "names 3: each of 3 at most once"),
    ],
)
def test_malformed_packed_input_shapes_fail_the_session(packed_inputs, packed_input_shapes, message):
    with pytest.raises(Exception, match=message):
        _packed_vector_session(packed_inputs, packed_input_shapes)


def _staged_node_session(**changes):
    # A hand-made Elemwise_float64 node of two stages (attribute `stages`,
    # src/kernels/elemwise.h) over x (a vector) and y (0-d):
    #   stage 0: e = exp(x) and p = x > 0 (bool), kept inside; s = sum(x), output 0;
    #   stage 1: z = where(p, e * y, s) + x.shape[0], output 1.
    from onnx import TensorProto, helper

    attrs = dict(
        input_dtypes="float64", program="Exp float64 0;Const float64 0.0;GT bool 0 2", output_registers=[1, 0, 3],
        output_reductions=[0, 1, 0],
        input_dtypes_s1="float64 float64 float64 bool int64",
        program_s1="Mul float64 0 1;Switch float64 3 5 2;Cast float64 4;Add float64 6 7", output_registers_s1=[8],
        dim_inputs_s1=[4, 0],
        stages=2, stage_inputs=[0, -1, 1, -2, -3, 0], stage_outputs=[-1, 0, -1, 1],
    )
    attrs.update(changes)
    node = helper.make_node("Elemwise_float64", ["x", "y"], ["s", "z"], domain=kernels.DOMAIN,
                            **{k: v for k, v in attrs.items() if v is not None})
    session = _kernel_session(
        [node],
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [None]),
         helper.make_tensor_value_info("y", TensorProto.DOUBLE, [])],
        [helper.make_tensor_value_info("s", TensorProto.DOUBLE, []),
         helper.make_tensor_value_info("z", TensorProto.DOUBLE, [None])],
    )
    return session, node


def test_a_node_of_stages_runs_them_in_order(rng):
    # Outputs of two ranks from one node, a bool value and an array passed
    # between stages without ONNX Runtime, the size of an axis read by a
    # later stage; 0, 1 and 50,000 elements (many blocks, the pool's threads).
    session, node = _staged_node_session()
    assert [s["sources"] for s in kernels.elemwise_stages(node)] == [[0], [-1, 1, -2, -3, 0]]
    for n in (0, 1, 7, 50_000):
        x, y = rng.normal(size=n), np.array(1.5)
        s, z = session.run(None, {"x": x, "y": y})
        assert s.shape == () and z.shape == (n,)
        np.testing.assert_allclose(s, np.sum(x), rtol=1e-13, atol=1e-300)
        np.testing.assert_allclose(z, np.where(x > 0, np.exp(x) * y, np.sum(x)) + n, rtol=1e-13)


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(stage_inputs=[0, -4, 1, -2, -3, 0]), "stage 1 of the node reads output 3 of its stages before it"),
        (dict(stage_inputs=[0, -1, 1, -2, 0, 0]), "stage 1 of the node reads input 0 as bool, an earlier one as float64"),
        (dict(stage_inputs=[0, -3, 1, -2, -3, 0]), "reads a bool output as float64"),
        (dict(stage_inputs=[0, -1, 2, -2, -3, 0]), "stage 1 of the node reads input 2, which it lacks"),
        (dict(stage_inputs=[0, -1, 1]), "'stage_inputs' and 'stage_outputs' need 6 and 4 entries"),
        (dict(stage_outputs=[-1, 0, -1, 0]), "writes output 0: each node output once"),
        (dict(stage_outputs=[-1, 0, 1, -1]), "writes a bool program output into output 1, a float64 tensor"),
        (dict(stage_outputs=[-1, 0, -1, -1]), "do not write all its outputs"),
        (dict(stages=3), "No attribute with name:'input_dtypes_s2'"),
        (dict(stages=2**40), "attribute 'stages' is 1099511627776; 1 to 4096"),
    ],
)
def test_malformed_stages_fail_the_session(changes, message):
    with pytest.raises(Exception, match=message):
        _staged_node_session(**changes)


def _loop_stage_session(**changes):
    # A hand-made Elemwise_float64 node of two stages over x (a vector) and
    # n (an int64 scalar):
    #   stage 0: e = exp(x), kept inside;
    #   stage 1: a ScalarLoop (no until flag) of state e, constant x:
    #            n times state <- state * x; the final state is output 0.
    from onnx import TensorProto, helper

    attrs = dict(
        input_dtypes="float64", program="Exp float64 0", output_registers=[1],
        input_dtypes_s1="float64 float64", program_s1="Mul float64 0 1", num_state_s1=1, next_state_s1=[2],
        until_s1=-1, stages=2, stage_inputs=[0, 1, -1, 0], stage_outputs=[-1, 0],
    )
    attrs.update(changes)
    node = helper.make_node("Elemwise_float64", ["x", "n"], ["y"], domain=kernels.DOMAIN,
                            **{k: v for k, v in attrs.items() if v is not None})
    session = _kernel_session(
        [node],
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [None]),
         helper.make_tensor_value_info("n", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [None])],
    )
    return session, node


def test_a_loop_stage_runs_on_what_earlier_stages_wrote(rng):
    session, node = _loop_stage_session()
    loop = kernels.elemwise_stages(node)[1]
    assert loop["num_state"] == 1 and loop["sources"] == [1, -1, 0] and loop["destinations"] == [0]
    for size, steps in ((0, 3), (1, 0), (5, 1), (600, 4)):
        x = rng.uniform(0.5, 1.5, size)
        want = np.array([math.exp(v) for v in x])  # (libm's exp, the kernel's; NumPy's own may differ in the last bit)
        for _ in range(steps):
            want = want * x
        (y,) = session.run(None, {"x": x, "n": np.array(steps, dtype=np.int64)})
        np.testing.assert_array_equal(y, want)
    # A negative step count without an until flag fails the run, as PyTensor raises.
    with pytest.raises(Exception, match="termination condition"):
        session.run(None, {"x": np.ones(2), "n": np.array(-1, dtype=np.int64)})


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(num_state_s1=0), "attribute 'num_state_s1' must be at least 1"),
        (dict(next_state_s1=[2, 2]), "the loop's state does not fit its body"),
        (dict(stage_inputs=[0, -1, -1, 0]), "stage 1 of the node reads a float64 output as int64"),
        (dict(stage_inputs=[0, 1, 1, 0]), "reads input 1 as float64, an earlier one as int64"),
        (dict(stage_inputs=[0, 1, -1]), "'stage_inputs' and 'stage_outputs' need 4 and 2 entries"),
        (dict(program_s1="Mul float64 0 1;LT bool 0 1", until_s1=2), "the until flag must be a bool"),
    ],
)
def test_malformed_loop_stages_fail_the_session(changes, message):
    with pytest.raises(Exception, match=message):
        _loop_stage_session(**changes)


@pytest.mark.parametrize("fn_name", ["gammaincc", "gammainc"])
def test_incomplete_gamma_gradients_run_their_loops_as_stages(rng, fn_name):
    # PyTensor differentiates gammainc(c) in k with ScalarLoops between the
    # element-wise programs that feed and read them, the loops' step counts
    # and until flags through Casts: the core merges them into the kernel
    # node around them (src/core/passes/merge_kernel_stages.h), as in a
    # censored Gamma model's log-density and gradient (pymc_models.py).
    k, x = pt.dvector("k"), pt.dvector("x")
    fn_ = getattr(pt, fn_name)
    outputs = [fn_(k, x).sum(), *pt.grad(pt.log(fn_(k, x)).sum(), [k, x])]
    values = [rng.uniform(0.5, 4.0, 30), rng.uniform(0.1, 8.0, 30)]
    fn, _ = compare_onnx_and_py([k, x], outputs, values, rtol=1e-10)
    nodes = [n for n in fn.maker.linker.onnx_model.graph.node if n.domain == kernels.DOMAIN]
    assert not [n.op_type for n in nodes if n.op_type.startswith("ScalarLoop_")]
    # (PyTensor 2.38 writes some of these loops in forms the kernels do not
    # run, which stay ONNX Loops; the loops they run are stages.)
    assert [s for s in stages(fn) if "num_state" in s], [n.op_type for n in fn.maker.linker.onnx_model.graph.node]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_gathers_and_scatters_are_stages_of_the_kernel_node(rng, dtype):
    # A hierarchical model's shape: group effects a[idx] per observation
    # (ONNX's Gather), the observations' terms, and a gradient that adds
    # them back at idx (inc_subtensor: ScatterND, reduction add), one node
    # of stages (src/core/passes/merge_kernel_stages.h); a set_subtensor at
    # repeated indices (the last one wins) and negative indices too.
    a, obs = pt.vector("a", dtype=dtype), pt.vector("obs", dtype=dtype)
    idx = np.array([0, 2, 1, 2, -1, 0, 3, 3])
    terms = (obs - a[idx]) * 3
    base = a * 2
    outputs = [terms, pt.inc_subtensor(base[idx], terms), pt.set_subtensor(base[idx], terms)]
    values = [rng.normal(size=4).astype(dtype) * 10, rng.normal(size=8).astype(dtype) * 10]
    fn, results = compare_onnx_and_py([a, obs], outputs, values)
    types = [n.op_type for n in fn.maker.linker.onnx_model.graph.node]
    assert "Gather" not in types and "ScatterND" not in types, types
    kinds = {("gather" if "gather" in s else "scatter " + s["scatter"]) for s in stages(fn) if "gather" in s or "scatter" in s}
    assert kinds == {"gather", "scatter add", "scatter none"}
    # Repeats added in order, as np.add.at; the last repeat set.
    want = values[0] * 2
    np.add.at(want, idx, results[0])
    np.testing.assert_array_equal(results[1], want)
    assert results[2][3] == results[0][7] and results[2][0] == results[0][5]


def test_an_index_out_of_range_in_a_gather_stage_raises_an_index_error(rng):
    # The constant indices reach past a shorter array at run time: PyTensor
    # raises an IndexError, and so does the merged node (the linker reads the
    # kernel's "out of data bounds" as ONNX Runtime's Gather's).
    a, obs = pt.vector("a"), pt.vector("obs")
    out = ((obs - a[np.array([0, 3, 1])]) ** 2).sum()  # (not a slice: [0, 3] is a[0:6:3] to PyTensor)
    fn = pytensor.function([a, obs], out, mode="ONNX")
    assert any("gather" in s for s in stages(fn))
    assert fn(np.arange(4.0), np.ones(3)) == 1.0 + 4.0 + 0.0
    compare_raises([a, obs], [out], [np.arange(3.0), np.ones(3)], IndexError, "out of (data )?bounds")


def _indexed_stage_session(**changes):
    # A hand-made Elemwise_float64 node: stage 0 gathers rows of x (a
    # matrix) at i, stage 1 adds 1, stage 2 scatters them (added) into x.
    from onnx import TensorProto, helper

    attrs = dict(
        input_dtypes="float64 int64", gather=0,
        input_dtypes_s1="float64", program_s1="Const float64 1.0;Add float64 0 1", output_registers_s1=[2],
        input_dtypes_s2="float64 int64 float64", scatter_s2="add",
        stages=3, stage_inputs=[0, 1, -1, 0, 2, -2], stage_outputs=[-1, -1, 0],
    )
    attrs.update(changes)
    node = helper.make_node("Elemwise_float64", ["x", "i", "t"], ["y"], domain=kernels.DOMAIN,
                            **{k: v for k, v in attrs.items() if v is not None})
    session = _kernel_session(
        [node],
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [None, None]),
         helper.make_tensor_value_info("i", TensorProto.INT64, [None]),
         helper.make_tensor_value_info("t", TensorProto.INT64, [None, 1])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [None, None])],
    )
    return session, node


def test_indexed_stages_check_their_indices(rng):
    session, node = _indexed_stage_session()
    assert [s["sources"] for s in kernels.elemwise_stages(node)] == [[0, 1], [-1], [0, 2, -2]]
    x = rng.normal(size=(3, 2))
    i, t = np.array([2, -3, 2]), np.array([[1], [1], [0]])
    (y,) = session.run(None, {"x": x, "i": i, "t": t})
    want = x.copy()
    np.add.at(want, t[:, 0], x[i] + 1.0)
    np.testing.assert_array_equal(y, want)
    (empty,) = session.run(None, {"x": x, "i": np.zeros(0, np.int64), "t": np.zeros((0, 1), np.int64)})
    np.testing.assert_array_equal(empty, x)
    with pytest.raises(Exception, match="index 3 is out of data bounds of axis 0 of size 3"):
        session.run(None, {"x": x, "i": np.array([3, 0, 0]), "t": t})
    with pytest.raises(Exception, match="index -4 is out of data bounds"):
        session.run(None, {"x": x, "i": i, "t": np.array([[0], [-4], [0]])})
    with pytest.raises(Exception, match="updates must have the indices' shape"):
        session.run(None, {"x": x, "i": i, "t": np.array([[0], [1]])})


def _one_indexed_stage_session(dtype, data_shape, indices_rank, **stage):
    # A hand-made Elemwise_<dtype> node of one indexed stage: y = a gather of
    # x's rows at i, or x with u scattered at the index tuples t.
    from onnx import helper

    onnx_type = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    names = ["x", "i"] if "gather" in stage else ["x", "t", "u"]
    node = helper.make_node(f"Elemwise_{dtype}", names, ["y"], domain=kernels.DOMAIN, stages=1,
                            stage_inputs=list(range(len(names))), stage_outputs=[0], **stage)
    ranks = {"x": len(data_shape), "i": indices_rank, "t": indices_rank, "u": None}
    return _kernel_session(
        [node],
        [helper.make_tensor_value_info(n, onnx_type if n in "xu" else helper.np_dtype_to_tensor_dtype(np.dtype("int64")),
                                       None if ranks[n] is None else [None] * ranks[n]) for n in names],
        [helper.make_tensor_value_info("y", onnx_type, None)],
    )


@pytest.mark.parametrize(
    "dtype, row_shape",
    [("bool", ()), ("uint8", ()), ("int16", ()), ("uint16", ()), ("int32", ()), ("float32", ()), ("int64", ()),
     ("float64", ()), ("float64", (2,)), ("float32", (3,)), ("float64", (0,)), ("int8", (2, 2))],
)
def test_gather_stages_copy_rows_of_every_size(rng, dtype, row_shape):
    # Rows of 1, 2, 4 and 8 bytes are copied as one element each (fixed-size
    # copies), others as byte runs: every one bit for bit, NaN payloads too,
    # with negative indices, repeats, and the index error either way.
    session = _one_indexed_stage_session(dtype, (5, *row_shape), 2, input_dtypes=f"{dtype} int64", gather=0)
    x = rng.normal(size=(5, *row_shape)) * 50
    x = (x > 0) if dtype == "bool" else x.astype(dtype)
    if x.dtype.kind == "f" and x.size:
        x.reshape(-1)[2] = np.nan
        x.reshape(-1).view(f"u{x.itemsize}")[2] |= 0b101  # (a NaN of payload bits of its own)
    i = np.array([[4, -1, 0], [2, 2, -5]])
    (y,) = session.run(None, {"x": x, "i": i})
    assert y.dtype == x.dtype and y.shape == (2, 3, *row_shape)
    np.testing.assert_array_equal(y.view(f"u{x.itemsize}") if x.dtype.kind == "f" else y,
                                  x[i].view(f"u{x.itemsize}") if x.dtype.kind == "f" else x[i])
    for bad in (5, -6):
        with pytest.raises(Exception, match=f"index {bad} is out of data bounds of axis 0 of size 5"):
            session.run(None, {"x": x, "i": np.array([[0, bad, 1]])})


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32"])
@pytest.mark.parametrize("scatter", ["add", "none"])
@pytest.mark.parametrize("k", [1, 2])
def test_scatter_stages_add_or_set_in_order(rng, dtype, scatter, k):
    # Updates at index tuples of k coordinates into a (4, 3) array: slices of
    # 3 elements (k = 1) or single elements (k = 2), repeated and negative
    # coordinates; adds accumulate in order (np.add.at), sets let the last
    # update win; integer adds wrap.
    session = _one_indexed_stage_session(dtype, (4, 3), 2, input_dtypes=f"{dtype} int64 {dtype}", scatter=scatter)
    big = (np.iinfo if dtype.startswith("int") else np.finfo)(dtype).max
    x = (rng.normal(size=(4, 3)) * 100).astype(dtype)
    x[0, 0] = big
    t = np.array([[0, 0], [3, -1], [0, 0], [-4, 2], [1, 1]])[:, :k]
    u = (rng.normal(size=(5, *x.shape[k:])) * 100).astype(dtype)
    u[0].flat[0] = big
    (y,) = session.run(None, {"x": x, "t": t, "u": u})
    want = x.copy()
    if scatter == "add":
        with np.errstate(over="ignore"):
            np.add.at(want, tuple(t.T), u)
    else:
        for row, update in zip(t, u):
            want[tuple(row)] = update
    np.testing.assert_array_equal(y, want)
    with pytest.raises(Exception, match="index -5 is out of data bounds of axis 0 of size 4"):
        session.run(None, {"x": x, "t": np.array([[-5, 0]])[:, :k], "u": u[:1]})


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(gather=1), "attribute 'gather' must be 0"),
        (dict(input_dtypes="float64 int32"), "of a gather must be the data's dtype, then int64"),
        (dict(scatter_s2="mul"), "attribute 'scatter_s2' is 'mul'; it must be 'add' or 'none'"),
        (dict(input_dtypes_s2="float64 int64 float32"), "of a scatter must be the data's dtype"),
    ],
)
def test_malformed_indexed_stages_fail_the_session(changes, message):
    with pytest.raises(Exception, match=message):
        _indexed_stage_session(**changes)


def _reshape_stage_session(**changes):
    # A hand-made Elemwise_float64 node: stage 0 doubles x (a matrix), stage
    # 1 reshapes it by a map (attribute `reshape`), stage 2 adds 1; the
    # reshaped value is output 0 (copied into ONNX Runtime's tensor), the sum
    # output 1 (read from the doubled values' memory).
    from onnx import AttributeProto, TensorProto, helper

    attrs = dict(
        input_dtypes="float64", program="Const float64 2.0;Mul float64 0 1", output_registers=[2],
        input_dtypes_s1="float64", reshape_s1=[-1, -3],
        input_dtypes_s2="float64", program_s2="Const float64 1.0;Add float64 0 1", output_registers_s2=[2],
        stages=3, stage_inputs=[0, -1, -2], stage_outputs=[-1, 0, 1],
    )
    attrs.update(changes)
    node = helper.make_node("Elemwise_float64", ["x"], ["r", "y"], domain=kernels.DOMAIN,
                            **{k: v for k, v in attrs.items() if v is not None and v != []})
    # (An empty map, a reshape to 0-d: an ints attribute without entries.)
    node.attribute.extend(helper.make_attribute(k, [], attr_type=AttributeProto.INTS) for k, v in attrs.items() if v == [])
    session = _kernel_session(
        [node], [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [None, None])],
        [helper.make_tensor_value_info("r", TensorProto.DOUBLE, None),
         helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)],
    )
    return session, node


def test_a_reshape_stage_gives_its_input_another_shape(rng):
    session, _ = _reshape_stage_session()
    for shape in ((2, 3), (1, 5), (0, 4)):
        x = rng.normal(size=shape)
        r, y = session.run(None, {"x": x})
        # (-1, then input axis 1's size: (rows, cols) stays (rows, cols) by the count.)
        np.testing.assert_array_equal(r, (x * 2.0).reshape(-1, shape[1]))
        np.testing.assert_array_equal(y, r + 1.0)
    # (-1 beside axes of no elements is no size, as ONNX Runtime's Reshape and NumPy say.)
    with pytest.raises(Exception, match=r"cannot reshape an array of 0 elements into shape \(-1, 0\)"):
        session.run(None, {"x": np.ones((4, 0))})
    # A flat view, a 0-d value, a squeeze that finds an axis of size 3.
    flat, _ = _reshape_stage_session(reshape_s1=[-1])
    x = rng.normal(size=(3, 4))
    np.testing.assert_array_equal(flat.run(None, {"x": x})[0], (x * 2.0).ravel())
    scalar, _ = _reshape_stage_session(reshape_s1=[], reshape_ones_s1=[0, 1])
    assert scalar.run(None, {"x": np.array([[1.5]])})[1].shape == ()
    with pytest.raises(Exception, match="a squeeze drops axis 1, which does not have size 1"):
        scalar.run(None, {"x": np.ones((1, 3))})
    huge, _ = _reshape_stage_session(reshape_s1=[2**40, 2**40, 0])  # (2**80 wraps to 0 in 64 bits: never "fits")
    with pytest.raises(Exception, match="a reshape's sizes overflow the element count"):
        huge.run(None, {"x": np.ones((0, 3))})
    fixed, _ = _reshape_stage_session(reshape_s1=[5, -1])
    with pytest.raises(Exception, match=r"cannot reshape an array of 6 elements into shape \(5, -1\)"):
        fixed.run(None, {"x": np.ones((2, 3))})


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(reshape_s1=[-1, -1]), "attribute 'reshape_s1' must give each output axis a size, -1 \\(at most once\\)"),
        (dict(reshape_s1=[-5]), None),  # (input axis 3 of a matrix: fails the run)
    ],
)
def test_malformed_reshape_stages_fail(changes, message):
    if message is not None:
        with pytest.raises(Exception, match=message):
            _reshape_stage_session(**changes)
        return
    session, _ = _reshape_stage_session(**changes)
    with pytest.raises(Exception, match="reads the size of axis 3 of an input of rank 2"):
        session.run(None, {"x": np.ones((2, 2))})


def _join_stage_session(**changes):
    # A hand-made Elemwise_float64 node: stage 0 doubles x (a matrix), stage
    # 1 joins it and y along axis 1 (attribute `concat`), stage 2 splits that
    # along axis 1 into pieces of 1 and the rest (attributes `split`,
    # `split_sizes`), stage 3 adds the first piece to the second. The joined
    # value is output 0; the first piece output 1 (copied out); the second
    # piece only stage 3 reads, whose sum is output 2.
    from onnx import TensorProto, helper

    attrs = dict(
        input_dtypes="float64", program="Const float64 2.0;Mul float64 0 1", output_registers=[2],
        input_dtypes_s1="float64 float64", concat_s1=1,
        input_dtypes_s2="float64", split_s2=1, split_sizes_s2=[1, 3],
        input_dtypes_s3="float64 float64", program_s3="Add float64 0 1", output_registers_s3=[2],
        stages=4, stage_inputs=[0, -1, 1, -2, -3, -4], stage_outputs=[-1, 0, 1, -1, 2],
    )
    attrs.update(changes)
    node = helper.make_node("Elemwise_float64", ["x", "y"], ["j", "a", "s"], domain=kernels.DOMAIN,
                            **{k: v for k, v in attrs.items() if v is not None})
    matrix = [helper.make_tensor_value_info(n, TensorProto.DOUBLE, [None, None]) for n in ("x", "y")]
    return _kernel_session([node], matrix, [helper.make_tensor_value_info(n, TensorProto.DOUBLE, None) for n in "jas"])


def test_split_and_concat_stages_give_numpys_pieces(rng):
    session = _join_stage_session()
    for rows in (3, 1, 0):
        x, y = rng.normal(size=(rows, 2)), rng.normal(size=(rows, 2))
        j, a, s = session.run(None, {"x": x, "y": y})
        want = np.concatenate([x * 2.0, y], axis=1)
        np.testing.assert_array_equal(j, want)
        first, rest = np.split(want, [1], axis=1)
        np.testing.assert_array_equal(a, first)
        np.testing.assert_array_equal(s, first + rest)
    # Along axis 0 (one run: the second piece is read in the joined memory).
    rows = _join_stage_session(concat_s1=0, split_s2=0, split_sizes_s2=[1, 3])
    x, y = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    j, a, s = rows.run(None, {"x": x, "y": y})
    want = np.concatenate([x * 2.0, y], axis=0)
    np.testing.assert_array_equal(a, want[:1])
    np.testing.assert_array_equal(s, want[:1] + want[1:])
    # Shapes that do not join, pieces that do not add up, an axis past the rank.
    with pytest.raises(Exception, match=r"cannot join input 1 of shape \(3, 2\) to one of shape \(2, 2\) along axis 1"):
        session.run(None, {"x": np.ones((2, 2)), "y": np.ones((3, 2))})
    with pytest.raises(Exception, match="cannot split an axis of size 5 into pieces of 4 elements"):
        session.run(None, {"x": np.ones((2, 2)), "y": np.ones((2, 3))})
    # (4 * 2**62 wraps to 0, the axis's size, in 64 bits: never taken as pieces that fit.)
    wrapping = _join_stage_session(split_sizes_s2=[2**62] * 4, stage_outputs=[-1, 0, 1, -1, -1, -1, 2])
    with pytest.raises(Exception, match="a split's sizes overflow int64"):
        wrapping.run(None, {"x": np.ones((2, 0)), "y": np.ones((2, 0))})
    deep = _join_stage_session(split_s2=2)
    with pytest.raises(Exception, match="axis 2 is out of range for an input of rank 2"):
        deep.run(None, {"x": np.ones((2, 2)), "y": np.ones((2, 2))})


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(split_sizes_s2=[1, -3]), "attribute 'split_sizes_s2' must be one size >= 0 per piece"),
        (dict(input_dtypes_s1="float64 float32"), "of a concat, one dtype per input, all the same"),
        (dict(split_s2=2**40), "attribute 'split_s2' must be an axis"),
        (dict(split_s2=-3), "attribute 'split_s2' must be an axis"),  # (was read as a concat of axis -1)
        (dict(concat_s1=-2), "attribute 'concat_s1' must be an axis"),
    ],
)
def test_malformed_join_stages_fail_the_session(changes, message):
    with pytest.raises(Exception, match=message):
        _join_stage_session(**changes)


def test_an_expand_stage_broadcasts_to_its_shape(rng):
    # A hand-made Elemwise_float64 node: stage 0 doubles x, stage 1 is an
    # Identity whose output is broadcast to (2, 1) as well (attribute
    # `expand`: ONNX's Expand of a constant shape), as np.broadcast_shapes says.
    from onnx import TensorProto, helper

    node = helper.make_node(
        "Elemwise_float64", ["x"], ["y"], domain=kernels.DOMAIN,
        input_dtypes="float64", program="Const float64 2.0;Mul float64 0 1", output_registers=[2],
        input_dtypes_s1="float64", program_s1="Identity float64 0", output_registers_s1=[1], rank_s1=2,
        expand_s1=[2, 1], stages=2, stage_inputs=[0, -1], stage_outputs=[-1, 0],
    )
    session = _kernel_session([node], [helper.make_tensor_value_info("x", TensorProto.DOUBLE, None)],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)])
    for shape in ((3,), (2, 3), (1, 1), (1, 0), ()):
        x = rng.normal(size=shape)
        (y,) = session.run(None, {"x": x})
        np.testing.assert_array_equal(y, np.broadcast_to(x * 2.0, np.broadcast_shapes(shape, (2, 1))))
    with pytest.raises(Exception, match=r"input shapes \(4, 1\) \(2, 1\) do not broadcast"):
        session.run(None, {"x": np.ones((4, 1))})
    node.attribute[[a.name for a in node.attribute].index("expand_s1")].ints[:] = [2**40, 2**40, 0]
    huge = _kernel_session([node], [helper.make_tensor_value_info("x", TensorProto.DOUBLE, None)],
                           [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)])
    with pytest.raises(Exception, match="an expand's sizes overflow the element count"):
        huge.run(None, {"x": np.ones((1, 1))})  # ((2**40, 2**40, 0): no elements, but 2**80 wraps before the 0)


def test_concats_and_splits_between_kernel_nodes_are_stages(rng):
    # pt.concatenate and pt.split of fused expressions (ONNX's Concat, and
    # Split of constant sizes), and their gradients: stages of the kernel
    # nodes around them (src/core/passes/merge_kernel_stages.h), on both paths.
    x = pt.tensor("x", shape=(4, 2))  # (static: no shape arithmetic beside, whose Concats are int64)
    y = pt.tensor("y", shape=(4, 1))
    joined = pt.concatenate([pt.exp(x), y * 2.0], axis=1)
    a, b = pt.split(pt.log1p(joined**2), [1, 2], n_splits=2, axis=1)
    out = (a * 3.0).sum() + pt.sqrt(b + 1.0).sum()
    fn, _ = compare_onnx_and_py([x, y], [out, *pt.grad(out, [x, y])], [rng.normal(size=(4, 2)), rng.normal(size=(4, 1))])
    types = [n.op_type for n in fn.maker.linker.onnx_model.graph.node]
    assert "Concat" not in types and "Split" not in types, types
    kinds = {k for s in stages(fn) for k in ("concat", "split") if k in s}
    assert kinds == {"concat", "split"}, stages(fn)


def test_reshapes_between_kernel_nodes_are_stages(rng):
    # The diagonal of a Cholesky factor as PyTensor reads it (a flat view
    # and a Gather of every (n + 1)-th element), its log summed: stages of
    # the kernel node that factors (src/core/passes/merge_kernel_stages.h),
    # on both paths.
    a = pt.tensor("a", shape=(4, 4))  # (static: no run-time shape checks beside)
    spd = a @ a.T + 3 * pt.eye(4)
    chol = pt.linalg.cholesky(spd)
    out = pt.log(pt.diagonal(chol)).sum() * 2.0 + pt.exp(a).sum()
    fn, _ = compare_onnx_and_py([a], [out, pt.grad(out, a)], [rng.normal(size=(4, 4))])
    kinds = [n.op_type for n in fn.maker.linker.onnx_model.graph.node]
    assert not any(k.startswith("Cholesky_") for k in kinds), kinds
    (found,) = [found for n in kernel_nodes(fn) if n.op_type.startswith("Elemwise_")
                for found in [kernels.elemwise_stages(n)] if any(s.get("linalg") == "Cholesky" for s in found)]
    # (Stage outputs are numbered in stage order: the factor is its stage's only one.)
    first_outputs = np.cumsum([0] + [len(s["destinations"]) for s in found])
    (factor,) = [-(first_outputs[k] + 1) for k, s in enumerate(found) if s.get("linalg") == "Cholesky"]
    (flat,) = [k for k, s in enumerate(found) if s.get("reshape") == [-1] and s["sources"] == [factor]]
    assert any("gather" in s and s["sources"][0] == -(first_outputs[flat] + 1) for s in found), found


@pytest.mark.parametrize("shape, axis", [((5, 7), 0), ((5, 7), 1), ((300, 40), 0), ((300, 40), -1), ((1, 9), 0),
                                         ((0, 3), 0), ((0, 3), 1), ((2, 3, 4), 1), ((2, 3, 4), (0, 2)),
                                         ((2, 3, 4), (1, 2)), ((2, 3, 4, 5), (0, 2)), ((3, 2, 4, 2), (1, 3)),
                                         ((70, 3), 1), ((70, 3), 0), ((70, 3), (0, 1)), ((2, 1, 3, 40), (2, 3)),
                                         ((40, 1), 0), ((70, 1, 3), (0, 2)), ((70, 11), 0), ((3, 1, 16), 0)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_sums_and_maxima_over_some_axes_are_stages_of_the_kernel_node(rng, shape, axis, keepdims):
    # A sum over some axes (ONNX's ReduceSum) and a max or min (the Reduce
    # kernel) of a fused expression run as reduction stages of its node
    # (src/core/passes/merge_kernel_stages.h), to NumPy's bits: NumPy drops
    # axes of size 1, walks the trailing reduced axes as one run, which it
    # adds pairwise, and the others row after row (src/kernels/reduce.h);
    # NaN and -0.0 as NumPy has them.
    y = pt.tensor("y", shape=(None,) * len(shape))
    doubled = y * 2.0 + 1.0  # (a fused expression: an Elemwise kernel node)
    outputs = [doubled.sum(axis=axis, keepdims=keepdims), pt.exp(doubled.max(axis=axis, keepdims=keepdims)) * 3.0]
    value = rng.normal(size=shape)
    if value.size:
        value.flat[0] = -0.0
    if value.size > 4:
        value.flat[4] = np.nan
    if 0 in shape:
        # (The max and min of an empty set raise, in PyTensor and here.)
        outputs = outputs[:1]
    fn, results = compare_onnx_and_py([y], outputs, [value])
    types = [n.op_type for n in fn.maker.linker.onnx_model.graph.node]
    assert "ReduceSum" not in types and "Reduce_float64" not in types, types
    # (A sum over every axis is the program's own output reduction.)
    every_axis = len(np.empty(shape).sum(axis=axis).shape) == 0
    assert {"sum", "max"} & {s.get("reduce") for s in stages(fn)} == (
        set() if every_axis else {"sum"}) | (set() if 0 in shape else {"max"})
    want = np.add.reduce(value * 2.0 + 1.0, axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(results[0], want)
    assert np.array_equal(np.signbit(results[0]), np.signbit(want))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_sums_of_negative_zeros_are_positive_zero(dtype):
    # NumPy's add.reduce starts every sum from +0.0 (so do PyTensor's C and
    # Numba backends): a sum of -0.0s is +0.0, whose reciprocal is +inf.
    # Kernel reduction stages started from -0.0, ONNX Runtime's ReduceSum
    # gives -0.0: both paths held to the py linker's signs.
    y = pt.tensor("y", shape=(None, None), dtype=dtype)
    doubled = y * 2
    outputs = [1 / doubled.sum(axis=0), 1 / doubled.sum(axis=1), 1 / doubled.sum(), 1 / y.sum(axis=(0, 1)),
               1 / (doubled.sum(axis=(0, 1)) + doubled.max())]
    value = np.full((4, 3), -0.0, dtype=dtype)
    fn, results = compare_onnx_and_py([y], outputs, [value])
    exported = pytensor_onnx.export_onnx([y], outputs)
    session = ort.InferenceSession(exported.SerializeToString(), providers=["CPUExecutionProvider"])
    portable = session.run(None, {exported.graph.input[0].name: value})
    for got in [*results, *portable]:
        assert np.all(np.isposinf(got)), got


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_negation_gives_numpys_signed_zeros(dtype):
    # NumPy's negative(+0.0) is -0.0 (the py linker's, C's and Numba's); the
    # kernels computed 0 - x, +0.0, where their program negates (a Composite
    # of abs(x) and -x: ONNX's own Neg, alone, was right). Both paths held to
    # the py linker's signs, and the interpreter (compiled programs off, in
    # a process of its own) to the compiled programs' bits (found by a fuzz
    # case whose IfElse returned such a -x).
    x = pt.vector("x", dtype=dtype)
    outputs = [abs(x), -x, -(x * 2), 1 / -x]
    value = np.array([0.0, -0.0, 1.5], dtype=dtype)
    fn, results = compare_onnx_and_py([x], outputs, [value])
    assert any(n.op_type.startswith("Elemwise_") for n in fn.maker.linker.onnx_model.graph.node)
    exported = pytensor_onnx.export_onnx([x], outputs)
    session = ort.InferenceSession(exported.SerializeToString(), providers=["CPUExecutionProvider"])
    portable = session.run(None, {exported.graph.input[0].name: value})
    want = pytensor.function([x], outputs, mode=Mode(linker="py", optimizer=None))(value)
    for got in (results, portable):
        for g, w in zip(got, want, strict=True):
            assert np.array_equal(np.signbit(g), np.signbit(w)), (g, w)
    assert np.signbit(results[1][0]) and np.isneginf(results[3][0])
    import subprocess
    import sys

    from pytensor_onnx import compiled_kernels

    script = (
        "import numpy as np, pytensor, pytensor.tensor as pt, pytensor_onnx; "
        f"x = pt.vector('x', dtype='{dtype}'); "
        "f = pytensor.function([x], [abs(x), -x, -(x * 2), 1 / -x], mode='ONNX'); "
        f"print(' '.join(str(int(b)) for r in f(np.array([0.0, -0.0, 1.5], dtype='{dtype}')) for b in np.signbit(r)))"
    )
    env = dict(os.environ, **{compiled_kernels.ENV_SWITCH: "0"})
    interpreted = subprocess.run([sys.executable, "-c", script], check=True, env=env, capture_output=True, text=True)
    assert interpreted.stdout.split() == [str(int(b)) for r in results for b in np.signbit(r)]


def _reduction_node_session(dtype="float64", **attrs):
    # A hand-made Elemwise node of one reduction stage (attribute reduce).
    from onnx import TensorProto, helper

    tensor_type = TensorProto.DOUBLE if dtype == "float64" else TensorProto.FLOAT
    node = helper.make_node(f"Elemwise_{dtype}", ["x"], ["y"], domain=kernels.DOMAIN, input_dtypes=dtype, **attrs)
    return _kernel_session([node], [helper.make_tensor_value_info("x", tensor_type, None)],
                           [helper.make_tensor_value_info("y", tensor_type, None)])


def test_a_reduction_stage_checks_its_attributes_and_its_input(rng):
    session = _reduction_node_session(reduce="sum", axes=[1], keepdims=1)
    x = rng.normal(size=(4, 37))
    np.testing.assert_array_equal(session.run(None, {"x": x})[0], np.add.reduce(x, axis=1, keepdims=True))
    with pytest.raises(Exception, match="axis 1 is out of range for an input of rank 1"):
        session.run(None, {"x": x[0]})
    maxima = _reduction_node_session("float32", reduce="max", axes=[0])
    values = np.array([[1.0, np.nan], [3.0, 2.0]], dtype=np.float32)
    np.testing.assert_array_equal(maxima.run(None, {"x": values})[0], np.max(values, axis=0))
    for dtype, attrs, message in [
        ("float64", dict(reduce="prod", axes=[0]), "'reduce' is 'prod' of float64; it must be 'sum' of float64"),
        ("float32", dict(reduce="sum", axes=[0]), "'reduce' is 'sum' of float32"),
        ("float64", dict(reduce="sum", axes=[1, 0]), "'axes' must be distinct axes in increasing order"),
        ("float64", dict(reduce="min", axes=[-1]), "'axes' must be distinct axes in increasing order"),
    ]:
        with pytest.raises(Exception, match=message):
            _reduction_node_session(dtype, **attrs)


def test_the_reduce_node_sums_float64_as_numpy_does(rng):
    # Mode ONNX's float64 sums that do not become stages of a kernel node
    # (PyTensor sums float32 in float64: Cast, Reduce, Cast) are Reduce
    # nodes (src/kernels/reduce_kernel.h): NumPy's bits, a -0.0 set summing
    # to +0.0; float32 sums stay ONNX's.
    from onnx import TensorProto, helper

    def session(dtype, **attrs):
        tensor_type = TensorProto.DOUBLE if dtype == "float64" else TensorProto.FLOAT
        node = helper.make_node(f"Reduce_{dtype}", ["x"], ["y"], domain=kernels.DOMAIN, **attrs)
        return _kernel_session([node], [helper.make_tensor_value_info("x", tensor_type, None)],
                               [helper.make_tensor_value_info("y", tensor_type, None)])

    x = rng.normal(size=(3, 1, 7, 40)) * 10.0 ** rng.integers(-8, 8, size=(3, 1, 7, 40))
    for axes, keepdims in [([2, 3], 0), ([0], 1), ([0, 1, 2, 3], 0), ([1, 3], 1)]:
        got = session("float64", reduction="sum", axes=axes, keepdims=keepdims).run(None, {"x": x})[0]
        want = np.add.reduce(x, axis=tuple(axes), keepdims=bool(keepdims))
        np.testing.assert_array_equal(got, want)
    zeros = session("float64", reduction="sum", axes=[0], keepdims=0).run(None, {"x": np.full((3, 2), -0.0)})[0]
    assert not np.signbit(zeros).any()
    with pytest.raises(Exception, match="'reduction' is 'sum'; it must be 'max' or 'min', or 'sum' of float64"):
        session("float32", reduction="sum", axes=[0], keepdims=0)
    f32 = pt.matrix("f32", dtype="float32")
    fn, _ = compare_onnx_and_py([f32], [f32.sum(axis=0)], [rng.normal(size=(5, 3)).astype("float32")])
    assert "Reduce_float64" in [n.op_type for n in fn.maker.linker.onnx_model.graph.node]


def test_a_program_output_of_another_dtype_than_the_node_fails_the_session():
    # ONNX Runtime allocates an Elemwise_float64 node's outputs as float64: a
    # program writing int64 or bool there would write past or beside them.
    from onnx import TensorProto, helper

    for program, register in [("Cast int64 0", 1), ("Const float64 0.0;GT bool 0 1", 2)]:
        node = helper.make_node("Elemwise_float64", ["v"], ["y"], domain=kernels.DOMAIN, input_dtypes="float64",
                                program=program, output_registers=[register])
        with pytest.raises(Exception, match="program output into output 0, a float64 tensor"):
            _kernel_session([node], [helper.make_tensor_value_info("v", TensorProto.DOUBLE, [None])],
                            [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [None])])


def test_kernels_off_gives_the_portable_graph(monkeypatch):
    x = pt.vector("x")
    out = pt.gammaln(x) + 1
    off = pytensor.function([x], out, mode=pytensor_onnx.onnx_mode(kernels=False))
    assert not kernel_nodes(off)
    assert len(off.maker.linker.onnx_model.graph.node) > 20  # the portable recipe
    on = pytensor.function([x], out, mode=pytensor_onnx.onnx_mode())
    assert kernel_nodes(on)
    value = np.array([0.5, 3.0, 40.0])
    np.testing.assert_allclose(on(value), off(value), rtol=1e-13)
    # Exports stay portable.
    assert all(n.domain != kernels.DOMAIN for n in pytensor_onnx.export_onnx([x], [out]).graph.node)
    # The environment switch turns them off for the process, saying why once.
    monkeypatch.setenv(kernels.ENV_SWITCH, "0")
    monkeypatch.setattr(kernels, "_warned", False)
    assert "PYTENSOR_ONNX_KERNELS=0" in kernels.unavailable_reason()
    assert pytensor_onnx.ONNXLinker().kernels is False
    with pytest.raises(RuntimeError, match="kernels=True, but the kernel library cannot be used"):
        pytensor_onnx.ONNXLinker(kernels=True)
    with pytest.raises(TypeError, match="kernels must be True, False or None"):
        pytensor_onnx.ONNXLinker(kernels="yes")


def test_unavailable_library_is_said_once(monkeypatch, caplog):
    monkeypatch.setenv(kernels.ENV_SWITCH, "off")
    monkeypatch.setattr(kernels, "_warned", False)
    with caplog.at_level(logging.WARNING, logger="pytensor_onnx"):
        assert not kernels.available()
        assert not kernels.available()
    said = [r for r in caplog.records if "kernel library not used" in r.getMessage()]
    assert len(said) == 1 and "PYTENSOR_ONNX_KERNELS=off" in said[0].getMessage()


def test_a_users_session_options_get_the_library_once():
    x = pt.vector("x")
    options = ort.SessionOptions()
    mode = pytensor_onnx.onnx_mode(session_options=options, kernels=True)
    f = pytensor.function([x], pt.psi(x) * 2, mode=mode)
    g = pytensor.function([x], pt.gammaln(x) * 2, mode=mode)  # the same options again
    np.testing.assert_allclose(f(np.array([2.0])), [2 * 0.42278433509846713], rtol=1e-14)
    np.testing.assert_allclose(g(np.array([5.0])), [2 * np.log(24.0)], rtol=1e-14)


def test_ops_the_kernels_lack_stay_portable(rng):
    # polygamma has no kernel: the graph still converts, the unfused node portably.
    x = pt.vector("x")
    fn, _ = compare_onnx_and_py([x], [pt.polygamma(2, x) + pt.exp(x)], [rng.uniform(0.5, 3, size=4)])
    assert "PolyGamma" not in kernels.ops()
    assert len(fn.maker.linker.onnx_model.graph.node) > 5


def test_concurrent_calls_on_the_thread_pool_give_the_single_threaded_results(rng):
    # Copies of one function share one session; large arrays take the kernel's
    # parallel path inside each run while several Python threads call it.
    import threading

    x = pt.vector("x")
    out = pt.gammaln(pt.abs(x) + 1) * pt.sigmoid(x) + pt.psi(pt.abs(x) + 2)
    fn = pytensor.function([x], out, mode=pytensor_onnx.onnx_mode(kernels=True))
    assert kernel_nodes(fn)
    values = [rng.normal(size=100_000) * (k + 1) for k in range(4)]
    expected = [fn(v) for v in values]
    errors = []

    def work(k):
        try:
            f = fn.copy()
            for _ in range(5):
                np.testing.assert_array_equal(f(values[k]), expected[k])
        except Exception as exc:  # reported below, on the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_a_small_epilogue_of_a_matrix_product_stays_native(rng):
    # ONNX Runtime fuses MatMul + Add + Max into one pass; a kernel node after
    # the MatMul would be a second pass. A larger or special-function
    # epilogue still becomes a kernel node.
    x = pt.matrix("x", dtype="float32")
    w = pt.matrix("w", dtype="float32")
    b = pt.vector("b", dtype="float32")
    layer = pt.maximum(x @ w + b, 0)
    values = [rng.normal(size=(8, 3)).astype("float32"), rng.normal(size=(3, 4)).astype("float32"),
              rng.normal(size=4).astype("float32")]
    fn, _ = compare_onnx_and_py([x, w, b], [layer], values)
    kinds = [n.op_type for n in fn.maker.linker.onnx_model.graph.node]
    assert not kernel_nodes(fn) and {"Add", "Max"} <= set(kinds), kinds
    heavy = pt.sigmoid(x @ w + b) * pt.erf(x @ w)
    fn, _ = compare_onnx_and_py([x, w, b], [heavy], values)
    assert kernel_nodes(fn)


def test_a_sum_of_a_fused_output_is_part_of_its_kernel_node(rng):
    # PyMC's log-densities: element-wise terms, each summed. The kernel node
    # gives the sums (pairwise, as NumPy adds) instead of arrays that
    # ReduceSum nodes read back.
    x, y = pt.vector("x"), pt.matrix("y")
    terms = pt.exp(x) * 2 + x
    outputs = [
        terms.sum(),                       # fused
        pt.log1p(pt.exp(x)).sum(axis=0),   # all axes: fused
        (y**2 + pt.sin(y)).sum(axis=1),    # part of the axes: a reduction stage of a node
        pt.exp(x) * 3,                     # an array output of the same node
    ]
    values = [rng.normal(size=1000), rng.normal(size=(3, 4))]
    fn, results = compare_onnx_and_py([x, y], outputs, values)
    types = [n.op_type for n in fn.maker.linker.onnx_model.graph.node]
    assert "ReduceSum" not in types, types
    assert [s["reduce"] for s in stages(fn) if "reduce" in s] == ["sum"]
    default = pytensor.function([x, y], outputs, mode=pytensor.compile.mode.get_default_mode())
    for got, want in zip(results, default(*values), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-14)
    # Exports keep the ReduceSums.
    exported = pytensor_onnx.export_onnx([x, y], outputs)
    assert [n.op_type for n in exported.graph.node].count("ReduceSum") >= 3


def test_a_sum_of_an_output_that_others_read_too_is_one_more_output_of_its_node(rng):
    # PyMC's gradients use terms both summed and as arrays: the kernel node
    # gives the array and, from the same register, its sum (pairwise, as
    # NumPy adds), instead of a ReduceSum node reading the array back.
    x = pt.vector("x")
    terms = pt.exp(x) * x + 1
    outputs = [terms.sum(), terms * 3, pt.sort(terms), (terms**2).sum()]
    for size in (0, 5, 1000, 40_000):  # (40,000: summed block by block)
        fn, _ = compare_onnx_and_py([x], outputs, [rng.normal(size=size)])
        types = [n.op_type for n in fn.maker.linker.onnx_model.graph.node]
        assert "ReduceSum" not in types, types
        # The sum has the bits of NumPy's add.reduce of the array the node gives.
        both = pytensor.function([x], [terms.sum(), terms], mode="ONNX")
        assert [n.op_type for n in both.maker.linker.onnx_model.graph.node] == ["Elemwise_float64"]
        total, array = both(rng.normal(size=size))
        assert total == np.add.reduce(array)


def test_sums_that_stay_reductions(rng):
    x = pt.vector("x")
    terms = pt.exp(x) + x
    f32 = pt.vector("f32", dtype="float32")
    # (A summed array that is an output too, or that other nodes read, is
    # summed by its node all the same: the test above.)
    cases = [
        ([f32], [(pt.exp(f32) + f32).sum()]),                  # float32: PyTensor accumulates otherwise
        ([x], [terms.sum() + pt.sort(terms)[0], (terms.reshape((-1, 1)) * x).sum(axis=0)]),  # part of the axes
    ]
    for inputs, outputs in cases:
        values = [rng.normal(size=50).astype(inputs[0].dtype)]
        fn, _ = compare_onnx_and_py(inputs, outputs, values, rtol=1e-5 if inputs[0].dtype == "float32" else None)
        # (A Reduce node, or one merged into a kernel node as a reduction
        # stage: the float32 terms cast to float64 by an exact Cast, a stage too.)
        assert "Reduce_float64" in [n.op_type for n in fn.maker.linker.onnx_model.graph.node] or any(
            s.get("reduce") == "sum" for s in stages(fn)
        )


def test_fused_sums_of_large_and_empty_arrays(rng):
    x = pt.vector("x")
    out = (pt.exp(x) * x).sum()
    fn, _ = compare_onnx_and_py([x], [out], [rng.normal(size=100_003)])
    assert [n.op_type for n in fn.maker.linker.onnx_model.graph.node] == ["Elemwise_float64"]
    assert fn(np.zeros(0))[0] == 0.0
    # The pool's tasks add their sums in order: any thread count, the same bits.
    value = rng.normal(size=300_001)
    one = pytensor.function([x], out, mode=pytensor_onnx.onnx_mode(session_options=_single_thread()))
    assert fn(value) == one(value)
    # Pairwise, as NumPy's add.reduce (the py linker's Sum) adds, to the same
    # bits (terms NumPy computes to the same bits: squares, and erf(0) = 0),
    # on the pool's threads or not; not in position order (PyTensor's C).
    y = pt.vector("y")
    squares = pytensor.function([x, y], (pt.sqr(x) + pt.erf(y)).sum(), mode="ONNX")
    assert [n.op_type for n in squares.maker.linker.onnx_model.graph.node] == ["Elemwise_float64"]
    total = 0.0
    for term in (value * value).tolist():
        total += term
    for size in (1, 7, 8, 9, 127, 128, 129, 1000, 4097, 100_003, 300_001):
        part = value[:size]
        assert squares(part, np.zeros_like(part)) == np.add.reduce(part * part), size
    assert squares(value, np.zeros_like(value)) != total  # (the order shows here)


def test_all_and_any_of_a_fused_condition_are_part_of_its_kernel_node(rng):
    # PyMC's check of its parameters: all(conditions on arrays), then a
    # switch on it. The kernel node gives the all()/any() itself instead of
    # a bool array that Cast, ReduceMax and Not nodes read back.
    x = pt.vector("x")
    y = pt.matrix("y")
    ok = pt.all(pt.exp(x) > 0.5)
    some = pt.any((y * 2 > 3) & (y < 4))
    logp = pt.switch(ok & some, (x**2).sum(), -np.inf)
    outputs = [ok, some, logp, pt.any(y > 0, axis=1)]  # the last: part of the axes, a reduction
    for values in [
        [rng.normal(size=40), rng.normal(size=(3, 5))],
        [np.full(40, 5.0), np.full((3, 5), 1.7)],               # all holds, any holds
        [np.full(40, -5.0), np.full((3, 5), 9.0)],              # neither
        [np.zeros(0), np.zeros((0, 5))],                        # empty: all holds, any does not
        [rng.uniform(0, 2, size=70_001), rng.normal(size=(300, 300))],  # on the pool's tasks
    ]:
        fn, results = compare_onnx_and_py([x, y], outputs, values)
        kinds = [n.op_type for n in fn.maker.linker.onnx_model.graph.node]
        assert "ReduceMax" in kinds and kinds.count("ReduceMax") + kinds.count("ReduceMin") == 1, kinds
        default = pytensor.function([x, y], outputs, mode=pytensor.compile.mode.get_default_mode())
        for got, want in zip(results, default(*values), strict=True):
            # (The sum of 70,001 squares: PyTensor 3's Numba adds a lone
            # squaring's terms in an order of LLVM's, not in position order.)
            np.testing.assert_allclose(got, want, rtol=1e-13)
            assert got.dtype == want.dtype


def test_conditions_reduced_beside_float64_outputs_are_computed_once(rng):
    # PyMC's Bernoulli with its bounds checked: one fused expression gives
    # float64 terms (an array a matrix product reads, and sums) and
    # conditions on the same sigmoid that only all()/any() read. A custom
    # op's outputs share one dtype, so the conditions were a second node
    # that ran the sigmoid again; now the float64 node counts the positions
    # that fail them (all) or meet them (any) and a small stage tests the
    # counts against 0.
    X = pt.matrix("X")
    beta = pt.vector("beta")
    y = pt.vector("y")
    p = pt.sigmoid(X @ beta)
    ok = pt.all((p >= 0) & (p <= 1))
    some = pt.any(pt.sqr(p) > 0.25)
    terms = y * pt.log(p) + (1 - y) * pt.log1p(-p)
    grad = X.T @ (y - p)
    # (The checks' switch reads the matrix product too: it runs after it.)
    logp = pt.switch(ok & some, terms.sum() + (beta * grad).sum(), -np.inf)
    outputs = [logp, grad, (y - p).sum()]
    cases = [
        [rng.normal(size=(80, 3)), rng.normal(size=3), rng.integers(0, 2, size=80).astype("float64")],
        [np.zeros((80, 3)), np.zeros(3), np.ones(80)],                   # p = 0.5 everywhere: any() fails
        [np.full((5, 3), np.nan), np.ones(3), np.ones(5)],                # NaN fails every check
        [np.zeros((0, 3)), np.ones(3), np.zeros(0)],                      # empty: all() holds, any() does not
        [rng.normal(size=(70_001, 3)), rng.normal(size=3), np.ones(70_001)],  # on the pool's tasks
    ]
    # (Whether the checks fail, logp -inf, per case.)
    for values, fails in zip(cases, [False, True, True, True, False], strict=True):
        fn, results = compare_onnx_and_py([X, beta, y], outputs, values)
        assert bool(np.isneginf(results[0])) == fails
        programs = [s.get("program", "") for s in stages(fn)]
        assert sum(text.count("Sigmoid") for text in programs) == 1, programs
        assert "Elemwise_bool" not in [n.op_type for n in fn.maker.linker.onnx_model.graph.node]
        default = pytensor.function([X, beta, y], outputs, mode=pytensor.compile.mode.get_default_mode())
        for got, want in zip(results, default(*values), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-13)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_max_and_min_with_numpys_nan_rule_are_one_kernel_node_each(rng, dtype):
    # NumPy's max/min propagate NaN; ONNX Runtime's ReduceMax drops it
    # depending on where it sits, so the portable form is six nodes
    # (dispatch/math.py `reduce`). Mode ONNX: one Reduce node each.
    x = pt.tensor("x", shape=(None, None, None), dtype=dtype)
    outputs = [
        pt.max(x),                             # every axis
        pt.max(x, axis=1),                     # a middle one
        pt.min(x, axis=(0, 2)),                # two, the innermost among them
        pt.max(x, axis=-1, keepdims=True),     # keepdims
        pt.min(x, axis=0),                     # the outermost
    ]
    with_nan = rng.normal(size=(3, 4, 5)).astype(dtype)
    with_nan[1, 2, 3] = np.nan                 # one NaN: its slices are NaN
    with_nan[2, :, :] = np.nan                 # a slice all NaN
    with_nan[0, 0, 0], with_nan[0, 1, 0] = np.inf, -np.inf
    infinite = np.full((2, 3, 4), -np.inf, dtype=dtype)
    infinite[1, 1, 1] = np.inf
    for value in [
        rng.normal(size=(3, 4, 5)).astype(dtype),
        with_nan,
        infinite,
        np.zeros((1, 1, 1), dtype=dtype),
        rng.normal(size=(2, 300, 7)).astype(dtype),
    ]:
        fn, _ = compare_onnx_and_py([x], outputs, [value])
        kinds = [n.op_type for n in fn.maker.linker.onnx_model.graph.node]
        assert kinds.count(f"Reduce_{dtype}") == len(outputs), kinds
        assert "IsNaN" not in kinds and "ReduceMax" not in kinds, kinds
    # Axes of length 0 that are not reduced: empty results.
    fn, _ = compare_onnx_and_py([x], [pt.max(x, axis=1), pt.min(x, axis=(1, 2))], [np.zeros((0, 2, 3), dtype=dtype)])
    # An axis of length 0 that is: NumPy raises, and so do both paths.
    compare_raises([x], pt.max(x, axis=0), [np.zeros((0, 3, 2), dtype=dtype)], ValueError, "zero-size array",
                   onnx_fails="check")
    portable = pytensor.function([x], pt.max(x, axis=0), mode=pytensor_onnx.onnx_mode(kernels=False))
    with pytest.raises(RuntimeError):
        portable(np.zeros((0, 3, 2), dtype=dtype))


def test_the_size_of_an_axis_is_read_by_the_kernel_node_itself(rng):
    # PyMC scales by the number of observations (x.shape[0]): the kernel
    # node reads that size from x (attribute dim_inputs) instead of a Shape
    # and a Gather node feeding it.
    x = pt.matrix("x")
    s = pt.scalar("s")
    logp = -(x.shape[0] * pt.log(s)) - x.shape[1] * s + (x**2).sum()
    outputs = [logp, pytensor.grad(logp, s)]
    for shape in [(4, 3), (1, 1), (0, 5), (700, 2)]:
        fn, _ = compare_onnx_and_py([x, s], outputs, [rng.normal(size=shape), np.float64(1.7)])
        kinds = [n.op_type for n in fn.maker.linker.onnx_model.graph.node]
        assert "Shape" not in kinds and "Gather" not in kinds, kinds
        assert any("dim_inputs" in s for s in stages(fn))


def test_a_kernel_node_replays_a_run_only_for_inputs_of_its_shapes(rng):
    # A node keeps what a run found from its inputs' dtypes and shapes (each
    # stage's output shapes, the compiled block a program stage ran, the sizes
    # it read: src/kernels/node_record.h) and replays it on runs of inputs of
    # the same shapes. One function fed shapes that come and go, a failing
    # call among them: every call must give the py linker's values, and a
    # shape it saw before must replay that shape's run, not another's.
    x = pt.matrix("x")
    v = pt.vector("v")
    s = pt.scalar("s")
    z = pt.exp(x * s) * v - x.shape[0] * pt.log(s)
    outputs = [z.sum(), (z**2).sum(axis=0), pytensor.grad(z.sum(), s)]
    fn = pytensor.function([x, v, s], outputs, mode="ONNX")
    assert len(stages(fn)) > 1
    py_fn = pytensor.function([x, v, s], outputs, mode=Mode(linker="py", optimizer="fast_run"))
    shapes = [(4, 3), (4, 1), (1, 3), (4, 3), (7, 3), (1, 1), (4, 3), (0, 3), (4, 1), (7, 3)]
    for rows, cols in shapes:
        values = [rng.normal(size=(rows, cols)), rng.normal(size=cols), np.float64(rng.uniform(0.5, 2))]
        for got, want in zip(fn(*values), py_fn(*values), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=f"shape {(rows, cols)}")
        # (v of another length than x's rows: both fail, and the next call
        # runs as before.)
        wrong = [values[0], rng.normal(size=cols + 1), values[2]]
        with pytest.raises(Exception) as py_error:
            py_fn(*wrong)
        with pytest.raises(type(py_error.value)):
            fn(*wrong)


def _single_thread():
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return options


@pytest.mark.parametrize("kernels_on", [True, False])
def test_a_transpose_that_merged_arithmetic_reads_is_a_view(kernels_on, rng):
    # ONNX's Mul becomes a stage only when nodes merge, after the views of
    # one-stage nodes were folded: the merged node then reads the Transpose
    # of the solve's result in place (fold_axis_views_into_merged_kernels;
    # the Gaussian process's gradient has this shape).
    a, b, c = pt.matrix("a", shape=(6, 6)), pt.matrix("b", shape=(6, 3)), pt.matrix("c", shape=(3, 6))
    v = pt.linalg.solve_triangular(pt.linalg.cholesky(a), b, lower=True)
    out = (v.T * c).sum(axis=1)
    spd = rng.normal(size=(6, 6))
    values = [spd @ spd.T + 6 * np.eye(6), rng.normal(size=(6, 3)), rng.normal(size=(3, 6))]
    fn, _ = compare_onnx_and_py([a, b, c], [out], values, onnx_mode_kwargs={"kernels": kernels_on})
    types = [n.op_type for n in fn.maker.linker.onnx_model.graph.node]
    if kernels_on:
        assert "Transpose" not in types, types
        assert any(s.get("input_axes") for s in stages(fn)), stages(fn)
    else:
        assert "Transpose" in types, types


def test_onnx_float64_arithmetic_runs_as_stages(rng):
    # ONNX's float64 Sub, Exp, Log, Div, ... that rules write beside kernel
    # nodes (a log-softmax's recipe, a softmax divided) run as stages: of
    # the kernel node next to them, or of an Elemwise node of their own in
    # a graph of kernel nodes (src/core/passes/merge_kernel_stages.h). Rows
    # of NaN, infinities and huge values, on both paths.
    x = pt.tensor("x", shape=(None, 4))
    r = pt.tensor("r", shape=(4,))  # (static: no run-time check of x's and r's sizes beside)
    outputs = [pt.special.log_softmax(x * 2.0 + 1.0, axis=-1) * 3.0, pt.special.softmax(pt.exp(x), axis=0) / r]
    value = rng.normal(size=(5, 4))
    value[1] = [np.nan, 0.0, 1.0, 2.0]
    value[2] = [np.inf, 0.0, -np.inf, 1.0]
    value[3] = [-np.inf, -np.inf, -np.inf, 0.0]
    value[4] = [700.0, -700.0, 1e-300, 300.0]
    fn, results = compare_onnx_and_py([x, r], outputs, [value, np.array([1.0, -2.0, 0.0, 3.0])])
    types = [n.op_type for n in fn.maker.linker.onnx_model.graph.node]
    assert not {"Sub", "Exp", "Log", "Div", "ReduceSum"} & set(types), types
    programs = [s.get("program", "") for s in stages(fn)]
    for program in ("Sub float64 0 1", "Exp float64 0", "Log float64 0", "TrueDiv float64 0 1"):
        assert program in programs, (program, programs)
