"""Products of issue 10, item 1, that PyTensor builds as graphs rather than
one Op (Einsum is an OpFromGraph; kron, tensordot and outer are
Dot/Blockwise/reshape graphs) plus batched matmul: parity with PyTensor for
every dtype they take, batch dims none/one/two, opsets 13/18/newest, unknown
dims, and the sizes 0 and 1."""

import itertools

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from helpers import ALL_DTYPES, sample
from linalg_cases import BATCH_SHAPES, LINALG_OPSETS, stack
from pytensor_onnx.testing import assert_same_result, compare_onnx_and_py, py_function

#: Every dtype PyTensor's Dot and Elemwise Mul take (bool included: PyTensor
#: multiplies and sums booleans as booleans).
PRODUCT_DTYPES = ALL_DTYPES


def _values(rng, shapes, dtype):
    # Small integers: sums of products stay exact and inside int8's range.
    return [sample(rng, shape, dtype, low=-2, high=3, scale=0.5) for shape in shapes]


def compare_products(inputs, outputs, values, ulps, **kwargs):
    """``compare_onnx_and_py`` with each float output held to its products' own accuracy.

    Every output here is a sum of products of input entries with positive
    coefficients, so the same graph run on ``|inputs|`` gives each element's
    ``sum |terms|``: a sum of n products rounded in any order is within
    about n units of roundoff of that (Higham, *Accuracy and Stability of
    Numerical Algorithms*, 3.1), on either side. ``ulps[i]`` bounds output
    i's error in ulps of that magnitude: 0 for a single product (one IEEE
    rounding on both sides), about the number of terms times the factors for
    contractions. float64 is then held to ~1e-15 of the magnitude, float32 to
    ~1e-6; integers and bools compare exactly.
    """
    dtype = inputs[0].type.dtype
    if dtype not in ("float32", "float64"):
        return compare_onnx_and_py(inputs, outputs, values, **kwargs)
    magnitudes = py_function(inputs, outputs, on_unused_input="ignore")(*[np.abs(v) for v in values])
    eps = np.finfo(dtype).eps
    # compare_onnx_and_py checks the outputs in order, mode ONNX then the exported model.
    bounds = itertools.cycle([u * eps * m for u, m in zip(ulps, magnitudes, strict=True)])

    def assert_fn(got, want):
        assert_same_result(got, want, rtol=0, atol=next(bounds))

    return compare_onnx_and_py(inputs, outputs, values, assert_fn=assert_fn, **kwargs)


def _outputs(x, y, v, w):
    """x: (*batch, m, k), y: (k, m), v: (*batch, k), w: (m,); with m = 3, k = 4.

    Each output with its error bound in ulps of ``sum |terms|`` (see
    ``compare_products``): n-term contractions of f-factor products get
    2 * n * f (the two sides' rounding), single products 0.
    """
    batch_letters = "ab"[: x.ndim - 2]
    return [
        (pt.einsum(f"{batch_letters}ij,jk->{batch_letters}ki", x, y), 2 * 4 * 2),
        (pt.einsum(f"{batch_letters}ij,{batch_letters}j->{batch_letters}i", x, v), 2 * 4 * 2),
        (pt.einsum("ij,ji", y, y.T), 2 * 12 * 2),  # full contraction to 0-d
        (pt.einsum("ij,jk,k->i", y, w[:, None] * w, w), 2 * 9 * 4),  # three operands
        (pt.linalg.kron(x, y), 0),
        (pt.tensordot(x, y, axes=[[x.ndim - 1], [0]]), 2 * 4 * 2),
        (pt.tensordot(x, y, axes=0) if x.ndim < 4 else pt.tensordot(y, w, axes=0), 0),
        (pt.outer(v, w), 0),
        (pt.matmul(x, y), 2 * 4 * 2),
        (x @ v[..., None], 2 * 4 * 2),
    ]


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", PRODUCT_DTYPES)
def test_products(dtype, batch, opset, rng):
    m, k = 3, 4
    x, y = stack("x", dtype, batch, (m, k)), stack("y", dtype, (), (k, m))
    v, w = stack("v", dtype, batch, (k,)), stack("w", dtype, (), (m,))
    values = _values(rng, [(*batch, m, k), (k, m), (*batch, k), (m,)], dtype)
    outputs, ulps = zip(*_outputs(x, y, v, w), strict=True)
    compare_products([x, y, v, w], list(outputs), values, ulps, opset_version=opset)


@pytest.mark.parametrize("static", [False, True])
@pytest.mark.parametrize("n", [0, 1, 5])
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_product_sizes(n, static, dtype, rng):
    # n is every core dim: empty and 1-element contractions and results.
    batch = (2,)
    x, y = stack("x", dtype, batch, (n, n), static), stack("y", dtype, (), (n, n), static)
    v, w = stack("v", dtype, batch, (n,), static), stack("w", dtype, (), (n,), static)
    values = _values(rng, [(*batch, n, n), (n, n), (*batch, n), (n,)], dtype)
    outputs, ulps = zip(*_outputs(x, y, v, w), strict=True)
    compare_products([x, y, v, w], list(outputs), values, ulps)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_product_gradients(dtype, rng):
    x, y = stack("x", dtype, (2,), (3, 4)), stack("y", dtype, (), (4, 3))
    cost = pt.einsum("bij,jk->bki", x, y).sum() + (pt.linalg.kron(x[0], y) ** 2).sum() + pt.tensordot(x, y, axes=1).sum()
    values = [rng.normal(size=(2, 3, 4)).astype(dtype), rng.normal(size=(4, 3)).astype(dtype)]
    # cost sums 72 + 144 + 72 products of up to 4 factors; the gradients are
    # sums of fewer terms. A sum of n terms in any order is within n ulps of
    # sum |terms| (2 * n * f, the two sides', bounds it; realistic errors are far less).
    compare_products([x, y], [cost, *pytensor.grad(cost, [x, y])], values, [2 * 288 * 4] * 3)


