"""Cholesky, the solvers and LU (dispatch/linalg/, recipes in src/core/recipes/linalg.cc):
parity with PyTensor (SciPy's LAPACK) for float32 and float64, batch dims
none/one/two (Blockwise), opsets 13, 18 and the newest, symbolic and static
sizes, n = 0 and n = 1, failures (NaN as PyTensor) and rejected shapes."""

import warnings

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from helpers import FLOAT_DTYPES, onnx_op_types
from linalg_cases import BATCH_SHAPES, LINALG_OPSETS, compare, general, lower_triangular, spd, stack
from pytensor_onnx import compat
from pytensor_onnx.mode import onnx_mode
from pytensor_onnx.testing import compare_onnx_and_py

N = 5


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_cholesky(dtype, batch, opset, rng):
    x = stack("x", dtype, batch, (N, N))
    outputs = [pt.linalg.cholesky(x), pt.linalg.cholesky(x, lower=False)]
    fn, _ = compare([x], outputs, [spd(rng, N, batch, dtype)], dtype, opset)
    assert f"Cholesky_{dtype}" in onnx_op_types(fn)  # the LAPACK kernel; the export holds the recipe


@pytest.mark.parametrize("static", [False, True])
@pytest.mark.parametrize("n", [0, 1, 2, 16])
def test_cholesky_sizes(n, static, rng):
    x = stack("x", "float64", (2,), (n, n), static=static)
    compare([x], [pt.linalg.cholesky(x)], [spd(rng, n, (2,))], "float64")


def test_cholesky_reads_one_triangle(rng):
    # potrf reads only the triangle it factors.
    x = pt.matrix("x")
    value = spd(rng, 4)
    value[np.triu_indices(4, 1)] = 100.0
    value[np.tril_indices(4, -1)] *= 1.0  # lower triangle intact
    compare([x], [pt.linalg.cholesky(x)], [value], "float64")
    upper = value.T.copy()
    compare([x], [pt.linalg.cholesky(x, lower=False)], [upper], "float64")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_cholesky_not_positive_definite_gives_nan(dtype, rng):
    x = stack("x", dtype, (3,), (4, 4))
    values = spd(rng, 4, (3,), dtype)
    values[1, 2, 2] = -5.0  # second matrix indefinite
    values[2, 0, 0] = 0.0   # third: zero pivot
    _, [result] = compare([x], [pt.linalg.cholesky(x)], [values], dtype)
    assert np.isnan(result[1]).all() and np.isnan(result[2]).all()
    assert np.isfinite(result[0]).all()


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("b_ndim", [1, 2])
def test_solve_triangular(b_ndim, dtype, batch, opset, rng):
    a = stack("a", dtype, batch, (N, N))
    b = stack("b", dtype, batch, (N,) if b_ndim == 1 else (N, 3))
    outputs = [
        pt.linalg.solve_triangular(a, b, lower=True, b_ndim=b_ndim),
        pt.linalg.solve_triangular(a.mT, b, lower=False, b_ndim=b_ndim),
        pt.linalg.solve_triangular(a, b, lower=True, trans=1, b_ndim=b_ndim),
        pt.linalg.solve_triangular(a, b, lower=True, unit_diagonal=True, b_ndim=b_ndim),
    ]
    b_value = rng.normal(size=(*batch, N) if b_ndim == 1 else (*batch, N, 3)).astype(dtype)
    # Garbage in the other triangle: never read.
    a_value = lower_triangular(rng, N, batch, dtype) + np.triu(np.full((N, N), 7.0), 1).astype(dtype)
    compare([a, b], outputs, [a_value, b_value], dtype, opset)


@pytest.mark.parametrize("n", [0, 1, 3, 8, 9])
def test_solve_triangular_sizes(n, rng):
    a, b = pt.matrix("a"), pt.matrix("b")
    compare([a, b], [pt.linalg.solve_triangular(a, b, lower=True)], [lower_triangular(rng, n), rng.normal(size=(n, 2))], "float64")


def test_solve_triangular_singular_gives_nan(rng):
    a, b = pt.matrix("a"), pt.vector("b")
    value = lower_triangular(rng, 4)
    value[2, 2] = 0.0
    _, [result] = compare([a, b], [pt.linalg.solve_triangular(a, b, lower=True)], [value, rng.normal(size=4)], "float64")
    assert np.isnan(result).all()


ASSUME_A = ["gen", "sym", "pos", "her", "tridiagonal", "banded"]


