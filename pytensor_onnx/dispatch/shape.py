"""Rules for pytensor.tensor.shape ops."""

from pytensor_onnx.dispatch.basic import onnx_funcify  # noqa: F401
