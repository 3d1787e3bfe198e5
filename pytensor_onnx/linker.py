"""ONNXLinker: runs a FunctionGraph as one ONNX Runtime session."""

from __future__ import annotations

import copyreg
import hashlib
import logging
import math
import re
import threading
import weakref
from collections import OrderedDict

import numpy as np
from pytensor.link.basic import Container, JITLinker
from pytensor.scalar.basic import ScalarType
from pytensor.tensor.random.type import RandomType

from pytensor_onnx import _core, kernels
from pytensor_onnx.dispatch.basic import ONNX_OPSET_VERSION, check_opset
from pytensor_onnx.dispatch.utils import DATA_CHECK
from pytensor_onnx.rewriting import INCOMPATIBLE_REWRITES, REQUIRED_REWRITES, incompatible_rewrites
from pytensor_onnx.runtime import check_providers as _check_providers
from pytensor_onnx.runtime import NativeSession, default_session_options, native_unavailable_reason, packed_offsets

logger = logging.getLogger("pytensor_onnx")

_SESSION_CACHE: OrderedDict = OrderedDict()
_SESSION_CACHE_SIZE = 64
# Functions are compiled (and collected) on any thread: the lookup, the LRU
# move and the eviction must not interleave (a key evicted between get and
# move_to_end raised KeyError).
_SESSION_CACHE_LOCK = threading.Lock()


def _options_key(options) -> tuple:
    if options is None:
        return ()
    return (
        options.intra_op_num_threads,
        options.inter_op_num_threads,
        int(options.graph_optimization_level),
        int(options.execution_mode),
        options.enable_cpu_mem_arena,
        id(options),
    )


def uses_native_sessions(session_options=None, providers=None) -> bool:
    """Whether a function with these settings runs on native sessions
    (``runtime.NativeSession``): mode ONNX's defaults do; session options of
    the user's, or providers other than the CPU one, go through
    ``onnxruntime.InferenceSession``, which takes them as they are."""
    return (
        session_options is None
        and (not providers or list(providers) == ["CPUExecutionProvider"])
        and native_unavailable_reason() is None
    )


def get_session(model_bytes: bytes, session_options=None, providers=None, names=None):
    """A session for ``model_bytes``; identical models share one. With
    ``names`` (its input and output names, in the order a run feeds and
    fetches them, then optionally the outputs and inputs it packs:
    ``NativeSession``'s ``packed`` and ``packed_inputs``) and the defaults, a
    native session (``uses_native_sessions``), else an InferenceSession."""
    import onnxruntime as ort

    native = names is not None and uses_native_sessions(session_options, providers)
    packed = tuple(names[2]) if names is not None and len(names) > 2 else ()
    packed_inputs = tuple(names[3]) if names is not None and len(names) > 3 else ()
    if (packed or packed_inputs) and not native:
        raise _packed_without_native_sessions()
    providers = list(providers) if providers else ["CPUExecutionProvider"]
    key = (hashlib.sha256(model_bytes).digest(), _options_key(session_options), tuple(map(str, providers)))
    if native:
        key += ("native", tuple(names[0]), tuple(names[1]), packed, packed_inputs)
    with _SESSION_CACHE_LOCK:
        cached = _SESSION_CACHE.get(key)
        if cached is not None:
            _SESSION_CACHE.move_to_end(key)
            return cached[0]
    # Outside the lock: building a session takes long, and two threads
    # building the same one only cost time (one of them is kept).
    if native:
        session = NativeSession(model_bytes, names[0], names[1], packed=packed, packed_inputs=packed_inputs)
    else:
        options = session_options if session_options is not None else default_session_options()
        if kernels.model_uses_kernels(model_bytes):
            kernels.register(options, fresh=session_options is None)
        try:
            session = ort.InferenceSession(model_bytes, sess_options=options, providers=providers)
        except Exception as exc:  # ORT raises its own exception types
            raise RuntimeError(
                f"ONNX Runtime rejected the model built for this graph: {exc}\n"
                "Export it with pytensor_onnx.export_onnx and check it with `pytensor-onnx validate` to inspect it."
            ) from exc
    with _SESSION_CACHE_LOCK:
        # The options object stays referenced while cached, so its id (part
        # of the key) cannot be reused by other options.
        cached = _SESSION_CACHE.setdefault(key, (session, session_options))
        _SESSION_CACHE.move_to_end(key)
        while len(_SESSION_CACHE) > _SESSION_CACHE_SIZE:
            _SESSION_CACHE.popitem(last=False)
    return cached[0]


