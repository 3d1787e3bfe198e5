import numpy as np
import pytest

import pytensor_onnx  # noqa: F401  (registers the ONNX mode)


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)
