"""Pad (``pytensor.tensor.pad``), every mode PyTensor has.

- ``constant`` with one fill value and ``edge``: ONNX Pad.
- ``wrap``, ``symmetric``, ``reflect``: every padded element is a copy of an
  input element, so each axis is one Gather with a periodic index map (period
  n, 2n and 2n - 2), which also covers widths larger than the axis as NumPy
  does. (PyTensor 2.38 builds these modes with Scan.)
- ``linear_ramp``, ``mean``, ``maximum``, ``minimum`` and ``constant`` with
  per-axis values: PyTensor's own padding graph (the Op's inner graph),
  converted in place.

Negative widths make NumPy raise; the model fails at run time then.
"""

from pytensor.tensor.pad import Pad

from pytensor_onnx.dispatch.basic import _op_from_graph, onnx_funcify
from pytensor_onnx.dispatch.utils import check, dim_size, int64_const, output_dtype


def _widths(g, pad_width, rank):
    """The pad widths as an (rank, 2) int64 Value of (before, after) pairs, checked to be >= 0."""
    widths = g.op("Expand", g.cast(pad_width, "int64"), int64_const(g, [rank, 2]))
    constant = widths.constant_value
    if constant is not None and (constant >= 0).all():
        return widths
    return check(g, g.op("GreaterOrEqual", widths, int64_const(g, 0)), widths)


def _onnx_pads(g, widths, rank):
    """ONNX's pads input: every ``before``, then every ``after``."""
    return g.op("Reshape", g.op("Transpose", widths, perm=[1, 0]), int64_const(g, [2 * rank]))


def _source_positions(g, mode, size, before, after):
    """For each output position along one axis, the input position it copies."""
    size = size if not isinstance(size, int) else int64_const(g, size)
    offsets = g.op("Range", g.op("Neg", before), g.op("Add", size, after), int64_const(g, 1))
    # An empty axis has no positions to map (zero widths) or none to copy
    # (NumPy raises; the Gather then fails on index 0): Mod by 0 must not run.
    size = g.op("Max", size, int64_const(g, 1))
    if mode == "wrap":
        return g.op("Mod", offsets, size)
    if mode == "symmetric":
        period = g.op("Mul", size, int64_const(g, 2))
        folded = g.op("Mod", offsets, period)
        mirrored = g.op("Sub", g.op("Sub", period, int64_const(g, 1)), folded)
    else:  # reflect: the edge values are not repeated; a length-1 axis repeats its one value
        period = g.op("Max", g.op("Sub", g.op("Mul", size, int64_const(g, 2)), int64_const(g, 2)), int64_const(g, 1))
        folded = g.op("Mod", offsets, period)
        mirrored = g.op("Sub", period, folded)
    return g.op("Where", g.op("Less", folded, size), folded, mirrored)


def _gather_pad(g, x, widths, mode):
    for axis in range(x.rank):
        pair = g.op("Gather", widths, int64_const(g, axis), axis=0)
        before = g.op("Gather", pair, int64_const(g, 0), axis=0)
        after = g.op("Gather", pair, int64_const(g, 1), axis=0)
        positions = _source_positions(g, mode, dim_size(g, x, axis), before, after)
        x = g.op("Gather", x, positions, axis=axis)
    return x


@onnx_funcify.register(Pad)
def _pad(op, node, g, x, pad_width, *extra):
    mode = op.pad_mode
    rank = x.rank
    if rank == 0:
        return x
    if mode in ("wrap", "symmetric", "reflect"):
        return _gather_pad(g, x, _widths(g, pad_width, rank), mode)
    if mode == "edge" or (mode == "constant" and extra[0].rank == 0):
        # PyTensor's graphs for these modes upcast (an int8 input pads to
        # float64): pad in the output's dtype.
        x = g.cast(x, output_dtype(node))
        pads = _onnx_pads(g, _widths(g, pad_width, rank), rank)
        if mode == "edge":
            return g.op("Pad", x, pads, mode="edge")
        fill = g.cast(extra[0], x.dtype)
        return g.op("Pad", x, pads, fill, mode="constant")
    return _op_from_graph(op, node, g, x, pad_width, *extra)

