"""The kernel library's linear algebra (src/kernels/linalg*.{h,cc}): mode ONNX
factors matrices with LAPACK, SciPy's, as PyTensor's own backends do.

The linear-algebra test modules (test_slinalg.py, test_nlinalg.py,
test_linalg_spectral.py, test_linalg_grad.py) run every op in mode ONNX, so
on these kernels, and in the exported (portable) model, against PyTensor's
``py`` linker. Here: that the kernels are the ones used, that their float64
results equal PyTensor's default mode (the same LAPACK routines: eigenvector
signs included), batch broadcasting, and what happens without LAPACK.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import pytensor_onnx
from pytensor_onnx import compat, kernels
from pytensor_onnx.testing import compare_onnx_and_py

from linalg_cases import general, lower_triangular, spd

SLogDet = compat.linalg_op_class("SLogDet")


def kernel_types(fn):
    return sorted(n.op_type for n in fn.maker.linker.onnx_model.graph.node if n.domain == kernels.DOMAIN)


def _graphs():
    """(name, inputs, outputs, values, kernel op types) of each kernel, on float64."""
    rng = np.random.default_rng(42)
    n, k = 7, 3
    a, b, c, v = pt.matrix("a"), pt.matrix("b"), pt.matrix("c"), pt.vector("v")
    s, lo, g = spd(rng, n), lower_triangular(rng, n), general(rng, n)
    rhs, vec = rng.normal(size=(n, k)), rng.normal(size=n)
    chol = pt.linalg.cholesky(a)
    yield "cholesky", [a], [chol, pt.linalg.cholesky(a, lower=False)], [s], ["Cholesky_float64"] * 2
    yield ("solve_triangular", [a, b, v],
           [pt.linalg.solve_triangular(a, b, lower=True), pt.linalg.solve_triangular(a.T, v, lower=False),
            pt.linalg.solve_triangular(a, v, lower=True, unit_diagonal=True)],
           [lo, rhs, vec], ["SolveTriangular_float64"] * 3)
    yield ("cho_solve", [a, b, v],
           [pt.linalg.cho_solve((a, True), b), pt.linalg.cho_solve((a.T, False), v)],
           [np.linalg.cholesky(s), rhs, vec], ["CholeskySolve_float64"] * 2)
    for assume_a in ("gen", "sym", "pos"):
        # One solve per matrix: PyTensor splits solves that share one into
        # its factorization (LUFactor, Cholesky) and triangular solves.
        # PyTensor 3 gives a positive definite solve to Cholesky and cho_solve (2.38 does not).
        matrix = g if assume_a == "gen" else s
        expected = [["Solve_float64"] * 2]
        if assume_a == "pos":
            expected.append(["Cholesky_float64", "CholeskySolve_float64"] * 2)
        yield (f"solve-{assume_a}", [a, b, c, v],
               [pt.linalg.solve(a, b, assume_a=assume_a), pt.linalg.solve(c, v, assume_a=assume_a, lower=True)],
               [matrix, rhs, matrix[::-1, ::-1].copy(), vec], expected)
    yield ("solves-sharing-a-matrix", [a, b, v], [pt.linalg.solve(a, b), pt.linalg.solve(a, v)], [g, rhs, vec],
           ["LUFactor_float64", "PivotToPermutations_int64", *["SolveTriangular_float64"] * 4])
    yield ("lu_factor", [a], list(pt.linalg.lu_factor(a)), [g], ["LUFactor_float64"])
    yield "lu", [a], list(pt.linalg.lu(a)), [g], ["LUFactor_float64"]
    # (The singular flag's run-time check is the kernel library's Check node.)
    yield "inverse", [a], [pt.linalg.inv(a)], [g], ["Check_float64", "MatrixInverse_float64"]
    yield "det", [a], [pt.linalg.det(a)], [g], ["Det_float64"]
    yield "slogdet", [a], list(SLogDet()(a)), [g], ["SLogDet_float64"]
    yield "eigh", [a], list(pt.linalg.eigh(a)), [s], ["Eigh_float64"]
    tall, wide = rng.normal(size=(6, 4)), rng.normal(size=(3, 5))
    for name, value in (("tall", tall), ("wide", wide), ("square", g)):
        yield (f"qr-{name}", [a],
               [*pt.linalg.qr(a, mode="full"), *pt.linalg.qr(a, mode="economic"), *pt.linalg.qr(a, mode="raw"),
                *pt.linalg.qr(a, mode="full", pivoting=True)],
               [value], ["QR_float64"] * 3)  # one per mode
        yield (f"svd-{name}", [a], [*pt.linalg.svd(a), *pt.linalg.svd(a, full_matrices=False)], [value],
               ["SVD_float64"] * 2)
    yield "singular-values", [a], [pt.linalg.svd(a, compute_uv=False)], [tall], ["SVDValues_float64"]


@pytest.mark.parametrize(
    "name, inputs, outputs, values, expected", [pytest.param(*case, id=case[0]) for case in _graphs()]
)
def test_each_kernel_is_used_and_equals_pytensors_default_mode(name, inputs, outputs, values, expected):
    # The portable recipes' eigenvectors and singular vectors may have other
    # signs (test_linalg_spectral.py checks what they determine).
    vectors = name == "eigh" or name.startswith("svd")
    fn, results = compare_onnx_and_py(inputs, outputs, values, rtol=1e-12, atol=1e-15, check_export=not vectors)
    alternatives = expected if isinstance(expected[0], list) else [expected]
    assert kernel_types(fn) in [sorted(kinds) for kinds in alternatives]
    assert "Loop" not in {n.op_type for n in fn.maker.linker.onnx_model.graph.node}
    # The same LAPACK routines on the same column-major data as PyTensor's
    # default mode (Numba on PyTensor 3, C on 2.38): its results, eigenvector
    # signs included.
    default = pytensor.function(inputs, outputs, mode=pytensor.compile.mode.get_default_mode(), on_unused_input="ignore")
    for got, want in zip(results, default(*values), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    # Exports stay portable: the recipes.
    exported = pytensor_onnx.export_onnx(inputs, outputs)
    assert all(n.domain != kernels.DOMAIN for n in exported.graph.node)


def test_a_solve_by_a_transposed_factor_reads_the_factor(rng):
    # solve_triangular(L.T, b, lower=False), the second solve of a Cholesky
    # system (a Gaussian process's): the kernel reads L itself with `lower`
    # and `trans` flipped (src/core/passes/fold_transposes_into_kernels.h), no
    # Transpose copies it, and the LAPACK call is the one SciPy makes on the
    # view L.T (PyTensor's Python implementation): its bits, for a matrix and
    # a stack of them.
    import scipy.linalg

    for batch in ((), (2,)):
        a = pt.tensor("a", shape=(*batch, None, None))
        b = pt.tensor("b", shape=(*batch, None, None))
        factor = pt.linalg.cholesky(a)
        x = pt.linalg.solve_triangular(factor.mT, b, lower=False, b_ndim=2)
        m = rng.normal(size=(*batch, 20, 20))
        values = [m @ np.swapaxes(m, -1, -2) + 20 * np.eye(20), rng.normal(size=(*batch, 20, 3))]
        fn, (got, chol) = compare_onnx_and_py([a, b], [x, factor], values)
        assert "Transpose" not in {n.op_type for n in fn.maker.linker.onnx_model.graph.node}
        for k in np.ndindex(*batch):
            want = scipy.linalg.solve_triangular(chol[k].T, values[1][k], lower=False)
            np.testing.assert_array_equal(got[k], want)


@pytest.mark.parametrize("kernels_on", [True, False])
def test_a_solve_reads_a_right_hand_side_negated_or_transposed(kernels_on, rng):
    # solve_triangular(L, -y) and solve_triangular(L, Y.T), a Gaussian
    # process's gradient: the kernel reads y and Y, negating and transposing
    # as it copies them for LAPACK (fold_transposes_into_solve_kernels); the
    # bits are SciPy's on -y and Y.T. Vectors, matrices (not square), a stack.
    import scipy.linalg

    for batch in ((), (2,)):
        a = pt.tensor("a", shape=(*batch, None, None))
        y = pt.tensor("y", shape=(*batch, None))
        m = pt.tensor("m", shape=(*batch, None, None))
        factor = pt.linalg.cholesky(a)
        outputs = [
            pt.linalg.solve_triangular(factor, -y, lower=True, b_ndim=1),
            pt.linalg.solve_triangular(factor, m.mT, lower=True, b_ndim=2),
            pt.linalg.solve_triangular(factor, -m.mT, lower=True, trans=1, b_ndim=2),
            factor,
        ]
        r = rng.normal(size=(*batch, 20, 20))
        values = [r @ np.swapaxes(r, -1, -2) + 20 * np.eye(20), rng.normal(size=(*batch, 20)), rng.normal(size=(*batch, 3, 20))]
        fn, (neg, tr, both, chol) = compare_onnx_and_py([a, y, m], outputs, values, onnx_mode_kwargs={"kernels": kernels_on})
        if not kernels_on:
            continue
        types = {n.op_type for n in fn.maker.linker.onnx_model.graph.node}
        assert not types & {"Transpose", "Neg"}, types
        for k in np.ndindex(*batch):
            np.testing.assert_array_equal(neg[k], scipy.linalg.solve_triangular(chol[k], -values[1][k], lower=True))
            np.testing.assert_array_equal(tr[k], scipy.linalg.solve_triangular(chol[k], values[2][k].T, lower=True))
            np.testing.assert_array_equal(both[k], scipy.linalg.solve_triangular(chol[k], -values[2][k].T, lower=True, trans=1))


@pytest.mark.parametrize("lower, trans, unit_diagonal", [(True, 0, False), (False, 1, False), (True, 1, True)])
def test_triangular_solves_are_scipys_bits_at_every_size(lower, trans, unit_diagonal, rng):
    # One right-hand side goes to LAPACK's trtrs, as SciPy's does; several to
    # BLAS's trsm after trtrs's own singularity check (src/kernels/linalg.cc).
    # Sizes below and above OpenBLAS's threading thresholds (8 rows and
    # columns), and a zero on the diagonal: PyTensor's NaN.
    import scipy.linalg

    a, b = pt.matrix("a"), pt.matrix("b")
    fn = pytensor.function([a, b], pt.linalg.solve_triangular(a, b, lower=lower, trans=trans,
                                                              unit_diagonal=unit_diagonal), mode="ONNX")
    assert kernel_types(fn) == ["SolveTriangular_float64"]
    for n in (1, 7, 20, 100):
        for k in (1, 2, 7, 8, 20, 130):
            matrix, rhs = rng.normal(size=(n, n)) + n * np.eye(n), rng.normal(size=(n, k))
            want = scipy.linalg.solve_triangular(matrix, rhs, lower=lower, trans=trans, unit_diagonal=unit_diagonal)
            np.testing.assert_array_equal(fn(matrix, rhs), want, err_msg=f"n={n}, k={k}")
    singular = np.eye(5)
    singular[2, 2] = 0.0
    for k in (1, 3):
        solve = pytensor.function([a, b], pt.linalg.solve_triangular(a, b, lower=lower, trans=trans), mode="ONNX")
        got = solve(singular, np.ones((5, k)))
        assert np.isnan(got).all(), got


@pytest.mark.parametrize("transpose_b, negate_b", [(1, 0), (0, 1), (1, 1)])
def test_transposed_and_negated_right_hand_sides_are_scipys_bits(transpose_b, negate_b, rng):
    # What the folds give a triangular solve (fold_transposes_into_kernels.h):
    # b read transposed (LAPACK's column-major memory, read as it is) and/or
    # negated, as a node and as a stage, against SciPy on the solved b; a
    # stack of b against one matrix and a stack of both (batch broadcast).
    import scipy.linalg

    for lower, trans in [(1, 0), (0, 1)]:
        attrs = dict(lower=lower, trans=trans, b_ndim=2, transpose_b=transpose_b, negate_b=negate_b)
        node = _linalg_session("SolveTriangular_float64", 2, **attrs)
        stage = _linalg_session("Elemwise_float64", 2, linalg="SolveTriangular", input_dtypes="float64 float64", **attrs)
        for n, k, a_batch, b_batch in [(1, 1, (), ()), (7, 3, (), ()), (20, 20, (), ()), (9, 12, (), (2,)),
                                       (6, 5, (3,), (1,)), (5, 0, (), ())]:
            matrix = rng.normal(size=(*a_batch, n, n)) + n * np.eye(n)
            solved = rng.normal(size=(*b_batch, n, k))
            given = np.ascontiguousarray(np.swapaxes(solved, -1, -2)) if transpose_b else solved
            given = -given if negate_b else given
            batch = np.broadcast_shapes(a_batch, b_batch)
            want = np.empty((*batch, n, k))
            for idx in np.ndindex(*batch):
                a_idx = tuple(i if d > 1 else 0 for i, d in zip(idx[len(idx) - len(a_batch):], a_batch))
                b_idx = tuple(i if d > 1 else 0 for i, d in zip(idx[len(idx) - len(b_batch):], b_batch))
                want[idx] = scipy.linalg.solve_triangular(matrix[a_idx], solved[b_idx], lower=bool(lower), trans=trans)
            for session in (node, stage):
                got = session.run(None, {"a": matrix, "b": given})[0]
                assert got.shape == want.shape, (got.shape, want.shape)
                np.testing.assert_array_equal(got, want, err_msg=f"n={n}, k={k}, batches {a_batch}, {b_batch}")


@pytest.mark.parametrize(
    "op, attrs, message",
    [
        ("SolveTriangular_float64", dict(b_ndim=1, transpose_b=1), "transpose_b needs b_ndim 2"),
        ("CholeskySolve_float64", dict(b_ndim=2, negate_b=1), "are SolveTriangular's"),
    ],
)
def test_malformed_right_hand_side_attributes_fail_the_session(op, attrs, message):
    from onnx import TensorProto, helper

    from test_kernels import _kernel_session

    node = helper.make_node(op, ["a", "b"], ["x"], domain=kernels.DOMAIN, lower=1, **attrs)
    infos = [helper.make_tensor_value_info(n, TensorProto.DOUBLE, [3, 3]) for n in ("a", "b", "x")]
    with pytest.raises(Exception, match=message):
        _kernel_session([node], infos[:2], infos[2:])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batch_dims_broadcast_between_the_matrix_and_the_right_hand_side(dtype, rng):
    a = pt.tensor("a", dtype=dtype, shape=(None, 1, None, None))
    b = pt.tensor("b", dtype=dtype, shape=(None, None, None))
    outputs = [pt.linalg.solve(a, b, b_ndim=2), pt.linalg.solve_triangular(pt.tril(a) + 4 * pt.eye(4), b, lower=True, b_ndim=2)]
    values = [general(rng, 4, (2, 1), dtype), rng.normal(size=(3, 4, 2)).astype(dtype)]
    fn, (x, _) = compare_onnx_and_py([a, b], outputs, values, rtol=1e-4 if dtype == "float32" else 1e-12)
    assert {f"SolveTriangular_{dtype}", f"LUFactor_{dtype}"} <= set(kernel_types(fn))
    assert x.shape == (2, 3, 4, 2)


def linalg_stages(fn):
    """The factors and solves that Elemwise nodes run as stages (the core
    merges Cholesky, SolveTriangular, CholeskySolve and Solve kernel nodes
    into the Elemwise nodes beside them): each stage's attributes."""
    return [stage for n in fn.maker.linker.onnx_model.graph.node
            if n.domain == kernels.DOMAIN and n.op_type.startswith("Elemwise_")
            for stage in kernels.elemwise_stages(n) if "linalg" in stage]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_factors_and_solves_among_element_wise_work_are_stages_of_one_node(dtype, rng):
    # A Gaussian process's shape: element-wise work makes a kernel matrix,
    # LAPACK factors it and solves by it, element-wise work reads the
    # results. The factor and solve kernel nodes are stages of the Elemwise
    # nodes around them (ONNX Runtime pays per node and per value handed
    # between nodes), with the same LAPACK calls and so the same bits.
    import scipy.linalg

    x, y = pt.tensor("x", dtype=dtype, shape=(None,)), pt.tensor("y", dtype=dtype, shape=(None,))
    m = pt.tensor("m", dtype=dtype, shape=(None, None))  # several right-hand sides
    s = pt.tensor("s", dtype=dtype, shape=(None, None, None))  # a stack of matrices
    ls, noise = pt.scalar("ls", dtype=dtype), pt.scalar("noise", dtype=dtype)
    eye = pt.eye(x.shape[0], dtype=dtype)
    kernel = pt.exp(-0.5 * ((x[:, None] - x[None, :]) / ls) ** 2) + noise * eye
    factor = pt.linalg.cholesky(kernel)
    alpha = pt.linalg.solve_triangular(factor, y - 1.0, lower=True)
    outputs = [
        pt.log(pt.diagonal(factor)).sum() + 0.5 * (alpha**2).sum(),
        kernel, factor, alpha,
        pt.linalg.cho_solve((factor, True), m),
        pt.linalg.solve(kernel + 4.0 * eye, m * 3.0, assume_a="gen", b_ndim=2),
        # A stack of lower triangles, one right-hand side matrix for all (broadcast).
        pt.linalg.solve_triangular(s, m - 0.5, lower=True, b_ndim=2),
    ]
    inputs = [x, y, m, s, ls, noise]

    def values(n, k, batch=2):
        stack = rng.normal(size=(batch, n, n)) + 4 * np.eye(n)
        return [np.linspace(0, 5, n).astype(dtype), rng.normal(size=n).astype(dtype),
                rng.normal(size=(n, k)).astype(dtype), stack.astype(dtype), np.asarray(1.3, dtype),
                np.asarray(0.5, dtype)]

    a, b = pt.matrix("a"), pt.matrix("b")
    default_mode = pytensor.compile.mode.get_default_mode()
    default_factor = pytensor.function([a], pt.linalg.cholesky(a), mode=default_mode)
    default_solve = pytensor.function([a, b], pt.linalg.solve(a, b, assume_a="gen", b_ndim=2), mode=default_mode)
    not_positive = values(6, 2)
    not_positive[5] = np.asarray(-2.0, dtype)  # potrf fails: PyTensor's NaN factor
    nan = values(6, 2)
    nan[0][2] = np.nan  # NaN in the kernel matrix: potrf goes on, NaN spreads from there
    cases = [values(20, 3), values(1, 1, 1), values(64, 9, 3), not_positive, nan, values(0, 2)]  # (the last: empty)
    tolerance = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-12, atol=1e-13)
    for case in cases:
        # (The portable recipes make every element NaN when one is: where
        # OpenBLAS's LAPACK, PyTensor's, goes on past a NaN. The kernels are
        # LAPACK: only their path is compared there.)
        fn, results = compare_onnx_and_py(inputs, outputs, case, check_export=case is not nan, **tolerance)
        staged = {st["linalg"] for st in linalg_stages(fn)}
        if dtype == "float32":
            # (float32's y - 1.0 and m - 0.5 are ONNX's Sub, which the core merges
            # into kernel nodes in float64 only: the solves that read them stay nodes.)
            assert staged >= {"Cholesky", "CholeskySolve"}, staged
            continue
        kinds = {n.op_type.rsplit("_", 1)[0] for n in fn.maker.linker.onnx_model.graph.node}
        assert not kinds & {"Cholesky", "SolveTriangular", "CholeskySolve", "Solve", "LUFactor"}, kinds
        assert staged >= {"Cholesky", "SolveTriangular", "CholeskySolve"}, staged
        if case is nan or case is not_positive or not case[0].size:
            continue
        # On the same operands, the bits of PyTensor's default mode (the
        # factor and the general solve) and of SciPy (the triangular solves).
        got_kernel, got_factor, got_alpha, got_cho, got_solve, got_stack = results[1:]
        np.testing.assert_array_equal(got_factor, default_factor(got_kernel))
        np.testing.assert_array_equal(got_solve, default_solve(got_kernel + 4.0 * np.eye(len(case[0])), case[2] * 3.0))
        np.testing.assert_array_equal(got_alpha, scipy.linalg.solve_triangular(got_factor, case[1] - 1.0, lower=True))
        np.testing.assert_array_equal(got_cho, scipy.linalg.cho_solve((got_factor, True), case[2]))
        for k in range(case[3].shape[0]):
            np.testing.assert_array_equal(got_stack[k], scipy.linalg.solve_triangular(case[3][k], case[2] - 0.5, lower=True))
    failed = fn(*not_positive)
    assert np.isnan(failed[2]).all() and np.isnan(failed[3]).all() and np.isnan(failed[0])
    assert np.isnan(fn(*nan)[0])
    # Shapes that do not fit fail the run, naming them, as the nodes did.
    bad = values(5, 2)
    bad[2] = np.ones((4, 2), dtype)
    with pytest.raises(RuntimeError, match="b's rows must match a's size 5"):
        fn(*bad)


