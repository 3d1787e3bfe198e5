"""Helpers for testing ONNX rules, public so that users can test their own rules."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytensor
from pytensor.compile.mode import Mode
from pytensor.compile.sharedvalue import SharedVariable

from pytensor_onnx.mode import onnx_mode
from pytensor_onnx.runtime import default_session_options

#: (rtol, atol) per dtype used when no assert_fn is given. Values are compared
#: relatively: ``|got - want| <= rtol * max(|want|, tiny)``, tiny being the
#: dtype's smallest normal number (below it the format itself keeps fewer
#: bits). The atol bounds only the results whose reference is exactly zero,
#: where no relative bound exists; a tiny non-zero reference (a sigmoid tail,
#: 1e-300) is held to rtol like any other. Complex dtypes use their parts'.
DEFAULT_TOLERANCES = {
    "float64": (1e-12, 1e-12),
    "float32": (1e-5, 1e-6),
    "float16": (1e-2, 1e-3),
}

#: PyTensor's Python implementation, graphs taken as built: the reference.
PY_MODE = Mode(linker="py", optimizer=None)


def py_function(inputs, outputs, **kwargs):
    """``pytensor.function`` on the reference ``PY_MODE``, in pure Python.

    Ops with an inner graph (Softmax, OpFromGraph, ...) link that graph with
    C thunks even under the ``py`` linker, where some PyTensor releases have
    C-code bugs on edge cases (3.3.7: ``max`` with an initial value of a 0-d
    tensor). Compiling with no C++ compiler keeps the reference NumPy-only.
    """
    kwargs.setdefault("mode", PY_MODE)
    with pytensor.config.change_flags(cxx=""):
        return _ReferenceFunction(pytensor.function(inputs, outputs, **kwargs))


class _ReferenceFunction:
    """A function of ``py_function``, whose calls run as its compilation did
    (no C++ compiler) with ``PY_MODE`` as PyTensor's default mode too.

    PyTensor 2.38's OpFromGraph compiles its inner graph at its first run,
    with the default mode: FAST_RUN's rewrites and C thunks in the reference,
    and ~8 s a call for the inner graphs of ``pt.pad``'s reflect mode
    (tests/python/test_pad.py took 390 s of the PyMC 5 leg, 75 s of the
    default one). Other attributes are the function's."""

    __slots__ = ("function",)

    def __init__(self, function):
        self.function = function

    def __call__(self, *args, **kwargs):
        with pytensor.config.change_flags(cxx="", mode=PY_MODE):
            return self.function(*args, **kwargs)

    def __getattr__(self, name):
        if name == "function":  # (not set yet: a copy or unpickling asks before __init__ ran)
            raise AttributeError(name)
        return getattr(self.function, name)


def assert_same_result(onnx_value, py_value, *, rtol=None, atol=None, label="output"):
    """Same dtype, same shape, equal values (exact for ints and bools, NaN == NaN).

    Floats: with the default ``atol=None`` each value is held to ``rtol``
    relative to the reference (``DEFAULT_TOLERANCES``), and only a reference
    that is exactly zero gets the dtype's absolute tolerance. An explicit
    ``atol`` is ``np.testing.assert_allclose``'s (``atol + rtol * |want|``
    everywhere): pass one when the function's conditioning says results near
    zero are only known to an absolute error. ``rtol=0, atol=0``: equal values.
    """
    onnx_value = np.asarray(onnx_value)
    py_value = np.asarray(py_value)
    assert onnx_value.dtype == py_value.dtype, f"{label}: dtype {onnx_value.dtype} != PyTensor's {py_value.dtype}"
    assert onnx_value.shape == py_value.shape, f"{label}: shape {onnx_value.shape} != PyTensor's {py_value.shape}"
    if py_value.dtype.kind in "fc":
        part = np.finfo(py_value.dtype)  # a complex dtype's parts
        default_rtol, default_atol = DEFAULT_TOLERANCES.get(part.dtype.name, (1e-5, 1e-6))
        rtol = default_rtol if rtol is None else rtol
        magnitude = np.abs(py_value)
        if atol is None:
            bound = np.where(py_value == 0, default_atol, rtol * np.maximum(magnitude, part.tiny))
        else:
            bound = atol + rtol * magnitude
        _assert_within(onnx_value, py_value, bound, label, rtol, atol)
    else:
        np.testing.assert_array_equal(onnx_value, py_value, err_msg=label)


