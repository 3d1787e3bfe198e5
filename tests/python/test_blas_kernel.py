"""The kernel library's matrix product (src/kernels/matmul*.{h,cc}): mode ONNX
multiplies float64 matrices and vectors with BLAS, SciPy's, as PyTensor's
Numba backend does, instead of ONNX Runtime's MatMul (an Eigen path for
doubles); a Transpose feeding the product is read in place (the core's pass
fold_transposes_into_matmul_kernels).

Each graph is held to PyTensor's ``py`` linker on both paths (mode ONNX with
the kernel, and the exported portable model, which keeps ONNX's MatMul), and
its float64 results to PyTensor's default mode.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.blas import Dot22, Dot22Scalar, Gemm, Gemv

import pytensor_onnx
from pytensor_onnx import kernels
from pytensor_onnx.dispatch import linalg_kernel
from pytensor_onnx.testing import compare_onnx_and_py

from helpers import kernel_session

pytestmark = pytest.mark.skipif(
    kernels.unavailable_reason() is not None or not kernels.blas_ops(), reason="the kernel library's BLAS is not available"
)


def nodes(fn):
    return list(fn.maker.linker.onnx_model.graph.node)


def kernel_nodes(fn):
    return [n for n in nodes(fn) if n.domain == kernels.DOMAIN and n.op_type.startswith("MatMul_")]


def products(fn):
    """Every matrix product the kernels compute: MatMul kernel nodes, and the
    matrix product stages of Elemwise nodes (the core merges a MatMul kernel
    node into an Elemwise one beside it, src/core/passes/merge_kernel_stages.h),
    each as (trans_a, trans_b, [its operands: node input names, or None for
    an earlier stage's output])."""
    found = []
    for n in nodes(fn):
        if n.domain == kernels.DOMAIN and n.op_type.startswith("MatMul_"):
            flags = attributes(n)
            found.append((flags.get("trans_a", 0), flags.get("trans_b", 0), list(n.input)))
        elif n.domain == kernels.DOMAIN and n.op_type.startswith("Elemwise_"):
            for stage in kernels.elemwise_stages(n):
                if "matmul" in stage:
                    found.append((*stage["matmul"], [n.input[k] if k >= 0 else None for k in stage["sources"]]))
    return found


def transposes_read_by_kernels(fn):
    """The kernel operands that a Transpose node produces (the pass reads past those)."""
    transposed = {o for n in nodes(fn) if n.op_type == "Transpose" for o in n.output}
    return [i for n in kernel_nodes(fn) for i in n.input if i in transposed]


def attributes(node):
    return {a.name: a.i for a in node.attribute}


def default_mode_results(inputs, outputs, values):
    default = pytensor.function(inputs, outputs, mode=pytensor.compile.mode.get_default_mode(), on_unused_input="ignore")
    return default(*values)


def assert_exported_model_is_portable(inputs, outputs):
    exported = pytensor_onnx.export_onnx(inputs, outputs)
    assert all(n.domain != kernels.DOMAIN for n in exported.graph.node)


def tensor(name, ndim, dtype="float64"):
    return pt.tensor(name, dtype=dtype, shape=(None,) * ndim)


# (a's stored shape, b's stored shape, read a transposed, read b transposed):
# op(a) is m x k, op(b) k x n, a vector's missing dim dropped.
PRODUCTS = [
    ((3, 4), (4, 5), False, False),
    ((4,), (4, 5), False, False),
    ((3, 4), (4,), False, False),
    ((4,), (4,), False, False),
    ((4, 3), (4, 5), True, False),
    ((3, 4), (5, 4), False, True),
    ((4, 3), (5, 4), True, True),
    ((4, 3), (4,), True, False),
    ((4,), (5, 4), False, True),
    ((1, 4), (4, 1), False, False),  # 1 x 1: BLAS's dot
    ((3, 1), (1, 5), False, False),  # k = 1
    ((1, 4), (4, 5), False, False),  # one row: gemv
    ((3, 4), (4, 1), False, False),  # one column: gemv
    ((4, 1), (4, 5), True, False),
    ((3, 0), (0, 5), False, False),  # k = 0: zeros
    ((0, 3), (0, 5), True, False),
    ((0,), (0,), False, False),
    ((3, 0), (0,), False, False),
    ((0, 4), (4, 5), False, False),  # m = 0: empty
    ((3, 4), (4, 0), False, False),  # n = 0: empty
    ((0, 4), (4, 0), False, False),
]


def _product_id(case):
    a, b, ta, tb = case
    return f"{a}{'T' if ta else ''}@{b}{'T' if tb else ''}".replace(" ", "")


@pytest.mark.parametrize("case", PRODUCTS, ids=[_product_id(c) for c in PRODUCTS])
def test_every_product_shape_runs_on_the_kernel_and_equals_the_default_mode(case, rng):
    a_shape, b_shape, trans_a, trans_b = case
    a, b = tensor("a", len(a_shape)), tensor("b", len(b_shape))
    out = pt.dot(a.T if trans_a else a, b.T if trans_b else b)
    values = [rng.normal(size=a_shape), rng.normal(size=b_shape)]
    # Sums of products of normals can be near 0, known only to ~1e-16 of
    # their terms: NumPy's OpenBLAS (the py linker) is another build than SciPy's.
    fn, (result,) = compare_onnx_and_py([a, b], [out], values, rtol=1e-13, atol=1e-14)
    (kernel,) = kernel_nodes(fn)
    assert kernel.op_type == "MatMul_float64"
    # The Transpose is read in place: no node copies the operand.
    assert not transposes_read_by_kernels(fn)
    flags = attributes(kernel)
    assert (flags.get("trans_a", 0), flags.get("trans_b", 0)) == (int(trans_a), int(trans_b))
    want = np.matmul(values[0].T if trans_a else values[0], values[1].T if trans_b else values[1])
    assert result.shape == want.shape
    if 0 in a_shape or 0 in b_shape:
        np.testing.assert_array_equal(result, want)  # zeros, or empty
    # The very BLAS routine PyTensor's default mode (Numba) calls, on the same data.
    (expected,) = default_mode_results([a, b], [out], values)
    np.testing.assert_array_equal(result, expected)
    assert_exported_model_is_portable([a, b], [out])


def test_size_one_dims_broadcast_and_batched_stacks(rng):
    # pt.matmul of stacks (Blockwise(Dot)): leading dims broadcast, a loop of BLAS calls.
    a, b, v = pt.tensor("a", shape=(None, 1, None, None)), tensor("b", 3), tensor("v", 1)
    outputs = [pt.matmul(a, b), pt.matmul(a, v), pt.matmul(v, b)]
    # b's batch (5,) against a's (2, 1): the products' batch is (2, 5).
    values = [rng.normal(size=(2, 1, 3, 4)), rng.normal(size=(5, 4, 2)), rng.normal(size=4)]
    fn, results = compare_onnx_and_py([a, b, v], outputs, values, rtol=1e-13, atol=1e-14)
    assert [r.shape for r in results] == [(2, 5, 3, 2), (2, 1, 3), (5, 2)]
    assert len(kernel_nodes(fn)) == 3


def test_non_contiguous_and_broadcast_inputs(rng):
    a, b = tensor("a", 2), tensor("b", 2)
    out = pt.dot(a, b)
    big = rng.normal(size=(12, 15))
    strided = big[::2, ::3]  # (6, 5), neither C- nor F-contiguous
    broadcast = np.broadcast_to(rng.normal(size=(1, 4)), (5, 4))  # zero strides
    fortran = np.asfortranarray(rng.normal(size=(6, 5)))
    for left, right in ((strided, broadcast), (fortran, broadcast), (strided.T.copy().T, np.ascontiguousarray(broadcast))):
        fn, (result,) = compare_onnx_and_py([a, b], [out], [left, right], rtol=1e-13, atol=1e-14)
        assert kernel_nodes(fn)
        np.testing.assert_array_equal(result, default_mode_results([a, b], [out], [left, right])[0])


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # NumPy's, in the py linker
def test_nan_and_inf_propagate_as_in_numpy(rng):
    a, b, v = tensor("a", 2), tensor("b", 2), tensor("v", 1)
    a_value = rng.normal(size=(4, 3))
    a_value[1, 2] = np.nan
    a_value[2, 0] = np.inf
    a_value[3, 1] = -np.inf
    b_value = rng.normal(size=(3, 5))
    b_value[0, 3] = 0.0  # inf * 0 is NaN
    v_value = np.array([1.0, np.nan, 2.0])
    fn, results = compare_onnx_and_py([a, b, v], [pt.dot(a, b), pt.dot(a, v), pt.dot(v, b)],
                                      [a_value, b_value, v_value], rtol=1e-13, atol=1e-14)
    assert len(kernel_nodes(fn)) == 3
    assert np.isnan(results[0][1]).all() and np.isnan(results[0][2, 3])
    assert np.isinf(results[0][2, :3]).all()
    assert np.isnan(results[1]).all() and np.isnan(results[2]).all()


@pytest.mark.parametrize("beta", [0.0, 1.0, -0.5])
def test_gemm_and_gemv_keep_their_alpha_beta_semantics(beta, rng):
    # PyTensor's Gemm and Gemv do not read the accumulator where beta is 0
    # (dispatch/blas.py); x_t and A_t are read transposed by the kernel.
    z, x, x_t, y = tensor("z", 2), tensor("x", 2), tensor("x_t", 2), tensor("y", 2)
    acc, A, A_t, vec = tensor("acc", 1), tensor("A", 2), tensor("A_t", 2), tensor("vec", 1)
    alpha, b = pt.dscalar("alpha"), pt.dscalar("b")
    gemm, gemv = Gemm(inplace=False), Gemv(inplace=False)
    outputs = [
        gemm(z, alpha, x, y, b),
        gemm(z, alpha, x_t.T, y, pt.constant(beta, dtype="float64")),
        gemv(acc, alpha, A, vec, b),
        gemv(acc, alpha, A_t.T, vec, pt.constant(beta, dtype="float64")),
        Dot22()(x_t.T, y),
        Dot22Scalar()(x_t.T, y, alpha),
    ]
    z_value = rng.normal(size=(3, 2))
    z_value[0, 0] = np.nan
    acc_value = rng.normal(size=3)
    acc_value[1] = np.inf
    x_value, A_value = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    inputs = [z, x, x_t, y, acc, A, A_t, vec, alpha, b]
    values = [z_value, x_value, x_value.T.copy(), rng.normal(size=(4, 2)), acc_value, A_value, A_value.T.copy(),
              rng.normal(size=4), np.asarray(-1.5), np.asarray(beta)]
    fn, results = compare_onnx_and_py(inputs, outputs, values, optimize=False, rtol=1e-13, atol=1e-14)
    # Every product on the kernel (identical ones merged by the core's CSE).
    assert products(fn) and not {n.op_type for n in nodes(fn)} & {"MatMul", "Gemm", "Einsum"}
    assert not transposes_read_by_kernels(fn)
    assert np.isnan(results[0][0, 0]) == (beta != 0)
    assert np.isnan(results[1][0, 0]) == (beta != 0)
    assert np.isfinite(results[2][1]) == (beta == 0)
    assert np.isfinite(results[3][1]) == (beta == 0)
    # A transposed operand and a constant beta give what a plain one and a run-time beta give.
    np.testing.assert_allclose(results[1], results[0], rtol=1e-14)
    np.testing.assert_allclose(results[3], results[2], rtol=1e-14)


def test_float32_stays_on_onnx_runtime_and_its_kernel_is_right(rng, monkeypatch):
    a, b, v = tensor("a", 2, "float32"), tensor("b", 2, "float32"), tensor("v", 1, "float32")
    outputs = [pt.dot(a, b), pt.dot(a.T, v), pt.dot(v, v)]
    values = [rng.normal(size=(5, 4)).astype("float32"), rng.normal(size=(4, 3)).astype("float32"),
              rng.normal(size=5).astype("float32")]
    fn, _ = compare_onnx_and_py([a, b, v], outputs, values)
    assert not kernel_nodes(fn)  # ONNX Runtime's MLAS SGEMM is as fast as OpenBLAS (bench/results.md)
    # The float32 op of the library is registered all the same: it computes the same products.
    monkeypatch.setattr(linalg_kernel, "PRODUCT_DTYPES", frozenset({"float32", "float64"}))
    fn, results = compare_onnx_and_py([a, b, v], outputs, values)
    assert [n.op_type for n in kernel_nodes(fn)] == ["MatMul_float32"] * 3
    for got, want in zip(results, default_mode_results([a, b, v], outputs, values), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_shapes_that_do_not_fit_fail_the_run_naming_them():
    a, b, v = tensor("a", 2), tensor("b", 2), tensor("v", 1)
    fn = pytensor.function([a, b], pt.dot(a, b), mode="ONNX")
    assert kernel_nodes(fn)
    with pytest.raises(RuntimeError, match=r"operands of shapes \(3, 4\) and \(5, 2\): inner dims 4 and 5 differ"):
        fn(np.ones((3, 4)), np.ones((5, 2)))
    transposed = pytensor.function([a, v], pt.dot(a.T, v), mode="ONNX")
    with pytest.raises(RuntimeError, match=r"\(3, 4\) \(transposed\) and \(4,( 1)?\): inner dims 3 and 4 differ"):
        transposed(np.ones((3, 4)), np.ones(4))
    vectors = pytensor.function([v], pt.dot(v, v[1:]), mode="ONNX")
    with pytest.raises(RuntimeError, match="inner dims 3 and 2 differ"):
        vectors(np.ones(3))
    # The function still runs afterwards.
    np.testing.assert_array_equal(fn(np.ones((3, 4)), np.ones((4, 2))), np.full((3, 2), 4.0))


def test_a_shared_matrix_is_read_itself_with_trans_a(rng):
    # The logistic regression's gradient: X.T @ v with X a shared variable.
    X = pytensor.shared(rng.normal(size=(200, 20)), name="X")
    v, w = tensor("v", 1), tensor("w", 1)
    outputs = [pt.dot(X, w), pt.dot(X.T, v)]
    values = [rng.normal(size=200), rng.normal(size=20)]
    fn, results = compare_onnx_and_py([v, w], outputs, values, rtol=1e-13, atol=1e-14)
    model = fn.maker.linker.onnx_model
    assert "Transpose" not in {n.op_type for n in model.graph.node}
    # No transposed copy of X among the initializers.
    assert all(tuple(i.dims) != (20, 200) for i in model.graph.initializer)
    transposed = [n for n in kernel_nodes(fn) if attributes(n).get("trans_a") == 1]
    assert len(transposed) == 1
    reads = transposed[0].input[0]
    other = [n for n in kernel_nodes(fn) if n is not transposed[0]][0]
    assert reads == other.input[0]  # both products read the same X
    for got, want in zip(results, default_mode_results([v, w], outputs, values), strict=True):
        np.testing.assert_array_equal(got, want)


def test_a_vector_made_a_matrix_is_multiplied_as_the_vector(rng):
    # PyTensor writes X @ w as (X @ w[:, None])[:, 0] and v @ X as
    # (v[None, :] @ X)[0]: the kernel multiplies by the vector itself (the
    # core's fold_vector_axes_into_matmul_kernels), no Unsqueeze or Squeeze,
    # with the bits of SciPy's gemv, the routine the kernel calls for a
    # matrix and a vector (or a matrix of one column) either way.
    # (v longer than 256 elements: not packed with w into one input of the
    # model, pack_small_arrays.h, so the products name the vectors they read.)
    X = pt.tensor("X", dtype="float64", shape=(300, 20))
    w, v = pt.tensor("w", dtype="float64", shape=(20,)), pt.tensor("v", dtype="float64", shape=(300,))
    # (Doubled, which is exact: a product that is itself an output keeps its
    # Squeeze, whose name the output has.)
    outputs = [pt.dot(X, w) * 2, pt.dot(v, X) * 2, pt.dot(X.T, v) * 2, pt.dot(X, w / 2)]
    values = [rng.normal(size=(300, 20)), rng.normal(size=20), rng.normal(size=300)]
    fn, results = compare_onnx_and_py([X, w, v], outputs, values, rtol=1e-13, atol=1e-14)
    kinds = [n.op_type for n in nodes(fn)]
    # (The products and the doublings are stages of one Elemwise node, and so
    # are w / 2, ONNX's Div, and its Unsqueeze and Squeeze: reshape stages,
    # src/core/passes/merge_kernel_stages.h.)
    assert not {"Squeeze", "Unsqueeze", "Transpose", "MatMul"} & set(kinds), kinds
    found = products(fn)
    assert len(found) == 4, found
    # The first three read the vectors themselves (X.T @ v as X read transposed).
    reads = sorted((trans_a, trans_b, tuple(operands)) for trans_a, trans_b, operands in found if None not in operands)
    assert reads == [(0, 0, ("X", "w")), (0, 0, ("v", "X")), (1, 0, ("X", "v"))], found
    from scipy.linalg import blas

    x, wv, vv = values
    # (The kernel reads row-major X as column-major X.T: x.T here, no copy.)
    gemv = [blas.dgemv(1.0, x.T, wv, trans=1), blas.dgemv(1.0, x.T, vv), blas.dgemv(1.0, x.T, vv)]
    for got, product in zip(results, gemv, strict=False):
        np.testing.assert_array_equal(got, product * 2)
    np.testing.assert_array_equal(results[3], blas.dgemv(1.0, x.T, wv / 2, trans=1))


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # NumPy's, in the py linker
def test_products_among_element_wise_work_are_stages_of_one_node(rng):
    # A regression's log-density and gradient: X @ beta feeds element-wise
    # work, whose residuals X.T @ r feeds more. The MatMul kernel nodes are
    # stages of the Elemwise nodes around them (ONNX Runtime pays per node and
    # per value it hands between nodes), with the same BLAS calls and bits.
    X, beta, y = tensor("X", 2), tensor("beta", 1), tensor("y", 1)
    A, B = tensor("A", 2), tensor("B", 2)
    eta = pt.dot(X, beta) + 0.5
    r = y - pt.sigmoid(eta)
    outputs = [
        (y * eta - pt.softplus(eta)).sum(),
        pt.dot(X.T, r) - beta,                       # X read transposed
        pt.exp(pt.dot(r, r)) * 0.5,                  # a dot of vectors: 0-d
        pt.tanh(pt.dot(pt.exp(A), B) + 1.0),         # matrices, between programs
    ]
    cases = [
        [rng.normal(size=(40, 3)), rng.normal(size=3), rng.normal(size=40), rng.normal(size=(3, 4)),
         rng.normal(size=(4, 5))],
        [np.full((6, 3), np.nan), rng.normal(size=3), rng.normal(size=6), np.full((2, 3), 800.0),
         np.zeros((3, 2))],                                                        # NaN, and inf * 0
        [np.zeros((0, 3)), rng.normal(size=3), np.zeros(0), np.zeros((3, 0)), np.zeros((0, 4))],  # empty, k = 0
        [rng.normal(size=(3000, 3)), rng.normal(size=3), rng.normal(size=3000), rng.normal(size=(200, 300)),
         rng.normal(size=(300, 100))],                                             # BLAS's threads
    ]
    inputs = [X, beta, y, A, B]
    for values in cases:
        # (atol: the exported model's products are ONNX Runtime's MatMul, whose
        # sums of 300 terms round otherwise, ~1e-14 off near 0.)
        fn, results = compare_onnx_and_py(inputs, outputs, values, rtol=1e-13, atol=1e-12)
        kinds = [n.op_type for n in nodes(fn)]
        assert "MatMul_float64" not in kinds and "MatMul" not in kinds, kinds
        assert len(products(fn)) == 4
        assert [(a, b) for a, b, _ in products(fn)].count((1, 0)) == 1  # X.T, no Transpose node
        for got, want in zip(results, default_mode_results(inputs, outputs, values), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    # Shapes that do not fit fail the run, naming them, as the node did.
    with pytest.raises(RuntimeError, match=r"operands of shapes \(4, 3\) and \(2,\): inner dims 3 and 2 differ"):
        fn(np.ones((4, 3)), np.ones(2), np.ones(4), *cases[0][3:])


def _matmul_stage_session(**attrs):
    # A hand-made Elemwise node of one matrix product stage (attribute matmul).
    from onnx import TensorProto, helper

    node = helper.make_node("Elemwise_float64", ["a", "b"], ["c"], domain=kernels.DOMAIN, **attrs)
    return kernel_session([node], [helper.make_tensor_value_info(n, TensorProto.DOUBLE, None) for n in "ab"],
                          [helper.make_tensor_value_info("c", TensorProto.DOUBLE, None)])


def test_a_matrix_product_stage_checks_its_attributes(rng):
    session = _matmul_stage_session(matmul=[1, 0], input_dtypes="float64 float64")
    a, b = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    np.testing.assert_array_equal(session.run(None, {"a": a, "b": b})[0], blas_dgemm(a.T, b))
    for attrs, message in [
        (dict(matmul=[2, 0], input_dtypes="float64 float64"), "'matmul' must be trans_a and trans_b, each 0 or 1"),
        (dict(matmul=[0], input_dtypes="float64 float64"), "'matmul' must be trans_a and trans_b"),
        (dict(matmul=[0, 0], input_dtypes="float64 float32"), "'input_dtypes' of a matrix product must be"),
        (dict(matmul=[0, 0], input_dtypes="float64"), "'input_dtypes' of a matrix product must be"),
    ]:
        with pytest.raises(Exception, match=message):
            _matmul_stage_session(**attrs)


def blas_dgemm(a, b):
    """a @ b by SciPy's dgemm, the routine the kernel calls for matrices."""
    from scipy.linalg import blas

    return blas.dgemm(1.0, a, b)


def test_kernels_off_keep_onnx_matmul(rng):
    a, b = tensor("a", 2), tensor("b", 2)
    off = pytensor.function([a, b], pt.dot(a.T, b), mode=pytensor_onnx.onnx_mode(kernels=False))
    assert not kernel_nodes(off)
    assert {n.op_type for n in nodes(off)} & {"MatMul", "Gemm", "Einsum"}
    x, y = rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    np.testing.assert_allclose(off(x, y), x.T @ y, rtol=1e-13)


def test_without_blas_the_kernel_fails_the_run_with_a_clear_error():
    # A process where nothing set the library's BLAS routines (a service that
    # loads it without pytensor_onnx): the run fails, saying what is missing.
    code = textwrap.dedent(f"""
        import numpy as np, onnx, onnxruntime as ort
        from onnx import helper, TensorProto
        node = helper.make_node("MatMul_float64", ["a", "b"], ["c"], domain="{kernels.DOMAIN}", trans_a=1)
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", TensorProto.DOUBLE, [3, 2]),
                                                helper.make_tensor_value_info("b", TensorProto.DOUBLE, [3, 4])],
                                  [helper.make_tensor_value_info("c", TensorProto.DOUBLE, [2, 4])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                        helper.make_opsetid("{kernels.DOMAIN}", 1)])
        options = ort.SessionOptions()
        options.register_custom_ops_library({kernels.library_path()!r})
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        try:
            session.run(None, {{"a": np.ones((3, 2)), "b": np.ones((3, 4))}})
        except Exception as exc:
            print(exc)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "BLAS routine dgemm is not set" in done.stdout


def test_concurrent_calls_give_the_single_threaded_results(rng):
    from concurrent.futures import ThreadPoolExecutor

    a, b = tensor("a", 2), tensor("b", 2)
    fn = pytensor.function([a, b], [pt.dot(a, b), pt.dot(a.T, a[:, 0])], mode="ONNX")
    assert len(kernel_nodes(fn)) == 2
    values = [(rng.normal(size=(300, 40)), rng.normal(size=(40, 300))) for _ in range(8)]
    expected = [fn(*value) for value in values]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda value: fn(*value), values))
    for a_result, b_result in zip(got, expected, strict=True):
        for x, y in zip(a_result, b_result, strict=True):
            np.testing.assert_array_equal(x, y)