def _packed_triples(made) -> tuple:
    """The builder's packed inputs or outputs, hashable (part of a session's key)."""
    return tuple((name, tuple(names), tuple(tuple(shape) for shape in shapes)) for name, names, shapes in made)


def _packed_without_native_sessions() -> RuntimeError:
    return RuntimeError(
        "pytensor_onnx: this function's model packs small inputs or outputs for a native session, and native "
        "sessions are "
        f"now off ({native_unavailable_reason()}); compile the function again"
    )


def _check_session_options(options):
    if options is None:
        return None
    import onnxruntime as ort

    if not isinstance(options, ort.SessionOptions):
        raise TypeError(f"session_options must be an onnxruntime.SessionOptions or None, got {type(options).__name__}")
    return options


def _check_kernels(wanted) -> bool:
    if wanted is None:
        return kernels.available()
    if not isinstance(wanted, bool):
        raise TypeError(f"kernels must be True, False or None, got {type(wanted).__name__}")
    if wanted and kernels.unavailable_reason() is not None:
        raise RuntimeError(f"kernels=True, but the kernel library cannot be used: {kernels.unavailable_reason()}")
    return wanted


class ONNXLinker(JITLinker):
    """A Linker that converts the whole FunctionGraph to ONNX and runs it on ONNX Runtime.

    Parameters
    ----------
    opset_version
        ONNX opset of the model (default ``pytensor_onnx.ONNX_OPSET_VERSION``).
    session_options
        ``onnxruntime.SessionOptions``; the default disables idle spinning.
    providers
        ONNX Runtime execution providers (default ``["CPUExecutionProvider"]``).
    kernels
        Whether element-wise work runs as nodes of the project's kernel library
        (``pytensor_onnx.kernels``): None (the default) uses them when the
        library was built (and ``PYTENSOR_ONNX_KERNELS`` does not turn them
        off), False runs the portable graph an export holds, True requires them.
    """

    required_rewrites = REQUIRED_REWRITES
    incompatible_rewrites = INCOMPATIBLE_REWRITES

    def __init__(self, opset_version=None, session_options=None, providers=None, *args, kernels=None, **kwargs):
        self.opset_version = check_opset(opset_version) if opset_version is not None else ONNX_OPSET_VERSION
        self.session_options = _check_session_options(session_options)
        self.providers = _check_providers(providers)
        self.kernels = _check_kernels(kernels)
        self.incompatible_rewrites = incompatible_rewrites(self.kernels)
        self.onnx_model_bytes: bytes | None = None
        self.session = None
        #: Outputs of ``onnx_model`` that hold several of the function's
        #: small float64 outputs (scalars, arrays of static shape): triples
        #: (output name, the names of its elements, their shapes), each
        #: element's values after the one before's; ``function_outputs``
        #: splits them. ``packed_inputs``: the same for its inputs (at most
        #: one triple), which ``model_feed`` gathers.
        self.packed_outputs: tuple = ()
        self.packed_inputs: tuple = ()
        # A function keeps its last call's inputs and outputs in its storage,
        # as PyTensor's C linker (a whole graph in one thunk too) does, rather
        # than clearing them after every call: ~0.2 us of a PyMC
        # log-density's ~4.5 us call. There are no intermediate values for
        # PyTensor to collect; ONNXLinker(allow_gc=True) clears them.
        if not args:
            kwargs.setdefault("allow_gc", False)
        super().__init__(*args, **kwargs)

    def clone(self, allow_gc=None):
        return type(self)(
            opset_version=self.opset_version,
            session_options=self.session_options,
            providers=self.providers,
            kernels=self.kernels,
            allow_gc=self.allow_gc if allow_gc is None else allow_gc,
        )

    def __repr__(self):
        return f"ONNXLinker(opset_version={self.opset_version}, kernels={self.kernels})"

    @property
    def onnx_model(self):
        """The ``onnx.ModelProto`` this linker runs."""
        import onnx

        if self.onnx_model_bytes is None:
            raise ValueError("The linker has not converted a graph yet")
        return onnx.load_from_string(self.onnx_model_bytes)

    def function_outputs(self, outputs_by_name: dict) -> list:
        """The function's outputs, in order, from a run of ``onnx_model`` in a
        session of your own (``outputs_by_name``: its outputs by name): the
        arrays packed into one output (``packed_outputs``) split again."""
        named = dict(outputs_by_name)
        for packed, elements, shapes in self.packed_outputs:
            vector = np.asarray(named[packed])
            for name, offset, shape in zip(elements, packed_offsets(shapes), shapes, strict=True):
                named[name] = vector[offset : offset + math.prod(shape)].reshape(shape).copy()
        return [named[name] for name in self._output_names]

    def model_feed(self, inputs_by_name: dict) -> dict:
        """The feed of a run of ``onnx_model`` in a session of your own from
        the function's inputs by name: the arrays packed into one input
        (``packed_inputs``) gathered into it."""
        feed = dict(inputs_by_name)
        for packed, elements, shapes in self.packed_inputs:
            values = [np.asarray(feed.pop(name), dtype=np.float64) for name in elements]
            for name, value, shape in zip(elements, values, shapes, strict=True):
                if value.shape != tuple(shape):
                    raise ValueError(f"input {name!r} has shape {value.shape}; the model packs it as {tuple(shape)}")
            feed[packed] = np.concatenate([value.reshape(-1) for value in values])
        return feed

    def fgraph_convert(self, fgraph, order=None, input_storage=None, output_storage=None, storage_map=None, **kwargs):
        """Convert ``fgraph`` to ONNX, open its session, and return ``run(*inputs) -> outputs``.

        Every fgraph input (shared variables included) is a graph input of
        this model; ``create_jitable_thunk`` then bakes the shared variables
        the function does not update into the session as initializers.
        """
        from pytensor_onnx.dispatch import fgraph_to_onnx
        from pytensor_onnx.dispatch.optional import register_optional_rules

        register_optional_rules()
        converted = fgraph_to_onnx(
            fgraph,
            opset_version=self.opset_version,
            shared_as_initializers=False,
            inline_functions=True,
            kernels=self.kernels,
            check_each_output=False,  # the thunk fetches every output
        )
        native = uses_native_sessions(self.session_options, self.providers)
        self.packed_outputs = self.packed_inputs = ()
        builder = converted.builder
        if self.kernels and native:
            # Small results as one output, which the native session splits
            # again, and small inputs (not the shared values it bakes) as
            # one input, which it gathers (pack_small_arrays.h).
            baked = [converted.input_names[i] for i in bakeable_inputs(fgraph)]
            self.packed_outputs = _packed_triples(builder.pack_small_outputs_of_kernels())
            self.packed_inputs = _packed_triples(builder.pack_small_inputs_of_kernels(baked))
        if self.kernels:
            # Kernel nodes take the static shapes of the inputs they read
            # from the model; a native session checks the scalar inputs'
            # ranks, which ONNX Runtime does not (record_input_shapes.h).
            builder.record_input_shapes_in_kernels(scalar_ranks_checked=native)
        self.onnx_model_bytes = converted.builder.serialize(graph_name="pytensor_graph")
        self._input_names = tuple(converted.input_names)
        self._output_names = list(converted.output_names)
        names, outputs = self._input_names, self._output_names
        self.session = get_session(
            self.onnx_model_bytes, self.session_options, self.providers,
            (names, outputs, self.packed_outputs, self.packed_inputs),
        )
        run = self.session.run_feed if isinstance(self.session, NativeSession) else self.session._sess.run

        def run_onnx(*args):
            try:
                return run(outputs, dict(zip(names, args)), None)
            except Exception as exc:  # ORT raises its own exception types
                raise run_error(exc, _describe_failure(exc, names, args, fgraph)) from exc

        return run_onnx

    def jit_compile(self, fn):
        return fn

    def create_thunk_inputs(self, storage_map):
        return [storage_map[var] for var in self.fgraph.inputs]

    def create_jitable_thunk(self, compute_map, order, input_storage, output_storage, storage_map):
        # A leaner thunk than JITLinker's: it feeds the storage cells straight
        # into the C-level session run (PyTensor has already checked the input
        # types) and returns the outputs, so Function skips collecting them.
        fgraph = self.fgraph
        output_nodes = [o.owner for o in fgraph.outputs if o.owner is not None][:1]
        run_onnx = self.fgraph_convert(fgraph, order, input_storage, output_storage, storage_map)
        cells = [storage_map[var] for var in fgraph.inputs]
        runner = _SessionRunner(self, fgraph, cells, [storage_map[var] for var in fgraph.outputs])
        self.runner = runner
        thunk = runner.thunk
        thunk.inputs = cells
        thunk.outputs = runner.out_cells
        thunk.lazy = False
        return [thunk], output_nodes, run_onnx


