"""Smoke tests: export, mode ONNX, and one parity case per dispatch module.

CI runs this file alone on the newest unpinned releases (leg "smoke",
Python 3.13), so a release of any dependency that breaks the project shows
up as a named failure here. It also runs with the whole suite on every leg.
A new dispatch module must add its case to ``CASES`` (a test checks).
"""

import pkgutil

import numpy as np
import onnx
import onnxruntime as ort
import pytensor
import pytensor.tensor as pt
import pytest

import pytensor_onnx
import pytensor_onnx.dispatch
from pytensor_onnx import export_function_onnx, export_onnx
from pytensor_onnx.compat import random_draws
from pytensor_onnx.testing import compare_onnx_and_py


def _basic(rng):
    x = pt.vector("x")
    return [x], [pytensor.compile.ops.deep_copy_op(x)], [rng.normal(size=3)]


def _blas(rng):
    from pytensor.tensor.blas import Dot22

    x, y = pt.matrix("x"), pt.matrix("y")
    return [x, y], [Dot22()(x, y)], [rng.normal(size=(2, 3)), rng.normal(size=(3, 4))]


def _blockwise(rng):
    x, y = pt.tensor3("x"), pt.tensor3("y")
    return [x, y], [pt.matmul(x, y)], [rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 2))]


def _composite(rng):
    from pytensor.scalar.basic import Composite, float64, exp, add

    a, b = float64("a"), float64("b")
    composite = pt.elemwise.Elemwise(Composite([a, b], [exp(add(a, b))]))
    x, y = pt.vector("x"), pt.vector("y")
    return [x, y], [composite(x, y)], [rng.normal(size=3), rng.normal(size=3)]


def _kernel(rng):
    # A fused special-function expression: one kernel node in mode ONNX.
    x, n = pt.vector("x"), pt.vector("n", dtype="int64")
    return [x, n], [pt.gammaln(pt.exp(x) + n) - pt.log1p(x * x)], [rng.normal(size=4), np.arange(1, 5)]


def _broadcast(rng):
    # Dims that must agree at run time: the model checks them (one check).
    x, y = pt.vector("x"), pt.vector("y")
    return [x, y], [x * y + 1], [rng.normal(size=3), rng.normal(size=3)]


def _linalg_kernel(rng):
    # Factorizations: LAPACK kernels in mode ONNX, the recipes in the export.
    a, b = pt.matrix("a"), pt.vector("b")
    spd = rng.normal(size=(4, 4))
    spd = spd @ spd.T + 4 * np.eye(4)
    factor = pt.linalg.cholesky(a)
    return [a, b], [pt.linalg.solve_triangular(factor, b, lower=True), pt.linalg.det(a)], [spd, rng.normal(size=4)]


def _linear_control(rng):
    a, q = pt.matrix("a"), pt.matrix("q")
    return [a, q], [pt.linalg.solve_continuous_lyapunov(a, q)], [rng.normal(size=(3, 3)) - 3 * np.eye(3),
                                                                 rng.normal(size=(3, 3))]


def _elemwise(rng):
    x = pt.matrix("x")
    return [x], [x.T + pt.exp(x).sum(axis=1)], [rng.normal(size=(2, 3))]


def _ifelse(rng):
    from pytensor_onnx.compat import ifelse

    c, x = pt.scalar("c"), pt.vector("x")
    return [c, x], ifelse(c > 0, [pt.exp(x), x.sum()], [-x, x.max()]), [np.float64(-1.0), rng.normal(size=3)]


def _raise_op(rng):
    from pytensor.raise_op import Assert

    x = pt.vector("x")
    return [x], [Assert("x must be short")(x * 2, x.shape[0] < 5)], [rng.normal(size=3)]


def _math(rng):
    x = pt.matrix("x")
    return [x], [pt.argmax(x, axis=1), pt.dot(x, x.T), x.max(axis=0)], [rng.normal(size=(2, 3))]


def _linalg(rng):
    x, b = pt.matrix("x"), pt.vector("b")
    a = rng.normal(size=(3, 3))
    a = a @ a.T + 3 * np.eye(3)
    chol = pt.linalg.cholesky(x)
    outputs = [
        chol,
        pt.linalg.solve_triangular(chol, b, lower=True),
        pt.linalg.solve(x, b, b_ndim=1),
        pt.linalg.inv(x),
        pt.linalg.det(x),
        pt.linalg.expm(x),
        pt.linalg.block_diag(x, x),
        pt.diagonal(x),
    ]
    return [x, b], outputs, [a, rng.normal(size=3)]


def _scan(rng):
    x, x0 = pt.vector("x"), pt.scalar("x0")
    ys = pytensor.scan(lambda xt, prev: 0.5 * prev + xt, sequences=[x], outputs_info=[x0], return_updates=False)
    return [x, x0], [ys, pytensor.grad(ys.sum(), x)], [rng.normal(size=4), np.float64(1.0)]


