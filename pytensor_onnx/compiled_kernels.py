"""Kernel programs compiled to machine code for the kernel library.

The library interprets the programs of its element-wise and ScalarLoop
nodes (``src/kernels/evaluate.h``, ``scalar_loop.h``): ~0.5-1 ns per
operation and element, where PyTensor's C and Numba backends compile theirs.
So the library writes a program out as LLVM IR (``src/kernels/kernel_ir.h``),
and this module compiles it with llvmlite, the LLVM binding of Numba, which
every supported PyTensor installs, and hands the function back; kernels built
afterwards run it. Compiled code gives the interpreter's bits: the same IEEE
operations in the same order (no fast-math flags: LLVM neither reassociates
nor contracts), libm's ``exp``, ``log``, ..., NumPy's NaN rules, and the
reductions stay the library's own (tests/python/test_compiled_kernels.py).

Programs with an op the IR writer does not cover, or no llvmlite, stay
interpreted. ``PYTENSOR_ONNX_COMPILE_KERNELS=0`` (set before the functions
are built) keeps every program interpreted.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import threading

from pytensor_onnx import kernels

logger = logging.getLogger("pytensor_onnx")

#: ``PYTENSOR_ONNX_COMPILE_KERNELS=0`` keeps every kernel program interpreted.
ENV_SWITCH = "PYTENSOR_ONNX_COMPILE_KERNELS"

_FUNCTION_NAME = "pytensor_onnx_kernel"
# Compiled code lives as long as its execution engine (_engine): the
# process's, as sessions of any later function may run it.
_NAMES: list[str] = []  # the functions compiled so far (their names are unique in the engine)
_LOCK = threading.Lock()
_COMPILED: set[tuple] = set()
_FAILED: set[tuple] = set()  # (programs the IR writer does not write: interpreted)
_QUEUED: dict[tuple, None] = {}  # (in order)

_i64, _p_i64, _p_u8, _str = ctypes.c_int64, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_uint8), ctypes.c_char_p
_LOOP_ARGS = [_str, _str, _i64, _p_i64, _i64, _i64]
_BLOCK_ARGS = [_str, _str, _p_i64, _i64, _p_u8, _i64]


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


@functools.cache
def _library():
    library = kernels._library()
    library.pytensor_onnx_kernels_loop_ir.restype = _str
    library.pytensor_onnx_kernels_loop_ir.argtypes = [*_LOOP_ARGS, _str]
    library.pytensor_onnx_kernels_set_compiled_loop.restype = None
    library.pytensor_onnx_kernels_set_compiled_loop.argtypes = [*_LOOP_ARGS, ctypes.c_void_p, ctypes.c_void_p]
    library.pytensor_onnx_kernels_block_ir.restype = _str
    library.pytensor_onnx_kernels_block_ir.argtypes = [*_BLOCK_ARGS, _str]
    library.pytensor_onnx_kernels_add_compiled_block.restype = None
    library.pytensor_onnx_kernels_add_compiled_block.argtypes = [*_BLOCK_ARGS, ctypes.c_void_p]
    return library


@functools.cache
def _host():
    """LLVM's target, CPU and features of this process's host (initialized once)."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    try:
        cpu, features = llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()
    except RuntimeError:  # (features unknown on this host: the generic CPU)
        cpu, features = "", ""
    return target, cpu, features


def _target_machine():
    # A new one each time: an execution engine owns (and frees) the target
    # machine it is made with.
    target, cpu, features = _host()
    return target.create_target_machine(cpu=cpu, features=features, opt=2)


@functools.cache
def _engine():
    """The process's execution engine, to which each conversion adds one
    module: an engine of its own per conversion kept ~0.8 MB each (its
    memory manager's sections), one engine ~0.1 MB per program."""
    import llvmlite.binding as llvm

    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), _target_machine())
    engine.finalize_object()
    return engine


def _machine_code(irs: list[str]) -> list[tuple[int, int]]:
    """The addresses of the functions of ``irs`` (each a module's text whose
    function is named ``_FUNCTION_NAME``, and a loop's lanes function, if
    written, ``_FUNCTION_NAME``_lanes: 0 without), optimized (loops
    vectorized where LLVM can without fast-math) and compiled together, in
    one module."""
    import llvmlite.binding as llvm

    with _LOCK:
        first = len(_NAMES)
        names = [f"{_FUNCTION_NAME}_{first + k}" for k in range(len(irs))]
        _NAMES.extend(names)
        module = None
        lanes = [f"@{_FUNCTION_NAME}_lanes(" in ir for ir in irs]
        for name, ir in zip(names, irs):
            ir = ir.replace(f"@{_FUNCTION_NAME}(", f"@{name}(").replace(f"@{_FUNCTION_NAME}_lanes(", f"@{name}_lanes(")
            part = llvm.parse_assembly(ir)
            if module is None:
                module = part
            else:
                module.link_in(part)
        module.verify()
        options = llvm.create_pipeline_tuning_options(speed_level=2)
        options.loop_vectorization = True
        options.slp_vectorization = True
        builder = llvm.create_pass_builder(_target_machine(), options)
        builder.getModulePassManager().run(module, builder)
        engine = _engine()
        engine.add_module(module)
        engine.finalize_object()
        return [(engine.get_function_address(name), engine.get_function_address(f"{name}_lanes") if has_lanes else 0)
                for name, has_lanes in zip(names, lanes)]