def _linalg_session(op, n_inputs, **attrs):
    # A hand-made node of one kernel: op "Elemwise_float64" with one
    # linear-algebra stage (attribute linalg), or the kernel's own node.
    from onnx import TensorProto, helper

    from helpers import kernel_session

    names = ["a", "b"][:n_inputs]
    node = helper.make_node(op, names, ["x"], domain=kernels.DOMAIN, **attrs)
    return kernel_session([node], [helper.make_tensor_value_info(n, TensorProto.DOUBLE, None) for n in names],
                          [helper.make_tensor_value_info("x", TensorProto.DOUBLE, None)])


def test_a_linear_algebra_stage_checks_its_attributes(rng):
    # A stage gives the bits of the kernel node of its kind (the same LAPACK calls).
    value, rhs = spd(rng, 6), rng.normal(size=(3, 6))
    solve_attrs = dict(lower=1, trans=1, b_ndim=2, transpose_b=1, negate_b=1)
    for kind, attrs, feeds in [("Cholesky", dict(lower=1), {"a": value}),
                               ("SolveTriangular", solve_attrs, {"a": np.linalg.cholesky(value), "b": rhs}),
                               ("CholeskySolve", dict(lower=0, b_ndim=2), {"a": np.linalg.cholesky(value).T, "b": rhs.T}),
                               ("Solve", dict(assume_a="gen", b_ndim=1), {"a": general(rng, 6), "b": rhs[0]})]:
        dtypes = " ".join(["float64"] * len(feeds))
        stage = _linalg_session("Elemwise_float64", len(feeds), linalg=kind, input_dtypes=dtypes, **attrs)
        node = _linalg_session(f"{kind}_float64", len(feeds), **attrs)
        got, want = stage.run(None, feeds)[0], node.run(None, feeds)[0]
        assert got.shape == want.shape and np.isfinite(want).all()
        np.testing.assert_array_equal(got, want, err_msg=kind)
    for attrs, message in [
        (dict(linalg="Eigh", input_dtypes="float64"), "a stage runs Cholesky, SolveTriangular, CholeskySolve or Solve"),
        (dict(linalg="Cholesky", input_dtypes="float64 float64"), "'input_dtypes' of a Cholesky stage must be 1"),
        (dict(linalg="Solve", assume_a="gen", input_dtypes="float64 float32"), "'input_dtypes' of a Solve stage"),
        (dict(linalg="CholeskySolve", b_ndim=2, negate_b=1, input_dtypes="float64 float64"), "are SolveTriangular's"),
        (dict(linalg="SolveTriangular", b_ndim=3, input_dtypes="float64 float64"), "b_ndim must be 1 or 2"),
    ]:
        with pytest.raises(Exception, match=message):
            _linalg_session("Elemwise_float64", len(attrs["input_dtypes"].split()), **attrs)


