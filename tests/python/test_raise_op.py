"""CheckAndRaise / Assert: the check runs in the model and a failure stops the run."""

import numpy as np
import onnxruntime as ort
import pytensor
import pytensor.tensor as pt
import pytest
from helpers import ALL_DTYPES, OPSETS, onnx_op_types, run_model, sample
from pytensor.raise_op import Assert, CheckAndRaise

from pytensor_onnx import export_function_onnx, export_onnx
from pytensor_onnx.compat import ifelse
from pytensor_onnx.mode import onnx_mode
from pytensor_onnx.testing import compare_onnx_and_py, py_function


class CustomError(Exception):
    pass


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_assert_passes_value_through(dtype, rng):
    x = pt.tensor("x", dtype=dtype, shape=(None, 3))
    y = Assert("rows must be few")(x, x.shape[0] < 10)
    compare_onnx_and_py([x], [y], [sample(rng, (2, 3), dtype)])


@pytest.mark.parametrize("opset", OPSETS)
def test_assert_across_opsets(opset, rng):
    x = pt.vector("x")
    y = Assert("x must be positive")(pt.exp(x), pt.all(x > -5), x.shape[0] > 0)
    fn, _ = compare_onnx_and_py([x], [y], [rng.normal(size=4)], opset_version=opset)
    assert "Gather" in onnx_op_types(fn)


def test_assert_on_scalar_and_empty_values():
    x = pt.vector("x")
    s = pt.scalar("s")
    outputs = [Assert("empty ok")(x, pt.eq(x.shape[0], 0)), Assert("positive")(s, s > 0)]
    compare_onnx_and_py([x, s], outputs, [np.zeros(0), np.float64(2.0)])


def test_failing_assert_raises_assertion_error_with_its_message():
    x = pt.vector("x")
    y = Assert("x must be positive")(x, pt.all(x > 0)) * 2
    fn = pytensor.function([x], y, mode="ONNX")
    np.testing.assert_array_equal(fn(np.ones(3)), 2 * np.ones(3))
    with pytest.raises(AssertionError, match="x must be positive") as info:
        fn(-np.ones(3))
    # Every ONNX Runtime failure of mode ONNX is a RuntimeError too.
    assert isinstance(info.value, RuntimeError)
    assert "ONNX Runtime failed to run the model" in str(info.value)
    with pytest.raises(AssertionError, match="x must be positive"):
        py_function([x], y)(-np.ones(3))


def test_check_and_raise_keeps_its_exception_type():
    x = pt.vector("x")
    checks = [
        CheckAndRaise(ValueError, "needs two elements")(x, pt.eq(x.shape[0], 2)),
        CheckAndRaise(CustomError, "custom failure")(x, pt.all(x < 100)),
    ]
    fn = pytensor.function([x], checks, mode="ONNX")
    with pytest.raises(ValueError, match="needs two elements"):
        fn(np.ones(3))
    with pytest.raises(CustomError, match="custom failure"):
        fn(np.array([1.0, 200.0]))
    # An exception type that cannot be combined with RuntimeError: a
    # RuntimeError naming the type and the message.
    z = CheckAndRaise(OSError, "os failure")(x, pt.all(x < 0))
    fn = pytensor.function([x], z, mode="ONNX")
    with pytest.raises(RuntimeError, match="OSError: os failure"):
        fn(np.ones(2))


def test_failing_check_of_an_exported_model_names_the_check():
    x = pt.vector("x")
    y = Assert("x must be positive")(x, pt.all(x > 0))
    model = export_onnx([x], [y])
    (got,) = run_model(model, np.ones(2))
    np.testing.assert_array_equal(got, np.ones(2))
    with pytest.raises(Exception, match="AssertionError: x must be positive"):
        run_model(model, -np.ones(2))


def test_conditions_of_any_dtype_and_several_conditions(rng):
    x = pt.vector("x")
    n = pt.lscalar("n")
    y = CheckAndRaise(ValueError, "bad")(x, n, pt.gt(x.shape[0], 1))  # n: int condition, true unless 0
    fn, _ = compare_onnx_and_py([x, n], [y], [rng.normal(size=3), np.int64(-4)])
    with pytest.raises(ValueError, match="bad"):
        fn(rng.normal(size=3), np.int64(0))
    with pytest.raises(ValueError, match="bad"):
        fn(rng.normal(size=1), np.int64(1))


def test_constant_true_conditions_are_dropped():
    x = pt.vector("x")
    y = Assert("never fails")(x, pt.constant(True))
    fn, _ = compare_onnx_and_py([x], [y], [np.ones(2)], optimize=False)
    assert "Gather" not in onnx_op_types(fn)


def test_assert_in_an_untaken_branch_does_not_fire():
    c = pt.scalar("c")
    x = pt.vector("x")
    y = ifelse(c > 0, Assert("x must be positive")(pt.log(x), pt.all(x > 0)), -x)
    # (PyTensor's py linker is not lazy, so the expected values are NumPy's.)
    fn = pytensor.function([c, x], y, mode="ONNX")
    np.testing.assert_array_equal(fn(np.float64(-1.0), -np.ones(3)), np.ones(3))
    np.testing.assert_allclose(fn(np.float64(1.0), np.full(3, np.e)), np.ones(3), rtol=1e-15)
    with pytest.raises(AssertionError, match="x must be positive"):
        fn(np.float64(1.0), -np.ones(3))


