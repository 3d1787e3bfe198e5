"""The conversion dispatch: ``onnx_funcify`` rules and FunctionGraph conversion.

A rule converts one PyTensor ``Op`` into ONNX nodes by calling the C++
``GraphBuilder``::

    @onnx_funcify.register(MyOp)
    def _my_op(op, node, g, x, y):
        return g.op("Add", x, y)

``op`` is the Op instance, ``node`` the Apply node (for static facts such as
output dtypes), ``g`` the builder and the remaining arguments the ONNX values of
``node.inputs`` (Python objects for non-tensor constants such as slices or None).
A rule returns one value, or a sequence with one value per node output.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from functools import singledispatch

import numpy as np
from pytensor.compile.builders import OpFromGraph
from pytensor.compile.ops import DeepCopyOp, TypeCastingOp
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.basic import Constant, Variable
from pytensor.graph.fg import FunctionGraph
from pytensor.graph.op import Op
from pytensor.scalar.basic import ScalarType
from pytensor.tensor.random.type import RandomType
from pytensor.tensor.type import TensorType

from pytensor_onnx import _core

logger = logging.getLogger("pytensor_onnx")

#: The default ONNX opset of exported models.
ONNX_OPSET_VERSION = 18


def check_opset(opset_version) -> int:
    """``opset_version``, checked to be an opset the builder writes
    (``_core.MIN_OPSET`` to ``_core.MAX_KNOWN_OPSET``)."""
    if isinstance(opset_version, bool) or not isinstance(opset_version, int):
        raise TypeError(f"opset_version must be an int, got {type(opset_version).__name__}")
    if not _core.MIN_OPSET <= opset_version <= _core.MAX_KNOWN_OPSET:
        raise ValueError(
            f"opset_version {opset_version} is outside the supported range "
            f"{_core.MIN_OPSET}..{_core.MAX_KNOWN_OPSET}"
        )
    return opset_version


@singledispatch
def onnx_funcify(op, node, g, *inputs):
    """Convert ``op`` (applied in ``node``) to ONNX nodes built with ``g``."""
    cls = type(op).__name__
    raise NotImplementedError(
        f"No ONNX conversion for Op {cls} (node: {node}). Register a rule:\n"
        f"    @pytensor_onnx.onnx_funcify.register({cls})\n"
        f"    def _(op, node, g, *inputs):\n"
        f"        return g.op('<OnnxOp>', *inputs)"
    )


_register_rule = onnx_funcify.register


def _checked_register(cls, func=None):
    """``onnx_funcify.register``, checking what it is given when it is given
    (singledispatch accepts any object as the rule, and a wrong one would
    only fail at the first conversion of the Op)."""
    if not isinstance(cls, type):
        return _register_rule(cls, func)  # the annotated-function form; singledispatch checks it
    if not issubclass(cls, Op):
        raise TypeError(f"onnx_funcify.register takes a pytensor Op class, got {cls.__name__}")
    if func is None:
        return lambda rule: _checked_register(cls, rule)
    if not callable(func):
        raise TypeError(
            f"the ONNX rule for {cls.__name__} must be a function (op, node, g, *inputs), got {type(func).__name__}"
        )
    return _register_rule(cls, func)


onnx_funcify.register = _checked_register


@singledispatch
def onnx_typify(data, dtype=None, **kwargs):
    """Convert constant data to the NumPy array stored as an ONNX initializer."""
    # np.require keeps 0-d arrays 0-d (np.ascontiguousarray would make them 1-d).
    return np.require(np.asarray(data, dtype=dtype), requirements="C")


def onnx_dtype(var: Variable) -> str:
    """The NumPy dtype name of a tensor or scalar variable, checked for ONNX."""
    if isinstance(var.type, RandomType):
        return "uint64"  # an RNG is its state [seed, counter] (dispatch/random/state.py)
    dtype = getattr(var.type, "dtype", None)
    if dtype is None:
        raise NotImplementedError(f"Variable {var} of type {var.type} has no tensor dtype; ONNX cannot carry it")
    if dtype.startswith("complex"):
        raise NotImplementedError(f"Variable {var} has dtype {dtype}: ONNX Runtime has no complex tensors")
    return dtype


def static_shape(var: Variable) -> tuple:
    if isinstance(var.type, ScalarType):
        return ()
    if isinstance(var.type, RandomType):
        return (2,)
    return tuple(var.type.shape)


def const(g, value, dtype: str) -> _core.Value:
    """An initializer holding ``value`` as ``dtype``."""
    return g.const(onnx_typify(value, dtype=dtype))


def _valid_name(name: str | None) -> bool:
    return bool(name) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.:\-]*", name) is not None


def _unique_names(variables: Sequence[Variable], prefix: str, taken: set[str]) -> list[str]:
    names = []
    for i, var in enumerate(variables):
        name = var.name if _valid_name(var.name) and var.name not in taken else f"{prefix}{i}"
        while name in taken:
            name = f"{name}_"
        taken.add(name)
        names.append(name)
    return names


class ConversionResult:
    """A converted graph: the builder and the ONNX names of its inputs and outputs."""

    def __init__(self, builder, input_names, output_names, initializer_inputs):
        self.builder = builder
        self.input_names = input_names
        self.output_names = output_names
        #: fgraph input indices that became initializers (shared variables on export)
        self.initializer_inputs = initializer_inputs


def fgraph_to_onnx(
    fgraph: FunctionGraph,
    *,
    opset_version: int = ONNX_OPSET_VERSION,
    shared_as_initializers: bool = False,
    initializer_values: dict | None = None,
    optimize: bool = True,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    inline_functions: bool = False,
    kernels: bool = False,
    check_each_output: bool = True,
) -> ConversionResult:
    """Convert a FunctionGraph with ``onnx_funcify`` rules into a C++ GraphBuilder.

    With ``shared_as_initializers`` the graph's shared-variable inputs become
    initializers holding ``initializer_values[var]`` (default: their current
    value); otherwise they stay graph inputs (execution mode, so updates work).
    Recipes (``g.recipe``) become model-local functions unless
    ``inline_functions``. With ``kernels``, element-wise work becomes nodes
    of the kernel library (``pytensor_onnx.kernels``) where it can. The
    run-time broadcast check (``dispatch.broadcast``) is read by every output,
    or with ``check_each_output=False`` by the first one only (for callers
    that fetch every output on every run: a run fails as a whole).
    """
    previous = getattr(_conversion, "kernels", False)
    _conversion.kernels = bool(kernels)
    try:
        result = _fgraph_to_onnx(
            fgraph, opset_version, shared_as_initializers, initializer_values, optimize, input_names, output_names,
            inline_functions, check_each_output,
        )
    finally:
        _conversion.kernels = previous
    if kernels:
        # The kernel nodes' programs as machine code, before a session builds
        # their kernels; with those the passes wrote (read from the final graph).
        from pytensor_onnx import compiled_kernels

        if compiled_kernels.enabled():
            compiled_kernels.compile_graph_programs(result.builder.stage_programs())
        compiled_kernels.compile_queued()
    return result


_conversion = threading.local()


def kernels_enabled() -> bool:
    """Whether the graph being converted may use the kernel library's ops."""
    return getattr(_conversion, "kernels", False)


