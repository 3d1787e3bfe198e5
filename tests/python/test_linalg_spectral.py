"""Eigh/Eigvalsh, SVD, QR, pinv, lstsq, expm, Eig (refused), BlockDiagonal:
parity with PyTensor for float32 and float64, batch dims, opsets, sizes.

Eigenvectors and singular vectors are unique up to sign (for distinct
values); LAPACK's signs are an artefact of its algorithm, so they are
compared after fixing each vector's sign (largest component positive), and
the factorizations are also checked to reconstruct the input."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.blockwise import Blockwise

from helpers import FLOAT_DTYPES
from linalg_cases import BATCH_SHAPES, LINALG_OPSETS, TOLERANCES, compare, general, spd, stack
from pytensor_onnx import compat
from pytensor_onnx.mode import onnx_mode
from pytensor_onnx.testing import assert_same_result, compare_onnx_and_py, py_function

N = 5


def _fix_signs(vectors, axis):
    """Vectors (along ``axis``) with their largest-magnitude component made positive."""
    vectors = np.asarray(vectors)
    if vectors.size == 0:
        return vectors
    index = np.expand_dims(np.argmax(np.abs(vectors), axis=axis), axis)
    return vectors * np.sign(np.take_along_axis(vectors, index, axis=axis))


def _run_both(inputs, outputs, values, opset=None):
    fn = pytensor.function(inputs, outputs, mode=onnx_mode(opset_version=opset))
    from pytensor_onnx.testing import check_model

    check_model(fn.maker.linker.onnx_model)
    return fn(*values), py_function(inputs, outputs)(*values)


def eigh(x, lower=True):
    """(w, v): PyTensor's Eigh Op, in Blockwise for batch dims (2.38's
    pt.linalg.eigh takes matrices only)."""
    Eigh = compat.linalg_op_class("Eigh")
    op = Eigh(lower=lower) if compat.LINALG_IS_PACKAGE else Eigh("L" if lower else "U")
    return list(Blockwise(op, signature="(m,m)->(m),(m,m)")(x) if x.ndim > 2 else op(x))


def eigvalsh(a, b=None):
    Eigvalsh = compat.linalg_op_class("Eigvalsh")
    if b is None:
        from pytensor.tensor.type_other import NoneConst

        b = NoneConst
    return Eigvalsh()(a, b)


def symmetric(rng, n, batch=(), dtype="float64"):
    a = rng.normal(size=(*batch, n, n))
    return ((a + np.swapaxes(a, -1, -2)) / 2).astype(dtype)


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_eigh(dtype, batch, opset, rng):
    rtol, atol = TOLERANCES[dtype]
    x = stack("x", dtype, batch, (N, N))
    value = symmetric(rng, N, batch, dtype)
    results, reference = _run_both([x], [*eigh(x), *([eigvalsh(x)] if not batch else [])], [value], opset)
    (w, v, *wv), (w0, v0, *wv0) = results, reference
    assert_same_result(w, w0, rtol=rtol, atol=atol)
    for got, want in zip(wv, wv0, strict=True):
        assert_same_result(got, want, rtol=rtol, atol=atol)
    assert_same_result(_fix_signs(v, -2), _fix_signs(v0, -2), rtol=rtol * 10, atol=atol * 10)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 8])
def test_eigh_sizes_and_triangles(n, lower, rng):
    x = pt.matrix("x")
    value = symmetric(rng, n)
    value[np.triu_indices(n, 1) if lower else np.tril_indices(n, -1)] = 50.0  # never read
    (w, v), (w0, v0) = _run_both([x], eigh(x, lower), [value])
    assert_same_result(w, w0, rtol=1e-10, atol=1e-12)
    assert_same_result(_fix_signs(v, -2), _fix_signs(v0, -2), rtol=1e-9, atol=1e-11)


def test_eigvalsh_generalized(rng):
    a, b = pt.matrix("a"), pt.matrix("b")
    compare([a, b], [eigvalsh(a, b)], [symmetric(rng, N), spd(rng, N)], "float64")


def test_eigh_accuracy_at_n_64(rng):
    # Eigenvalues to 1e-10 of the spectral norm (what LAPACK guarantees too).
    x = pt.matrix("x")
    value = symmetric(rng, 64)
    (w, v), (w0, v0) = _run_both([x], eigh(x), [value])
    np.testing.assert_allclose(w, w0, rtol=1e-10, atol=1e-10 * np.abs(w0).max())
    np.testing.assert_allclose(_fix_signs(v, -2), _fix_signs(v0, -2), atol=1e-9)
    np.testing.assert_allclose((v * w[None]) @ v.T, value, atol=1e-12 * 64)


#: Batch shapes paired with opsets, so every batch shape and every opset runs
#: (the gradients repeat the forward recipes that run the full cross).
GRAD_CASES = list(zip(BATCH_SHAPES, LINALG_OPSETS + LINALG_OPSETS[-1:] * (len(BATCH_SHAPES) - len(LINALG_OPSETS))))


@pytest.mark.parametrize(("batch", "opset"), GRAD_CASES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_grad_eigh(dtype, batch, opset, rng):
    # Costs that do not depend on the eigenvectors' signs.
    x = stack("x", dtype, batch, (N, N))
    w, v = eigh(x)
    weights = pt.constant(rng.normal(size=(N, N)).astype(dtype))
    cost = (w * pt.arange(1, N + 1).astype(dtype)).sum() + ((v**2) * weights).sum()
    value = symmetric(rng, N, batch, dtype)
    compare([x], [cost, pytensor.grad(cost, x)], [value], dtype, opset, rtol=TOLERANCES[dtype][0] * 100)


# --------------------------------------------------------------------------
# SVD
# --------------------------------------------------------------------------


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_svd(shape, dtype, batch, opset, rng):
    rtol, atol = TOLERANCES[dtype]
    x = stack("x", dtype, batch, shape)
    value = rng.normal(size=(*batch, *shape)).astype(dtype)
    for full in (True, False):
        (u, s, vt), (u0, s0, vt0) = _run_both([x], list(pt.linalg.svd(x, full_matrices=full)), [value], opset)
        assert_same_result(s, s0, rtol=rtol, atol=atol)
        assert u.shape == u0.shape and vt.shape == vt0.shape
        k = min(shape)
        assert_same_result(_fix_signs(u[..., :k], -2), _fix_signs(u0[..., :k], -2), rtol=rtol * 10, atol=atol * 10)
        assert_same_result(_fix_signs(vt[..., :k, :], -1), _fix_signs(vt0[..., :k, :], -1), rtol=rtol * 10, atol=atol * 10)
        # Orthonormal (the completion of full_matrices included).
        eye_u = np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2)
        np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, eye_u, atol=atol * 100)
        eye_v = np.broadcast_to(np.eye(vt.shape[-2]), vt.shape[:-2] + (vt.shape[-2],) * 2)
        np.testing.assert_allclose(vt @ np.swapaxes(vt, -1, -2), eye_v, atol=atol * 100)
    compare([x], [pt.linalg.svd(x, compute_uv=False)], [value], dtype, opset)


@pytest.mark.parametrize("shape", [(0, 0), (1, 1), (0, 3), (3, 0), (6, 1), (1, 6)])
def test_svd_edge_shapes(shape, rng):
    x = pt.matrix("x")
    value = rng.normal(size=shape)
    (u, s, vt), (u0, s0, vt0) = _run_both([x], list(pt.linalg.svd(x)), [value])
    assert_same_result(s, s0, rtol=1e-10, atol=1e-12)
    assert u.shape == u0.shape and vt.shape == vt0.shape
    np.testing.assert_allclose(u[:, : len(s)] * s @ vt[: len(s)], value, atol=1e-12)


def test_svd_rank_deficient(rng):
    x = pt.matrix("x")
    value = rng.normal(size=(6, 2)) @ rng.normal(size=(2, 4))  # rank 2
    (u, s, vt), (u0, s0, vt0) = _run_both([x], list(pt.linalg.svd(x)), [value])
    np.testing.assert_allclose(s, s0, atol=1e-12)
    np.testing.assert_allclose(u.T @ u, np.eye(6), atol=1e-12)
    np.testing.assert_allclose(vt @ vt.T, np.eye(4), atol=1e-12)
    np.testing.assert_allclose((u[:, :4] * s) @ vt, value, atol=1e-12)


@pytest.mark.parametrize(("batch", "opset"), GRAD_CASES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_grad_svd(shape, dtype, batch, opset, rng):
    rtol = TOLERANCES[dtype][0] * 100
    x = stack("x", dtype, batch, shape)
    value = rng.normal(size=(*batch, *shape)).astype(dtype)
    k = min(shape)
    s = pt.linalg.svd(x, compute_uv=False)
    cost = (s * pt.arange(1, k + 1).astype(dtype)).sum()
    compare([x], [cost, pytensor.grad(cost, x)], [value], dtype, opset, rtol=rtol)
    # With the vectors: costs that do not depend on their signs.
    u, s, vt = pt.linalg.svd(x, full_matrices=False)
    weights_u = pt.constant(rng.normal(size=(shape[0], k)).astype(dtype))
    weights_v = pt.constant(rng.normal(size=(k, shape[1])).astype(dtype))
    cost = s.sum() + ((u**2) * weights_u).sum() + ((vt**2) * weights_v).sum()
    compare([x], [cost, pytensor.grad(cost, x)], [value], dtype, opset, rtol=rtol)


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_norms(dtype, opset, rng):
    x, v = pt.matrix("x", dtype=dtype), pt.vector("v", dtype=dtype)
    outputs = [pt.linalg.norm(x), pt.linalg.norm(x, 2), pt.linalg.norm(x, -2), pt.linalg.norm(x, "nuc"),
               pt.linalg.norm(x, 1), pt.linalg.norm(x, np.inf), pt.linalg.norm(v, 3), pt.linalg.norm(v)]
    compare([x, v], outputs, [rng.normal(size=(4, 3)).astype(dtype), rng.normal(size=5).astype(dtype)], dtype, opset)


# --------------------------------------------------------------------------
# QR
# --------------------------------------------------------------------------


@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("mode", ["full", "economic", "r", "raw"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_qr(shape, mode, dtype, batch, rng):
    # Householder reflectors chosen as LAPACK's: Q and R match, signs included.
    # The opset runs with the batch shape (GRAD_CASES pairs them: each once).
    opset = dict(GRAD_CASES)[batch]
    x = stack("x", dtype, batch, shape)
    QR = compat.linalg_op_class("QR")
    op = QR(mode=mode)
    outputs = Blockwise(op)(x) if batch else op(x)
    outputs = list(outputs) if isinstance(outputs, list | tuple) else [outputs]
    compare([x], outputs, [rng.normal(size=(*batch, *shape)).astype(dtype)], dtype, opset)


@pytest.mark.parametrize("mode", ["full", "economic", "r"])
def test_qr_pivoting(mode, rng):
    x = pt.matrix("x")
    outputs = pt.linalg.qr(x, mode=mode, pivoting=True)
    compare([x], list(outputs), [rng.normal(size=(5, 4)) * np.array([1.0, 10.0, 0.1, 3.0])], "float64")


# (0, n): PyTensor's own QR fails (SciPy's geqrf rejects lwork=0).
@pytest.mark.parametrize("shape", [(3, 0), (1, 1), (1, 4), (4, 1)])
def test_qr_edge_shapes(shape, rng):
    x = pt.matrix("x")
    compare([x], list(pt.linalg.qr(x)), [rng.normal(size=shape)], "float64")


# --------------------------------------------------------------------------
# Pseudo-inverse, least squares, expm
# --------------------------------------------------------------------------


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_pinv(shape, dtype, batch, opset, rng):
    x = stack("x", dtype, batch, shape)
    compare([x], [pt.linalg.pinv(x)], [rng.normal(size=(*batch, *shape)).astype(dtype)], dtype, opset)


def test_pinv_hermitian_and_rank_deficient(rng):
    x = pt.matrix("x")
    MatrixPinv = compat.linalg_op_class("MatrixPinv")
    low_rank = rng.normal(size=(5, 2)) @ rng.normal(size=(2, 5))
    symmetric_value = low_rank + low_rank.T
    compare([x], [MatrixPinv(hermitian=True)(x), pt.linalg.pinv(x)], [symmetric_value], "float64", atol=1e-11)


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("shape", [(6, 3), (3, 6), (4, 4)])
@pytest.mark.parametrize("rcond", [-1.0, 1e-3])
def test_lstsq(shape, rcond, opset, rng):
    # float64 only: PyTensor's Lstsq declares float64 outputs for every
    # input, but its perform returns float32 for float32 input (against its
    # own type), so there is no float32 result to match; the rule follows
    # the declared type.
    dtype = "float64"
    Lstsq = compat.linalg_op_class("Lstsq")
    a, b = pt.matrix("a", dtype=dtype), pt.matrix("b", dtype=dtype)
    r = pt.dscalar("r")
    outputs = Lstsq()(a, b, r)
    values = [rng.normal(size=shape).astype(dtype), rng.normal(size=(shape[0], 2)).astype(dtype), np.asarray(rcond)]
    compare([a, b, r], list(outputs), values, dtype, opset)


def test_lstsq_rank_deficient_has_no_residuals(rng):
    Lstsq = compat.linalg_op_class("Lstsq")
    a, b = pt.matrix("a"), pt.matrix("b")
    value = rng.normal(size=(6, 2)) @ rng.normal(size=(2, 3))
    _, (x, residuals, rank, s) = compare([a, b], list(Lstsq()(a, b, 1e-10)), [value, rng.normal(size=(6, 2))], "float64", atol=1e-11)
    assert residuals.shape == (0,) and rank == 2


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_expm(dtype, batch, opset, rng):
    x = stack("x", dtype, batch, (N, N))
    # Norms from small (no squaring) to large (several squarings), per matrix.
    value = rng.normal(size=(*batch, N, N)) * rng.choice([0.01, 1.0, 4.0], size=(*batch, 1, 1))
    compare([x], [pt.linalg.expm(x)], [value.astype(dtype)], dtype, opset)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_expm_sizes(n, rng):
    x = pt.matrix("x")
    compare([x], [pt.linalg.expm(x)], [rng.normal(size=(n, n))], "float64")


def test_eig_is_refused_clearly():
    x = pt.matrix("x")
    with pytest.raises(NotImplementedError, match="complex"):
        pytensor.function([x], pt.linalg.eig(x)[0], mode="ONNX")


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_block_diag(dtype, rng):
    a, b, c = pt.matrix("a", dtype=dtype), pt.matrix("b", dtype=dtype), pt.matrix("c", dtype=dtype)
    values = [(rng.normal(size=s) * 10).astype(dtype) for s in [(2, 3), (0, 2), (1, 1)]]
    compare_onnx_and_py([a, b, c], [pt.linalg.block_diag(a, b, c)], values)


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_batched_block_diag(dtype, rng):
    # Blockwise(BlockDiagonal): batch dims of the blocks broadcast (2 with 1).
    a, b = pt.tensor3("a", dtype=dtype), pt.tensor3("b", dtype=dtype, shape=(1, None, None))
    c = pt.tensor("c", dtype=dtype, shape=(None, 1, None, None))
    values = [(rng.normal(size=s) * 10).astype(dtype) for s in [(2, 2, 3), (1, 0, 2), (3, 1, 1, 1)]]
    compare_onnx_and_py([a, b, c], [pt.linalg.block_diag(a, b), pt.linalg.block_diag(c, a, b)], values)


# --------------------------------------------------------------------------
# Schur (real)
# --------------------------------------------------------------------------


def schur(x, **kwargs):
    """(T, Z) of PyTensor's Schur Op, in Blockwise for batch dims."""
    Schur = compat.linalg_op_class("Schur")
    return list(Blockwise(Schur(**kwargs))(x))