def test_fast_run_mlp_training_step_with_asserts_exports_and_runs(rng):
    # A float32 MLP training step: FAST_RUN gradient graphs carry Asserts
    # (broadcast checks); the compiled function exports and runs. (A
    # regression loss: softmax and sigmoid losses bring in SoftmaxGrad and
    # log1p/softplus, rules of dispatch/special.py.)
    with pytensor.config.change_flags(floatX="float32"):
        x = pt.matrix("x", dtype="float32")
        y = pt.vector("y", dtype="float32")
        init = {
            "W1": rng.normal(size=(4, 8)).astype("float32"),
            "b1": np.zeros(8, "float32"),
            "W2": rng.normal(size=(8, 1)).astype("float32"),
            "b2": np.zeros(1, "float32"),
        }

        def step(mode):
            params = [pytensor.shared(value.copy(), name=name) for name, value in init.items()]
            w1, b1, w2, b2 = params
            prediction = (pt.tanh(x @ w1 + b1) @ w2 + b2)[:, 0]
            loss = pt.mean((prediction - y) ** 2)
            updates = [(q, q - np.float32(0.1) * g) for q, g in zip(params, pt.grad(loss, params))]
            return pytensor.function([x, y], loss, updates=updates, mode=mode), params

        fast_run, _ = step("FAST_RUN")
        assert any(isinstance(node.op, CheckAndRaise) for node in fast_run.maker.fgraph.apply_nodes)
        model = export_function_onnx(fast_run)
        batch = rng.normal(size=(5, 4)).astype("float32")
        labels = rng.normal(size=5).astype("float32")
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        (exported_loss, *_) = session.run(None, dict(zip(names, [batch, labels])))

        onnx_fn, onnx_params = step(onnx_mode())
        reference, ref_params = step(pytensor.compile.mode.Mode(linker="py", optimizer=None))
        for step_index in range(3):
            got, want = onnx_fn(batch, labels), reference(batch, labels)
            if step_index == 0:  # the exported model holds the initial weights
                np.testing.assert_allclose(exported_loss, want, rtol=1e-5)
            assert np.asarray(got).dtype == np.float32
            np.testing.assert_allclose(got, want, rtol=1e-5)
        for got, want in zip(onnx_params, ref_params):
            np.testing.assert_allclose(got.get_value(), want.get_value(), rtol=1e-5, atol=1e-6)


def _check_nodes(model, message):
    return [(node.op_type, node.domain) for node in model.graph.node
            if node.name.startswith("pytensor_check:") and node.name.endswith(message)]


def test_mode_onnx_checks_in_one_kernel_node_and_exports_the_portable_check(rng):
    # Mode ONNX's check is one node of the kernel library, named after the
    # check (src/kernels/check_kernel.h); the exported model keeps the
    # standard Gather read out of range. Both fail as PyTensor does.
    from pytensor_onnx import kernels

    x = pt.vector("x")
    n = pt.lscalar("n")
    y = CheckAndRaise(ValueError, "x must be positive")(x * 2, pt.all(x > 0), n)
    fn, _ = compare_onnx_and_py([x, n], [y], [np.abs(rng.normal(size=4)) + 0.1, np.int64(3)])
    in_mode_onnx = _check_nodes(fn.maker.linker.onnx_model, "x must be positive")
    if kernels.available():
        assert in_mode_onnx == [("Check_float64", kernels.DOMAIN)]
    else:
        assert in_mode_onnx == [("Gather", "")]
    assert _check_nodes(export_onnx([x, n], [y]), "x must be positive") == [("Gather", "")]
    for bad in ([np.array([1.0, -1.0]), np.int64(3)], [np.ones(2), np.int64(0)]):
        with pytest.raises(ValueError, match="x must be positive"):
            fn(*bad)
    # Values of every dtype pass through unchanged, empty ones too.
    for dtype in ALL_DTYPES:
        v = pt.tensor("v", dtype=dtype, shape=(None,))
        checked = Assert("few")(v, v.shape[0] < 10)
        compare_onnx_and_py([v], [checked], [sample(rng, (3,), dtype)])
        compare_onnx_and_py([v], [checked], [sample(rng, (0,), dtype)])


def test_a_sum_of_a_checked_value_is_the_check_of_its_sum(rng):
    # PyMC's bounded log-densities: Sum(Check(terms, cond)). Mode ONNX sums
    # first, so the sum joins the element-wise work (one kernel node) and the
    # check reads a scalar; the check still fails when it should.
    x = pt.vector("x")
    mu = pt.scalar("mu")
    sigma = pt.scalar("sigma")
    terms = -0.5 * ((x - mu) / sigma) ** 2 - pt.log(sigma)
    logp = CheckAndRaise(ValueError, "sigma > 0")(terms, sigma > 0).sum()
    values = [rng.normal(size=50), np.float64(0.3), np.float64(2.0)]
    fn, _ = compare_onnx_and_py([x, mu, sigma], [logp], values)
    model = fn.maker.linker.onnx_model
    assert "ReduceSum" not in [node.op_type for node in model.graph.node]
    [check] = [node for node in model.graph.node if node.name.endswith("ValueError: sigma > 0")]
    checked = check.input[0]
    [producer] = [node for node in model.graph.node if checked in node.output]
    from pytensor_onnx import kernels

    if kernels.available():  # the sum is an output reduction of the element-wise kernel node
        assert producer.op_type == "Elemwise_float64"
    with pytest.raises(ValueError, match="sigma > 0"):
        fn(values[0], values[1], np.float64(-1.0))
    # A checked value read by something else keeps its check where it is.
    checked_terms = CheckAndRaise(ValueError, "sigma > 0")(terms, sigma > 0)
    compare_onnx_and_py([x, mu, sigma], [checked_terms.sum(), checked_terms * 2], values)
