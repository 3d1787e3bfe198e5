"""Per-call overhead of a tiny ONNX-mode function, as ratios from one run.

Compares, on the same tiny graph (y = 2 * x + 1 on a 4-vector):
  * ONNX mode (``pytensor.function(..., mode="ONNX")``)
  * ONNX mode with ``trust_input=True`` (skips PyTensor's input filtering)
  * bare ``onnxruntime.InferenceSession.run`` on the very model the mode built
  * bare ``runtime.NativeSession.run``, the session mode ONNX runs it on
  * PyTensor's C mode (and Numba/JAX modes when those are installed)
Target (issue 13): ONNX mode within 1.1x of bare ``InferenceSession.run``.
PyTensor's ``Function.__call__`` validates every input before any linker
runs (``TensorType.filter``), which ``trust_input=True`` skips: the two ONNX
rows differ by that cost, which every PyTensor mode pays.
"""

import sys
import timeit

import numpy as np
import onnxruntime as ort
import pytensor
import pytensor.tensor as pt

import pytensor_onnx  # noqa: F401
from pytensor_onnx import kernels
from pytensor_onnx.linker import default_session_options

N_CALLS = 2000
REPEATS = 7


def per_call_us(fn) -> float:
    fn()  # warm up
    times = timeit.repeat(fn, number=N_CALLS, repeat=REPEATS)
    return min(times) / N_CALLS * 1e6


def _native_session(onnx_fn):
    """A native session of the function's model, or None where mode ONNX has none (said on stderr)."""
    from pytensor_onnx import runtime

    reason = runtime.native_unavailable_reason()
    if reason is not None:
        print(f"no native sessions: {reason}", file=sys.stderr)
        return None
    linker = onnx_fn.maker.linker
    return runtime.NativeSession(linker.onnx_model_bytes, linker._input_names, linker._output_names,
                                 packed=linker.packed_outputs, packed_inputs=linker.packed_inputs)


def main() -> int:
    x = pt.vector("x", dtype="float64")
    y = 2 * x + 1
    value = np.arange(4.0)

    onnx_fn = pytensor.function([x], y, mode="ONNX")
    trusted = pytensor.function([x], y, mode="ONNX")
    trusted.trust_input = True
    options = default_session_options()
    if kernels.model_uses_kernels(onnx_fn.maker.linker.onnx_model_bytes):
        kernels.register(options, fresh=True)  # the model holds kernel-library nodes
    session = ort.InferenceSession(
        onnx_fn.maker.linker.onnx_model_bytes, sess_options=options, providers=["CPUExecutionProvider"],
    )
    input_name = session.get_inputs()[0].name

    rows = {
        "bare InferenceSession.run": per_call_us(lambda: session.run(None, {input_name: value})),
        # What mode ONNX runs by default (runtime.NativeSession): the same
        # ONNX Runtime through its C API, without the binding's conversions.
        **(
            {"bare NativeSession.run": per_call_us(lambda: native.run([value]))}
            if (native := _native_session(onnx_fn)) is not None
            else {}
        ),
        "ONNX mode": per_call_us(lambda: onnx_fn(value)),
        "ONNX mode, trust_input": per_call_us(lambda: trusted(value)),
    }
    for mode in ("C", "NUMBA", "JAX"):
        try:
            fn = pytensor.function([x], y, mode=mode)
            fn(value)
        except Exception as exc:  # mode not installed on this machine
            print(f"{mode} mode unavailable: {type(exc).__name__}", file=sys.stderr)
            continue
        rows[f"PyTensor {mode} mode"] = per_call_us(lambda fn=fn: fn(value))

    bare = rows["bare InferenceSession.run"]
    print(f"Per-call time of y = 2x + 1 on a 4-vector ({N_CALLS} calls, best of {REPEATS})")
    print(f"{'':32s} {'us/call':>10s} {'vs bare ORT':>12s}")
    for name, us in rows.items():
        print(f"{name:32s} {us:10.2f} {us / bare:11.2f}x")
    ratio = rows["ONNX mode"] / bare
    trusted_ratio = rows["ONNX mode, trust_input"] / bare
    print(f"ONNX mode / bare InferenceSession.run = {ratio:.2f} (target <= 1.10); with trust_input {trusted_ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
