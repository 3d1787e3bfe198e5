"""Det and SLogDet (``pytensor.tensor.linalg.summary`` on 3.3, ``nlinalg`` on
2.38), from the LU recipe."""

from __future__ import annotations

from pytensor_onnx.compat import linalg_op_class
from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.blockwise import batch_capable
from pytensor_onnx.dispatch.linalg.utils import square
from pytensor_onnx.dispatch.linalg_kernel import factorization
from pytensor_onnx.dispatch.utils import output_dtype


Det = linalg_op_class("Det")
SLogDet = linalg_op_class("SLogDet")


@batch_capable(Det)
@onnx_funcify.register(Det)
def _det(op, node, g, x):
    return factorization(g, "det", square(g, x, node, output_dtype(node), "det"))

@batch_capable(SLogDet)
@onnx_funcify.register(SLogDet)
def _slogdet(op, node, g, x):
    sign, log_abs = factorization(g, "slogdet", square(g, x, node, output_dtype(node), "slogdet"))
    return sign, log_abs