#: After this many rebuilds for changed shared values a function stops baking
#: them and feeds them as session inputs on every call (their values change
#: too often for the rebuild to pay: another function updates them).
MAX_REBINDS = 4


def bakeable_inputs(fgraph) -> list[int]:
    """Indices of the fgraph inputs baked as initializers in execution mode:
    tensor shared variables the function does not update."""
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.tensor.type import TensorType

    updated = set(getattr(fgraph, "update_mapping", {}).values())
    return [
        i
        for i, var in enumerate(fgraph.inputs)
        if isinstance(var, SharedVariable) and isinstance(var.type, TensorType) and i not in updated
    ]


class _VersionedContainer(Container):
    """A shared variable's Container that counts the values set through it.

    ``set_value`` goes through ``Container.value``; the count lets a function
    that baked the value notice ``s.set_value(f(s.get_value(borrow=True)),
    borrow=True)`` (PyTensor's documented in-place idiom), which keeps the
    same array object. It pickles and copies as a plain Container.
    """

    onnx_value_version = 0

    def _set_counted(self, value):
        Container.__set__(self, value)
        self.onnx_value_version += 1

    value = property(Container.__get__, _set_counted)

    def __reduce_ex__(self, protocol):
        state = super().__reduce_ex__(protocol)[2]
        return (copyreg._reconstructor, (Container, object, None), state)


