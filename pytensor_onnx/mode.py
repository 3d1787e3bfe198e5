"""The ``ONNX`` Mode, ``compile_onnx``, and the registration of linker
``"onnx"``. The rewrites the mode runs are chosen in rewriting.py."""

import pytensor
from pytensor.compile.mode import Mode, predefined_linkers, predefined_modes, register_linker, register_mode

from pytensor_onnx.dispatch.basic import check_opset
from pytensor_onnx.linker import ONNXLinker
from pytensor_onnx.rewriting import ONNX_REWRITES


def onnx_mode(opset_version=None, session_options=None, providers=None, optimize=True, kernels=None) -> Mode:
    """A Mode that runs functions on ONNX Runtime with the given settings.

    With ``optimize=False`` PyTensor's graph rewrites are skipped (only the
    minimal compile rewrites run), so the graph is converted as built.
    ``kernels=False`` runs the portable graph (standard ONNX only) instead of
    the kernel library's nodes (``ONNXLinker``).
    """
    if not isinstance(optimize, bool):
        raise TypeError(f"optimize must be a bool, got {type(optimize).__name__}")
    linker = ONNXLinker(
        opset_version=opset_version, session_options=session_options, providers=providers, kernels=kernels
    )
    return Mode(linker, ONNX_REWRITES if optimize else None)


ONNX = onnx_mode()
#: The rewrites and conversion of exported files: standard ONNX only (no
#: kernel-library nodes, so no element-wise fusion either).
PORTABLE_ONNX = onnx_mode(kernels=False)


def register():
    if "onnx" not in predefined_linkers:
        register_linker("onnx", ONNXLinker())
    if "ONNX" not in predefined_modes:
        register_mode("ONNX", ONNX)


def compile_onnx(inputs, outputs, *, opset_version: int | None = None, session_options=None, providers=None,
                 kernels=None, **function_kwargs):
    """``pytensor.function(inputs, outputs, ...)`` running on ONNX Runtime
    (``kernels``: see ``ONNXLinker``)."""
    if "mode" in function_kwargs:
        raise TypeError("compile_onnx chooses the mode; pass opset_version/session_options/providers instead")
    if opset_version is None and session_options is None and providers is None and kernels is None:
        mode = ONNX
    else:
        if opset_version is not None:
            check_opset(opset_version)
        mode = onnx_mode(opset_version, session_options, providers, kernels=kernels)
    return pytensor.function(inputs, outputs, mode=mode, **function_kwargs)