def _assert_real_schur(t, z, a, rtol):
    """What a real Schur decomposition determines: a == z t z^T, z orthogonal,
    t quasi-upper-triangular with 2x2 blocks in LAPACK's standard form (equal
    diagonal, off-diagonal entries of opposite sign), t's eigenvalues a's."""
    n = a.shape[-1]
    for t1, z1, a1 in zip(t.reshape(-1, n, n), z.reshape(-1, n, n), a.reshape(-1, n, n), strict=True):
        scale = max(np.linalg.norm(a1), np.finfo(a.dtype).tiny)
        assert np.linalg.norm(z1 @ t1 @ z1.T - a1) <= rtol * scale, "a != z t z^T"
        assert np.linalg.norm(z1.T @ z1 - np.eye(n)) <= rtol * max(n, 1), "z is not orthogonal"
        assert not np.tril(t1, -2).any(), "t has entries below its subdiagonal"
        blocks = np.flatnonzero(np.diagonal(t1, -1))
        assert not np.any(np.diff(blocks) == 1), "t has a block larger than 2x2"
        for k in blocks:
            assert t1[k, k] == t1[k + 1, k + 1] and t1[k, k + 1] * t1[k + 1, k] < 0, f"block at {k} is not standardized"
        got = np.sort_complex(np.linalg.eigvals(t1.astype("float64")))
        want = np.sort_complex(np.linalg.eigvals(a1.astype("float64")))
        np.testing.assert_allclose(got, want, rtol=rtol * 100, atol=rtol * 100 * scale)


