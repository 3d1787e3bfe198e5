import os

import numpy as np
import pytensor
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


@pytest.fixture(autouse=True)
def pytensor_config_untouched():
    """Fail the test that leaves PyTensor's default mode or linker changed.

    Every later test in the same worker would compile its reference (and
    OpFromGraph inner functions, which use the default mode) with it: CI once
    failed two unrelated Pad tests that way, after threads compiled at once.
    """
    before = (pytensor.config.mode, pytensor.config.linker)
    yield
    after = (pytensor.config.mode, pytensor.config.linker)
    assert after == before, f"the test left PyTensor's (config.mode, config.linker) at {after}, was {before}"
