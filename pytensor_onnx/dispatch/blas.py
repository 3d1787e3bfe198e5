"""Rules for pytensor.tensor.blas: the BLAS ops PyTensor's C-mode rewrites
introduce (Dot22, Dot22Scalar, Gemm, Gemv, Ger, BatchedDot), so functions
compiled in FAST_RUN export.

BLAS semantics that NumPy arithmetic would not give: where ``beta`` is 0 the
accumulator (``z`` of Gemm, ``y`` of Gemv) is not read at all, so a NaN or
inf in it does not reach the result (PyTensor relies on this to skip
initializing outputs).
"""

from __future__ import annotations

import numpy as np
from pytensor.tensor.blas import BatchedDot, Dot22, Dot22Scalar, Gemm, Gemv

from pytensor.tensor.math import Dot

from pytensor_onnx.compat import Ger
from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.blockwise import batch_capable
from pytensor_onnx.dispatch.linalg_kernel import matmul
from pytensor_onnx.dispatch.utils import output_dtype

# Dot's rule (math.py) emits MatMul (or the BLAS kernel, which computes the
# same), which broadcasts leading batch dims as Blockwise(Dot) (pt.matmul on
# stacks) needs. Every product here goes through linalg_kernel.matmul: float64
# runs on SciPy's BLAS in mode ONNX.
batch_capable(Dot)


def _scale(g, alpha, value):
    """``alpha * value``, skipping the product where ``alpha`` is the constant 1."""
    alpha = g.cast(alpha, value.dtype)
    constant = alpha.constant_value
    if constant is not None and constant.size == 1 and float(constant.reshape(())) == 1.0:
        return value
    return g.op("Mul", alpha, value)


def _accumulate(g, beta, acc, product):
    """``beta * acc + product``, where ``acc`` is not read when ``beta == 0``."""
    beta = g.cast(beta, product.dtype)
    constant = beta.constant_value
    if constant is not None and constant.size == 1:
        value = float(constant.reshape(()))
        if value == 0.0:
            return product
        if value == 1.0:
            return g.op("Add", g.cast(acc, product.dtype), product)
    zero = g.const(np.zeros((), dtype=product.dtype))
    scaled = g.op("Where", g.op("Equal", beta, zero), zero, g.op("Mul", beta, g.cast(acc, product.dtype)))
    return g.op("Add", scaled, product)


@onnx_funcify.register(Dot22)
def _dot22(op, node, g, x, y):
    return matmul(g, x, y)


@onnx_funcify.register(Dot22Scalar)
def _dot22_scalar(op, node, g, x, y, alpha):
    return _scale(g, alpha, matmul(g, x, y))


@onnx_funcify.register(Gemm)
def _gemm(op, node, g, z, alpha, x, y, beta):
    # z broadcasts against x @ y (PyTensor allows a broadcastable z).
    return _accumulate(g, beta, z, _scale(g, alpha, matmul(g, x, y)))


@onnx_funcify.register(Gemv)
def _gemv(op, node, g, y, alpha, a, x, beta):
    return _accumulate(g, beta, y, _scale(g, alpha, matmul(g, a, x)))


def _ger(op, node, g, a, alpha, x, y):
    outer = g.op("Mul", g.op("Unsqueeze", x, axes=[1]), g.op("Unsqueeze", y, axes=[0]))
    return g.op("Add", a, _scale(g, alpha, outer))


if Ger is not None:
    onnx_funcify.register(Ger)(_ger)


@onnx_funcify.register(BatchedDot)
def _batched_dot(op, node, g, x, y):
    dtype = output_dtype(node)
    return g.op("MatMul", g.cast(x, dtype), g.cast(y, dtype))