def _scalar(rng):
    x = pt.ivector("x")
    return [x], [x // 3, x % 3, pt.round(x * 0.5)], [np.array([-7, 0, 5], dtype="int32")]


def _extra_ops(rng):
    x = pt.matrix("x")
    outputs = [pt.cumsum(x, axis=1), pt.cumprod(x, axis=0), pt.repeat(x, 2, axis=0), pt.searchsorted(pt.sort(x[0]), x[1])]
    return [x], outputs, [rng.normal(size=(2, 3))]


def _pad(rng):
    x = pt.matrix("x")
    return [x], [pt.pad(x, 1, mode=m) for m in ("constant", "edge", "reflect", "mean")], [rng.normal(size=(2, 3))]


def _signal(rng):
    from pytensor.tensor.signal import convolve1d

    a, v = pt.vector("a"), pt.vector("v")
    return [a, v], [convolve1d(a, v), convolve1d(a, v, mode="valid")], [rng.normal(size=5), rng.normal(size=2)]


def _sort(rng):
    x = pt.matrix("x")
    return [x], [pt.sort(x, axis=0), pt.argsort(x, axis=1, stable=True)], [rng.normal(size=(2, 3))]


def _shape(rng):
    x, y = pt.matrix("x"), pt.matrix("y")
    outputs = [pt.concatenate([x, y], axis=0), pt.concatenate([x, y], axis=-1), *pt.split(x, [1, 2], n_splits=2, axis=1)]
    return [x, y], outputs, [rng.normal(size=(2, 3)), rng.normal(size=(2, 3))]


def _random(rng):
    # draws differ from NumPy's bit for bit; their range and shape do not
    generator = pt.random.type.RandomGeneratorType()("generator")
    n = pt.lscalar("n")
    _, u = random_draws(pt.random.uniform, 2.0, 3.0, size=(n,), rng=generator)
    return [generator, n], [(u >= 2.0) & (u < 3.0)], [np.random.default_rng(1), np.int64(5)]


def _special(rng):
    x = pt.matrix("x")
    return [x], [pt.special.softmax(x, axis=-1), pt.special.log_softmax(x, axis=0)], [rng.normal(size=(2, 3))]


def _subtensor(rng):
    x, v = pt.matrix("x"), pt.lvector("v")
    outputs = [x[1:, ::-1], x[v], pt.inc_subtensor(x[v], 1.0), x[x > 0]]
    return [x, v], outputs, [rng.normal(size=(3, 4)), np.array([2, 0, 2])]


def _tensor_basic(rng):
    n = pt.lscalar("n")
    return [n], [pt.arange(n), pt.eye(n), pt.zeros((n, 2))], [np.int64(3)]


def _scalar_math(rng):
    x = pt.vector("x")
    return [x], [pt.gammaln(x) + pt.erfc(x)], [rng.uniform(0.1, 5, size=4)]


def _scalar_loop(rng):
    from pytensor.scalar import float64
    from pytensor.scalar.loop import ScalarLoop
    from pytensor.tensor.elemwise import Elemwise

    state, factor = float64("state"), float64("factor")
    loop = Elemwise(ScalarLoop(init=[state], update=[state * factor + 1.0], constant=[factor]))
    x = pt.dvector("x")
    return [x], [loop(4, x, 0.5)], [rng.uniform(-1, 1, size=4)]


CASES = {
    "basic": _basic,
    "broadcast": _broadcast,
    "blas": _blas,
    "blockwise": _blockwise,
    "composite": _composite,
    "elemwise": _elemwise,
    "extra_ops": _extra_ops,
    "ifelse": _ifelse,
    "kernel": _kernel,
    "linalg_kernel": _linalg_kernel,
    "linalg": _linalg,
    "linear_control": _linear_control,
    "math": _math,
    "pad": _pad,
    "raise_op": _raise_op,
    "random": _random,
    "scalar": _scalar,
    "scalar_loop": _scalar_loop,
    "scalar_math": _scalar_math,
    "scan": _scan,
    "shape": _shape,
    "signal": _signal,
    "sort": _sort,
    "special": _special,
    "subtensor": _subtensor,
    "tensor_basic": _tensor_basic,
}


#: Dispatch modules that convert no Op themselves, and why.
NO_OP_OF_THEIR_OWN = {
    "optional": "imports the rule modules of optional libraries (PyMC's: test_pymc_ops.py)",
    "utils": "graph helpers the rules share; every case above goes through them",
}


def test_every_dispatch_module_has_a_case():
    modules = {m.name for m in pkgutil.iter_modules(pytensor_onnx.dispatch.__path__)} - set(NO_OP_OF_THEIR_OWN)
    assert modules == set(CASES), f"dispatch modules without a smoke case: {sorted(modules - set(CASES))}"


@pytest.mark.parametrize("module", sorted(CASES))
def test_dispatch_module_parity(module, rng):
    inputs, outputs, values = CASES[module](rng)
    compare_onnx_and_py(inputs, outputs, values, optimize=module not in ("basic", "blas", "composite"))


def test_export_to_file_and_run(tmp_path, rng):
    x = pt.matrix("x")
    w = pytensor.shared(rng.normal(size=(3, 2)), name="w")
    y = pt.special.softmax(pt.maximum(x @ w, 0), axis=-1)
    path = tmp_path / "model.onnx"
    model = export_onnx([x], [y], str(path))
    onnx.checker.check_model(str(path), full_check=True)
    assert isinstance(model, onnx.ModelProto)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    value = rng.normal(size=(4, 3))
    (got,) = session.run(None, {session.get_inputs()[0].name: value})
    want = pytensor.function([x], y)(value)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_mode_onnx_and_export_of_a_compiled_function(rng):
    x = pt.vector("x")
    fn = pytensor.function([x], pt.exp(x) * 2.0, mode="ONNX")
    value = rng.normal(size=5)
    np.testing.assert_allclose(fn(value), np.exp(value) * 2.0, rtol=1e-12)
    assert isinstance(fn.maker.linker, pytensor_onnx.ONNXLinker)
    default_fn = pytensor.function([x], pt.exp(x) * 2.0)
    model = export_function_onnx(default_fn)
    onnx.checker.check_model(model, full_check=True)
