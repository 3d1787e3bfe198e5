"""The ``ONNX`` Mode and the registration of linker ``"onnx"``."""

from pytensor.compile.mode import Mode, predefined_linkers, predefined_modes, register_linker, register_mode
from pytensor.graph.rewriting.db import RewriteDatabaseQuery

from pytensor_onnx.linker import ONNXLinker

#: Rewrites the ONNX mode runs: PyTensor's fast_run set, minus the ones that
#: introduce C-only, BLAS-only, in-place or fused (Composite) ops
#: (``ONNXLinker.incompatible_rewrites``).
ONNX_REWRITES = RewriteDatabaseQuery(include=["fast_run", "onnx"])


def onnx_mode(opset_version=None, session_options=None, providers=None, optimize=True) -> Mode:
    """A Mode that runs functions on ONNX Runtime with the given settings.

    With ``optimize=False`` PyTensor's graph rewrites are skipped (only the
    minimal compile rewrites run), so the graph is converted as built.
    """
    linker = ONNXLinker(opset_version=opset_version, session_options=session_options, providers=providers)
    return Mode(linker, ONNX_REWRITES if optimize else None)


ONNX = onnx_mode()


def register():
    if "onnx" not in predefined_linkers:
        register_linker("onnx", ONNXLinker())
    if "ONNX" not in predefined_modes:
        register_mode("ONNX", ONNX)
