"""Linear algebra (dispatch/linalg/, blockwise.py): matrices
and stacks of matrices built from the operand into well-conditioned
symmetric positive definite ones, then factorised, solved, inverted."""

from __future__ import annotations

import pytensor.tensor as pt
from hypothesis import strategies as st

from pytensor_onnx.compat import EIGH_TAKES_BATCHES

from fuzz.registry import OpGenerator, register


def _spd(x):
    """``t t^T + (k + 1) I`` with ``t = tanh(x)`` (``x``: ``(..., m, k)``):
    eigenvalues in ``[k + 1, 2k + 1]``, so the condition number is below 2 and
    every implementation agrees to a few ulps."""
    t = pt.tanh(pt.switch(pt.isnan(x), 0, x).astype(x.dtype))
    m, k = t.shape[-2], t.shape[-1]
    eye = pt.eye(m, dtype=x.dtype)
    return pt.matmul(t, pt.swapaxes(t, -1, -2)) + pt.cast(k + 1, x.dtype) * eye, t


def _chol(a):
    return pt.linalg.cholesky(a, lower=True)


#: name -> (function of (spd matrix, its factor t), result rank minus operand rank)
OPS = {
    "cholesky": (lambda a, t: _chol(a), 0),
    "solve": (lambda a, t: pt.linalg.solve(a, t, assume_a="pos") if a.ndim == 2 else pt.linalg.solve(a, t), 0),
    "solve_triangular": (lambda a, t: pt.linalg.solve_triangular(_chol(a), t, lower=True), 0),
    "cho_solve": (lambda a, t: pt.linalg.cho_solve((_chol(a), True), t), 0),
    "inv": (lambda a, t: pt.linalg.inv(a), 0),
    "det": (lambda a, t: pt.linalg.det(a), -2),
    "logdet": (lambda a, t: pt.linalg.slogdet(a)[1], -2),
    "eigvalsh": (lambda a, t: pt.linalg.eigh(a)[0], -1),
}


@register
class SymmetricPositiveDefinite(OpGenerator):
    name = "linalg.spd"
    exact = False
    weight = 4.0  # eight operations

    def accepts(self, meta):
        # A vector is taken as one row (m = 1). m >= 1: SciPy raises on empty
        # matrices where the recipes return empty results.
        # No empty batch either: PyTensor 2.38's Blockwise refuses it.
        return meta.kind == "f" and (meta.ndim == 1 or (meta.ndim in (2, 3) and min(meta.shape[:-1]) >= 1))

    def draw(self, ctx, x):
        ops = sorted(OPS) if x.ndim < 3 or EIGH_TAKES_BATCHES else sorted(set(OPS) - {"eigvalsh"})
        return {"op": ctx.draw(st.sampled_from(ops))}

    def build(self, params, x):
        if x.ndim == 1:
            x = x[None, :]
        a, t = _spd(x)
        return OPS[params["op"]][0](a, t)

    def shape(self, params, x):
        x = (1, *x) if len(x) == 1 else tuple(x)
        m, k = x[-2], x[-1]
        op = params["op"]
        core = {"det": (), "logdet": (), "eigvalsh": (m,), "cholesky": (m, m), "inv": (m, m)}.get(op, (m, k))
        return (*x[:-2], *core)


@register
class SymmetricPositiveDefiniteInput(SymmetricPositiveDefinite):
    """The same, from a new float input of matrix or batched-matrix shape
    (graphs rarely grow such operands on their own)."""

    name = "linalg.spd_input"
    source = True
    weight = 2.0

    def draw(self, ctx):
        shape = (ctx.draw(st.integers(1, 4)), ctx.draw(st.integers(0, 3)))
        if ctx.draw(st.booleans()):
            shape = (ctx.draw(st.integers(1, 2)), *shape)
        x = ctx.new_input(ctx.draw(st.sampled_from(["float64", "float32"])), shape)
        return super().draw(ctx, x)