def _versioned(container) -> Container | None:
    """``container``, made to count set values (None for Container types this cannot do for)."""
    if type(container) is Container:
        container.__class__ = _VersionedContainer
    return container if isinstance(container, _VersionedContainer) else None


class _SessionRunner:
    """Runs one function's model: the session, the cells it feeds from, and
    the shared values it baked in as initializers.

    Baked values are initializers of the session (ONNX Runtime pre-packs and
    folds them as it does for an exported model). Each call checks that every
    baked shared variable still holds the very object that was baked (one
    identity test per variable) and rebuilds the session when one was
    replaced (an update by another function) or set again (``set_value``,
    counted by its Container). Other in-place writes into a baked array are
    not guaranteed to be seen (docs/usage.md, "Execution mode").
    """

    def __init__(self, linker, fgraph, cells, out_cells):
        self.linker = linker
        self.fgraph = fgraph
        self.cells = cells
        self.out_cells = out_cells
        self.names = linker._input_names
        self.out_names = linker._output_names
        self.rebinds = 0
        # PyTensor holds ScalarType values as NumPy scalars; ONNX Runtime wants
        # 0-d arrays in, and PyTensor wants NumPy scalars back.
        self.scalar_inputs = {
            name for name, var in zip(self.names, fgraph.inputs) if isinstance(var.type, ScalarType)
        }
        self.scalar_outputs = [i for i, var in enumerate(fgraph.outputs) if isinstance(var.type, ScalarType)]
        # RNGs: NumPy Generators in PyTensor, uint64 [seed, counter] states in ONNX
        self.rng_inputs = {name for name, var in zip(self.names, fgraph.inputs) if isinstance(var.type, RandomType)}
        self.rng_outputs = [i for i, var in enumerate(fgraph.outputs) if isinstance(var.type, RandomType)]
        # (Values that cross into or out of ONNX Runtime converted.)
        self.converts_values = bool(self.scalar_inputs or self.scalar_outputs or self.rng_inputs or self.rng_outputs)
        self.baked = bakeable_inputs(fgraph)
        self.containers = {i: _versioned(fgraph.inputs[i].container) for i in self.baked}
        self.thunk = None  # (made by the first bind; PyTensor holds it for good)
        self.bind()

    def bind(self):
        """Open the session for the current shared values and build the thunk."""
        baked = self.baked if self.rebinds <= MAX_REBINDS else []
        values = [self.cells[i][0] for i in baked]
        fed = [i for i in range(len(self.cells)) if i not in set(baked)]
        if baked:
            session = self._baked_session(baked, values, [self.names[i] for i in fed])
        else:
            session = get_session(
                self.linker.onnx_model_bytes, self.linker.session_options, self.linker.providers,
                (self.names, self.out_names, self.linker.packed_outputs, self.linker.packed_inputs),
            )
        self.linker.session = session
        self.checks = tuple(
            (self.cells[i], value, self.containers[i], getattr(self.containers[i], "onnx_value_version", 0))
            for i, value in zip(baked, values)
        )
        if isinstance(session, NativeSession) and not self.converts_values:
            # The hot path: a thunk in C that checks the baked values and runs
            # the session on the cells, which it reads and stores into itself
            # (src/python/cell_thunk.cc).
            state = (session.run_cells, tuple(self.cells[i] for i in fed), tuple(self.out_cells), self.checks)
            if self.thunk is None:
                self.thunk = _core.CellThunk(*state, weakref.WeakMethod(self._rebind), weakref.WeakMethod(self._fail))
            else:
                self.thunk.reset(*state)
            return
        if isinstance(self.thunk, _core.CellThunk):  # (sessions of one function are all native or none)
            raise RuntimeError("pytensor_onnx: a function run by a native session was rebound to another session")
        self.run_once = self._make_run(session, fed)
        if self.thunk is None:
            self.thunk = self._checking_thunk() if self.baked else self.run_once  # (never rebinds: no indirection)

    def _checking_thunk(self):
        """The thunk that rebinds when a baked value changed, then runs."""
        runner = self

        def thunk():
            for cell, value, container, version in runner.checks:
                if cell[0] is not value or (container is not None and container.onnx_value_version != version):
                    runner._rebind()
                    break
            return runner.run_once()

        return thunk

    def _baked_session(self, baked, values, fed_names):
        import onnxruntime as ort

        asked = [self.names[i] for i in baked]
        arrays = [np.asarray(v, order="C") for v in values]  # (ascontiguousarray makes 0-d arrays 1-d)
        user_options = self.linker.session_options
        # Without options of the user's, the initializers are placeholders:
        # their data comes from the OrtValues below, not through the model
        # bytes. The caller's SessionOptions cannot be copied, and adding
        # initializers to them would leak into their other sessions, so then
        # the data goes in the model.
        location = "pytensor-onnx-shared-value" if user_options is None else ""
        # The C++ core leaves out a shared variable the rewritten graph no
        # longer reads (only its static shape was used): `names` are those it
        # baked.
        model_bytes, names = _core.bake_inputs(self.linker.onnx_model_bytes, asked, arrays, location)
        array_of = dict(zip(asked, arrays))
        arrays = [array_of[name] for name in names]
        packed, packed_inputs = self.linker.packed_outputs, self.linker.packed_inputs
        if uses_native_sessions(user_options, self.linker.providers):
            # The session reads the arrays (NativeSession keeps them alive).
            return NativeSession(model_bytes, fed_names, self.out_names, dict(zip(names, arrays)), packed=packed,
                                 packed_inputs=packed_inputs)
        if packed or packed_inputs:
            raise _packed_without_native_sessions()
        if user_options is None:
            options = default_session_options()
            ort_values = [ort.OrtValue.ortvalue_from_numpy(a) for a in arrays]
            # The external initializers satisfy the placeholders when the
            # model loads (ORT >= 1.32 refuses an unresolved external path in
            # a model given as bytes); add_initializer then makes the session
            # use the arrays' own memory instead of its copy of them
            # (measured: a 64 MB weight read by an Add costs 64 MB less).
            # Weights ONNX Runtime pre-packs (MatMul's B) are still packed
            # into its own buffer.
            options.add_external_initializers(names, ort_values)
            for name, value in zip(names, ort_values):
                options.add_initializer(name, value)
            # The session reads these buffers: they live as long as it does.
            self._bound_buffers = (arrays, ort_values, options)
        else:
            options = user_options
        if kernels.model_uses_kernels(self.linker.onnx_model_bytes):
            kernels.register(options, fresh=user_options is None)
        providers = list(self.linker.providers) if self.linker.providers else ["CPUExecutionProvider"]
        try:
            return ort.InferenceSession(model_bytes, sess_options=options, providers=providers)
        except Exception as exc:  # ORT raises its own exception types
            raise RuntimeError(f"ONNX Runtime rejected the model built for this graph: {exc}") from exc

    def _rebind(self):
        self.rebinds += 1
        self.bind()

    def _fail(self, exc):
        """Raise the exception for the failed run that raised ``exc``."""
        names = self.names
        args = [cell[0] for cell in self.cells]
        # PyTensor 2.38 lets None through to the linker as an input value
        # (3.x rejects it); ONNX Runtime then reports a "Missing Input".
        missing = [name for name, arg in zip(names, args) if arg is None]
        if missing:
            raise TypeError(f"input {missing[0]} is None; pass an array") from exc
        raise run_error(exc, _describe_failure(exc, names, args, self.fgraph)) from exc

    def _make_run(self, session, fed):
        import onnxruntime as ort

        feeds = tuple((self.names[i], self.cells[i]) for i in fed)
        # (A native session converting values takes InferenceSession's call.)
        run = session.run_feed if isinstance(session, NativeSession) else session._sess.run
        # A RunOptions of our own rather than None, which makes ONNX Runtime
        # build a default one on every call (0.3 us of a 6 us tiny-graph run,
        # bench/overhead.py). Runs only read it, so concurrent calls share it.
        run_options = ort.RunOptions()
        out_cells, out_names = self.out_cells, self.out_names
        scalar_inputs, scalar_outputs = self.scalar_inputs, self.scalar_outputs
        rng_inputs, rng_outputs = self.rng_inputs, self.rng_outputs
        fail = self._fail

        if self.converts_values:
            from pytensor_onnx.dispatch.random.state import rng_state, state_generator

            def run_once():
                feed = {name: np.asarray(cell[0]) if name in scalar_inputs else cell[0] for name, cell in feeds}
                for name in rng_inputs:
                    feed[name] = rng_state(feed[name])
                try:
                    results = run(out_names, feed, run_options)
                except Exception as exc:
                    fail(exc)
                for i in scalar_outputs:
                    results[i] = results[i][()]
                for i in rng_outputs:
                    results[i] = state_generator(results[i])
                for cell, value in zip(out_cells, results):
                    cell[0] = value
                return results

        else:
            # The hot path: nothing but the run and the output stores.
            def run_once():
                try:
                    results = run(out_names, {name: cell[0] for name, cell in feeds}, run_options)
                except Exception as exc:
                    fail(exc)
                for cell, value in zip(out_cells, results):
                    cell[0] = value
                return results

        return run_once


