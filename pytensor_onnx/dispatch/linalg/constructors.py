"""BlockDiagonal (``pytensor.tensor.linalg.constructors`` on 3.3, ``slinalg``
on 2.38)."""

from __future__ import annotations

import numpy as np

from pytensor_onnx.compat import linalg_op_class
from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.linalg.utils import rows_cols
from pytensor_onnx.dispatch.utils import int64_const, output_dtype


BlockDiagonal = linalg_op_class("BlockDiagonal")


if BlockDiagonal is not None:

    @onnx_funcify.register(BlockDiagonal)
    def _block_diagonal(op, node, g, *blocks):
        """Each block padded with zero columns to the total width, stacked by rows."""
        dtype = output_dtype(node)
        blocks = [g.cast(b, dtype) for b in blocks]
        widths = [rows_cols(g, b)[1] for b in blocks]
        rank = node.outputs[0].type.ndim
        zero = g.const(np.array(0, dtype=dtype))
        padded = []
        for i, block in enumerate(blocks):
            before = _sum(g, widths[:i])
            after = _sum(g, widths[i + 1 :])
            pads = g.op("Concat", int64_const(g, [0] * (rank - 1)), before, int64_const(g, [0] * (rank - 1)), after, axis=0)
            padded.append(g.op("Pad", block, pads, zero))
        return g.op("Concat", *padded, axis=rank - 2)

def _sum(g, sizes):
    total = int64_const(g, [0])
    for size in sizes:
        total = g.op("Add", total, size)
    return total