def _fgraph_to_onnx(
    fgraph, opset_version, shared_as_initializers, initializer_values, optimize, input_names, output_names,
    inline_functions, check_each_output=True,
) -> ConversionResult:
    initializer_values = initializer_values or {}
    g = _core.GraphBuilder(int(opset_version), "pytensor_graph", inline_functions=bool(inline_functions))
    taken: set[str] = set()
    graph_inputs = [
        (i, inp)
        for i, inp in enumerate(fgraph.inputs)
        # RNG shared variables stay inputs: an exported model takes its seed
        if not (shared_as_initializers and isinstance(inp, SharedVariable) and not isinstance(inp.type, RandomType))
    ]
    if input_names is None:
        names = _unique_names([inp for _, inp in graph_inputs], "input_", taken)
    else:
        names = list(input_names)
        generators = [inp for _, inp in graph_inputs if isinstance(inp.type, RandomType)]
        if generators and len(names) == len(graph_inputs) - len(generators) and all(
                isinstance(inp.type, RandomType) for _, inp in graph_inputs[len(names):]):
            # Names for the explicit inputs only: the seed inputs (appended last) keep their own.
            taken.update(names)
            names += _unique_names(generators, "rng_", taken)
        if len(names) != len(graph_inputs):
            raise ValueError(f"input_names has {len(names)} names for {len(graph_inputs)} graph inputs")
        taken.update(names)

    env: dict[Variable, object] = {}
    initializer_inputs = []
    for (i, inp), name in zip(graph_inputs, names):
        shape = [
            dim if dim is not None else f"{name}_dim{axis}" for axis, dim in enumerate(static_shape(inp))
        ]
        env[inp] = g.input(name, onnx_dtype(inp), shape)
    for i, inp in enumerate(fgraph.inputs):
        if inp not in env:
            initializer_inputs.append(i)
            value = initializer_values[inp] if inp in initializer_values else inp.get_value(borrow=True)
            env[inp] = const(g, value, onnx_dtype(inp))

    nodes = fgraph.toposort()
    scope = convert_nodes(nodes, g, env, outputs=fgraph.outputs)

    if output_names is None:
        out_names = _unique_names(fgraph.outputs, "output_", taken)
    else:
        out_names = list(output_names)
        if len(out_names) != len(fgraph.outputs):
            raise ValueError(f"output_names has {len(out_names)} names for {len(fgraph.outputs)} outputs")
    from pytensor_onnx.dispatch.broadcast import checked_outputs

    values = [_lookup(g, env, var) for var in fgraph.outputs]
    tensors = [not _is_static_type(var) for var in fgraph.outputs]
    if not check_each_output and any(tensors):
        first = tensors.index(True)
        tensors = [i == first for i in range(len(tensors))]
    checked = checked_outputs(g, nodes, env, fgraph.outputs, values, tensors, scope.checked_in_kernels)
    for var, name, value, original in zip(fgraph.outputs, out_names, checked, values):
        # PyTensor knows every output's rank, where the builder's inference may
        # not. Only the rank is declared: PyTensor's static dims can be wrong
        # (split_dims with a -1 size gives a static -1).
        declared = None if _is_static_type(var) else [None] * len(static_shape(var))
        if value is not original and original.shape is not None:
            # read through the broadcast check: the sizes the builder knew
            declared = [d if isinstance(d, int) else None for d in original.shape]
        g.output(value, name, shape=declared)
    if optimize:
        g.optimize()
    return ConversionResult(g, names, out_names, initializer_inputs)