def _schur_tolerance(dtype):
    return 1e-13 if dtype == "float64" else 1e-5


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_schur(dtype, batch, opset, rng):
    # Schur vectors and the order of T's eigenvalues are not unique (see the
    # rule's docstring): checked are what the decomposition determines, and
    # T's block structure against SciPy's (the number of complex pairs).
    x = stack("x", dtype, batch, (N, N))
    value = rng.normal(size=(*batch, N, N)).astype(dtype)
    (t, z), (t0, z0) = _run_both([x], schur(x), [value], opset)
    assert (t.dtype, t.shape, z.dtype, z.shape) == (t0.dtype, t0.shape, z0.dtype, z0.shape)
    _assert_real_schur(t, z, value, _schur_tolerance(dtype))
    pairs = lambda t: np.count_nonzero(np.diagonal(t, -1, -2, -1), axis=-1)  # noqa: E731
    np.testing.assert_array_equal(pairs(t), pairs(t0))


def _special_matrices(rng, n):
    rotation = np.array([[np.cos(1.0), -np.sin(1.0)], [np.sin(1.0), np.cos(1.0)]])
    return {
        "cyclic permutation": np.eye(n)[np.roll(np.arange(n), 1)],  # stalls plain Francis shifts
        "symmetric": (lambda a: a + a.T)(rng.normal(size=(n, n))),
        "jordan block": 2 * np.eye(n) + np.eye(n, k=1),
        "repeated rotations": np.kron(np.eye(n // 2), rotation) if n % 2 == 0 else np.eye(n),
        "rank one": np.outer(rng.normal(size=n), rng.normal(size=n)),
        "zero": np.zeros((n, n)),
        "huge": rng.normal(size=(n, n)) * 1e150,
        "tiny": rng.normal(size=(n, n)) * 1e-150,
        "hessenberg": np.triu(rng.normal(size=(n, n)), -1),
    }


@pytest.mark.parametrize("n", [3, 6, 9])
def test_schur_special_matrices(n, rng):
    x = pt.matrix("x")
    fn = pytensor.function([x], schur(x), mode=onnx_mode())
    for name, value in _special_matrices(rng, n).items():
        t, z = fn(value)
        try:
            _assert_real_schur(t, z, value, 1e-13)
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from error


@pytest.mark.parametrize("n", [4, 7, 12])
def test_schur_eigenvalue_order_is_lapacks(n, rng):
    # The sweeps follow dlahqr's strategy (shifts, deflation test, where a
    # sweep starts), which SciPy's gees runs for n < 75: T's diagonal, and so
    # the order of the eigenvalues and the place of the 2x2 blocks, comes out
    # as SciPy's. (Within a 2x2 block the Schur vectors may still differ by a
    # reflection: see the rule's docstring.)
    x = pt.tensor3("x")
    value = rng.normal(size=(40, n, n))
    (t, _), (t0, _) = _run_both([x], schur(x), [value])
    np.testing.assert_allclose(np.diagonal(t, 0, -2, -1), np.diagonal(t0, 0, -2, -1), rtol=1e-9, atol=1e-11)
    np.testing.assert_array_equal(np.diagonal(t, -1, -2, -1) != 0, np.diagonal(t0, -1, -2, -1) != 0)


@pytest.mark.parametrize("static", [False, True])
@pytest.mark.parametrize("n", [0, 1, 2])
def test_schur_small_sizes_match_scipy(n, static, rng):
    # Up to 2x2 the Schur form is determined by LAPACK's standardization
    # (dlanv2), which the recipe follows: T and Z compare directly.
    x = pt.matrix("x", shape=(n, n) if static else (None, None))
    for value in [rng.normal(size=(n, n)), np.array([[1.0, 2.0], [-3.0, 1.5]])[:n, :n], np.triu(rng.normal(size=(n, n)))]:
        compare_onnx_and_py([x], schur(x), [value], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_schur_of_triangular_matrices_matches_scipy(dtype, rng):
    # An upper triangular matrix is its own Schur form (Z = I) for LAPACK and the recipe.
    x = stack("x", dtype, (2,), (N, N))
    compare([x], schur(x), [np.triu(rng.normal(size=(2, N, N))).astype(dtype)], dtype)


def test_schur_of_non_finite_matrices_is_nan_as_pytensor(rng):
    x = pt.tensor3("x")
    value = rng.normal(size=(2, 4, 4))
    value[0, 1, 2], value[1, 0, 0] = np.nan, np.inf
    compare_onnx_and_py([x], schur(x), [value])  # NaN everywhere, as PyTensor
    mixed = np.concatenate([value, rng.normal(size=(1, 4, 4))])
    (t, z), _ = _run_both([x], schur(x), [mixed])
    assert np.isnan(t[:2]).all() and np.isnan(z[:2]).all()
    _assert_real_schur(t[2], z[2], mixed[2], 1e-13)


def test_schur_accuracy_at_n_48(rng):
    # Backward stable: ||A - Z T Z^T|| stays a few eps ||A||, as LAPACK's.
    x = pt.matrix("x")
    value = rng.normal(size=(48, 48))
    (t, z), _ = _run_both([x], schur(x), [value])
    _assert_real_schur(t, z, value, 1e-13)


def test_schur_complex_and_sorted_are_refused_clearly():
    x = pt.matrix("x")
    with pytest.raises(NotImplementedError, match="complex tensors"):
        pytensor.function([x], schur(x, output="complex"), mode="ONNX")
    with pytest.raises(NotImplementedError, match="sort='lhp'"):
        pytensor.function([x], schur(x, sort="lhp"), mode="ONNX")
