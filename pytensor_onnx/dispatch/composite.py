"""Composite: a fused elemwise op whose inner graph is made of scalar ops.

PyTensor's fast_run fusion (used by C/Numba modes) builds these, so functions
compiled in those modes can be exported. The inner scalar rules work on whole
tensors, so the inner graph converts node by node onto the outer values.
"""

from pytensor.graph.traversal import ancestors
from pytensor.scalar.basic import Composite

from pytensor_onnx.dispatch.basic import convert_nodes, kernels_enabled, lookup, onnx_funcify
from pytensor_onnx.dispatch.kernel import elemwise_node_kernel, keeps_native_epilogue


@onnx_funcify.register(Composite)
def _composite(op, node, g, *inputs):
    inner = op.fgraph
    if kernels_enabled() and not keeps_native_epilogue(op, node):
        # Mode ONNX: the whole fused program as one node of the kernel library,
        # which also sums the outputs that only a Sum reads.
        outs = elemwise_node_kernel(g, node, inner.inputs, inner.outputs, inputs)
        if outs is not None:
            return outs
    env = dict(zip(inner.inputs, inputs, strict=True))
    convert_nodes(inner.toposort(), g, env, check_shapes=False)
    outputs = []
    for inner_out, outer_out in zip(inner.outputs, node.outputs, strict=True):
        value = g.cast(lookup(g, env, inner_out), outer_out.type.dtype)
        # Every Elemwise output has the broadcast shape of all inputs; an output
        # that does not read some input must be broadcast against it.
        used = set(ancestors([inner_out]))
        for inner_in, outer_in in zip(inner.inputs, inputs):
            if inner_in not in used:
                value = g.op("Expand", value, g.op("Shape", outer_in))
        outputs.append(value)
    return outputs