class ConversionScope:
    """The graph being converted: its builder, its env, its nodes (in
    topological order) and its outputs. Rules with inner graphs (IfElse) read
    it to convert part of the surrounding graph inside a subgraph."""

    def __init__(self, g, env: dict, nodes: list, outputs):
        self.g = g
        self.env = env
        self.nodes = nodes
        #: the graph's outputs; None when the caller did not say
        self.outputs = None if outputs is None else list(outputs)
        #: nodes a rule has converted as part of its own node (``FUSED``)
        self.converted: set = set()
        #: Elemwise nodes whose kernel node checks PyTensor's broadcasting
        #: rule itself (``dispatch.kernel.strict_axes``): the graph's own
        #: broadcast check (``dispatch.broadcast``) leaves them out
        self.checked_in_kernels: set = set()
        self._clients = None

    def clients(self, var) -> list:
        """The nodes of this graph that read ``var``."""
        if self._clients is None:
            self._clients = {}
            for node in self.nodes:
                for inp in dict.fromkeys(node.inputs):
                    self._clients.setdefault(inp, []).append(node)
        return self._clients.get(var, [])


_scopes = threading.local()


def current_scope() -> ConversionScope | None:
    """The innermost graph ``convert_nodes`` is converting (None outside a conversion)."""
    stack = getattr(_scopes, "stack", None)
    return stack[-1] if stack else None


class _Fused:
    """What a rule returns for an output whose readers it has converted itself,
    into the same node (a fused kernel that sums the output instead of
    writing it): the output has no value of its own. The rule gives the
    readers' outputs their values and lists the readers in its scope's
    ``converted``."""

    def __repr__(self):
        return "FUSED"


FUSED = _Fused()


def convert_nodes(nodes, g, env: dict, *, check_shapes: bool = True, outputs=None) -> ConversionScope:
    """Apply the rules to ``nodes`` (in topological order), extending ``env``
    (Variable -> ONNX value). Also used for inner graphs such as Composite's,
    whose scalar nodes run on whole tensors (``check_shapes=False`` there).
    ``outputs``: the graph's outputs, if known (see ``ConversionScope``).
    A node an earlier rule has converted into its own node (see ``FUSED``) is
    not converted again. Returns the scope the nodes were converted in."""
    nodes = list(nodes)
    stack = getattr(_scopes, "stack", None)
    if stack is None:
        stack = _scopes.stack = []
    scope = ConversionScope(g, env, nodes, outputs)
    stack.append(scope)
    try:
        for node in nodes:
            if node in scope.converted:
                continue  # fused into an earlier node by that node's rule
            inputs = [_lookup(g, env, var) for var in node.inputs]
            try:
                result = onnx_funcify(node.op, node, g, *inputs)
            except Exception as exc:
                _note_failing_node(exc, node)
                raise
            outs = _as_output_list(result, node)
            for var, value in zip(node.outputs, outs):
                if value is FUSED:
                    continue  # read only by nodes the rule converted: no value
                _check_output(node, var, value, check_shapes)
                env[var] = value
    finally:
        stack.pop()
    return scope


_NOTE_START = "while converting the node"


