"""Conversion rules, one module per PyTensor op family (imported for registration)."""

from pytensor_onnx.dispatch.basic import (
    ONNX_OPSET_VERSION,
    ConversionResult,
    fgraph_to_onnx,
    onnx_funcify,
    onnx_typify,
)

# Register the rules.
import pytensor_onnx.dispatch.scalar
import pytensor_onnx.dispatch.scalar_math
import pytensor_onnx.dispatch.composite
import pytensor_onnx.dispatch.scalar_loop
import pytensor_onnx.dispatch.elemwise
import pytensor_onnx.dispatch.math
import pytensor_onnx.dispatch.blas
import pytensor_onnx.dispatch.blockwise
import pytensor_onnx.dispatch.linalg
import pytensor_onnx.dispatch.linear_control
import pytensor_onnx.dispatch.special
import pytensor_onnx.dispatch.shape
import pytensor_onnx.dispatch.subtensor
import pytensor_onnx.dispatch.tensor_basic
import pytensor_onnx.dispatch.raise_op
import pytensor_onnx.dispatch.ifelse
import pytensor_onnx.dispatch.scan
import pytensor_onnx.dispatch.random
import pytensor_onnx.dispatch.sort
import pytensor_onnx.dispatch.extra_ops
import pytensor_onnx.dispatch.pad
import pytensor_onnx.dispatch.signal

__all__ = ["ONNX_OPSET_VERSION", "ConversionResult", "fgraph_to_onnx", "onnx_funcify", "onnx_typify"]
