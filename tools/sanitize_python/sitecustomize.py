"""Loaded by `make sanitize-python` (this directory is on PYTHONPATH).

Makes `import pytensor_onnx._core` load the extension file named by
PYTENSOR_ONNX_CORE (the sanitizer build) instead of the editable install's
normal build; everything else imports as usual. Subprocesses (pytest-xdist
workers, the CLI) inherit the environment and so load this too.
"""

import importlib.machinery
import importlib.util
import os
import sys

_CORE = os.environ.get("PYTENSOR_ONNX_CORE")


class _SanitizedCoreFinder:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != "pytensor_onnx._core" or not _CORE:
            return None
        loader = importlib.machinery.ExtensionFileLoader(name, _CORE)
        return importlib.util.spec_from_file_location(name, _CORE, loader=loader)


sys.meta_path.insert(0, _SanitizedCoreFinder())
