"""Elemwise, DimShuffle and CAReduce."""

from pytensor.tensor.elemwise import CAReduce, DimShuffle, Elemwise

from pytensor_onnx.dispatch.basic import onnx_funcify


@onnx_funcify.register(Elemwise)
def _elemwise(op, node, g, *inputs):
    # PyTensor has already aligned the ranks, so ONNX's NumPy broadcasting
    # matches; the scalar op's rule works on whole tensors.
    return onnx_funcify(op.scalar_op, node, g, *inputs)


@onnx_funcify.register(DimShuffle)
def _dimshuffle(op, node, g, x):
    # DimShuffle.perform: transpose(shuffle + drop), drop the (size-1) trailing
    # axes, then insert the "x" axes at `augment`.
    transposition = list(op.shuffle) + list(op.drop)
    if transposition != list(range(len(transposition))):
        x = g.op("Transpose", x, perm=transposition)
    if op.drop:
        x = g.op("Squeeze", x, axes=list(range(len(op.shuffle), op.input_ndim)))
    if op.augment:
        x = g.op("Unsqueeze", x, axes=list(op.augment))
    return x


@onnx_funcify.register(CAReduce)
def _careduce(op, node, g, x):
    from pytensor_onnx.dispatch.math import reduce_with_scalar_op

    return reduce_with_scalar_op(op, node, g, x)
