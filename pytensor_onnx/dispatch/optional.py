"""Rules for the Ops of optional libraries, registered once the library is in use.

PyMC defines Ops of its own (``pymc.distributions.dist_math.I0e``, ...). Their
rules live in :mod:`pytensor_onnx.pymc`, which needs PyMC; importing PyMC with
every ``import pytensor_onnx`` would double its import time. A graph can only
hold PyMC's Ops once PyMC is imported, so the conversion entry points (export
and the ONNX linker) call :func:`register_optional_rules` first: it imports the
rule module of each optional library that the process has imported. Without
the library nothing is imported and nothing changes.
"""

from __future__ import annotations

import importlib
import sys

#: Optional library (top-level module name) -> the pytensor_onnx module holding its rules.
OPTIONAL_RULES = {"pymc": "pytensor_onnx.pymc"}

_registered: set[str] = set()


def register_optional_rules() -> None:
    """Register the rules of every optional library the process has imported (once each)."""
    for library, module in OPTIONAL_RULES.items():
        if library in _registered or library not in sys.modules:
            continue
        _registered.add(library)
        importlib.import_module(module)