class ONNXIndexError(RuntimeError, IndexError):
    """An index out of range at run time: an IndexError, as PyTensor's linkers
    raise, and a RuntimeError, as every other ONNX Runtime failure of mode
    ONNX is."""


# ONNX Runtime's words for an index out of range in its Gather and Scatter
# kernels (1.21 to 1.32): Gather/GatherElements/ScatterElements say "out of
# data bounds" (or "Out of range value in index tensor"), GatherND "invalid
# index found", ScatterND "invalid indice found".
_INDEX_FAILURE = re.compile(
    r"running (Gather|GatherElements|GatherND|Scatter|ScatterElements|ScatterND) node.*"
    r"(out of data bounds|invalid (index|indice) found|Out of range value in index)",
    re.DOTALL,
)


# The kernel library's Elemwise nodes run merged Gather and ScatterND nodes as
# stages, whose index out of range says so (src/kernels/elemwise.cc).
_KERNEL_INDEX_FAILURE = re.compile(
    r"running Elemwise_\w+ node.*Status Message: Elemwise: index -?\d+ is out of data bounds", re.DOTALL
)


_ELEMWISE_FAILURE = re.compile(r"running Elemwise_\w+ node.*Status Message: (.*)", re.DOTALL)
# What an Elemwise kernel node says when its strict axes' check fails (src/kernels/elemwise.cc).
_SHAPE_CHECK_FAILURE = "Input dimension mismatch"


