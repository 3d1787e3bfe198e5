"""Running a fuzz case: PyTensor's pure-Python reference against mode ONNX and
the exported model (and, for some cases, the export of a FAST_RUN-compiled
function), with ``onnx.checker`` on every model."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import warnings
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytensor
import pytensor.tensor as pt
from hypothesis import event as hypothesis_event
from hypothesis.control import _current_build_context
from pytensor.compile.mode import Mode
from pytensor.link.vm import VMLinker
from pytensor.tensor.special import LogSoftmax, Softmax

from pytensor_onnx import export_function_onnx, export_onnx
from pytensor_onnx.dispatch.utils import DATA_CHECK
from pytensor_onnx.mode import onnx_mode
from pytensor_onnx.runtime import default_session_options
from pytensor_onnx.rewriting import ONNX_REWRITES
from pytensor_onnx.testing import (
    _assert_repeat_gives_same_bits,
    assert_same_result,
    assert_zero_signs,
    check_model,
    py_function,
)

from fuzz.program import Case, InputNode, build_graph
from fuzz.registry import REGISTRY

#: Where shrunk failures are written, and where the normal suite replays them from.
CASES_DIR = Path(__file__).resolve().parent.parent / "fuzz_cases"

#: Error budget of results that are not IEEE-exact (transcendental functions,
#: float sums, factorisations), following each output's own conditioning:
#: every element must satisfy ``|got - ref| <= rtol * |ref| + atol``, with
#: ``rtol = RTOL_ULPS * eps`` (eps of the output's dtype) and ``atol`` the
#: element's own *spread* times ``ATOL_ULPS``. The spread is how far that
#: element moves when every non-exact step of the program is replaced by a
#: backward-stable version of itself: its float operands, every float value
#: it computes on the way and its result each multiplied by ``1 + d`` with
#: ``|d|`` one ulp, a fresh ``d`` per element (``PERTURBATION_DRAWS`` draws
#: of random signs, the largest move kept). A
#: correct implementation of a step (a sum in any order, a LAPACK solve, an
#: ``exp`` good to a few ulps) is such a version, so its result lies within a
#: small multiple of the spread; cancellation (a sum of large terms with a
#: small result) and ill-conditioned steps (``solve`` of a nearly singular
#: matrix, ``tan`` near a pole) widen the spread of just the elements they
#: reach, while the size of unrelated intermediates does not enter (the old
#: bound, the largest |value| x size upstream, let 28% of the outputs pass
#: any value of their own size, zero included).
RTOL_ULPS = 2**10
ATOL_ULPS = 2**6
PERTURBATION_DRAWS = 4


def event(message: str) -> None:
    """Record a Hypothesis event (statistics) when running under Hypothesis;
    saved cases replay outside it (test_fuzz_regressions.py)."""
    if _current_build_context.value is not None:
        hypothesis_event(message)


def reference(state, inputs, values, outputs):
    """``{index: reference value}`` of the outputs and everything they depend
    on (their shapes are checked against the generators'), or the exception
    the reference raised."""
    needed = sorted(set().union(*(state.ancestors(k) for k in outputs)))
    fn = py_function(inputs, [state.metas[k].var for k in needed], on_unused_input="ignore")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return dict(zip(needed, (np.asarray(v) for v in fn(*values)), strict=True)), None
        except Exception as exc:  # any error of the reference is an expected error of the case
            return None, exc


def _needs_tolerance(meta) -> bool:
    return meta.kind == "f" and not meta.exact


#: Length of the noise vectors; every perturbed variable reads its noise from
#: its own offset of the vector of its dtype (fuzz arrays hold a few hundred
#: elements at most; a larger one makes the perturbed run fail, and then its
#: outputs count as undetermined).
NOISE_LENGTH = 2**15


class _Noise:
    """Per-element relative noise for the variables of a perturbed graph."""

    def __init__(self):
        self.vectors = {}  # dtype -> noise vector input
        self.count = 0
        # > 0: every perturbed zero is +0.0, < 0: -0.0, 0: as computed.
        self.zero_sign = pt.scalar("zero_sign", dtype="float64")

    def __call__(self, var):
        """``var * (1 + d)``, d from this variable's own slice of the noise
        vector, and its zeros of the sign ``zero_sign`` says: a zero a
        non-exact step computes has the sign of its algorithm's order of terms
        (a solve's LAPACK keeps a right-hand side's -0.0, a product with the
        inverse gives +0.0), which 1 / x then makes -inf or inf."""
        dtype = var.type.dtype
        vector = self.vectors.setdefault(dtype, pt.vector(f"noise_{dtype}", dtype=dtype))
        self.count += 1
        offset = (self.count * 7919) % (NOISE_LENGTH // 2)
        noise = pt.specify_shape(vector[offset : offset + var.size].reshape(var.shape), var.type.shape)
        signed_zero = pt.switch(pt.gt(self.zero_sign, 0), pt.abs(var), pt.switch(pt.lt(self.zero_sign, 0), -pt.abs(var), var))
        return pt.switch(pt.eq(var, 0), signed_zero, var * (1 + noise)).astype(dtype)


def _noisy_rebuild(out, operands, noisy):
    """``out`` rebuilt from ``operands`` with every float value computed on
    the way multiplied by noise: the rounding inside a generator's own steps
    (``tanh(x) @ tanh(x).T`` before a solve, ``exp`` before a ``log``)."""
    try:
        from pytensor.graph.traversal import io_toposort  # PyTensor 3.x
    except ImportError:
        from pytensor.graph.basic import io_toposort  # 2.38

    mapping = {}
    for node in io_toposort(list(operands), [out]):
        new_inputs = [mapping.get(i, i) for i in node.inputs]
        if isinstance(node.op, Softmax | LogSoftmax):
            new_outputs = [_noisy_softmax(node.op, new_inputs[0], noisy)]
        else:
            new_node = node.clone_with_new_inputs(new_inputs) if new_inputs != list(node.inputs) else node
            new_outputs = new_node.outputs
        for old, new in zip(node.outputs, new_outputs, strict=True):
            is_float = getattr(new.type, "dtype", "").startswith("float") and hasattr(new.type, "shape")
            mapping[old] = noisy(new) if is_float else new
    return mapping.get(out, out)


def _noisy_softmax(op, x, noisy):
    """PyTensor's softmax or log-softmax of ``x`` written out as its perform
    computes it (``x - max``, ``exp``, the sum, its ``log``), each step
    perturbed: one op whose internal sum rounds (a float32 log-softmax of
    values near 0 is a difference of two nearly equal numbers, whose ulp of
    the sum is its whole error)."""
    axis = op.axis
    shifted = noisy(x - pt.max(x, axis=axis, keepdims=True))
    exps = noisy(pt.exp(shifted))
    total = noisy(pt.sum(exps, axis=axis, keepdims=True))
    if isinstance(op, LogSoftmax):
        return shifted - noisy(pt.log(total))
    return exps / total


def perturbed_graph(case: Case, state):
    """The program with every non-exact float step made backward-stable-noisy
    (see ``RTOL_ULPS``): ``(noise vector inputs, {output index: perturbed variable})``.

    Inside a non-exact step every float value is perturbed, from its float
    operands (each perturbed again for this step: the rounding of a sum is
    relative to its terms) to its result. All-zero noise gives the
    reference's values bit for bit (``x * (1 + 0)`` is ``x``). Exact steps
    and non-float steps keep their reference variables: discontinuous ops
    take only exact operands, so no noise reaches a comparison or a cast.
    """
    noisy = _Noise()
    perturbed = []
    for k, node in enumerate(case.nodes):
        meta = state.metas[k]
        if isinstance(node, InputNode) or not _needs_tolerance(meta):
            perturbed.append(meta.var)
            continue
        operands = [noisy(perturbed[a]) if state.metas[a].kind == "f" else perturbed[a] for a in node.args]
        built = REGISTRY[node.gen].build(node.params, *operands)
        perturbed.append(noisy(_noisy_rebuild(built, operands, noisy)))
    return [*noisy.vectors.values(), noisy.zero_sign], {k: perturbed[k] for k in case.outputs if _needs_tolerance(state.metas[k])}


def spreads(case: Case, state, inputs, values, ref_values) -> dict:
    """``{output index: per-element spread}`` of the non-exact float outputs
    (see ``RTOL_ULPS``): inf where a perturbed run leaves the finite values,
    or where the reference is not finite and a perturbed run gives another
    value (the output is not determined there: 1 / x of a computed zero),
    else 0 where the reference is not finite (those elements must match
    exactly)."""
    noise, outputs = perturbed_graph(case, state)
    if not outputs:
        return {}
    keys = sorted(outputs)
    fn = py_function([*inputs, *noise], [outputs[k] for k in keys], on_unused_input="ignore")
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(case.to_json().encode()).digest()[:8], "little"))
    result = {k: np.zeros(ref_values[k].shape) for k in keys}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for draw in range(PERTURBATION_DRAWS):
            vectors = noise[:-1]  # (and the zero_sign scalar, last)
            draws = [(rng.choice([-1.0, 1.0], size=NOISE_LENGTH) * np.finfo(e.type.dtype).eps).astype(e.type.dtype) for e in vectors]
            # (Every computed zero +0.0, then -0.0, then as computed: the
            # implementations' patterns, a product with an inverse giving
            # +0.0 throughout.)
            draws.append(np.float64([1.0, -1.0][draw] if draw < 2 else 0.0))
            try:
                got = fn(*values, *draws)
            except Exception:  # the perturbed program leaves the domain: nothing is determined
                return {k: np.full(ref_values[k].shape, np.inf) for k in keys}
            for k, value in zip(keys, got, strict=True):
                ref = ref_values[k].astype(np.float64)
                value = np.asarray(value, dtype=np.float64)
                moved = np.abs(value - ref)
                same_non_finite = (value == ref) | (np.isnan(value) & np.isnan(ref))
                moved = np.where(np.isfinite(ref), np.where(np.isfinite(moved), moved, np.inf),
                                 np.where(same_non_finite, 0.0, np.inf))
                result[k] = np.maximum(result[k], moved)
    return result


def tolerance(state, index, spread):
    """``(rtol, atol)`` for output ``index`` (``None``: exact, default
    tolerances); ``atol`` is per element. ``spread`` is None where the
    reference raised (FAST_RUN's values are then compared with mode ONNX's,
    to tell a PyTensor rewrite's doing): relative only."""
    meta = state.metas[index]
    if not _needs_tolerance(meta):
        return None
    info = np.finfo(meta.dtype)
    # Below the smallest normal number a float has absolute precision only
    # (its ulp is the smallest subnormal), so the relative budget is held
    # against the smallest normal there: ONNX Runtime's float32 Tanh gives
    # 0 for tanh(6e-45) = 5.6e-45 and 9.9939e-41 for tanh(1e-40), off by
    # under a hundred subnormal ulps, where the judge allowed none.
    underflow = RTOL_ULPS * info.eps * info.smallest_normal
    return RTOL_ULPS * info.eps, underflow + (0.0 if spread is None else ATOL_ULPS * spread)


def run_exported(model, values):
    options = default_session_options()  # (mode ONNX's: no spinning pool, see compare_onnx_and_py)
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


@contextlib.contextmanager
def building():
    """Marks an exception raised inside as a failure to build (compile,
    convert, export), not to run."""
    try:
        yield
    except Exception as exc:
        exc.fuzz_building = True
        raise


#: ONNX Runtime names the node that failed: "... running Reshape node. Name:'Reshape_0' ...".
_FAILED_NODE = re.compile(r"running (\w+) node\. Name:'([^']*)'")
#: A converted CheckAndRaise names its check node after the exception type
#: (dispatch/raise_op.py); mode ONNX raises that type.
_CHECK_NODE = re.compile(r"^pytensor_check:[0-9a-f]+ (\w+):")
#: ONNX Runtime's index out of range (the words pytensor_onnx.linker maps to IndexError).
_INDEX_FAILURE = re.compile(r"out of data bounds|invalid (index|indice) found|Out of range value in index")


def _raised_by_a_rule(exc) -> bool:
    """Whether the traceback passes through this package's conversion code."""
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if f"{os.sep}pytensor_onnx{os.sep}dispatch{os.sep}" in filename or f"{os.sep}pytensor_onnx{os.sep}_core" in filename:
            return True
        tb = tb.tb_next
    return False


def failure_problem(error, expected_error, what) -> str | None:
    """Why ``error`` is not the failure expected where ``what`` raises
    ``expected_error``, or None (error parity, issue 24 item 3).

    Expected: building fails only with the reference's own error type,
    raised by PyTensor's code (constant folding meets the bad value), never
    by a conversion rule; a run fails with the reference's exception type
    (mode ONNX raises PyTensor's type for converted checks and indices out of
    range), or ONNX Runtime names the node that failed and that node is one
    of this kind of error: a converted check of the reference's exception
    type, a rule's data check, an index out of range only where the
    reference's error is an IndexError, or another kernel refusing its
    operands (a Reshape, Split, Slice ...) only where it is not.
    """
    expected = type(expected_error)
    described = f"{type(error).__name__}: {str(error)[:300]}"
    wanted = f"where {what} raises {expected.__name__}: {str(expected_error)[:200]}"
    if getattr(error, "fuzz_building", False):
        if type(error) is expected and not _raised_by_a_rule(error):
            return None
        return f"failed to build ({described}) {wanted}"
    if isinstance(error, expected) and expected is not RuntimeError:  # every failed run of mode ONNX is a RuntimeError
        return None
    message = str(error)
    # The node that failed is the innermost one ONNX Runtime names: a failure
    # inside an If branch or a Loop body is reported by the If or Loop first
    # (a data check under an IfElse, FUZZ_SEED=2396030941).
    nodes = _FAILED_NODE.findall(message)
    if not nodes:
        return f"failed without ONNX Runtime naming a node ({described}) {wanted}"
    op_type, name = nodes[-1]
    check = _CHECK_NODE.match(name)
    if check is not None:
        if check.group(1) == expected.__name__:
            return None
        return f"failed in the check of another error type (node {name!r}) {wanted}"
    if DATA_CHECK in name:  # a rule's own data check (dispatch/utils.check): an empty max, a zero step, ...
        return None
    index_error = issubclass(expected, IndexError)
    if bool(_INDEX_FAILURE.search(message)) == index_error:
        return None
    kind = "an index out of range" if not index_error else "not an index error"
    return f"failed for another reason ({kind}: {op_type} node {name!r}: {str(error)[:300]}) {wanted}"


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


def _disagreement(state, outputs, results, error, expected, expected_error, what, output_spreads, zero_signs=True):
    """Why ``(results, error)`` differs from ``(expected, expected_error)``, or None.

    Both failing agrees (error parity: where NumPy raises, the model must
    fail too); values are compared on dtype, shape and value, and with
    ``zero_signs`` the signs of an exact output's zeros (``assert_zero_signs``).
    """
    if error is not None or expected_error is not None:
        if error is not None and expected_error is not None:
            return failure_problem(error, expected_error, what)
        if error is not None:
            return f"failed where {what} runs: {type(error).__name__}: {error}"
        return f"returned results where {what} raises {type(expected_error).__name__}: {expected_error}"
    for position, (got, k) in enumerate(zip(results, outputs, strict=True)):
        spread = output_spreads.get(k)
        if spread is not None and np.shape(spread) != np.shape(expected[k]):
            # The spreads are the reference's; FAST_RUN's output compared here
            # has another shape (PyTensor's rewrite changed it; FUZZ_SEED=362432839:
            # an arange's length), so they say nothing of its elements.
            spread = None
        tol = tolerance(state, k, spread)
        label = f"output {position} (v{k})"
        try:
            if tol is None:
                assert_same_result(got, expected[k], label=label)
                # The zeros of an exact output have IEEE's signs, but a
                # maximum's or minimum's of -0.0 and +0.0 (Meta.zero_signs).
                # Other outputs' zeros are not held to a sign: a sum's or a
                # solve's follows the order of its terms (LAPACK's triangular
                # solve skips zeros of the right-hand side, keeping their
                # sign; a product with the inverse adds +0.0 to them).
                if zero_signs and state.metas[k].zero_signs:
                    assert_zero_signs(got, expected[k], label=label)
            else:
                assert_within(got, expected[k], *tol, label=label)
        except AssertionError as exc:
            return f"differs from {what}: {exc}"
    return None


def assert_within(got, ref, rtol, atol, label="output"):
    """Same dtype and shape, NaN where ``ref`` has NaN, infinities equal, and
    ``|got - ref| <= rtol * |ref| + atol`` elsewhere (``atol`` per element)."""
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.dtype == ref.dtype, f"{label}: dtype {got.dtype} != PyTensor's {ref.dtype}"
    assert got.shape == ref.shape, f"{label}: shape {got.shape} != PyTensor's {ref.shape}"
    g, r = got.astype(np.float64), ref.astype(np.float64)
    with np.errstate(all="ignore"):
        bound = rtol * np.abs(r) + np.broadcast_to(atol, r.shape)
        finite = np.isfinite(r) & np.isfinite(g)
        # An element a perturbed run took out of the finite values (infinite
        # spread) is not determined by the program: any value is right there,
        # an infinity too (erfinv(tanh(9)) in float32: one ulp of tanh is the
        # pole; ONNX Runtime's Tanh(9) is 1.0, NumPy's 1 - 2**-24;
        # FUZZ_SEED=2274448006).
        # So is a non-finite one a perturbed run changed (infinite atol).
        undetermined = (np.isfinite(r) & np.isinf(bound)) | np.isinf(np.broadcast_to(atol, r.shape))
        ok = undetermined | np.where(finite, np.abs(g - r) <= bound, (g == r) | (np.isnan(g) & np.isnan(r)))
    if not ok.all():
        bad = tuple(int(i) for i in np.argwhere(~ok)[0])
        raise AssertionError(
            f"{label}: {int((~ok).sum())} of {ok.size} elements differ; at {bad}: got {g[bad]!r}, "
            f"reference {r[bad]!r}, allowed |difference| {bound[bad]:.3g} (rtol {rtol:.3g}, atol {np.broadcast_to(atol, r.shape)[bad]:.3g})"
        )


def judge(case: Case, results=None, error=None) -> str | None:
    """Why ``results`` (one array per output) or ``error`` would be rejected
    as the outcome of ``case``, or None: the comparison every runner of
    ``run_case`` gets, for tests of the checks themselves."""
    state = build_graph(case)
    values = [np.asarray(v) for v in case.values]
    ref_values, ref_error = reference(state, state.input_vars, values, case.outputs)
    output_spreads = {} if ref_values is None else spreads(case, state, state.input_vars, values, ref_values)
    return _disagreement(state, case.outputs, results, error, ref_values, ref_error, "PyTensor's reference", output_spreads)


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
    output_spreads = {} if ref_values is None else spreads(case, state, inputs, values, ref_values)

    # PyTensor's FAST_RUN rewrites for its own backends (in-place ops, fusion
    # where they apply), perform() only: exported below, and the
    # judge of whether a disagreement comes from PyTensor's rewrites.
    # Compiling may fail like running does (constant folding meets the same
    # bad value): each runner compiles, so that is an outcome too.
    fast_run_cache = []

    def fast_run():
        if not fast_run_cache:
            with pytensor.config.change_flags(cxx=""):
                # Lazy, as PyTensor's own modes run an IfElse: after FAST_RUN's
                # rewrites the branch taken may no longer need a value that
                # raises (second(x[::0], 0) becomes an Alloc of x[::0]'s
                # shape) while the branch not taken still does, which the
                # `py` linker computes anyway (FUZZ_SEED=1712167046).
                mode = Mode(linker=VMLinker(lazy=True, use_cloop=False), optimizer="fast_run")
                with building():
                    fast_run_cache.append(pytensor.function(inputs, outputs, mode=mode, on_unused_input="ignore"))
        return fast_run_cache[0]

    own_rewrites_cache = []

    def pytensor_rewrites_of_mode_onnx():
        # PyTensor's rewrites as mode ONNX selects them (not the project's
        # own, tagged "onnx", which are under test), run by FAST_RUN's linker.
        if not own_rewrites_cache:
            with pytensor.config.change_flags(cxx=""):
                mode = Mode(linker=VMLinker(lazy=True, use_cloop=False), optimizer=ONNX_REWRITES.excluding("onnx"))
                with building():
                    own_rewrites_cache.append(pytensor.function(inputs, outputs, mode=mode, on_unused_input="ignore"))
        return own_rewrites_cache[0]

    def mode_onnx():
        with building():
            fn = pytensor.function(inputs, outputs, mode=onnx_mode(opset_version=case.opset), on_unused_input="ignore")
        checked(fn.maker.linker.onnx_model)
        results = fn(*values)
        # (A second call replays what the kernels found from the first's
        # shapes, src/kernels/node_record.h: the same bits.)
        _assert_repeat_gives_same_bits(fn, values, results)
        return results

    def exported():
        with building():
            model = export_onnx(inputs, outputs, opset_version=case.opset)
        return run_exported(checked(model), values)

    def exported_function():
        with building():
            model = export_function_onnx(fast_run(), opset_version=case.opset)
        return run_exported(checked(model), values)

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

    # Not our bug when PyTensor's own graph disagrees with its reference in
    # the same way (a PyTensor rewrite changed the result, e.g. 2.38/3.3
    # rewrite reshape((0, n, 1) -> (0, 2)) into a squeeze with
    # SpecifyShape(n == 2), which fails for n != 2).
    # The judges of a disagreement with the reference: PyTensor's graphs after
    # its own rewrites, FAST_RUN's and those mode ONNX selects (another
    # query: mode ONNX's graph of flatten(x, 2) of a (n, m, 1) x became a
    # Squeeze, which gives (0, 0) for an empty x where NumPy's reshape
    # raises, as PyTensor's Numba mode returns; FAST_RUN's kept the Reshape
    # behind an IfElse of shapes; FUZZ_SEED=3743763509).
    #
    # The last judge, asked only where those did not excuse a disagreement:
    # FAST_RUN on PyTensor's default backend (Numba on 3.x, C on 2.38).
    # The judges above run Python scalar code, which raises OverflowError
    # where a rewrite makes an integer its dtype cannot hold, where the
    # compiled backends wrap: PyTensor rewrites int32 prod(a * b) into
    # prod(b) * sqr(a) with sqr in int32, 0 in FAST_RUN and mode ONNX where
    # the reference gives 2**62 (FUZZ_SEED=670596408).
    #
    # The same for the rewrites mode ONNX selects, where they and FAST_RUN's
    # differ: PyTensor moves `+` into a Switch's branches (switch(c, e, i) +
    # switch(c, e, i) of float64 e, int64 i becomes switch(c, e + e, i + i)),
    # where i + i of -2**63 wraps to 0 in mode ONNX's graph and on the
    # default backend running it, and FAST_RUN's other fusion kept the sum of
    # that switch and a vector in float64 (FUZZ_SEED=3666814641).
    def default_backend():
        with building():
            return pytensor.function(inputs, outputs, mode="FAST_RUN", on_unused_input="ignore")

    def rewrites_of_mode_onnx_on_the_default_backend():
        mode = Mode(linker=pytensor.compile.mode.get_mode("FAST_RUN").linker,
                    optimizer=ONNX_REWRITES.excluding("onnx"))
        with building():
            return pytensor.function(inputs, outputs, mode=mode, on_unused_input="ignore")

    judges = [("FAST_RUN", fast_run), ("PyTensor's rewrites of mode ONNX", pytensor_rewrites_of_mode_onnx),
              ("FAST_RUN on the default backend", default_backend),
              ("PyTensor's rewrites of mode ONNX on the default backend", rewrites_of_mode_onnx_on_the_default_backend)]
    outcomes = {}
    for label, run in runners:
        results, error = _outcome(run)
        # The exported models' zeros are not held to a sign: ONNX Runtime's
        # Where gives +0.0 where it selects a -0.0 of its X input (it merges
        # its two selections as `x != 0 ? x : y`; docs/semantics.md), and
        # correcting that would take six more nodes a Where. Mode ONNX's
        # kernels select bits (tests/python/test_semantics_zero_signs.py).
        problem = _disagreement(state, case.outputs, results, error, ref_values, ref_error, "PyTensor's reference",
                                output_spreads, zero_signs=label == "mode ONNX")
        if problem is None:
            continue
        if not any(_as_pytensor_itself(state, case.outputs, results, error, ref_values, ref_error, output_spreads,
                                       outcomes, name, judge_fn, values, inputs)
                   for name, judge_fn in judges):
            raise AssertionError(f"{label} {problem}")


def _as_pytensor_itself(state, outputs, results, error, ref_values, ref_error, output_spreads, outcomes, name,
                        judge_fn, values, inputs):
    """Whether a runner's disagreement with the reference is PyTensor's own:
    the judge's graph (``judge_fn()``, compiled once; outcomes kept in
    ``outcomes`` by ``name``) disagrees with the reference in the same way."""
    if name not in outcomes:
        j_results, j_error = _outcome(lambda: judge_fn()(*values))
        outcomes[name] = (None if j_results is None else dict(zip(outputs, j_results)), j_error)
    fr_values, fr_error = outcomes[name]
    fr_list = None if fr_values is None else list(fr_values.values())
    pytensor_itself = _disagreement(state, outputs, fr_list, fr_error, ref_values, ref_error, "the reference", output_spreads)
    same_as_judge = _disagreement(state, outputs, results, error, fr_values, fr_error, name, output_spreads) is None
    # Both fail at run time where the reference runs: PyTensor's rewrite
    # made the failure, whichever step then refuses it first (its
    # scan-save-mem asks a Scan over a [:-3] slice for n - 3 steps:
    # FAST_RUN's AllocEmpty refuses the negative size with ValueError,
    # mode ONNX's Scan with its own IndexError; FUZZ_SEED=4263052009).
    both_fail = (
        ref_error is None and fr_error is not None and error is not None
        and not getattr(error, "fuzz_building", False)
    )
    if pytensor_itself is not None and (same_as_judge or both_fail):
        event(f"PyTensor {name} {pytensor_itself[:400]}".replace("\n", " | "))
        return True
    if _each_output_as_reference_or_fast_run(state, outputs, results, error, ref_values, ref_error,
                                             fr_values, fr_error, output_spreads,
                                             lambda k: reference(state, inputs, values, [k])):
        event(f"PyTensor {name}, output by output: {pytensor_itself[:300]}".replace("\n", " | "))
        return True
    return False


def _each_output_as_reference_or_fast_run(state, outputs, results, error, ref_values, ref_error, fr_values, fr_error,
                                          output_spreads, reference_of):
    """Whether every output of a run that returned values agrees with PyTensor's
    reference, or with FAST_RUN's where FAST_RUN's disagrees with the reference.

    The export of a FAST_RUN function exports the function's outputs through
    the export's own rewrites, PyTensor's canonicalizations among them, which
    reach some outputs and not others: x / x of x = 0 stayed NaN (the
    reference's) while ceil(x / x) became 1 (FAST_RUN's, which rewrites both;
    FUZZ_SEED=1326408418). Where the reference raises for one output and
    FAST_RUN's rewrites removed what raised (abs(x / x)[1] of a (1, 1) x became
    the constant [1.]), each other output is judged against the reference of
    that output alone (``reference_of(k)``: its values, or the error).
    """
    if error is not None or fr_error is not None:
        return False
    for position, k in enumerate(outputs):
        def differs(expected, what):
            return _disagreement(state, [k], [results[position]], None, expected, None, what, output_spreads)

        if differs(fr_values, "FAST_RUN") is None:
            if ref_error is not None:
                continue  # (FAST_RUN returned values where the reference raises: its rewrites)
            if _disagreement(state, [k], [fr_values[k]], None, ref_values, None, "the reference",
                             output_spreads) is not None:
                continue
        own, own_error = (ref_values, None) if ref_error is None else reference_of(k)
        if own_error is not None or differs(own, "the reference") is not None:
            return False
    return True


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
