"""Solvers (``pytensor.tensor.linalg.solvers`` on 3.3; ``slinalg`` and
``nlinalg`` on 2.38): general, triangular and Cholesky solves, least squares.
"""

from __future__ import annotations

from pytensor_onnx.compat import linalg_op_class
from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.blockwise import batch_capable
from pytensor_onnx.dispatch.linalg.utils import same_sizes, solve_operands, tall
from pytensor_onnx.dispatch.linalg_kernel import factorization
from pytensor_onnx.dispatch.utils import output_dtype


SolveTriangular = linalg_op_class("SolveTriangular")
Solve = linalg_op_class("Solve")
CholeskySolve = linalg_op_class("CholeskySolve")
Lstsq = linalg_op_class("Lstsq")


@batch_capable(SolveTriangular)
@onnx_funcify.register(SolveTriangular)
def _solve_triangular(op, node, g, a, b):
    a, b = solve_operands(g, node, a, b, op.b_ndim, "solve_triangular")
    return factorization(
        g,
        "solve_triangular",
        a,
        b,
        lower=int(op.lower),
        trans=int(getattr(op, "trans", 0) in (1, "T", True)),
        unit_diagonal=int(op.unit_diagonal),
        b_ndim=op.b_ndim,
    )

@batch_capable(Solve)
@onnx_funcify.register(Solve)
def _solve(op, node, g, a, b):
    a, b = solve_operands(g, node, a, b, op.b_ndim, "solve", assume_a=op.assume_a)
    return factorization(g, "solve", a, b, assume_a=op.assume_a, lower=int(op.lower), b_ndim=op.b_ndim)

@batch_capable(CholeskySolve)
@onnx_funcify.register(CholeskySolve)
def _cholesky_solve(op, node, g, c, b):
    c, b = solve_operands(g, node, c, b, op.b_ndim, "cholesky_solve")
    return factorization(g, "cholesky_solve", c, b, lower=int(op.lower), b_ndim=op.b_ndim)

@onnx_funcify.register(Lstsq)
def _lstsq(op, node, g, a, b, rcond):
    if a.rank != 2 or b.rank != 2:
        raise NotImplementedError(f"{op}: ONNX conversion takes a matrix a and a matrix b (got ranks {a.rank}, {b.rank})")
    dtype = output_dtype(node)
    a, b = g.cast(a, dtype), g.cast(b, dtype)
    b = _same_rows(g, a, b, node)
    x, residuals, rank, s = g.recipe("lstsq", a, b, g.cast(rcond, dtype), tall=tall(a))
    return x, residuals, g.cast(rank, output_dtype(node, 2)), s

def _same_rows(g, a, b, node):
    return same_sizes(g, b, -2, a, -2, "b's rows must match a's", node)