def _note_failing_node(exc: BaseException, node) -> None:
    """Name the node whose rule failed (once: inner graphs fail inside outer nodes)."""
    if any(note.startswith(_NOTE_START) for note in getattr(exc, "__notes__", ())):
        return
    rule = onnx_funcify.dispatch(type(node.op))
    op = type(node.op).__name__
    how = f"(Op {op}, which has no ONNX rule)" if rule is onnx_funcify.dispatch(object) else (
        f"(Op {op}) with the ONNX rule {getattr(rule, '__module__', '?')}.{getattr(rule, '__qualname__', rule)}")
    exc.add_note(f"{_NOTE_START} {node} {how}")


def lookup(g, env, var):
    """The ONNX value of ``var``: from ``env``, or a new initializer for a Constant."""
    return _lookup(g, env, var)


def _lookup(g, env, var):
    if var in env:
        return env[var]
    if isinstance(var, Constant):
        if isinstance(var.type, TensorType | ScalarType | RandomType):
            value = const(g, var.data, onnx_dtype(var))
        else:
            value = var.data  # slices, None and other static Python values
        env[var] = value
        return value
    raise ValueError(f"Variable {var} is neither a graph input, a constant, nor computed by a node")


def _is_static_type(var) -> bool:
    """Whether ``var`` holds a static Python value (a slice, None) rather than a tensor."""
    return not isinstance(var.type, TensorType | ScalarType | RandomType)


def _as_output_list(result, node):
    if len(node.outputs) == 1 and _is_static_type(node.outputs[0]):
        return [result]
    if isinstance(result, _core.Value):
        outs = [result]
    elif isinstance(result, Sequence):
        outs = list(result)
    else:
        raise TypeError(f"The ONNX rule for {node.op} returned {type(result).__name__}, not a Value or a list of Values")
    if len(outs) != len(node.outputs):
        raise TypeError(f"The ONNX rule for {node.op} returned {len(outs)} values for {len(node.outputs)} outputs")
    return outs


def _check_output(node, var, value, check_shapes=True):
    if _is_static_type(var):
        return
    if not isinstance(value, _core.Value):
        raise TypeError(f"The ONNX rule for {node.op} returned {value!r} for output {var}, not a Value")
    expected = onnx_dtype(var)
    if value.dtype != expected:
        raise TypeError(
            f"The ONNX rule for {node.op} produced dtype {value.dtype} for output {var}, "
            f"but PyTensor's type says {expected}"
        )
    shape = static_shape(var)
    if check_shapes and value.shape is not None:
        if len(value.shape) != len(shape):
            raise TypeError(
                f"The ONNX rule for {node.op} produced rank {len(value.shape)} for output {var}, "
                f"but PyTensor's type says rank {len(shape)}"
            )
        # An empty array's type may carry sizes its run does not have:
        # PyTensor deduces a Reshape's unknown size of an empty input as
        # 0 // 0 = 0 (Reshape.make_node), and its local_join_to_repeat writes
        # such Reshapes, whose later nodes inherit the size. Where both sides
        # know the array is empty (a 0 on the same axis), the values agree
        # whatever the other sizes are; the rule's are the run's.
        empty = any(got == 0 and want == 0 for got, want in zip(value.shape, shape))
        for axis, (got, want) in enumerate(zip(value.shape, shape)):
            if isinstance(got, int) and want is not None and got != want and not empty:
                raise TypeError(
                    f"The ONNX rule for {node.op} produced size {got} on axis {axis} of {var}, "
                    f"but PyTensor's type says {want}"
                )


@onnx_funcify.register(DeepCopyOp)
@onnx_funcify.register(TypeCastingOp)
def _identity_like(op, node, g, x, *rest):
    # Values are immutable in ONNX; copies and views are the value itself.
    return x


@onnx_funcify.register(OpFromGraph)
def _op_from_graph(op, node, g, *inputs):
    # The inner graph is converted in place (inlined): its inputs line up with
    # the node's (shared variables it reads are explicit inputs on every
    # supported PyTensor line). Subclasses with a rule of their own (Softmax,
    # ...) use that rule instead.
    # PyTensor's broadcasting rule holds in the inner graph as in the outer
    # one (dispatch/broadcast.py): every tensor result reads the inner
    # graph's check, since the graph around may read any one of them.
    from pytensor_onnx.dispatch.broadcast import checked_outputs

    inner = op.fgraph
    env = dict(zip(inner.inputs, inputs, strict=True))
    nodes = inner.toposort()
    scope = convert_nodes(nodes, g, env, outputs=inner.outputs)
    values = [_lookup(g, env, out) for out in inner.outputs]
    tensors = [getattr(out.type, "ndim", 0) > 0 for out in inner.outputs]
    return checked_outputs(g, nodes, env, inner.outputs, values, tensors, scope.checked_in_kernels)
