"""Mode ONNX's native sessions (pytensor_onnx/runtime.py NativeSession,
src/runtime/session.h): the ONNX Runtime the onnxruntime package loaded,
driven through its C API from the extension. They must give what an
onnxruntime.InferenceSession gives on the same model, for every dtype and
layout PyTensor feeds, and fail the same way."""

import os
import subprocess
import sys
import threading

import numpy as np
import onnxruntime as ort
import pytensor
import pytensor.tensor as pt
import pytest

from pytensor_onnx import onnx_mode, runtime
from pytensor_onnx.runtime import NativeSession


def _both(inputs, outputs, **kwargs):
    """The function on a native session, and on an InferenceSession (session options of the user's)."""
    native = pytensor.function(inputs, outputs, mode=onnx_mode(), **kwargs)
    options = ort.SessionOptions()
    options.log_severity_level = 4
    binding = pytensor.function(inputs, outputs, mode=onnx_mode(session_options=options), **kwargs)
    assert isinstance(native.maker.linker.session, NativeSession)
    assert isinstance(binding.maker.linker.session, ort.InferenceSession)
    return native, binding


def _assert_identical(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert type(g) is type(w)
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


#: ONNX Runtime 1.21's Python binding keeps an environment of its own, which
#: its C API cannot reach (CreateEnv fails); 1.32's shares it.
SHARES_ITS_ENVIRONMENT = tuple(int(p) for p in ort.__version__.split(".")[:2]) >= (1, 32)


def test_native_sessions_are_built_here():
    # CI builds the extension with ONNX Runtime's and NumPy's headers: the
    # native path must be the one mode ONNX takes, not a silent fallback;
    # on a runtime whose binding keeps its environment apart, the reason says so.
    reason = runtime.native_unavailable_reason()
    if SHARES_ITS_ENVIRONMENT:
        assert reason is None
    else:
        assert reason is not None and "environment of its Python binding" in reason, reason
        x = pt.vector("x")
        fn = pytensor.function([x], x + 1, mode=onnx_mode())
        assert isinstance(fn.maker.linker.session, ort.InferenceSession)


needs_native = pytest.mark.skipif(
    runtime.native_unavailable_reason() is not None, reason=f"{runtime.native_unavailable_reason()}"
)


@needs_native
@pytest.mark.parametrize(
    "dtype", ["float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16",
              "uint8", "bool"]
)
def test_every_dtype_in_and_out(dtype, rng):
    x = pt.tensor("x", dtype=dtype, shape=(None, None))
    y = pt.tensor("y", dtype=dtype, shape=(None,))
    outputs = [x, pt.switch(x > y, x, y), x.sum(axis=0) if dtype != "bool" else pt.any(x, axis=0)]
    native, binding = _both([x, y], outputs)
    value = (rng.normal(size=(3, 4)) * 10).astype(dtype)
    for feed in ([value, value[0]], [value[:0], value[0]], [value[:, :0], value[0, :0]]):
        _assert_identical(native(*feed), binding(*feed))


@needs_native
def test_zero_d_scalars_views_and_non_contiguous_inputs(rng):
    x = pt.matrix("x")
    s = pt.scalar("s")
    k = pt.lscalar("k")
    outputs = [pt.exp(x) * s + k, (x * s).sum(), k * 2]
    native, binding = _both([x, s, k], outputs)
    base = rng.normal(size=(6, 8))
    for value in (base, base.T, base[::2, 1::3], np.asfortranarray(base), base.astype(">f8")):
        _assert_identical(native(value, np.float64(0.5), np.int64(3)), binding(value, np.float64(0.5), np.int64(3)))


@pytest.mark.parametrize("n", [3, 5000])  # copied from the run's memory (small), or handed over (large)
@needs_native
def test_outputs_are_arrays_of_their_own(n):
    # A session's binding writes each run's outputs into the memory of its
    # last run: what a call returned must not change with the next call.
    x = pt.vector("x")
    native = pytensor.function([x], [pt.exp(x), x + 1], mode=onnx_mode())
    first = native(np.zeros(n))
    second = native(np.ones(n))
    np.testing.assert_array_equal(first[0], np.ones(n))
    np.testing.assert_array_equal(first[1], np.ones(n))
    np.testing.assert_array_equal(second[0], np.full(n, np.e))
    first[1][:] = -1.0  # writable, as PyTensor's outputs are
    np.testing.assert_array_equal(native(np.zeros(n))[1], np.ones(n))
    np.testing.assert_array_equal(second[1], np.full(n, 2.0))
    del first, second


@needs_native
def test_output_shapes_that_change_between_calls():
    # A run's outputs go into the memory of the last run's, which has the
    # wrong shape when the shapes follow the inputs' shapes or values: the
    # session then allocates them anew, on every later call too.
    x = pt.vector("x")
    n = pt.lscalar("n")
    by_shape = pytensor.function([x], [x * 2, x.sum()], mode=onnx_mode())
    by_value = pytensor.function([n], pt.arange(n) * 3, mode=onnx_mode())
    assert isinstance(by_value.maker.linker.session, NativeSession)
    for size in [3, 5, 5, 0, 4096, 2, 3]:
        doubled, total = by_shape(np.arange(float(size)))
        np.testing.assert_array_equal(doubled, np.arange(float(size)) * 2)
        assert total == np.arange(float(size)).sum()
        np.testing.assert_array_equal(by_value(np.int64(size)), np.arange(size) * 3)


@needs_native
def test_inputs_kept_between_calls_follow_each_calls_values_and_shapes(rng):
    # A binding keeps a copy of each input of 16 KiB or less and overwrites
    # it on the next call of the same dtype and shape (src/runtime/session.h,
    # kCopiedInputBytes); larger inputs are read where they are. Every call
    # must see its own values, whatever the shapes before it, and the
    # caller's later writes into an array must not reach earlier results.
    x = pt.vector("x")
    s = pt.scalar("s")
    native, binding = _both([x, s], [x * s, (x * s).sum(), pt.exp(x)])
    # 2048 float64 are exactly 16 KiB (copied), 2049 one value more (read in place)
    for size in [3, 3, 5, 0, 2048, 2049, 2049, 2048, 3, 100_000, 3]:
        value = rng.normal(size=size)
        scale = np.float64(rng.normal())
        got = native(value, scale)
        _assert_identical(got, binding(value, scale))
        kept = [np.copy(g) for g in got]
        value[...] = np.nan  # the caller reuses its array
        for g, k in zip(got, kept, strict=True):
            np.testing.assert_array_equal(g, k)
    # the same array object, written in place between calls
    value = np.arange(4.0)
    first = native(value, np.float64(2.0))[0]
    value[:] = 10.0
    second = native(value, np.float64(2.0))[0]
    np.testing.assert_array_equal(first, np.arange(4.0) * 2)
    np.testing.assert_array_equal(second, np.full(4, 20.0))


@needs_native
def test_outputs_kept_between_calls_that_are_constants_or_baked_values(rng):
    # Outputs of 16 KiB or less go into memory the binding keeps: outputs
    # ONNX Runtime copies from an initializer (a constant, a baked shared
    # value) must come out right on every call, beside computed ones.
    x = pt.vector("x")
    w = pytensor.shared(rng.normal(size=3), name="w")
    const = rng.normal(size=3)
    native, binding = _both([x], [pt.constant(const), x + 1, w, pt.as_tensor(np.float64(2.5)), x * w])
    for i in range(4):
        value = rng.normal(size=3)
        _assert_identical(native(value), binding(value))
    w.set_value(rng.normal(size=3))
    value = rng.normal(size=3)
    _assert_identical(native(value), binding(value))


@pytest.mark.parametrize("n", [3, 2048, 2049, 5000])
@needs_native
def test_an_output_that_is_an_input_passed_through_is_the_callers_value(n):
    # ONNX Runtime may hand an input through as an output (Identity); a
    # small input is the binding's copy, which the next call overwrites, so
    # such an output must be copied out, not the binding's memory.
    x = pt.vector("x")
    y = pt.vector("y")
    native = pytensor.function([x, y], [x, y.reshape((1, -1)), x + y], mode=onnx_mode())
    first = native(np.zeros(n), np.ones(n))
    second = native(np.full(n, 2.0), np.full(n, 3.0))
    np.testing.assert_array_equal(first[0], np.zeros(n))
    np.testing.assert_array_equal(first[1], np.ones((1, n)))
    np.testing.assert_array_equal(second[0], np.full(n, 2.0))
    np.testing.assert_array_equal(second[1], np.full((1, n), 3.0))


@needs_native
def test_a_failed_run_leaves_the_session_usable():
    x, y = pt.vector("x"), pt.vector("y")
    native = pytensor.function([x, y], [x + y, pt.gammaln(x)], mode=onnx_mode())
    np.testing.assert_array_equal(native(np.ones(3), np.ones(3))[0], np.full(3, 2.0))
    with pytest.raises(ValueError):
        native(np.ones(3), np.ones(1))  # a broadcast PyTensor refuses
    got = native(np.full(4, 2.0), np.ones(4))
    np.testing.assert_array_equal(got[0], np.full(4, 3.0))
    np.testing.assert_array_equal(got[1], np.zeros(4))


@needs_native
def test_outputs_outlive_their_session():
    # An output holds its ONNX Runtime value (and that value its allocator):
    # the session may go first.
    import gc

    from pytensor_onnx import linker

    x = pt.vector("x")
    fn = pytensor.function([x], [pt.exp(x) * 2, pt.gammaln(x + 1)], mode=onnx_mode())
    assert isinstance(fn.maker.linker.session, NativeSession)
    outs = fn(np.arange(1000.0) / 100)
    want = [o.copy() for o in outs]
    del fn
    with linker._SESSION_CACHE_LOCK:
        linker._SESSION_CACHE.clear()
    gc.collect()
    _ = [np.random.rand(1000) for _ in range(100)]  # reuse freed memory, if any was freed
    for got, expected in zip(outs, want, strict=True):
        np.testing.assert_array_equal(got, expected)


@needs_native
def test_failures_raise_what_the_binding_raises():
    x, y = pt.vector("x"), pt.vector("y")
    i = pt.lscalar("i")
    native, binding = _both([x, y, i], [pt.gammaln(x * y), x[i]])
    for feed, error in [
        ((np.ones(3), np.ones(1), np.int64(0)), ValueError),   # a broadcast PyTensor refuses
        ((np.ones(3), np.ones(3), np.int64(5)), IndexError),   # an index out of range
    ]:
        for fn in (native, binding):
            with pytest.raises(error):
                fn(*feed)


@needs_native
def test_runs_on_storage_cells(rng):
    # A function's thunk hands the session PyTensor's storage cells (lists
    # of one item): it reads the inputs from them and stores the outputs
    # into them, as the returned list.
    x, y = pt.vector("x"), pt.vector("y")
    fn = pytensor.function([x, y], [x * y, (x + y).sum()], mode=onnx_mode())
    session = fn.maker.linker.session
    a, b = rng.normal(size=5), rng.normal(size=5)
    out_cells = ([None], [None])
    results = session.run_cells(([a], [b]), out_cells)
    np.testing.assert_array_equal(results[0], a * b)
    assert out_cells[0][0] is results[0] and out_cells[1][0] is results[1]
    _assert_identical(results, session.run([a, b]))
    # Arrays not C-contiguous, or not in the machine's byte order, are
    # converted (the others are read as they are).
    c = rng.normal(size=(5, 2))
    for odd in (c.T[1], c[:, 0], a.astype(">f8")):
        _assert_identical(session.run_cells(([odd], [b]), ([None], [None])), session.run([np.array(odd, dtype="<f8"), b]))
    with pytest.raises(TypeError, match="storage cell"):
        session.run_cells((a, [b]), out_cells)
    with pytest.raises(TypeError, match="storage cell"):
        session.run_cells(([a], [b]), ([None], None))
    with pytest.raises(ValueError, match="outputs, for 1 cells"):
        session.run_cells(([a], [b]), ([None],))


@needs_native
def test_the_thunk_is_in_c_and_sees_baked_values_change(rng):
    # A function on a native session is called through _core.CellThunk: it
    # checks the baked shared value (its object and its container's count of
    # set values) and runs the session on the cells; a change rebinds.
    from pytensor_onnx import _core

    x = pt.vector("x")
    w = pytensor.shared(rng.normal(size=4), name="w")
    fn = pytensor.function([x], [x * w, (x + w).sum()], mode=onnx_mode())
    assert isinstance(fn.vm, _core.CellThunk)
    runner = fn.maker.linker.runner
    a = rng.normal(size=4)

    def expected():
        return [a * w.get_value(), np.asarray((a + w.get_value()).sum())]

    _assert_identical(fn(a), expected())
    value = w.get_value(borrow=True)
    value *= 3  # in place, then set again: the same object, counted by its container
    w.set_value(value, borrow=True)
    _assert_identical(fn(a), expected())
    w.set_value(rng.normal(size=4))  # another object
    _assert_identical(fn(a), expected())
    assert runner.rebinds == 2
    with pytest.raises(ValueError, match="Input dimension mismatch|broadcast"):
        fn(np.ones(3))  # the failure raised by the runner's callback


@needs_native
def test_a_function_and_its_c_thunk_are_collected():
    # The thunk reaches its runner through weak references only: a cycle
    # through its C members would keep the function's session alive.
    import gc
    import weakref

    x = pt.vector("x")
    w = pytensor.shared(np.ones(3), name="w")
    fn = pytensor.function([x], x * w, mode=onnx_mode())
    runner = weakref.ref(fn.maker.linker.runner)
    thunk = weakref.ref(fn.vm)
    fn(np.ones(3))
    del fn
    gc.collect()
    assert runner() is None and thunk() is None


def test_the_c_thunk_refuses_malformed_checks():
    from pytensor_onnx import _core

    def run(fed, out):
        return []

    for checks in [((1, 2, 3),), (([], None, None, 0),), ((None, None, None, 0),)]:
        with pytest.raises(TypeError, match="a check is a"):
            _core.CellThunk(run, (), (), checks, lambda: None, lambda: None)


@needs_native
def test_a_wrong_input_dtype_with_trust_input_fails_with_onnx_runtimes_message():
    x = pt.vector("x")
    native = pytensor.function([x], x * 2, mode=onnx_mode())
    native.trust_input = True
    with pytest.raises(RuntimeError, match="(?i)type"):
        native(np.ones(3, dtype="float32"))
    with pytest.raises(RuntimeError, match="takes no arrays of NumPy dtype <U1"):
        native(np.array(["a", "b"]))


def _input_shapes_records(fn):
    (node,) = [n for n in fn.maker.linker.onnx_model.graph.node if n.op_type.startswith("Elemwise")]
    return next((list(a.ints) for a in node.attribute if a.name == "input_shapes"), [])


@needs_native
def test_kernel_nodes_take_static_input_shapes_from_the_model(rng):
    # The Elemwise kernel node reads the shapes of x (300,) and s () from the
    # model (src/core/passes/record_input_shapes.h), not v's (symbolic).
    # ONNX Runtime checks x's; the native session checks that s is a
    # scalar, which ONNX Runtime does not: only there is s recorded. (x has
    # too many elements to be packed with s: pack_small_arrays.h.)
    x, s, v = pt.tensor("x", shape=(300,)), pt.scalar("s"), pt.vector("v")
    outputs = [pt.exp(x * s).sum() + v.sum(), x * s]
    native, binding = _both([x, s, v], outputs)
    (node,) = native.maker.linker.onnx_model.graph.node
    index = {name: k for k, name in enumerate(node.input)}
    x_record = [index["x"], 11, 1, 300]
    assert _input_shapes_records(native) == x_record + [index["s"], 11, 0]
    assert _input_shapes_records(binding) == x_record
    values = [rng.normal(size=300), np.array(rng.normal()), rng.normal(size=4)]
    want = pytensor.function([x, s, v], outputs, mode="FAST_COMPILE")(*values)
    for fn in (native, binding):
        _assert_identical(fn(*values), want)
    # With trust_input, a scalar of another rank fails the run, never read as one.
    native.trust_input = True
    for wrong in (np.ones(1), np.ones(0), np.ones((2, 2))):
        with pytest.raises(RuntimeError, match="Invalid rank for input: s Got: [12] Expected: 0"):
            native(values[0], wrong, values[2])
    _assert_identical(native(*values), want)
    # Exports hold no such records.
    from pytensor_onnx import export_onnx

    model = export_onnx([x, s, v], outputs)
    assert not [a for n in model.graph.node for a in n.attribute if a.name == "input_shapes"]


@needs_native
def test_scalar_outputs_of_a_kernel_node_are_one_output_split_again(rng):
    # Float64 scalars a kernel node gives only as outputs are one output
    # (src/core/passes/pack_small_arrays.h): b and the switch's sum (one
    # node, PyTensor's s * x.sum() and the sum), not a (also read by the
    # Identity of its second output), c (read by the other node) or the
    # vector. Each result is its own 0-d array, with the bits of the
    # unpacked model (the session-options path).
    x, s = pt.vector("x"), pt.scalar("s")
    w = pytensor.shared(np.float64(1.5), "w")
    y = pt.exp(x * s * w)
    a, b, c = y.sum(), (x * s).sum(), (y * y).sum()
    outputs = [a, y, b, a, c, pt.switch(c > 0, c, x).sum()]
    native, binding = _both([x, s], outputs)
    ((packed, elements, shapes),) = native.maker.linker.packed_outputs
    names = native.maker.linker._output_names
    assert sorted(elements) == sorted([names[2], names[5]])
    assert shapes == ((), ())
    assert packed in [o.name for o in native.maker.linker.onnx_model.graph.output]
    assert binding.maker.linker.packed_outputs == ()
    assert len(binding.maker.linker.onnx_model.graph.output) == len(outputs)
    values = [rng.normal(size=4), np.array(rng.normal())]
    for call in range(3):
        if call == 2:
            w.set_value(np.float64(-0.5))  # (baked: a new session, packed too)
        got, want = native(*values), binding(*values)
        _assert_identical(got, want)
        assert all(isinstance(r, np.ndarray) for r in got)
        assert got[0] is not got[3]
    np.testing.assert_allclose(got[0], np.exp(values[0] * values[1] * -0.5).sum(), rtol=1e-15)
    # The model in a session of one's own: the linker splits its outputs.
    from pytensor_onnx import kernels

    options = ort.SessionOptions()
    kernels.register(options)
    model = native.maker.linker.onnx_model
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feed = dict(zip([i.name for i in session.get_inputs()], values))
    feed.update({i.name: np.asarray(w.get_value()) for i in session.get_inputs() if i.name not in feed})
    names = [o.name for o in session.get_outputs()]
    _assert_identical(native.maker.linker.function_outputs(dict(zip(names, session.run(None, feed)))), got)


@needs_native
def test_scalar_inputs_only_kernel_nodes_read_are_one_input_gathered(rng):
    # a, b and c (float64 scalars only kernel nodes read) are one input the
    # native session gathers (src/core/passes/pack_small_arrays.h); not h
    # (float32), v (a vector) or w (a shared value the session bakes).
    a, b, c, h, v = pt.scalar("a"), pt.scalar("b"), pt.scalar("c"), pt.scalar("h", dtype="float32"), pt.vector("v")
    w = pytensor.shared(np.float64(0.25), "w")
    outputs = [pt.exp(v * a + b).sum() * w, v * c + h]
    native, binding = _both([a, b, c, h, v], outputs)
    ((packed, elements, shapes),) = native.maker.linker.packed_inputs
    assert sorted(elements) == ["a", "b", "c"]
    assert shapes == ((), (), ())
    assert sorted(i.name for i in native.maker.linker.onnx_model.graph.input) == sorted([packed, "h", "v", "w"])
    assert binding.maker.linker.packed_inputs == ()
    values = [np.array(rng.normal()) for _ in range(3)] + [np.array(0.5, dtype="float32"), rng.normal(size=5)]
    for call in range(3):
        if call == 2:
            w.set_value(np.float64(2.0))  # (baked: a new session, packed too)
        _assert_identical(native(*values), binding(*values))
    # The model in a session of one's own: the linker gathers its feed.
    from pytensor_onnx import kernels

    options = ort.SessionOptions()
    kernels.register(options)
    linker = native.maker.linker
    session = ort.InferenceSession(linker.onnx_model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feed = linker.model_feed({**dict(zip(["a", "b", "c", "h", "v"], values)), "w": np.asarray(w.get_value())})
    names = [o.name for o in session.get_outputs()]
    _assert_identical(linker.function_outputs(dict(zip(names, session.run(None, feed)))), native(*values))
    # With trust_input, a packed scalar of another rank or dtype fails the run.
    native.trust_input = True
    with pytest.raises(RuntimeError, match="Invalid rank for input: b Got: 1 Expected: 0"):
        native(values[0], np.ones(1), *values[2:])
    with pytest.raises(RuntimeError, match="Unexpected input data type for input: c"):
        native(*values[:2], np.array(1.0, dtype="float32"), *values[3:])


@needs_native
def test_small_arrays_of_static_shape_are_packed_in_and_out(rng):
    # Float64 inputs of static shapes (a scalar, a (3,) vector, a (2, 3)
    # matrix) that only kernel nodes read are one input, and the float64
    # outputs of static shapes a kernel node gives only as outputs (the
    # gradients: the same shapes) one output (pack_small_arrays.h); the
    # (n,) vector's input and gradient stay their own, as does an array of
    # more than 256 elements. Each result has its own shape and bits of the
    # unpacked model (the session-options path), and a run of the model in
    # a session of one's own, gathered and split by the linker, agrees.
    s = pt.scalar("s")
    v = pt.tensor("v", shape=(3,))
    m = pt.tensor("m", shape=(2, 3))
    n = pt.vector("n")
    big = pt.tensor("big", shape=(300,))
    logp = (pt.exp(m * v + s).sum() - (v**2).sum() + pt.log1p(n**2).sum() * s + (big * s).sum())
    inputs = [s, v, m, n, big]
    outputs = [logp, *pytensor.grad(logp, inputs)]
    native, binding = _both(inputs, outputs)
    linker = native.maker.linker
    ((packed_in, in_elements, in_shapes),) = linker.packed_inputs
    assert dict(zip(in_elements, in_shapes, strict=True)) == {"s": (), "v": (3,), "m": (2, 3)}
    assert sorted(i.name for i in linker.onnx_model.graph.input) == sorted([packed_in, "n", "big"])
    names = linker._output_names
    packed_shapes = {
        name: shape for _, elements, shapes in linker.packed_outputs for name, shape in zip(elements, shapes, strict=True)
    }
    # logp, and the gradients of s, v and m; not those of n and big.
    assert packed_shapes == {names[0]: (), names[1]: (), names[2]: (3,), names[3]: (2, 3)}
    values = [np.array(rng.normal()), rng.normal(size=3), rng.normal(size=(2, 3)), rng.normal(size=4), rng.normal(size=300)]
    for _ in range(2):
        got = native(*values)
        _assert_identical(got, binding(*values))
        assert [np.shape(r) for r in got] == [(), (), (3,), (2, 3), (4,), (300,)]
    assert got[2] is not native(*values)[2]  # (each call's arrays are its own)
    # The gradient, by hand: d/dv = sum over m's rows of m * exp(m * v + s) - 2 v.
    np.testing.assert_allclose(got[2], (values[2] * np.exp(values[2] * values[1] + values[0])).sum(0) - 2 * values[1],
                               rtol=1e-13)
    from pytensor_onnx import kernels

    options = ort.SessionOptions()
    kernels.register(options)
    session = ort.InferenceSession(linker.onnx_model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feed = linker.model_feed(dict(zip(["s", "v", "m", "n", "big"], values)))
    own = linker.function_outputs(dict(zip([o.name for o in session.get_outputs()], session.run(None, feed))))
    _assert_identical(own, got)
    with pytest.raises(ValueError, match=r"input 'v' has shape \(2,\); the model packs it as \(3,\)"):
        linker.model_feed(dict(zip(["s", "v", "m", "n", "big"], [values[0], values[1][:2], *values[2:]])))
    # With trust_input, a packed array of another rank, shape or dtype fails the run, in ONNX Runtime's words.
    native.trust_input = True
    with pytest.raises(RuntimeError, match="Invalid rank for input: m Got: 1 Expected: 2"):
        native(*values[:2], values[2].ravel(), *values[3:])
    with pytest.raises(RuntimeError, match="invalid dimensions for input: v for the following indices\n index: 0 Got: 4"):
        native(values[0], np.ones(4), *values[2:])
    with pytest.raises(RuntimeError, match="Unexpected input data type for input: m"):
        native(*values[:2], values[2].astype("float32"), *values[3:])
    # A transposed (non-contiguous) matrix is read as its values, not its memory.
    transposed = np.asfortranarray(values[2])
    _assert_identical(native(*values[:2], transposed, *values[3:]), got)
    _assert_identical(native(*values), binding(*values))


@needs_native
def test_baked_shared_values_and_their_updates(rng):
    w = pytensor.shared(rng.normal(size=(4, 3)), name="w")
    x = pt.matrix("x")
    native, binding = _both([x], pt.tanh(x @ w))
    value = rng.normal(size=(2, 4))
    _assert_identical([native(value)], [binding(value)])
    assert [i.name for i in native.maker.linker.session.get_inputs()] == [i.name for i in binding.maker.linker.session.get_inputs()]
    w.set_value(w.get_value() * 2)
    _assert_identical([native(value)], [binding(value)])
    np.testing.assert_allclose(native(value), np.tanh(value @ w.get_value()), rtol=1e-15)


@needs_native
def test_concurrent_calls_give_the_single_threaded_results(rng):
    x = pt.vector("x")
    fn = pytensor.function([x], [pt.gammaln(pt.exp(x) + 1).sum(), pt.erf(x)], mode=onnx_mode())
    values = [rng.normal(size=1000) for _ in range(8)]
    expected = [fn(v) for v in values]
    errors = []

    def work(k):
        try:
            for _ in range(50):
                got = fn.copy()(values[k]) if k % 2 else fn(values[k])
                for g, e in zip(got, expected[k], strict=True):
                    np.testing.assert_array_equal(g, e)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_the_environment_switch_turns_them_off():
    code = (
        "import numpy as np, pytensor, pytensor.tensor as pt, onnxruntime as ort, pytensor_onnx\n"
        "from pytensor_onnx import runtime\n"
        "x = pt.vector('x'); f = pytensor.function([x], x + 1, mode='ONNX')\n"
        "assert isinstance(f.maker.linker.session, ort.InferenceSession), f.maker.linker.session\n"
        "assert f(np.ones(2)).tolist() == [2.0, 2.0]\n"
        "print(runtime.native_unavailable_reason())\n"
    )
    env = dict(os.environ, PYTENSOR_ONNX_NATIVE_SESSIONS="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert "PYTENSOR_ONNX_NATIVE_SESSIONS=0 turns them off" in out.stdout


@needs_native
def test_empty_arrays_of_static_shape_are_packed_too(rng):
    # Arrays of no elements ((0,), (2, 0)) are elements of the packed input
    # and output as any other (no values, an offset all the same), beside a
    # scalar: every result has its shape and the unpacked model's bits.
    e, s, m = pt.tensor("e", shape=(0,)), pt.scalar("s"), pt.tensor("m", shape=(2, 0))
    outputs = [pt.exp(e * s), (m * s).sum(), pt.exp(m) * s, s * 2]
    native, binding = _both([e, s, m], outputs)
    ((_, in_elements, in_shapes),) = native.maker.linker.packed_inputs
    assert dict(zip(in_elements, in_shapes, strict=True)) == {"e": (0,), "s": (), "m": (2, 0)}
    ((_, out_elements, out_shapes),) = native.maker.linker.packed_outputs
    assert sorted(out_shapes) == [(), (), (0,), (2, 0)]
    values = [np.zeros(0), np.array(rng.normal()), np.zeros((2, 0))]
    got = native(*values)
    _assert_identical(got, binding(*values))
    assert [r.shape for r in got] == [(0,), (), (2, 0), ()]
    np.testing.assert_array_equal(got[3], values[1] * 2)