def test_kernels_off_give_the_recipes(rng):
    a = pt.matrix("a")
    out = pt.linalg.cholesky(a)
    off = pytensor.function([a], out, mode=pytensor_onnx.onnx_mode(kernels=False))
    assert not kernel_types(off) and "Loop" in {n.op_type for n in off.maker.linker.onnx_model.graph.node}
    value = spd(rng, 5)
    np.testing.assert_allclose(off(value), np.linalg.cholesky(value), rtol=1e-12)


def test_failures_give_pytensors_nan_and_errors():
    a, v = pt.matrix("a"), pt.vector("v")
    fn = pytensor.function([a, v], [pt.linalg.cholesky(a), pt.linalg.solve(a, v)], mode="ONNX")
    assert kernel_types(fn) == ["Cholesky_float64", "Solve_float64"]
    factor, x = fn(np.ones((3, 3)), np.ones(3))  # singular, not positive definite
    assert np.isnan(factor).all() and np.isnan(x).all()
    # Shapes that do not fit fail the run, the kernel naming them.
    with pytest.raises(RuntimeError, match=r"expected \(stacks of\) square matrices, got shape \(2, 3\)"):
        fn(np.ones((2, 3)), np.ones(2))
    with pytest.raises(RuntimeError, match="b's rows must match a's size 3"):
        fn(np.eye(3), np.ones(2))
    inverse = pytensor.function([a], pt.linalg.inv(a), mode="ONNX")
    assert kernel_types(inverse) == ["Check_float64", "MatrixInverse_float64"]
    with pytest.raises(RuntimeError, match="ONNX Runtime failed to run the model"):
        inverse(np.ones((3, 3)))  # numpy.linalg.inv raises LinAlgError


