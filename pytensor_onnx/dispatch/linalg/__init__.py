"""Linear algebra, one module per module of PyTensor 3.3's
``pytensor.tensor.linalg`` (as PyTensor's JAX backend lays out its own rules);
``utils`` holds what they share. Imported for registration."""

from pytensor_onnx.dispatch.linalg import (  # noqa: F401
    constructors,
    decomposition,
    inverse,
    products,
    solvers,
    summary,
)
