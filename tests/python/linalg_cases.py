"""Inputs and checks shared by the linear-algebra test modules (test_*linalg*.py)."""

import numpy as np
import pytensor.tensor as pt

from helpers import OPSETS
from pytensor_onnx.testing import compare_onnx_and_py

#: Leading batch dims the tests run every op with: none, one, two.
BATCH_SHAPES = [(), (2,), (2, 3)]

#: Opsets each op runs at: the oldest, the default and the newest.
LINALG_OPSETS = sorted({13, 18, OPSETS[-1]})

#: (rtol, atol) per dtype for factorizations and solves, whose results come
#: from different algorithms than LAPACK's (a pivot order, a Householder
#: sign); products have bounds of their own (test_linalg_products.py).
TOLERANCES = {"float64": (1e-10, 1e-12), "float32": (2e-4, 2e-5)}


def stack(name, dtype, batch, core, static=False):
    """A symbolic tensor of batch dims plus core dims (None unless ``static``)."""
    shape = (*batch, *core) if static else (None,) * (len(batch) + len(core))
    return pt.tensor(name, dtype=dtype, shape=shape)


def spd(rng, n, batch=(), dtype="float64"):
    """Well-conditioned symmetric positive definite matrices."""
    a = rng.normal(size=(*batch, n, n))
    return (a @ np.swapaxes(a, -1, -2) / max(n, 1) + np.eye(n)).astype(dtype)


def general(rng, n, batch=(), dtype="float64"):
    """Well-conditioned general matrices whose rows are shuffled, so that
    partial pivoting has to find each pivot away from the diagonal."""
    a = rng.normal(size=(*batch, n, n))
    a = a + 2 * np.sqrt(max(n, 1)) * np.eye(n) * rng.choice([-1, 1], size=(*batch, 1, n))
    return a[..., rng.permutation(n), :].astype(dtype)


def lower_triangular(rng, n, batch=(), dtype="float64"):
    a = np.tril(rng.normal(size=(*batch, n, n)) / np.sqrt(max(n, 1)))
    diag = rng.uniform(1, 2, size=(*batch, n)) * rng.choice([-1, 1], size=(*batch, n))
    idx = np.arange(n)
    a[..., idx, idx] = diag
    return a.astype(dtype)


def compare(inputs, outputs, values, dtype, opset=None, optimize=True, **kwargs):
    rtol, atol = TOLERANCES[dtype]
    kwargs.setdefault("rtol", rtol)
    kwargs.setdefault("atol", atol)
    return compare_onnx_and_py(inputs, outputs, values, opset_version=opset, optimize=optimize, **kwargs)
