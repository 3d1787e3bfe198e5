"""Running a fuzz case: PyTensor's pure-Python reference against mode ONNX and
the exported model (and, for some cases, the export of a FAST_RUN-compiled
function), with ``onnx.checker`` on every model."""

from __future__ import annotations

import hashlib
import logging
import os
import warnings
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytensor
from hypothesis import event as hypothesis_event
from hypothesis.control import _current_build_context
from pytensor.compile.mode import Mode

from pytensor_onnx import export_function_onnx, export_onnx
from pytensor_onnx.mode import onnx_mode
from pytensor_onnx.testing import assert_same_result, check_model, py_function

from fuzz.program import Case, build_graph

#: Where shrunk failures are written, and where the normal suite replays them from.
CASES_DIR = Path(__file__).resolve().parent.parent / "fuzz_cases"

#: Error budget of results that are not IEEE-exact (transcendental functions,
#: float sums): ``rtol = RTOL_ULPS * eps`` and ``atol = ATOL_ULPS * eps *
#: scale``, where eps is that of the least precise float dtype the result
#: depends on and scale the largest finite |value| * size among the values it
#: depends on (so cancellation in a sum of large terms is allowed for).
RTOL_ULPS = 2**10
ATOL_ULPS = 2**6


def event(message: str) -> None:
    """Record a Hypothesis event (statistics) when running under Hypothesis;
    saved cases replay outside it (test_fuzz_regressions.py)."""
    if _current_build_context.value is not None:
        hypothesis_event(message)


def reference(state, inputs, values, outputs):
    """``{index: reference value}`` of the outputs and everything they depend
    on (to scale tolerances), or the exception the reference raised."""
    needed = sorted(set().union(*(state.ancestors(k) for k in outputs)))
    fn = py_function(inputs, [state.metas[k].var for k in needed], on_unused_input="ignore")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return dict(zip(needed, (np.asarray(v) for v in fn(*values)), strict=True)), None
        except Exception as exc:  # any error of the reference is an expected error of the case
            return None, exc


def tolerance(state, index, ref_values):
    """``(rtol, atol)`` for variable ``index`` (``None``: default tolerances)."""
    meta = state.metas[index]
    if meta.exact or meta.kind != "f":
        return None
    ancestors = state.ancestors(index)
    float_dtypes = {state.metas[k].dtype for k in ancestors if state.metas[k].kind == "f"}
    eps = max(np.finfo(d).eps for d in float_dtypes)
    scale = 1.0
    for k in ancestors:
        value = ref_values.get(k)
        if value is None:
            continue
        if value.dtype.kind in "fiu" and value.size:
            finite = np.abs(value[np.isfinite(value)].astype(np.float64)) if value.dtype.kind == "f" else np.abs(value.astype(np.float64))
            if finite.size:
                scale = max(scale, float(finite.max()) * max(1, value.size))
    return RTOL_ULPS * eps, ATOL_ULPS * eps * scale


def run_exported(model, values):
    options = ort.SessionOptions()
    options.log_severity_level = 4  # error-parity cases fail on purpose; the failure raises
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feed = {i.name: np.asarray(v) for i, v in zip(session.get_inputs(), values, strict=True)}
    return session.run(None, feed)


def run_case(case: Case) -> None:
    """Raise AssertionError (with the program) when any side disagrees with the reference."""
    # PyTensor logs rewrites that fail on odd dtypes (3.3's local_neg_to_mul
    # on unsigned ints) and skips them: noise here.
    rewrite_log = logging.getLogger("pytensor.graph.rewriting.basic")
    level = rewrite_log.level
    rewrite_log.setLevel(logging.CRITICAL)
    try:
        _run_case(case)
    except Exception as exc:
        raise AssertionError(f"fuzz case failed: {type(exc).__name__}: {exc}\n{case.describe()}") from exc
    finally:
        rewrite_log.setLevel(level)


class InvalidModel(Exception):
    """A model failed ``onnx.checker``: never an acceptable outcome."""


def checked(model):
    try:
        check_model(model)
    except Exception as exc:
        raise InvalidModel(f"onnx.checker rejects the model: {exc}") from exc
    return model


