"""Shared variables: graph inputs in mode="ONNX" (so updates work), initializers on export."""

import numpy as np
import onnx
import pytensor
import pytensor.tensor as pt
import pytest

from pytensor_onnx import export_function_onnx, export_onnx
from pytensor_onnx.runtime import NativeSession
from pytensor_onnx.testing import PY_MODE, assert_same_result, check_model, compare_onnx_and_py, py_function

from helpers import run_model


def twin_functions(make):
    """The same stateful function built twice, for mode ONNX and the py linker, on separate shared variables.

    ``make()`` returns (inputs, outputs, updates, shared_variables).
    """
    fns = []
    for mode in ("ONNX", PY_MODE):
        inputs, outputs, updates, shared = make()
        fns.append((pytensor.function(inputs, outputs, updates=updates, mode=mode), shared))
    return fns


def assert_twins_agree(make, calls):
    (onnx_fn, onnx_shared), (py_fn, py_shared) = twin_functions(make)
    for step, args in enumerate(calls):
        got = onnx_fn(*args)
        want = py_fn(*args)
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same_result(g, w, label=f"call {step} output {i}")
        for s_onnx, s_py in zip(onnx_shared, py_shared, strict=True):
            assert_same_result(s_onnx.get_value(), s_py.get_value(), label=f"call {step} shared {s_py.name}")


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int8", "uint16"])
def test_shared_weights_in_graph(rng, dtype):
    x = pt.matrix("x", dtype=dtype)
    W = pytensor.shared((rng.normal(size=(3, 2)) * 10).astype(dtype), name="W")
    offset = pytensor.shared(np.asarray(3, dtype=dtype), name="offset")  # 0-d
    compare_onnx_and_py([x], [pt.dot(x, W) + offset], [(rng.normal(size=(4, 3)) * 10).astype(dtype)])


def test_shared_static_shape_and_bool(rng):
    x = pt.vector("x")
    mask = pytensor.shared(np.array([True, False, True]), name="mask", shape=(3,))
    compare_onnx_and_py([x], [pt.switch(mask, x, -x), mask & (x > 0)], [rng.normal(size=3)])


def test_updates_across_calls(rng):
    def make():
        x = pt.vector("x")
        total = pytensor.shared(np.zeros(3), name="total")
        count = pytensor.shared(np.asarray(0, dtype="int64"), name="count")
        mean = (total + x) / (count + 1)
        return [x], [mean, total * 2], {total: total + x, count: count + 1}, [total, count]

    assert_twins_agree(make, [(rng.normal(size=3),) for _ in range(4)])


def test_updates_only_function():
    def make():
        step = pytensor.shared(np.asarray(0.5), name="step")
        state = pytensor.shared(np.array([1.0, 2.0]), name="state")
        return [], [], {state: state * 2 + step}, [state, step]

    assert_twins_agree(make, [()] * 3)


def test_update_of_variable_the_outputs_do_not_read(rng):
    def make():
        x = pt.vector("x")
        seen = pytensor.shared(np.zeros(2), name="seen")
        return [x], [pt.exp(x)], {seen: pt.maximum(seen, x)}, [seen]

    assert_twins_agree(make, [(rng.normal(size=2),) for _ in range(3)])


def test_set_value_between_calls_is_seen():
    x = pt.vector("x")
    scale = pytensor.shared(np.array([1.0, 1.0]), name="scale")
    fn = pytensor.function([x], x * scale, mode="ONNX")
    assert_same_result(fn(np.array([2.0, 3.0])), np.array([2.0, 3.0]))
    scale.set_value(np.array([10.0, -1.0]))
    assert_same_result(fn(np.array([2.0, 3.0])), np.array([20.0, -3.0]))


def test_two_functions_share_state():
    x = pt.vector("x")
    acc = pytensor.shared(np.zeros(2), name="acc")
    add = pytensor.function([x], [], updates={acc: acc + x}, mode="ONNX")
    read = pytensor.function([], acc * 1.0, mode="ONNX")
    add(np.array([1.0, 2.0]))
    add(np.array([1.0, 2.0]))
    assert_same_result(read(), np.array([2.0, 4.0]))


def test_givens_replace_shared_variable(rng):
    x = pt.vector("x")
    W = pytensor.shared(np.ones(3), name="W")
    replacement = pt.vector("replacement")
    fn = pytensor.function([x, replacement], x * W, givens={W: replacement}, mode="ONNX")
    a, b = rng.normal(size=3), rng.normal(size=3)
    assert_same_result(fn(a, b), a * b)


