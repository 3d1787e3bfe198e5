"""Rules for pytensor.tensor.tensor_basic ops."""

from pytensor_onnx.dispatch.basic import onnx_funcify  # noqa: F401
