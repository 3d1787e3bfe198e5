"""What the deployment tests share: where things are, the Node.js they drive, and the
models of the Python suite (``tests/python/pymc_models.py``) they export."""

from __future__ import annotations

import shutil
import sys
import warnings
from pathlib import Path

import pytest

DEPLOY = Path(__file__).resolve().parents[1]
REPO = DEPLOY.parent
sys.path.insert(0, str(REPO / "tests" / "python"))

import pymc_models  # noqa: E402


def node() -> str:
    """The ``node`` executable, with the npm packages ``make deploy-tests`` installs."""
    executable = shutil.which("node")
    if executable is None:
        pytest.fail("no `node` on PATH: the deployment tests need Node.js >= 20 (make deploy-tests installs it)")
    if not (DEPLOY / "node_modules" / "onnxruntime-web").is_dir():
        pytest.fail("deploy/node_modules is missing: run `make deploy-tests` (npm ci from deploy/package-lock.json)")
    return executable


def suite_model(name: str):
    """A fresh ``pm.Model`` of the suite (its build's warnings are PyMC's, not ours)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pymc_models.MODELS_BY_NAME[name].build()