def test_export_bakes_shared_values_as_initializers(rng):
    x = pt.vector("x")
    W = pytensor.shared(rng.normal(size=3), name="W")
    model = export_onnx([x], [x * W])
    check_model(model)
    assert [i.name for i in model.graph.input] == ["x"]
    baked = W.get_value().copy()
    assert any(np.array_equal(onnx.numpy_helper.to_array(t), baked) for t in model.graph.initializer)
    W.set_value(np.zeros(3))  # later changes do not reach an exported model
    value = rng.normal(size=3)
    (got,) = run_model(model, value)
    assert_same_result(got, value * baked)


def test_export_shared_value_mutated_in_place_after_export(rng):
    # A borrowed value changed in place after export must not change the model.
    x = pt.vector("x")
    data = rng.normal(size=3)
    W = pytensor.shared(data, name="W", borrow=True)
    model = export_onnx([x], [x + W])
    baked = data.copy()
    data[:] = 0.0
    (got,) = run_model(model, np.ones(3))
    assert_same_result(got, 1.0 + baked)


def test_export_shared_variable_used_twice(rng):
    x = pt.vector("x")
    W = pytensor.shared(rng.normal(size=3), name="W")
    outputs = [x * W, pt.exp(W) + x]
    model = export_onnx([x], outputs)
    value = rng.normal(size=3)
    want = py_function([x], outputs)(value)
    for got, expected in zip(run_model(model, value), want, strict=True):
        assert_same_result(got, expected)


def test_export_function_bakes_state_after_updates():
    x = pt.vector("x")
    total = pytensor.shared(np.zeros(2), name="total")
    fn = pytensor.function([x], total + x, updates={total: total + x}, mode="ONNX")
    fn(np.array([1.0, 2.0]))
    fn(np.array([1.0, 2.0]))
    model = export_function_onnx(fn)
    (got,) = run_model(model, np.array([0.5, 0.5]))
    assert_same_result(got, np.array([2.5, 4.5]))


def test_shared_variable_as_export_input_is_rejected(rng):
    # Shared variables are baked; listing one as an input would silently drop that input.
    W = pytensor.shared(rng.normal(size=3), name="W")
    x = pt.vector("x")
    with pytest.raises(TypeError, match=r"inputs\[1\] is the shared variable W; shared variables are baked"):
        export_onnx([x, W], [x * W])


# Execution mode bakes the shared variables a function does not update into
# its session as initializers (pytensor_onnx/linker.py); these check that no
# change of their value is missed.


def session_input_names(fn):
    return [i.name for i in fn.maker.linker.session.get_inputs()]


def mlp_function(rng, dtype="float32"):
    x = pt.matrix("x", dtype=dtype)
    W = pytensor.shared(rng.normal(size=(3, 4)).astype(dtype), name="W")
    b = pytensor.shared(rng.normal(size=4).astype(dtype), name="b")
    fn = pytensor.function([x], pt.tanh(pt.dot(x, W) + b), mode="ONNX")
    return fn, x, W, b


def test_unupdated_shared_variables_are_initializers(rng):
    fn, _, W, b = mlp_function(rng)
    value = rng.normal(size=(2, 3)).astype("float32")
    assert_same_result(fn(value), np.tanh(value @ W.get_value() + b.get_value()), rtol=1e-5)
    # Only x is fed: W and b live in the session.
    assert len(session_input_names(fn)) == 1


def test_updated_shared_variable_stays_an_input_and_others_are_baked():
    x = pt.vector("x")
    scale = pytensor.shared(np.array([2.0, 3.0]), name="scale")
    acc = pytensor.shared(np.zeros(2), name="acc")
    fn = pytensor.function([x], acc * scale, updates={acc: acc + x}, mode="ONNX")
    assert len(session_input_names(fn)) == 2  # x and acc; scale is baked
    fn(np.array([1.0, 1.0]))
    assert_same_result(fn(np.array([1.0, 1.0])), np.array([2.0, 3.0]))
    assert_same_result(acc.get_value(), np.array([2.0, 2.0]))


@pytest.mark.parametrize("borrow", [False, True])
def test_set_value_of_baked_variable_is_seen(rng, borrow):
    fn, _, W, b = mlp_function(rng)
    value = rng.normal(size=(2, 3)).astype("float32")
    fn(value)
    new_W = rng.normal(size=(3, 4)).astype("float32")
    W.set_value(new_W, borrow=borrow)
    assert_same_result(fn(value), np.tanh(value @ new_W + b.get_value()), rtol=1e-5)
    if not borrow:
        # set_value copied: changing the array given afterwards reaches
        # neither W nor the function. (With borrow=True that write would be
        # the unspecified case of docs/usage.md.)
        new_W *= 2
        want = np.tanh(value @ W.get_value() + b.get_value())
        assert_same_result(fn(value), want, rtol=1e-5)
        assert not np.allclose(W.get_value(), new_W)