@pytest.mark.parametrize("batch", BATCH_SHAPES[1:])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
def test_batched_kron(dtype, batch, rng):
    """Blockwise(KroneckerProduct) (what vectorize(kron) builds, e.g. in
    solve_discrete_lyapunov(method="direct") with batch dims): matrices, a
    vector with a matrix, and batch dims that broadcast."""
    from pytensor.tensor.functional import vectorize

    kron_mm = vectorize(pt.linalg.kron, "(a,b),(c,d)->(e,f)")
    kron_vm = vectorize(pt.linalg.kron, "(a),(c,d)->(e,f)")
    x, y = stack("x", dtype, batch, (2, 3)), pt.tensor("y", dtype=dtype, shape=(1,) * len(batch) + (None, None))
    v = stack("v", dtype, batch, (4,))
    values = _values(rng, [(*batch, 2, 3), ((1,) * len(batch)) + (3, 2), (*batch, 4)], dtype)
    outputs = [kron_mm(x, y), kron_mm(y, x), kron_vm(v, y)]
    # Each entry of a Kronecker product is one product: IEEE-exact on both sides.
    compare_products([x, y, v], outputs, values, [0, 0, 0])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transposed_matrix_times_vector(dtype, rng):
    # ONNX Runtime (1.21 to 1.32) fuses Transpose(A) -> MatMul(., v) of a
    # vector v into a FusedMatMul that multiplies as if A were not
    # transposed, at its default optimization level (fresh-seed fuzz,
    # FUZZ_SEED=2021459674: the export of a FAST_RUN function whose dot of
    # an arange and a (3, 2) matrix became A.T @ v gave A.reshape(2, 3) @ v).
    # The builder makes the vector a column (src/core/recipes/recipes.cc):
    # every MatMul of a matrix and a vector is MatMul(A, v[:, None])[:, 0].
    import onnxruntime as ort

    import pytensor_onnx
    from pytensor_onnx import _core

    a_value = rng.normal(size=(3, 2)).astype(dtype)
    v_value = rng.normal(size=3).astype(dtype)
    g = _core.GraphBuilder(13)
    a, v = g.input("a", dtype, [3, 2]), g.input("v", dtype, [None])
    g.output(g.op("MatMul", g.op("Transpose", a), v), "y")
    g.output(g.op("MatMul", g.op("Transpose", a), g.const(v_value)), "yc")
    session = ort.InferenceSession(g.serialize(graph_name="t"), providers=["CPUExecutionProvider"])
    y, yc = session.run(None, {"a": a_value, "v": v_value})
    np.testing.assert_allclose(y, a_value.T @ v_value, rtol=1e-6)
    np.testing.assert_allclose(yc, a_value.T @ v_value, rtol=1e-6)

    # The fuzz case, end to end: FAST_RUN's graph of dot(arange, x), exported.
    x = pt.matrix("x", dtype=dtype)
    fn = pytensor.function([x], pt.dot(pt.arange(0.0, -2.0, -0.75, dtype=dtype), x), mode="FAST_RUN")
    model = pytensor_onnx.export_function_onnx(fn)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {session.get_inputs()[0].name: a_value})[0], fn(a_value), rtol=1e-6)
    compare_onnx_and_py([x], [pt.dot(pt.arange(0.0, -2.0, -0.75, dtype=dtype), x)], [a_value])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transposed_stack_times_vector(dtype, rng):
    # The same fusion is wrong for a stack whose last two axes are swapped
    # (ONNX Runtime 1.21 and 1.32): the builder writes the column there too,
    # MatMul(A, v[:, None])[..., 0].
    import onnxruntime as ort

    from pytensor_onnx import _core

    a_value = rng.normal(size=(5, 4, 3, 2)).astype(dtype)
    v_value = rng.normal(size=3).astype(dtype)
    expected = np.matmul(np.swapaxes(a_value, -1, -2), v_value)
    if dtype == "float32":
        # Through the builder (a float64 MatMul behind a Transpose is not
        # loadable on ONNX Runtime 1.21, whose FusedMatMul has no float64
        # kernel: the float64 rules build products without it).
        g = _core.GraphBuilder(13)
        a, v = g.input("a", dtype, [5, None, 3, 2]), g.input("v", dtype, [None])
        g.output(g.op("MatMul", g.op("Transpose", a, perm=[0, 1, 3, 2]), v), "y")
        g.output(g.op("MatMul", g.op("Transpose", a, perm=[0, 1, 3, 2]), g.const(v_value)), "yc")
        session = ort.InferenceSession(g.serialize(graph_name="t"), providers=["CPUExecutionProvider"])
        y, yc = session.run(None, {"a": a_value, "v": v_value})
        assert y.shape == expected.shape == (5, 4, 2)
        np.testing.assert_allclose(y, expected, rtol=1e-5)
        np.testing.assert_allclose(yc, expected, rtol=1e-5)

    x, u = pt.tensor4("x", dtype=dtype), pt.vector("u", dtype=dtype)
    compare_onnx_and_py([x, u], [pt.matmul(x.mT, u), pt.matmul(x[0].mT, u)], [a_value, v_value])
