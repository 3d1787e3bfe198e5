"""Products of issue 10, item 1, that PyTensor builds as graphs rather than
one Op (Einsum is an OpFromGraph; kron, tensordot and outer are
Dot/Blockwise/reshape graphs) plus batched matmul: parity with PyTensor for
every dtype they take, batch dims none/one/two, opsets 13/18/newest, unknown
dims, and the sizes 0 and 1."""

import numpy as np
import pytensor.tensor as pt
import pytest

from helpers import ALL_DTYPES, sample
from linalg_cases import BATCH_SHAPES, LINALG_OPSETS, TOLERANCES, stack
from pytensor_onnx.testing import compare_onnx_and_py

#: Every dtype PyTensor's Dot and Elemwise Mul take (bool included: PyTensor
#: multiplies and sums booleans as booleans).
PRODUCT_DTYPES = ALL_DTYPES


def _values(rng, shapes, dtype):
    # Small integers: sums of products stay exact and inside int8's range.
    return [sample(rng, shape, dtype, low=-2, high=3, scale=0.5) for shape in shapes]


def _tolerances(dtype):
    return TOLERANCES.get(dtype, (0, 0))


def _outputs(x, y, v, w):
    """x: (*batch, m, k), y: (k, m), v: (*batch, k), w: (m,)."""
    batch_letters = "ab"[: x.ndim - 2]
    return [
        pt.einsum(f"{batch_letters}ij,jk->{batch_letters}ki", x, y),
        pt.einsum(f"{batch_letters}ij,{batch_letters}j->{batch_letters}i", x, v),
        pt.einsum("ij,ji", y, y.T),  # full contraction to 0-d
        pt.einsum("ij,jk,k->i", y, w[:, None] * w, w),  # three operands
        pt.linalg.kron(x, y),
        pt.tensordot(x, y, axes=[[x.ndim - 1], [0]]),
        pt.tensordot(x, y, axes=0) if x.ndim < 4 else pt.tensordot(y, w, axes=0),
        pt.outer(v, w),
        pt.matmul(x, y),
        x @ v[..., None],
    ]


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", PRODUCT_DTYPES)
def test_products(dtype, batch, opset, rng):
    m, k = 3, 4
    x, y = stack("x", dtype, batch, (m, k)), stack("y", dtype, (), (k, m))
    v, w = stack("v", dtype, batch, (k,)), stack("w", dtype, (), (m,))
    values = _values(rng, [(*batch, m, k), (k, m), (*batch, k), (m,)], dtype)
    rtol, atol = _tolerances(dtype)
    compare_onnx_and_py([x, y, v, w], _outputs(x, y, v, w), values, opset_version=opset, rtol=rtol, atol=atol)


@pytest.mark.parametrize("static", [False, True])
@pytest.mark.parametrize("n", [0, 1, 5])
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_product_sizes(n, static, dtype, rng):
    # n is every core dim: empty and 1-element contractions and results.
    batch = (2,)
    x, y = stack("x", dtype, batch, (n, n), static), stack("y", dtype, (), (n, n), static)
    v, w = stack("v", dtype, batch, (n,), static), stack("w", dtype, (), (n,), static)
    values = _values(rng, [(*batch, n, n), (n, n), (*batch, n), (n,)], dtype)
    rtol, atol = _tolerances(dtype)
    compare_onnx_and_py([x, y, v, w], _outputs(x, y, v, w), values, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_product_gradients(dtype, rng):
    x, y = stack("x", dtype, (2,), (3, 4)), stack("y", dtype, (), (4, 3))
    cost = pt.einsum("bij,jk->bki", x, y).sum() + (pt.linalg.kron(x[0], y) ** 2).sum() + pt.tensordot(x, y, axes=1).sum()
    import pytensor

    values = [rng.normal(size=(2, 3, 4)).astype(dtype), rng.normal(size=(4, 3)).astype(dtype)]
    rtol, atol = _tolerances(dtype)
    compare_onnx_and_py([x, y], [cost, *pytensor.grad(cost, [x, y])], values, rtol=rtol, atol=atol)


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
    rtol, atol = _tolerances(dtype)
    outputs = [kron_mm(x, y), kron_mm(y, x), kron_vm(v, y)]
    compare_onnx_and_py([x, y, v], outputs, values, rtol=rtol, atol=atol)
