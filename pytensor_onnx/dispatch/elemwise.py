"""Elemwise and DimShuffle (the CAReduce family is in math.py, with the other reductions)."""

from pytensor.tensor.elemwise import DimShuffle, Elemwise

from pytensor.scalar.basic import Composite, get_scalar_type

from pytensor_onnx.dispatch.basic import kernels_enabled, onnx_funcify
from pytensor_onnx.dispatch.kernel import elemwise_node_kernel, reducing_readers, uses_kernel


@onnx_funcify.register(Elemwise)
def _elemwise(op, node, g, *inputs):
    scalar_op = op.scalar_op
    if (
        kernels_enabled()
        and not isinstance(scalar_op, Composite)
        and (uses_kernel(scalar_op, node.outputs[0].type.dtype) or any(reducing_readers(node)))
    ):
        # Mode ONNX: a special function (or another op whose portable form is
        # many nodes) as one node of the kernel library; so is a native op
        # whose output only a Sum, All or Any reads, which the kernel node
        # then reduces itself (one node, and a sum added as NumPy adds, where
        # ReduceSum's order is ONNX Runtime's).
        scalar_inputs = [get_scalar_type(i.type.dtype)() for i in node.inputs]
        try:
            scalar_outputs = scalar_op.make_node(*scalar_inputs).outputs
        except (TypeError, ValueError, NotImplementedError):
            scalar_outputs = None
        if scalar_outputs is not None:
            outs = elemwise_node_kernel(g, node, scalar_inputs, scalar_outputs, inputs)
            if outs is not None:
                return outs
    # PyTensor has already aligned the ranks, so ONNX's NumPy broadcasting
    # matches; the scalar op's rule works on whole tensors.
    return onnx_funcify(op.scalar_op, node, g, *inputs)


@onnx_funcify.register(DimShuffle)
def _dimshuffle(op, node, g, x):
    # DimShuffle.perform: transpose(shuffle + drop), drop the (size-1) trailing
    # axes, then insert the "x" axes at `augment`.
    # The dropped axes have length 1: where the kept ones stay in order, they
    # are squeezed where they are (moving them is no change of the data; a
    # Transpose would copy it: the gemv form `(v[None, :] @ A)[0]`).
    if op.drop and list(op.shuffle) == sorted(op.shuffle):
        x = g.op("Squeeze", x, axes=sorted(op.drop))
    else:
        transposition = list(op.shuffle) + list(op.drop)
        if transposition != list(range(len(transposition))):
            x = g.op("Transpose", x, perm=transposition)
        if op.drop:
            x = g.op("Squeeze", x, axes=list(range(len(op.shuffle), op.input_ndim)))
    if op.augment:
        x = g.op("Unsqueeze", x, axes=list(op.augment))
    return x
