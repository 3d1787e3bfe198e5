"""Rules for pytensor.tensor.subtensor ops."""

from pytensor_onnx.dispatch.basic import onnx_funcify  # noqa: F401
