"""pytensor-onnx: export PyTensor graphs to ONNX and run them on ONNX Runtime.

Importing the package registers the linker ``"onnx"`` and the mode ``"ONNX"``
with PyTensor, so ``pytensor.function(..., mode="ONNX")`` works.
"""

__version__ = "0.1.0"

from pytensor_onnx import kernels
from pytensor_onnx.dispatch import ONNX_OPSET_VERSION, fgraph_to_onnx, onnx_funcify, onnx_typify
from pytensor_onnx.export import export_function_onnx, export_onnx
from pytensor_onnx.linker import ONNXLinker
from pytensor_onnx.mode import ONNX, compile_onnx, onnx_mode, register as _register

_register()

__all__ = [
    "ONNX",
    "ONNXLinker",
    "ONNX_OPSET_VERSION",
    "compile_onnx",
    "export_function_onnx",
    "export_onnx",
    "fgraph_to_onnx",
    "kernels",
    "onnx_funcify",
    "onnx_mode",
    "onnx_typify",
]
