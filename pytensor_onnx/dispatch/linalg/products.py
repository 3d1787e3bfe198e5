"""Expm (``pytensor.tensor.linalg.products`` on 3.3, ``slinalg`` on 2.38)."""

from __future__ import annotations

from pytensor_onnx.compat import linalg_op_class
from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.blockwise import batch_capable
from pytensor_onnx.dispatch.linalg.utils import square
from pytensor_onnx.dispatch.utils import output_dtype


Expm = linalg_op_class("Expm")


@batch_capable(Expm)
@onnx_funcify.register(Expm)
def _expm(op, node, g, x):
    return g.recipe("expm", square(g, x, node, output_dtype(node)))