def test_set_value_of_the_same_array_after_in_place_change_is_seen(rng):
    # PyTensor's documented in-place idiom keeps the very same array object.
    fn, _, W, b = mlp_function(rng)
    value = rng.normal(size=(2, 3)).astype("float32")
    fn(value)
    inner = W.get_value(borrow=True)
    inner *= -3
    W.set_value(inner, borrow=True)
    assert W.get_value(borrow=True) is inner
    assert_same_result(fn(value), np.tanh(value @ inner + b.get_value()), rtol=1e-5)


def test_set_value_with_a_new_shape(rng):
    x = pt.matrix("x")
    W = pytensor.shared(np.ones((3, 2)), name="W")
    fn = pytensor.function([x], pt.dot(x, W), mode="ONNX")
    value = rng.normal(size=(2, 3))
    assert fn(value).shape == (2, 2)
    W.set_value(rng.normal(size=(3, 5)))
    assert_same_result(fn(value), value @ W.get_value())
    W.set_value(np.zeros((3, 0)))
    assert fn(value).shape == (2, 0)


@pytest.mark.parametrize(
    "value",
    [np.asarray(2.5), np.zeros((0, 3)), np.array([True, False]), np.arange(6, dtype="int8").reshape(2, 3)[:, ::2]],
    ids=["0d", "empty", "bool", "non-contiguous"],
)
def test_baked_values_of_every_kind(value):
    s = pytensor.shared(value, name="s")
    fn = pytensor.function([], s * 1 if value.dtype != bool else ~s, mode="ONNX")
    want = value * 1 if value.dtype != bool else ~value
    assert_same_result(fn(), want)
    assert session_input_names(fn) == []


def test_value_updated_by_another_function_is_seen_and_falls_back_to_feeding():
    from pytensor_onnx.linker import MAX_REBINDS

    x = pt.vector("x")
    acc = pytensor.shared(np.zeros(2), name="acc")
    add = pytensor.function([x], [], updates={acc: acc + x}, mode="ONNX")
    read = pytensor.function([], acc * 1.0, mode="ONNX")
    for step in range(1, MAX_REBINDS + 4):
        add(np.array([1.0, 2.0]))
        assert_same_result(read(), np.array([1.0, 2.0]) * step)
    # It changes on every call, so the reader now feeds it instead.
    assert len(session_input_names(read)) == 1


def test_shared_variable_with_baked_container_pickles_and_copies(rng):
    import copy
    import pickle

    from pytensor.link.basic import Container

    fn, _, W, _ = mlp_function(rng)
    fn(rng.normal(size=(2, 3)).astype("float32"))
    unpickled = pickle.loads(pickle.dumps(W))
    # The pickle names PyTensor's own Container: loading it needs no pytensor_onnx.
    assert type(unpickled.container) is Container
    for clone in (unpickled, copy.deepcopy(W)):
        assert_same_result(clone.get_value(), W.get_value())
        clone.set_value(np.zeros((3, 4), dtype="float32"))
        assert not np.allclose(W.get_value(), 0)