def test_empty_matrices(rng):
    a = pt.matrix("a")
    outputs = [pt.linalg.cholesky(a), pt.linalg.inv(a), pt.linalg.det(a), *SLogDet()(a), pt.linalg.solve(a, a)]
    fn, results = compare_onnx_and_py([a], outputs, [np.zeros((0, 0))])
    assert {"Cholesky_float64", "MatrixInverse_float64", "SLogDet_float64", "Solve_float64"} <= set(kernel_types(fn))
    assert results[2] == 1.0 and results[0].shape == (0, 0)


def test_empty_matrices_of_svd_are_numpys(rng):
    # (SciPy's qr itself fails on empty matrices: there is no reference.)
    a = pt.matrix("a")
    outputs = [*pt.linalg.svd(a), *pt.linalg.svd(a, full_matrices=False)]
    for shape in ((0, 3), (3, 0)):
        fn, results = compare_onnx_and_py([a], outputs, [np.zeros(shape)])
        assert "SVD_float64" in kernel_types(fn)
        np.testing.assert_array_equal(results[0 if shape[0] else 2], np.eye(3))  # NumPy's identity vectors


def test_without_lapack_a_kernel_fails_the_run_with_a_clear_error():
    # A process where nothing set the library's LAPACK routines (a service
    # that loads it without pytensor_onnx): the run fails, saying what is missing.
    code = textwrap.dedent(f"""
        import numpy as np, onnx, onnxruntime as ort
        from onnx import helper, TensorProto
        node = helper.make_node("Cholesky_float64", ["a"], ["l"], domain="{kernels.DOMAIN}", lower=1)
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", TensorProto.DOUBLE, [2, 2])],
                                  [helper.make_tensor_value_info("l", TensorProto.DOUBLE, [2, 2])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                        helper.make_opsetid("{kernels.DOMAIN}", 1)])
        options = ort.SessionOptions()
        options.register_custom_ops_library({kernels.library_path()!r})
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        try:
            session.run(None, {{"a": np.eye(2)}})
        except Exception as exc:
            print(exc)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "LAPACK routine dpotrf is not set" in done.stdout


def test_the_linalg_kernels_get_blas_trsm_with_their_lapack():
    # Triangular solves of several right-hand sides call BLAS's trsm: the
    # call that hands the library SciPy's LAPACK (before any session of a
    # linear-algebra kernel runs) hands it SciPy's BLAS too. A fresh process.
    code = textwrap.dedent("""
        from pytensor_onnx import kernels
        library = kernels._library()
        before = library.pytensor_onnx_kernels_missing_blas().decode().split()
        assert kernels.linalg_ops()
        print(" ".join(before), "|", library.pytensor_onnx_kernels_missing_blas().decode())
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    before, after = done.stdout.split("|")
    assert "dtrsm" in before.split() and after.strip() == "", done.stdout


def test_concurrent_calls_give_the_single_threaded_results(rng):
    from concurrent.futures import ThreadPoolExecutor

    a, b = pt.tensor3("a"), pt.tensor3("b")
    # (The last: a factor and solves as stages of an Elemwise node, on each
    # thread's own LAPACK workspace.)
    factor = pt.linalg.cholesky(a + 1.0)
    staged = pt.tanh(pt.linalg.solve_triangular(factor, pt.linalg.cho_solve((factor, True), b * 2.0), lower=True,
                                                b_ndim=2))
    fn = pytensor.function([a, b], [pt.linalg.cholesky(a), pt.linalg.det(a), pt.linalg.inv(a), staged], mode="ONNX")
    assert {s["linalg"] for s in linalg_stages(fn)} == {"Cholesky", "CholeskySolve", "SolveTriangular"}
    values = [(spd(rng, 12, (4,)), rng.normal(size=(4, 12, 3))) for _ in range(8)]
    expected = [fn(*value) for value in values]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda value: fn(*value), values))
    for a_result, b_result in zip(got, expected, strict=True):
        for x, y in zip(a_result, b_result, strict=True):
            np.testing.assert_array_equal(x, y)