def run_error(exc, description: str) -> BaseException:
    """The exception for a failed run, by the node that failed (ONNX Runtime
    quotes its name): the converted CheckAndRaise's own exception type (also
    a RuntimeError) when one of its checks failed, a RuntimeError when a
    rule's data check did (``dispatch.utils.DATA_CHECK``: an empty max, a zero
    arange step, ...; not an index of the user's), an ``ONNXIndexError`` when
    an index was out of range, else a RuntimeError."""
    from pytensor_onnx.dispatch.raise_op import raised_check_error

    # (A kernel node that also checks its inputs' shapes is named after that
    # check, whose exception only that check's failure raises: an index out
    # of range in one of its Gather or Scatter stages is an IndexError, a
    # reshape that does not fit a RuntimeError.)
    if _KERNEL_INDEX_FAILURE.search(str(exc)):
        return ONNXIndexError(f"index out of bounds\n{description}")
    elemwise = _ELEMWISE_FAILURE.search(str(exc))
    if elemwise and _SHAPE_CHECK_FAILURE not in elemwise.group(1):
        return RuntimeError(description)
    checked = raised_check_error(exc, description)
    if checked is not None:
        return checked
    message = str(exc)
    if f"Name:'{DATA_CHECK}" in message:
        return RuntimeError(description)
    if _INDEX_FAILURE.search(message):
        return ONNXIndexError(f"index out of bounds\n{description}")
    return RuntimeError(description)


def _describe_failure(exc, names, args, fgraph) -> str:
    lines = [f"ONNX Runtime failed to run the model: {exc}", "Inputs given:"]
    for name, arg, var in zip(names, args, fgraph.inputs):
        shape = getattr(arg, "shape", None)
        dtype = getattr(arg, "dtype", type(arg).__name__)
        lines.append(f"  {name}: dtype {dtype}, shape {shape}; PyTensor type {var.type}")
    return "\n".join(lines)