def _solve_matrix(rng, assume_a, n, batch, dtype):
    if assume_a == "pos":
        return spd(rng, n, batch, dtype)
    if assume_a in ("sym", "her"):
        value = general(rng, n, batch, "float64")
        value = value + np.swapaxes(value, -1, -2)  # symmetric, indefinite
        value[..., np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] = 9.0  # lower=True: never read
        return value.astype(dtype)
    value = general(rng, n, batch, dtype)
    if assume_a in ("tridiagonal", "banded"):
        band = np.abs(np.subtract.outer(np.arange(n), np.arange(n))) <= 1
        value = np.where(band, value + 3 * np.eye(n, dtype=dtype), 0).astype(dtype)
    return value


def _supported_assume_a(assume_a):
    try:
        compat.linalg_op_class("Solve")(assume_a=assume_a, b_ndim=1)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("assume_a", ASSUME_A)
def test_solve(assume_a, dtype, batch, opset, rng):
    if not _supported_assume_a(assume_a):
        # PyTensor 2.38 knows gen/sym/her/pos only.
        with pytest.raises(ValueError):
            pt.linalg.solve(pt.matrix(), pt.vector(), assume_a=assume_a)
        return
    a = stack("a", dtype, batch, (N, N))
    b1 = stack("b1", dtype, batch, (N,))
    b2 = stack("b2", dtype, batch, (N, 2))
    lower = assume_a in ("sym", "her")
    outputs = [pt.linalg.solve(a, b1, assume_a=assume_a, lower=lower, b_ndim=1),
               pt.linalg.solve(a, b2, assume_a=assume_a, lower=lower, b_ndim=2)]
    values = [_solve_matrix(rng, assume_a, N, batch, dtype), rng.normal(size=(*batch, N)).astype(dtype),
              rng.normal(size=(*batch, N, 2)).astype(dtype)]
    compare([a, b1, b2], outputs, values, dtype, opset)


@pytest.mark.parametrize("assume_a", ["gen", "pos"])
@pytest.mark.parametrize("n", [0, 1, 2])
def test_solve_small_sizes(n, assume_a, rng):
    a, b = pt.matrix("a"), pt.matrix("b")
    values = [_solve_matrix(rng, assume_a, n, (), "float64"), rng.normal(size=(n, 2))]
    compare([a, b], [pt.linalg.solve(a, b, assume_a=assume_a)], values, "float64")


@pytest.mark.parametrize("assume_a", ["gen", "pos"])
def test_solve_singular_gives_nan(assume_a, rng):
    a, b = pt.matrix("a"), pt.matrix("b")
    value = np.ones((3, 3)) if assume_a == "gen" else -np.eye(3)
    # A square b: PyTensor's NaN result has a's shape.
    _, [result] = compare([a, b], [pt.linalg.solve(a, b, assume_a=assume_a)], [value, rng.normal(size=(3, 3))], "float64")
    assert np.isnan(result).all()


def test_solve_broadcasts_batch_dims(rng):
    a = pt.tensor("a", shape=(None, 1, None, None))
    b = pt.tensor("b", shape=(None, None))
    values = [general(rng, 4, (2, 1)), rng.normal(size=(3, 4))]
    compare([a, b], [pt.linalg.solve(a, b, b_ndim=1)], values, "float64")


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("lower", [True, False])
def test_cho_solve(lower, dtype, batch, opset, rng):
    a = stack("a", dtype, batch, (N, N))
    b = stack("b", dtype, batch, (N, 2))
    c = pt.linalg.cholesky(a, lower=lower)
    outputs = [pt.linalg.cho_solve((c, lower), b), pt.linalg.cho_solve((c, lower), b[..., 0], b_ndim=1)]
    compare([a, b], outputs, [spd(rng, N, batch, dtype), rng.normal(size=(*batch, N, 2)).astype(dtype)], dtype, opset)


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_lu_factor_and_solve(dtype, batch, opset, rng):
    a = stack("a", dtype, batch, (N, N))
    b = stack("b", dtype, batch, (N,))
    lu, piv = pt.linalg.lu_factor(a)
    outputs = [lu, piv, pt.linalg.lu_solve((lu, piv), b, b_ndim=1), pt.linalg.lu_solve((lu, piv), b, trans=True, b_ndim=1)]
    compare([a, b], outputs, [general(rng, N, batch, dtype), rng.normal(size=(*batch, N)).astype(dtype)], dtype, opset)


def test_lu_factor_pivots_match_lapack_on_ties():
    # Equal candidates: getrf takes the first; so does the recipe.
    a = pt.matrix("a")
    value = np.array([[1.0, 2.0, 3.0], [-1.0, 5.0, 1.0], [1.0, 0.0, 4.0]])
    compare([a], list(pt.linalg.lu_factor(a)), [value], "float64")


