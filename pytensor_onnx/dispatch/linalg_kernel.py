"""Matrix factorizations and solves as nodes of the kernel library, which call
LAPACK (``src/kernels/linalg_kernel.h``), in place of the core's standard-ONNX
recipes (``src/core/recipes/linalg*.cc``); and float64 matrix products, which
call BLAS (``src/kernels/matmul_kernel.h``), in place of ONNX's MatMul
(``matmul``).

A kernel takes the inputs, attributes and outputs of the recipe of the same
job, so a rule asks for the job once (``factorization``) and gets the kernel
node in mode ONNX and the recipe in exported files (or with the kernels off).
The kernels compute what PyTensor's own backends compute, with the same
LAPACK: a recipe is a chain of n dependent column steps, and ONNX Runtime pays
for each.
"""

from __future__ import annotations

from pytensor_onnx import kernels
from pytensor_onnx.dispatch.basic import kernels_enabled

#: The core's recipes the kernels replace, by kernel name.
_KERNELS = {
    "cholesky": "Cholesky",
    "solve_triangular": "SolveTriangular",
    "cholesky_solve": "CholeskySolve",
    "solve": "Solve",
    "lu_factor": "LUFactor",
    "pivot_to_permutation": "PivotToPermutations",
    "matrix_inverse": "MatrixInverse",
    "det": "Det",
    "slogdet": "SLogDet",
    "eigh": "Eigh",
    "qr": "QR",
    "svd": "SVD",
}
_OUTPUTS = {"LUFactor": 4, "MatrixInverse": 2, "SLogDet": 2, "Eigh": 2, "QR": 4, "SVD": 3}
#: The operand dtypes of kernels that do not take float32 and float64 matrices.
_DTYPES = {"PivotToPermutations": ("int64",)}
#: Solve's matrix structures the kernel factors (getrf, sytrf, potrf); the
#: tridiagonal and banded ones stay recipes.
_SOLVE_STRUCTURES = {"gen", "sym", "her", "pos"}


def has_kernel(recipe: str, dtype: str, n_inputs: int = 1, **attrs) -> bool:
    """Whether ``factorization`` gives ``recipe`` on ``dtype`` operands to a kernel.
    A kernel checks its operands' shapes itself (square matrices, matching
    rows, batch dims that broadcast) and fails the run naming them, so a rule
    adds no run-time shape checks of its own in front of one."""
    kernel = _KERNELS.get(recipe)
    if kernel is None or not kernels_enabled() or kernel not in kernels.linalg_ops():
        return False
    if dtype not in _DTYPES.get(kernel, ("float32", "float64")):
        return False
    if recipe == "solve" and attrs.get("assume_a", "gen") not in _SOLVE_STRUCTURES:
        return False
    return not (recipe == "eigh" and n_inputs != 1)  # the generalized problem (sygvd) has no kernel


def factorization(g, recipe: str, *inputs, kernel_attrs=None, **attrs):
    """The outputs of ``g.recipe(recipe, *inputs, **attrs)``: one LAPACK kernel
    node when mode ONNX may use the kernels and one does the job, else the
    recipe. ``kernel_attrs`` are the kernel's own (Eigh's LAPACK driver)."""
    dtype = inputs[0].dtype
    if any(v.dtype != dtype for v in inputs) or not has_kernel(recipe, dtype, len(inputs), **attrs):
        return g.recipe(recipe, *inputs, **attrs)
    g.require_domain(kernels.DOMAIN, kernels.DOMAIN_VERSION)
    kernel = _KERNELS[recipe]
    if kernel == "SVD" and not attrs.get("compute_uv", 1):
        kernel = "SVDValues"  # the singular values only (gesdd's jobz "N")
    return g.op(
        f"{kernel}_{dtype}", *inputs, domain=kernels.DOMAIN, outputs=_OUTPUTS.get(kernel, 1), **attrs,
        **(kernel_attrs or {}),
    )


#: The dtypes whose products mode ONNX runs on the BLAS kernel. float64:
#: ONNX Runtime multiplies doubles on an Eigen path; on the logistic
#: regression's 10000 x 20 matrix X, X @ w took 71 us there and 41 us on the
#: kernel, X.T @ v (ONNX Runtime's Gemm with transA) 154 us and 31 us.
#: float32 stays on ONNX Runtime's MLAS SGEMM: on the MLP's products with its
#: weights as initializers (which ONNX Runtime pre-packs) the kernel was no
#: faster, 0.67 against 0.63 ms on 1024x256 @ 256x256 (bench/results.md,
#: fifth step).
PRODUCT_DTYPES = frozenset({"float64"})


def matmul(g, a, b):
    """``a @ b``: ONNX's ``MatMul`` (NumPy's matmul: vectors, stacks that broadcast),
    or in mode ONNX, for ``PRODUCT_DTYPES``, the kernel library's ``MatMul_<dtype>``
    node, which computes it with SciPy's BLAS (gemm, gemv or dot). The core's pass
    ``fold_transposes_into_matmul_kernels`` then lets the node read a transposed
    operand in place. The kernel checks the operands' shapes itself and fails the
    run naming them."""
    if (
        a.dtype == b.dtype
        and a.dtype in PRODUCT_DTYPES
        and a.rank is not None
        and b.rank is not None
        and min(a.rank, b.rank) >= 1
        and kernels_enabled()
        and "MatMul" in kernels.blas_ops()
    ):
        g.require_domain(kernels.DOMAIN, kernels.DOMAIN_VERSION)
        return g.op(f"MatMul_{a.dtype}", a, b, domain=kernels.DOMAIN)
    return g.op("MatMul", a, b)