def is_compiled(*attributes) -> bool:
    """Whether the program of a kernel node of these attributes (those
    ``compile_loop`` or ``compile_block`` take) was compiled."""
    return _key(*attributes) in _COMPILED


def node_is_compiled(node) -> bool:
    """Whether the programs of a kernel node (an ``onnx.NodeProto`` of type
    ``Elemwise_<dtype>`` or ``ScalarLoop_<dtype>``) were compiled, each of
    its program stages for some scalar inputs (one-instruction stages the
    core merged in too: ``compile_graph_programs``)."""
    if node.op_type.startswith("ScalarLoop_"):
        attributes = {a.name: a for a in node.attribute}
        return is_compiled(attributes["input_dtypes"].s.decode(), attributes["program"].s.decode(),
                           attributes["num_state"].i, list(attributes["next_state"].ints), attributes["until"].i)
    programs = [stage for stage in kernels.elemwise_stages(node) if "program" in stage and "num_state" not in stage]
    compiled = [
        any(key[:3] == (stage["input_dtypes"], stage["program"], tuple(stage["output_registers"]))
            for key in _COMPILED if len(key) == 4)
        for stage in programs
    ]
    return bool(compiled) and all(compiled)


def _key(*attributes) -> tuple:
    return tuple(tuple(int(v) for v in a) if isinstance(a, list | tuple) else a for a in attributes)


def compile_loop(input_dtypes: str, program: str, num_state: int, next_state, until: int) -> None:
    """Queue the body of a ``ScalarLoop_<dtype>`` node of these attributes
    for ``compile_queued``."""
    _queue(_key(input_dtypes, program, int(num_state), next_state, int(until)))


def compile_block(input_dtypes: str, program: str, output_registers, scalar_inputs) -> None:
    """Queue the program of an ``Elemwise_<dtype>`` node of these attributes,
    written for the inputs flagged in ``scalar_inputs`` (one bool per input)
    holding one element, for ``compile_queued``."""
    _queue(_key(input_dtypes, program, output_registers, [bool(s) for s in scalar_inputs]))


def compile_graph_programs(programs) -> None:
    """Queue, for ``compile_queued``, the element-wise programs of a converted
    graph as its final form reads them (``GraphBuilder.stage_programs()``:
    input dtypes, program, output registers, inputs of one element per
    program stage): with those the rules queued, the programs the core's
    passes wrote (ONNX's arithmetic merged in as one-instruction stages, a
    rule's program rewritten), interpreted before. Each for the inputs that
    hold one element whatever the run, which the compiled code reads once
    (work on those alone, a parameter's gammaln, runs once per block)."""
    for input_dtypes, program, output_registers, scalar_inputs in programs:
        compile_block(input_dtypes, program, output_registers, scalar_inputs)


def _queue(key: tuple) -> None:
    if not enabled() or kernels.library_path() is None:
        return
    with _LOCK:
        if key not in _COMPILED and key not in _FAILED:
            _QUEUED.setdefault(key, None)


def compile_queued() -> None:
    """Compile the queued programs (``dispatch.fgraph_to_onnx`` calls it once
    it has converted a graph, before any session is built from it) and hand
    them to the kernel library; those the IR writer cannot write, or all of
    them without llvmlite, stay interpreted."""
    with _LOCK:
        keys = list(_QUEUED)
        _QUEUED.clear()
    if not keys:
        return
    try:
        import llvmlite.binding  # noqa: F401
    except ImportError:
        logger.info("pytensor-onnx: llvmlite is not installed, kernel programs are interpreted")
        _FAILED.update(keys)
        return
    library = _library()
    calls, irs = [], []
    for key in keys:
        if len(key) == 5:  # a loop
            input_dtypes, program, num_state, next_state, until = key
            args = (input_dtypes.encode(), program.encode(), num_state, (_i64 * len(next_state))(*next_state),
                    len(next_state), until)
            ir = library.pytensor_onnx_kernels_loop_ir(*args, _FUNCTION_NAME.encode()).decode()
            register = library.pytensor_onnx_kernels_set_compiled_loop
        else:
            input_dtypes, program, output_registers, scalar_inputs = key
            args = (input_dtypes.encode(), program.encode(), (_i64 * len(output_registers))(*output_registers),
                    len(output_registers), (ctypes.c_uint8 * len(scalar_inputs))(*scalar_inputs), len(scalar_inputs))
            ir = library.pytensor_onnx_kernels_block_ir(*args, _FUNCTION_NAME.encode()).decode()
            register = library.pytensor_onnx_kernels_add_compiled_block
        if not ir:
            _FAILED.add(key)
            continue
        calls.append((key, register, args))
        irs.append(ir)
    if not irs:
        return
    try:
        addresses = _machine_code(irs)
    except Exception as exc:  # (LLVM refused the text: a bug of the IR writer; the kernels interpret)
        logger.warning("pytensor-onnx: compiling %d kernel programs failed, they are interpreted: %s", len(irs), exc)
        _FAILED.update(key for key, _, _ in calls)
        return
    for (key, register, args), (address, lanes_address) in zip(calls, addresses):
        if len(key) == 5:  # a loop: its function for one element, and for lanes of them (or none)
            register(*args, ctypes.c_void_p(address), ctypes.c_void_p(lanes_address or None))
        else:
            register(*args, ctypes.c_void_p(address))
        _COMPILED.add(key)