@pytest.mark.parametrize("where", ["nan-inside", "inf-inside", "all-nan"])
def test_lu_factor_and_solve_of_matrices_with_nan_or_inf_are_lapacks(where):
    # getrf's pivot is idamax's (NaNs skipped but for the column's first
    # candidate) and its update touches only what is below and right of the
    # pivot: the recipe's did not skip NaN candidates, and its update
    # multiplied NaN and inf by 0 elsewhere, making its permutation NaN (an
    # index out of range: the exported model failed to run) and L NaN where
    # LAPACK's is not.
    a, b = pt.matrix("a"), pt.matrix("b")
    value = np.eye(4) + 0.1
    if where == "nan-inside":
        value[1, 2] = np.nan
    elif where == "inf-inside":
        value[2, 1] = np.inf
    else:
        value = np.full((3, 3), np.nan)
    outputs = list(pt.linalg.lu_factor(a))
    if where != "inf-inside":  # (inf: PyTensor's modes give different solves themselves)
        outputs.append(pt.linalg.solve(a, b, assume_a="gen", b_ndim=2))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (SciPy's LinAlgWarning)
        compare_onnx_and_py([a, b], outputs, [value, np.ones((len(value), 2))])


def test_lu_factor_singular_gives_nan():
    a = pt.matrix("a")
    _, (lu, piv) = compare([a], list(pt.linalg.lu_factor(a)), [np.ones((3, 3))], "float64")
    assert np.isnan(lu).all()


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("form", ["p", "permute_l", "p_indices"])
def test_lu(form, dtype, batch, opset, rng):
    a = stack("a", dtype, batch, (N, N))
    outputs = pt.linalg.lu(a, permute_l=form == "permute_l", p_indices=form == "p_indices")
    compare([a], list(outputs), [general(rng, N, batch, dtype)], dtype, opset)


@pytest.mark.parametrize("static", [False, True])
@pytest.mark.parametrize("n", [0, 1, 9])
def test_factorization_solvers_sizes(n, static, rng):
    # cho_solve, lu_factor/lu_solve and lu at n = 0, 1 and across one
    # Cholesky block (8 columns), symbolic or static n, one batch dim.
    a = stack("a", "float64", (2,), (n, n), static)
    b = stack("b", "float64", (2,), (n, 2), static)
    lu, piv = pt.linalg.lu_factor(a)
    outputs = [
        pt.linalg.cho_solve((pt.linalg.cholesky(a), True), b),
        lu,
        piv,
        pt.linalg.lu_solve((lu, piv), b),
        *pt.linalg.lu(a),
    ]
    values = [spd(rng, n, (2,)), rng.normal(size=(2, n, 2))]
    compare([a, b], outputs, values, "float64")
    compare([a, b], outputs[3:], [general(rng, n, (2,)), values[1]], "float64")


@pytest.mark.parametrize("inverse", [True, False])
def test_pivot_to_permutation(inverse, rng):
    PivotToPermutations = compat.linalg_op_class("PivotToPermutations")
    piv = pt.tensor("piv", dtype="int32", shape=(None, None))
    value = np.array([[3, 3, 2, 3], [0, 1, 2, 3]], dtype="int32")
    from pytensor.tensor.blockwise import Blockwise

    compare_onnx_and_py([piv], [Blockwise(PivotToPermutations(inverse=inverse))(piv)], [value])


# --------------------------------------------------------------------------
# Shapes PyTensor rejects
# --------------------------------------------------------------------------


def test_non_square_static_shape_raises_at_conversion():
    x = pt.tensor("x", shape=(3, 4))
    Cholesky = compat.linalg_op_class("Cholesky")
    with pytest.raises(ValueError, match="square"):
        pytensor.function([x], Cholesky()(x), mode=onnx_mode())


@pytest.mark.parametrize("op", ["cholesky", "solve", "solve_triangular"])
def test_non_square_dynamic_shape_fails_at_run_time(op, rng):
    a, b = pt.matrix("a"), pt.vector("b")
    build = {
        "cholesky": lambda: pt.linalg.cholesky(a),
        "solve": lambda: pt.linalg.solve(a, b, b_ndim=1),
        "solve_triangular": lambda: pt.linalg.solve_triangular(a, b, b_ndim=1),
    }[op]
    fn = pytensor.function([a, b], build(), mode=onnx_mode(), on_unused_input="ignore")
    with pytest.raises(RuntimeError, match="ONNX Runtime failed to run the model"):
        fn(rng.normal(size=(3, 4)), rng.normal(size=3))


def test_mismatched_right_hand_side_fails_at_run_time(rng):
    a, b = pt.matrix("a"), pt.vector("b")
    fn = pytensor.function([a, b], pt.linalg.solve(a, b, b_ndim=1), mode=onnx_mode())
    with pytest.raises(RuntimeError, match="ONNX Runtime failed to run the model"):
        fn(general(rng, 3), rng.normal(size=4))


def test_mismatched_batch_dims_fail_at_run_time(rng):
    a, b = pt.tensor3("a"), pt.matrix("b")
    fn = pytensor.function([a, b], pt.linalg.solve(a, b, b_ndim=1), mode=onnx_mode())
    with pytest.raises(RuntimeError, match="ONNX Runtime failed to run the model"):
        fn(general(rng, 3, (2,)), rng.normal(size=(3, 3)))


# --------------------------------------------------------------------------
# Accuracy on large matrices
# --------------------------------------------------------------------------


def test_accuracy_at_n_256(rng):
    n = 256
    a, b = pt.matrix("a"), pt.matrix("b")
    s = pt.matrix("s")
    outputs = [
        pt.linalg.cholesky(s),
        pt.linalg.solve(a, b),
        pt.linalg.solve(s, b, assume_a="pos"),
        pt.linalg.solve_triangular(pt.linalg.cholesky(s), b, lower=True),
    ]
    values = [general(rng, n), rng.normal(size=(n, 3)), spd(rng, n)]
    compare([a, b, s], outputs, values, "float64", rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------
# Sylvester and Lyapunov equations (dispatch/linear_control.py)
# --------------------------------------------------------------------------


def _stable(rng, n, batch=(), dtype="float64", radius=0.9):
    """Matrices with spectral radius ``radius``: discrete Lyapunov equations
    with them are well conditioned."""
    a = rng.normal(size=(*batch, n, n))
    return (radius * a / np.abs(np.linalg.eigvals(a)).max(axis=-1)[..., None, None]).astype(dtype)


@pytest.mark.parametrize("opset", LINALG_OPSETS)
@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_solve_sylvester(dtype, batch, opset, rng):
    m, n = 4, 3
    a, b, c = stack("a", dtype, batch, (m, m)), stack("b", dtype, batch, (n, n)), stack("c", dtype, batch, (m, n))
    values = [general(rng, m, batch, dtype), general(rng, n, batch, dtype), rng.normal(size=(*batch, m, n)).astype(dtype)]
    compare([a, b, c], [pt.linalg.solve_sylvester(a, b, c)], values, dtype, opset)


@pytest.mark.parametrize("batch", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_solve_lyapunov(dtype, batch, rng):
    n = 4
    a, q = stack("a", dtype, batch, (n, n)), stack("q", dtype, batch, (n, n))
    values = [_stable(rng, n, batch, dtype), spd(rng, n, batch, dtype)]
    outputs = [
        pt.linalg.solve_discrete_lyapunov(a, q, method="bilinear"),
        pt.linalg.solve_discrete_lyapunov(a, q, method="direct"),
        pt.linalg.solve_continuous_lyapunov(a - 2 * pt.eye(n), q),
    ]
    compare([a, q], outputs, values, dtype)


def test_solve_sylvester_broadcasts_batch_dims_and_sizes(rng):
    a, b, c = pt.tensor3("a"), pt.matrix("b"), pt.tensor3("c")
    for m, n in [(1, 1), (1, 3), (5, 2)]:
        values = [general(rng, m, (2,)), general(rng, n), rng.normal(size=(2, m, n))]
        compare([a, b, c], [pt.linalg.solve_sylvester(a, b, c)], values, "float64")


def test_solve_sylvester_gradient(rng):
    a, b, c = pt.tensor3("a"), pt.tensor3("b"), pt.tensor3("c")
    x = pt.linalg.solve_sylvester(a, b, c)
    cost = (x**2).sum() + x[0, 0, 1]
    values = [general(rng, 3, (2,)), general(rng, 2, (2,)), rng.normal(size=(2, 3, 2))]
    compare([a, b, c], [cost, *pytensor.grad(cost, [a, b, c])], values, "float64")


def test_solve_sylvester_mismatched_sizes_fail_at_run_time(rng):
    a, b, c = pt.matrix("a"), pt.matrix("b"), pt.matrix("c")
    fn = pytensor.function([a, b, c], pt.linalg.solve_sylvester(a, b, c), mode=onnx_mode())
    with pytest.raises(RuntimeError, match="ONNX Runtime failed to run the model"):
        fn(general(rng, 3), general(rng, 2), rng.normal(size=(3, 4)))
