import os

import numpy as np
import pytest
from hypothesis import settings

import pytensor_onnx  # noqa: F401  (registers the ONNX mode)

# The suite replays the same Hypothesis examples on every run (derandomized),
# so a landing never depends on luck; HYPOTHESIS_PROFILE=explore draws new
# examples, to search for bugs.
settings.register_profile("replay", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "replay"))


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)
