"""SortOp and ArgSortOp.

Both build NumPy's *stable* order (``kind="stable"``) whatever ``kind``
says, with NaN last, from the C++ recipe ``argsort_stable``
(src/core/recipes/sort.cc): ONNX's TopK breaks ties by index but misplaces
NaN. NumPy's default ``quicksort`` leaves the order of equal elements
unspecified, so ``argsort`` of ties may differ from NumPy's there (the
stable order is one NumPy could return); sorted values never differ.
"""

from pytensor.tensor.sort import ArgSortOp, SortOp

from pytensor_onnx.compat import sort_axis
from pytensor_onnx.dispatch.basic import onnx_funcify


@onnx_funcify.register(SortOp)
def _sort(op, node, g, x, *axis_input):
    return g.recipe("sort_stable", x, axis=sort_axis(op, node))


@onnx_funcify.register(ArgSortOp)
def _argsort(op, node, g, x, *axis_input):
    return g.recipe("argsort_stable", x, axis=sort_axis(op, node))