def assert_zero_signs(got, want, *, label="output"):
    """Where float ``want`` and ``got`` are both zeros, they have the same
    sign (-0.0 and +0.0 compare equal: 1 / x, arctan2 and copysign tell them
    apart). Other dtypes, and arrays of other shapes, pass."""
    got, want = np.asarray(got), np.asarray(want)
    if want.dtype.kind not in "fc" or got.shape != want.shape or got.dtype != want.dtype:
        return
    if want.dtype.kind == "c":
        assert_zero_signs(got.real, want.real, label=f"{label} (real part)")
        assert_zero_signs(got.imag, want.imag, label=f"{label} (imaginary part)")
        return
    wrong = (got == 0) & (want == 0) & (np.signbit(got) != np.signbit(want))
    if wrong.any():
        at = tuple(int(i) for i in np.argwhere(wrong)[0])
        raise AssertionError(
            f"{label}: {int(wrong.sum())} of {want.size} elements are zeros of the other sign; at {at}: got "
            f"{got[at]!r}, PyTensor's {want[at]!r}"
        )


def _assert_within(got, want, bound, label, rtol, atol):
    """``|got - want| <= bound`` elementwise; infinities must be equal, NaN == NaN."""
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(got.astype(np.result_type(got, np.float64)) - want)
        ok = (got == want) | (np.isnan(got) & np.isnan(want)) | (np.isfinite(want) & (error <= bound))
    if ok.all():
        return
    bad = np.flatnonzero(~ok.reshape(-1))
    error, bound = np.broadcast_to(error, want.shape).reshape(-1), np.broadcast_to(bound, want.shape).reshape(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        excess = np.nan_to_num(error[bad] / bound[bad], nan=np.inf)
    worst = bad[np.argsort(-excess, kind="stable")][:5]
    lines = [
        f"{label}: {bad.size} of {want.size} values differ from PyTensor's "
        f"(rtol={rtol:g}, atol={_describe_atol(atol)})"
    ]
    for flat in worst:
        index = tuple(int(i) for i in np.unravel_index(flat, want.shape))
        g, w = got.reshape(-1)[flat], want.reshape(-1)[flat]
        lines.append(f"  at {index}: got {g.item()!r}, want {w.item()!r}, |diff| {error[flat]:.3g} > allowed {bound[flat]:.3g}")
    raise AssertionError("\n".join(lines))


def _describe_atol(atol):
    if atol is None:
        return "only where the reference is 0"
    return format(atol, "g") if np.ndim(atol) == 0 else "per element"


def check_model(model):
    """``onnx.checker.check_model(model, full_check=True)``: every exported model must pass."""
    import onnx

    onnx.checker.check_model(model, full_check=True)


def compare_onnx_and_py(
    graph_inputs: Sequence,
    graph_outputs,
    test_inputs: Sequence,
    *,
    assert_fn: Callable | None = None,
    opset_version: int | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    check_export: bool = True,
    optimize: bool = True,
    onnx_mode_kwargs: dict | None = None,
    zero_signs: bool = True,
):
    """Run the graph on ONNX Runtime (mode ONNX) and on PyTensor's ``py`` linker; assert equal results.

    Also checks the model with ``onnx.checker`` (full check) and, with
    ``check_export``, exports the graph with ``export_onnx`` and checks that
    the exported model gives the same results in a fresh ONNX Runtime session
    (and, if it has model-local functions, that the model exported with
    ``inline_functions=True`` passes the checker and gives identical values).
    With ``optimize=False`` PyTensor's rewrites are skipped on the ONNX side,
    for ops the rewrites would always replace (fill, ViewOp, ...).

    Values are compared by ``assert_same_result`` (or ``assert_fn(got,
    want)`` per output): ints and bools exactly; floats, by default, each
    within ``rtol`` of the reference, however small it is (float64 1e-12,
    float32 1e-5: ``DEFAULT_TOLERANCES``), with an absolute tolerance only
    where the reference is exactly zero; infinities and NaN must match.
    Passing ``atol`` applies it to every element (``atol + rtol * |want|``),
    for functions whose conditioning leaves results near zero known only to
    an absolute error; say why where you pass it.

    With ``zero_signs`` (and no ``assert_fn``), mode ONNX's float results are
    zeros of the reference's sign where both are zeros (``assert_zero_signs``):
    -0.0 and +0.0 compare equal but are different results. Pass False where
    PyTensor does not fix the sign (a maximum of -0.0 and +0.0, which IEEE
    lets be either). The exported model is not held to it: ONNX Runtime's
    ``Where`` gives +0.0 where it selects a -0.0 (docs/semantics.md).

    Returns
    -------
    (fn, results)
        The ONNX-mode function and its results.
    """
    import onnxruntime as ort

    from pytensor_onnx.export import export_onnx

    outputs_is_list = isinstance(graph_outputs, list | tuple)
    outputs = list(graph_outputs) if outputs_is_list else [graph_outputs]
    mode = onnx_mode(opset_version=opset_version, optimize=optimize, **(onnx_mode_kwargs or {}))
    fn = pytensor.function(list(graph_inputs), outputs, mode=mode, on_unused_input="ignore")
    check_model(fn.maker.linker.onnx_model)
    onnx_results = fn(*test_inputs)

    py_fn = py_function(list(graph_inputs), outputs, on_unused_input="ignore")
    py_results = py_fn(*test_inputs)

    def compare(results, label):
        for i, (got, want) in enumerate(zip(results, py_results, strict=True)):
            if assert_fn is not None:
                assert_fn(got, want)
            else:
                assert_same_result(got, want, rtol=rtol, atol=atol, label=f"{label} output {i}")

    compare(onnx_results, "ONNX mode")
    if zero_signs and assert_fn is None:
        for i, (got, want) in enumerate(zip(onnx_results, py_results, strict=True)):
            assert_zero_signs(got, want, label=f"ONNX mode output {i}")
    _assert_repeat_gives_same_bits(fn, test_inputs, onnx_results)

    if check_export:
        inputs = [i for i in graph_inputs if not isinstance(i, SharedVariable)]
        kwargs = {} if opset_version is None else {"opset_version": opset_version}
        model = export_onnx(inputs, outputs, optimize=optimize, **kwargs)
        check_model(model)
        # (Mode ONNX's session options: an intra-op pool that spins after a
        # parallel node kept a core busy; test processes run side by side,
        # and with spinning on, these sessions took 11-16% more time from the
        # recipe-heavy test files on two cores.)
        session = ort.InferenceSession(
            model.SerializeToString(), sess_options=default_session_options(), providers=["CPUExecutionProvider"]
        )
        feed = {
            graph_input.name: _feed_value(var, value)
            for graph_input, var, value in zip(session.get_inputs(), inputs, _explicit_values(graph_inputs, test_inputs))
        }
        exported_results = session.run(None, feed)
        compare(exported_results, "exported model")
        if model.functions:
            # The same model with every function built inline: valid too, and
            # the same values to the bit.
            inlined = export_onnx(inputs, outputs, optimize=optimize, inline_functions=True, **kwargs)
            check_model(inlined)
            assert not inlined.functions
            session = ort.InferenceSession(
                inlined.SerializeToString(), sess_options=default_session_options(), providers=["CPUExecutionProvider"]
            )
            for i, (got, want) in enumerate(zip(session.run(None, feed), exported_results, strict=True)):
                np.testing.assert_array_equal(got, want, err_msg=f"model with inlined functions, output {i}")

    return fn, (onnx_results if outputs_is_list else onnx_results[0])


def _assert_repeat_gives_same_bits(fn, test_inputs, first_results):
    """Calls `fn` on the same inputs again and asserts the same bits as its
    first call's, `first_results` (copied before the call: a function may
    reuse its outputs' memory). The kernel library keeps what a run found from
    its inputs' shapes and replays it on runs of inputs of the same shapes
    (src/kernels/node_record.h): this second call is such a run. Functions
    that draw random numbers are left out (a draw moves the generator on)."""
    from pytensor.tensor.random.op import RandomVariable

    if any(isinstance(node.op, RandomVariable) for node in fn.maker.fgraph.apply_nodes):
        return
    first = [np.array(r, copy=True) for r in first_results]
    again = fn(*test_inputs)
    for i, (want, got) in enumerate(zip(first, again, strict=True)):
        got = np.asarray(got)
        # (Objects compare by value: their arrays' bytes are references.)
        same = np.array_equal(got, want) if want.dtype == object else got.tobytes() == want.tobytes()
        if got.dtype != want.dtype or got.shape != want.shape or not same:
            raise AssertionError(
                f"ONNX mode output {i}: a second call on the same inputs gave other values than the first "
                f"({got!r} after {want!r})"
            )


def _feed_value(var, value):
    """``value`` as the exported model takes it (an RNG as its ``[seed, counter]`` state)."""
    from pytensor.tensor.random.type import RandomType

    if isinstance(var.type, RandomType):
        from pytensor_onnx.dispatch.random.state import rng_state

        return rng_state(value)
    return np.asarray(value, dtype=var.type.dtype)


def _explicit_values(graph_inputs, test_inputs):
    return [value for var, value in zip(graph_inputs, test_inputs) if not isinstance(var, SharedVariable)]
