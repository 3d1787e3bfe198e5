"""ScalarLoop bodies compiled to machine code for the kernel library.

The library's ``ScalarLoop_<dtype>`` kernel interprets a loop's body in
lockstep over elements (``src/kernels/scalar_loop.h``), ~1 ns per operation
and element. PyTensor's C and Numba backends compile the same loop, which keeps
an element's state in registers: the censored Gamma model's gradient (the
incomplete gamma function's, ~50 operations over ~40 steps per element) ran
10x slower interpreted. So the library writes a body out as LLVM IR
(``src/kernels/loop_ir.h``), and this module compiles it with llvmlite, the
LLVM binding of Numba, which every supported PyTensor installs, and hands
the function back. Kernels built afterwards run it; each compiled loop gives
the interpreter's bits (the same IEEE operations in the same order, libm's
``exp`` and ``log``; tested).

Bodies with an op the IR writer does not cover, or no llvmlite, stay
interpreted. ``PYTENSOR_ONNX_COMPILE_LOOPS=0`` keeps every loop interpreted.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import threading

from pytensor_onnx import kernels

logger = logging.getLogger("pytensor_onnx")

#: ``PYTENSOR_ONNX_COMPILE_LOOPS=0`` keeps every ScalarLoop interpreted.
ENV_SWITCH = "PYTENSOR_ONNX_COMPILE_LOOPS"

_FUNCTION_NAME = "pytensor_onnx_scalar_loop"
# The compiled code lives as long as its execution engine: kept for the
# process, as sessions of any later function may run it.
_ENGINES: list = []
_LOCK = threading.Lock()
_COMPILED: set[tuple] = set()


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


@functools.cache
def _target_machine():
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    try:
        cpu, features = llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()
    except RuntimeError:  # (features unknown on this host: the generic CPU)
        cpu, features = "", ""
    return target.create_target_machine(cpu=cpu, features=features, opt=2)


def is_compiled(input_dtypes: str, program: str, num_state: int, next_state, until: int) -> bool:
    """Whether the body of a ``ScalarLoop_<dtype>`` node of these attributes was compiled."""
    key = (input_dtypes, program, int(num_state), tuple(int(r) for r in next_state), int(until))
    return key in _COMPILED


def compile_loop(input_dtypes: str, program: str, num_state: int, next_state, until: int) -> bool:
    """Compile the body of a ``ScalarLoop_<dtype>`` node of these attributes
    and hand it to the kernel library; False where it stays interpreted."""
    if not enabled() or kernels.library_path() is None:
        return False
    return _compile(input_dtypes, program, int(num_state), tuple(int(r) for r in next_state), int(until))


@functools.cache
def _compile(input_dtypes: str, program: str, num_state: int, next_state: tuple, until: int) -> bool:
    library = kernels._library()
    registers = (ctypes.c_int64 * len(next_state))(*next_state)
    args = (input_dtypes.encode(), program.encode(), num_state, registers, len(next_state), until)
    library.pytensor_onnx_kernels_loop_ir.restype = ctypes.c_char_p
    library.pytensor_onnx_kernels_loop_ir.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64,
                                                      ctypes.POINTER(ctypes.c_int64), ctypes.c_int64, ctypes.c_int64,
                                                      ctypes.c_char_p]
    ir = library.pytensor_onnx_kernels_loop_ir(*args, _FUNCTION_NAME.encode()).decode()
    if not ir:
        return False
    try:
        import llvmlite.binding as llvm
    except ImportError:
        logger.info("pytensor-onnx: llvmlite is not installed, ScalarLoop bodies are interpreted")
        return False
    with _LOCK:
        module = llvm.parse_assembly(ir)
        module.verify()
        engine = llvm.create_mcjit_compiler(module, _target_machine())
        engine.finalize_object()
        address = engine.get_function_address(_FUNCTION_NAME)
        _ENGINES.append(engine)
    library.pytensor_onnx_kernels_set_compiled_loop.restype = None
    library.pytensor_onnx_kernels_set_compiled_loop.argtypes = [*library.pytensor_onnx_kernels_loop_ir.argtypes[:6],
                                                                ctypes.c_void_p]
    library.pytensor_onnx_kernels_set_compiled_loop(*args, ctypes.c_void_p(address))
    _COMPILED.add((input_dtypes, program, num_state, next_state, until))
    return True