@pytest.mark.parametrize("share_memory", [False, True])
def test_function_copy_with_baked_values(rng, share_memory):
    fn, x, W, b = mlp_function(rng)
    py_fn = pytensor.function([x], pt.tanh(pt.dot(x, W) + b), mode=PY_MODE)
    value = rng.normal(size=(2, 3)).astype("float32")
    fn(value)
    twin, py_twin = fn.copy(share_memory=share_memory), py_fn.copy(share_memory=share_memory)
    assert_same_result(twin(value), py_twin(value), rtol=1e-5)
    W.set_value(rng.normal(size=(3, 4)).astype("float32"))
    assert_same_result(fn(value), py_fn(value), rtol=1e-5)
    assert_same_result(twin(value), py_twin(value), rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_sgd_steps_match_the_python_linker(dtype):
    # A two-layer network trained by SGD: the updated weights are fed and
    # written back each step; the learning rate and the data, which no update
    # touches, are baked. After N steps every value equals the py linker's.
    rng = np.random.default_rng(7)
    data = rng.normal(size=(16, 5)).astype(dtype)
    labels = rng.integers(0, 3, 16)
    W1_0, W2_0 = rng.normal(size=(5, 4)).astype(dtype), rng.normal(size=(4, 3)).astype(dtype)

    def make():
        x = pytensor.shared(data, name="x")
        y = pt.vector("y", dtype="int64")
        W1, W2 = pytensor.shared(W1_0.copy(), name="W1"), pytensor.shared(W2_0.copy(), name="W2")
        lr = pytensor.shared(np.asarray(0.1, dtype=dtype), name="lr")
        logp = pt.special.log_softmax(pt.dot(pt.tanh(pt.dot(x, W1)), W2), axis=-1)
        loss = -pt.mean(logp[pt.arange(y.shape[0]), y])
        g1, g2 = pytensor.grad(loss, [W1, W2])
        return [y], [loss], {W1: W1 - lr * g1, W2: W2 - lr * g2}, [W1, W2, lr]

    assert_twins_agree(make, [(labels,)] * 6)


@pytest.mark.parametrize("n", [3, 4096])
def test_updated_state_is_the_runtime_output_buffer(n):
    # The new value of a large updated shared variable is ONNX Runtime's
    # output buffer itself (no copy per call); a small one (up to 16 KiB) is
    # copied out of the memory the session's binding writes each run into
    # (docs/usage.md). Only it is fed: lr and x are baked.
    x = pytensor.shared(np.ones((4, n)), name="x")
    W = pytensor.shared(np.ones(n), name="W")
    lr = pytensor.shared(np.asarray(0.01), name="lr")
    loss = pt.sum(pt.dot(x, W) ** 2)
    step = pytensor.function([], loss, updates={W: W - lr * pytensor.grad(loss, W)}, mode="ONNX")
    step()
    assert session_input_names(step) == ["W"]
    value = W.get_value(borrow=True)
    native = isinstance(step.maker.linker.session, NativeSession)
    if native and n * 8 <= 16 * 1024:
        assert value.flags.owndata
    else:
        assert not value.flags.owndata and value.base is not None
    assert_same_result(value, np.ones(n) - 0.01 * 2 * n * 4 * np.ones(n))
    first = value
    step()  # the next run leaves the array of the last one as it was
    assert_same_result(first, np.ones(n) - 0.01 * 2 * n * 4 * np.ones(n))


def test_baked_value_shares_memory_with_the_session():
    # The session reads the shared variable's own array (no copy of it). This
    # pins down the sharing: a write into the array without set_value is not
    # part of the guarantees (docs/usage.md) and is seen here only because
    # an Add reads the weight where it is.
    x = pt.vector("x")
    big = pytensor.shared(np.zeros(1000), name="big")
    fn = pytensor.function([x], x + big, mode="ONNX")
    assert_same_result(fn(np.ones(1000)), np.ones(1000))
    assert session_input_names(fn) == ["x"]
    big.get_value(borrow=True)[:] = 5.0
    assert_same_result(fn(np.ones(1000)), np.full(1000, 6.0))


def test_baked_values_with_own_session_options(rng):
    # With the caller's SessionOptions the baked values travel in the model
    # (their options object is left untouched); changes are still seen.
    import onnxruntime as ort

    from pytensor_onnx.mode import onnx_mode

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    x = pt.matrix("x")
    W = pytensor.shared(rng.normal(size=(3, 2)), name="W")
    fn = pytensor.function([x], pt.dot(x, W), mode=onnx_mode(session_options=options))
    value = rng.normal(size=(4, 3))
    assert_same_result(fn(value), value @ W.get_value())
    assert session_input_names(fn) == ["x"]
    W.set_value(rng.normal(size=(3, 5)))
    assert_same_result(fn(value), value @ W.get_value())
    assert fn.maker.linker.session.get_session_options().intra_op_num_threads == 1


def test_shared_variable_read_only_through_its_static_shape():
    # The rewrites replace s.shape[0] by the constant 5, so the model no longer
    # reads s: it must not be baked (ONNX Runtime drops unused initializers
    # and then fails to bind the value), and changing it changes nothing.
    x = pt.vector("x")
    s = pytensor.shared(np.arange(5.0), name="s", shape=(5,))
    w = pytensor.shared(np.full(3, 2.0), name="w")
    onnx_fn = pytensor.function([x], x * w + s.shape[0], mode="ONNX")
    py_fn = pytensor.function([x], x * w + s.shape[0], mode=PY_MODE)
    for step in range(2):
        assert_same_result(onnx_fn(np.ones(3)), py_fn(np.ones(3)), label=f"call {step}")
        s.set_value(np.arange(5.0) + 1)
        w.set_value(np.full(3, 3.0))