def _outcome(run):
    """``(results, None)`` or ``(None, exception)`` of ``run()``."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return [np.asarray(r) for r in run()], None
        except (InvalidModel, NotImplementedError):
            raise  # an invalid model or an unconverted op: wrong whatever the reference does
        except Exception as exc:  # an outcome like any other; compared below
            return None, exc


def _disagreement(state, outputs, results, error, expected, expected_error, what, scale_values):
    """Why ``(results, error)`` differs from ``(expected, expected_error)``, or None.

    Both failing agrees (error parity: where NumPy raises, the model must
    fail too); values are compared on dtype, shape and value.
    """
    if error is not None or expected_error is not None:
        if error is not None and expected_error is not None:
            return None
        if error is not None:
            return f"failed where {what} runs: {type(error).__name__}: {error}"
        return f"returned results where {what} raises {type(expected_error).__name__}: {expected_error}"
    for position, (got, k) in enumerate(zip(results, outputs, strict=True)):
        tol = tolerance(state, k, scale_values)
        rtol, atol = tol if tol is not None else (None, None)
        try:
            assert_same_result(got, expected[k], rtol=rtol, atol=atol, label=f"output {position} (v{k})")
        except AssertionError as exc:
            return f"differs from {what}: {exc}"
    return None


def _run_case(case: Case) -> None:
    state = build_graph(case)
    inputs = state.input_vars
    values = [np.asarray(v) for v in case.values]
    outputs = [state.metas[k].var for k in case.outputs]
    ref_values, ref_error = reference(state, inputs, values, case.outputs)
    if ref_values is not None:
        for k, value in ref_values.items():
            if value.shape != state.metas[k].shape:
                raise AssertionError(f"fuzz generator bug: v{k} has shape {value.shape}, the generator said {state.metas[k].shape}")
    event("reference raises" if ref_error is not None else "reference runs")

    # PyTensor's FAST_RUN rewrites for its own backends (in-place ops, fusion
    # where they apply) on the pure-Python linker: exported below, and the
    # judge of whether a disagreement comes from PyTensor's rewrites.
    # Compiling may fail like running does (constant folding meets the same
    # bad value): each runner compiles, so that is an outcome too.
    fast_run_cache = []

    def fast_run():
        if not fast_run_cache:
            with pytensor.config.change_flags(cxx=""):
                mode = Mode(linker="py", optimizer="fast_run")
                fast_run_cache.append(pytensor.function(inputs, outputs, mode=mode, on_unused_input="ignore"))
        return fast_run_cache[0]

    def mode_onnx():
        fn = pytensor.function(inputs, outputs, mode=onnx_mode(opset_version=case.opset), on_unused_input="ignore")
        checked(fn.maker.linker.onnx_model)
        return fn(*values)

    def exported():
        return run_exported(checked(export_onnx(inputs, outputs, opset_version=case.opset)), values)

    def exported_function():
        return run_exported(checked(export_function_onnx(fast_run(), opset_version=case.opset)), values)

    runners = [("mode ONNX", mode_onnx), ("exported model", exported)]
    # Not for graphs with a factorisation: FAST_RUN's algebraic rewrites
    # (x / x -> 1 and the like) then meet the exact zeros of triangular
    # factors, where the unrewritten reference gives 0 / 0 = NaN (seen on
    # PyTensor 2.38: cholesky(a) / cholesky(a) + 1). Mode ONNX and the
    # exported graph are still compared for such cases. To be narrowed to
    # the disagreement itself (docs/testing.md).
    has_factorisation = any(getattr(node, "gen", "").startswith("linalg.") for node in case.nodes)
    if case.export_function and not has_factorisation:
        runners.append(("exported FAST_RUN function", exported_function))

    fast_run_outcome = None
    for label, run in runners:
        results, error = _outcome(run)
        scale_values = ref_values or {}
        problem = _disagreement(state, case.outputs, results, error, ref_values, ref_error, "PyTensor's reference", scale_values)
        if problem is None:
            continue
        # Not our bug when PyTensor's own FAST_RUN graph disagrees with its
        # reference in the same way (a PyTensor rewrite changed the result,
        # e.g. 2.38/3.3 rewrite reshape((0, n, 1) -> (0, 2)) into a squeeze
        # with SpecifyShape(n == 2), which fails for n != 2).
        if fast_run_outcome is None:
            fr_results, fr_error = _outcome(lambda: fast_run()(*values))
            fast_run_outcome = (None if fr_results is None else dict(zip(case.outputs, fr_results)), fr_error)
        fr_values, fr_error = fast_run_outcome
        fr_list = None if fr_values is None else list(fr_values.values())
        pytensor_itself = _disagreement(state, case.outputs, fr_list, fr_error, ref_values, ref_error, "the reference", scale_values)
        same_as_fast_run = _disagreement(state, case.outputs, results, error, fr_values, fr_error, "FAST_RUN", scale_values) is None
        if pytensor_itself is not None and same_as_fast_run:
            event(f"PyTensor FAST_RUN {pytensor_itself[:400]}".replace("\n", " | "))
            continue
        raise AssertionError(f"{label} {problem}")


def case_path(case: Case) -> Path:
    digest = hashlib.sha256(case.to_json().encode()).hexdigest()[:12]
    return CASES_DIR / f"case-{digest}.json"


def save_case(case: Case, note: str) -> Path:
    """Write ``case`` to the regression store (``FUZZ_SAVE_DIR`` overrides the place)."""
    case.note = note
    directory = Path(os.environ.get("FUZZ_SAVE_DIR", CASES_DIR))
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / case_path(case).name
    path.write_text(case.to_json() + "\n")
    return path


def load_cases(directory: Path = CASES_DIR) -> list[tuple[str, Case]]:
    return [(p.name, Case.from_json(p.read_text())) for p in sorted(directory.glob("*.json"))]
