"""ScalarLoop: a scalar recurrence (PyTensor builds the gradients of the
incomplete gamma and beta functions and of Hyp2F1 with it), applied
element-wise.

``ScalarLoop.perform`` (the same in PyTensor 2.38 and 3.3), per element::

    for i in range(n_steps):               # n_steps < 0: ValueError (no until)
        *state, until = fn(*state, *constants)
        if until: break                    # only with an until condition
    return *state, until                   # until is False when no step ran

The rule runs that recurrence on whole tensors as one ONNX ``Loop``: the
state is carried at the broadcast shape of all inputs, the inner scalar
graph converts through the scalar rules (as Composite's does). Elements
stop independently: an element whose own ``n_steps`` is reached, or whose
until condition held, keeps its state (``Where``), and the Loop stops when
no element is active, or after the largest ``n_steps``.
"""

import numpy as np
from pytensor.raise_op import CheckAndRaise
from pytensor.scalar.loop import ScalarLoop
from pytensor.tensor.basic import get_underlying_scalar_constant_value
from pytensor.tensor.exceptions import NotScalarConstantError

from pytensor_onnx import compiled_kernels, kernels
from pytensor_onnx.dispatch.basic import convert_nodes, kernels_enabled, lookup, onnx_funcify
from pytensor_onnx.dispatch.kernel import ScalarProgram, Unsupported, inline_scalar_graph
from pytensor_onnx.dispatch.raise_op import check_node_name
from pytensor_onnx.dispatch.utils import check, int64_const

_NEGATIVE_STEPS = check_node_name(CheckAndRaise(ValueError, "ScalarLoop does not have a termination condition."))


def _constant_steps(var):
    """The value of ``n_steps`` when it is one constant for every element, else None."""
    try:
        return int(get_underlying_scalar_constant_value(var))
    except (NotScalarConstantError, TypeError, ValueError):
        return None


def _broadcast_shape(g, values):
    """The shape of an element-wise result of all ``values`` (ONNX Expand
    broadcasts both ways, on every dtype)."""
    carrier = g.const(np.zeros((), dtype=bool))
    for value in values:
        carrier = g.op("Expand", carrier, g.op("Shape", value))
    return g.op("Shape", carrier)


def _flat_extreme(g, reduce_op, values):
    """ReduceMax/ReduceMin over all elements of an int64 tensor, 0 included
    (ONNX Runtime fails on empty reductions)."""
    flat = g.op("Reshape", values, int64_const(g, [-1]))
    return g.op(reduce_op, g.op("Concat", flat, int64_const(g, [0]), axis=0), axes=[0], keepdims=0)


def _any(g, flags):
    """Whether any element of a bool tensor holds (false when empty)."""
    count = g.op("ReduceSum", g.op("Reshape", g.cast(flags, "int64"), int64_const(g, [-1])), axes=[0], keepdims=0)
    return g.op("Greater", count, int64_const(g, 0))


def _checked_steps(op, node, g, steps, value):
    """``value``, passed on only once no step count is negative where the loop
    has no until condition (PyTensor's ValueError); ``steps`` are the int64
    step counts. Both the Loop and the kernel node read it, so both raise the
    same typed error."""
    constant_steps = _constant_steps(node.inputs[0])
    if op.is_while or (constant_steps is not None and constant_steps >= 0):
        return value
    lowest = _flat_extreme(g, "ReduceMin", steps)
    return check(g, g.op("GreaterOrEqual", lowest, int64_const(g, 0)), value, _NEGATIVE_STEPS)


#: State dtypes a float64 holds exactly, which a loop of float64 states
#: carries as float64 (a kernel node's outputs share one dtype).
_EXACT_IN_FLOAT64 = {"float64", "float32", "int32", "int16", "int8", "uint32", "uint16", "uint8", "bool"}


def _loop_dtype(state_dtypes) -> str | None:
    """The one dtype the kernel node's states take: theirs, or float64 where
    they mix dtypes it holds exactly (PyTensor's betainc gradient carries an
    int16 sign beside its float64 terms); None where no dtype holds them all."""
    if len(set(state_dtypes)) == 1:
        return state_dtypes[0]
    return "float64" if "float64" in state_dtypes and set(state_dtypes) <= _EXACT_IN_FLOAT64 else None


def _loop_kernel(op, node, g, n_steps, inputs, n_update, state_dtypes):
    """The ScalarLoop as one kernel node (``ScalarLoop_<dtype>``), or None
    where the kernels cannot run it: states of dtypes no one dtype holds, an
    op the kernels lack."""
    dtype = _loop_dtype(state_dtypes)
    inner = op.fgraph
    if dtype is None or not kernels.ops() or [var.type.dtype for var in inner.inputs[:n_update]] != state_dtypes:
        return None
    # A state of another dtype is carried as `dtype`: the body reads it cast
    # to its own dtype, and casts its next value to its own dtype (wrapping
    # as that dtype does) before carrying it; both casts are exact.
    body_dtypes = [dtype] * n_update + [var.type.dtype for var in inner.inputs[n_update:]]
    program = ScalarProgram(body_dtypes)
    try:
        reads = [program.cast(r, d) for r, d in enumerate(state_dtypes)] + list(range(n_update, len(body_dtypes)))
        registers = inline_scalar_graph(program, inner.inputs, inner.outputs, reads)
        next_state = [program.cast(program.cast(r, d), dtype) for r, d in zip(registers[:n_update], state_dtypes)]
        until = program.cast(registers[n_update], "bool") if op.is_while else -1
    except Unsupported:
        return None
    steps = g.cast(n_steps, "int64")
    values = [_checked_steps(op, node, g, steps, steps)] + [g.cast(v, d) for v, d in zip(inputs, body_dtypes)]
    g.require_domain(kernels.DOMAIN, kernels.DOMAIN_VERSION)
    attributes = dict(
        input_dtypes=" ".join(body_dtypes), program=program.text(), num_state=n_update, next_state=next_state, until=until
    )
    # (Before the session builds the kernel, which looks the compiled body up.)
    compiled_kernels.compile_loop(**attributes)
    outs = g.op(
        f"ScalarLoop_{dtype}",
        *values,
        domain=kernels.DOMAIN,
        outputs=n_update + (1 if op.is_while else 0),
        **attributes,
    )
    outs = list(outs) if isinstance(outs, list | tuple) else [outs]
    outs[:n_update] = [g.cast(out, d) for out, d in zip(outs, state_dtypes)]  # (no-ops for states of `dtype`)
    if op.is_while:
        outs[-1] = g.cast(outs[-1], "bool")  # the flag comes as 0/1 in the state's dtype
    return outs


@onnx_funcify.register(ScalarLoop)
def _scalar_loop(op, node, g, n_steps, *inputs):
    inner = op.fgraph
    n_update = len(inner.outputs) - (1 if op.is_while else 0)
    if n_update == 0:
        raise NotImplementedError(f"ScalarLoop without state (node: {node}): nothing to iterate")
    state_dtypes = [out.type.dtype for out in node.outputs[:n_update]]
    if kernels_enabled():
        outs = _loop_kernel(op, node, g, n_steps, inputs, n_update, state_dtypes)
        if outs is not None:
            return outs
    rank = len(getattr(node.outputs[0].type, "broadcastable", ()))
    shape = _broadcast_shape(g, [n_steps, *inputs])

    steps = g.cast(n_steps, "int64")
    constant_steps = _constant_steps(node.inputs[0])
    uniform = constant_steps is not None or all(getattr(node.inputs[0].type, "broadcastable", ()))
    if uniform:  # one step count for all elements: the Loop's trip count alone
        trip_count = g.op("Reshape", steps, int64_const(g, []))
        per_element_steps = None
    else:
        trip_count = _flat_extreme(g, "ReduceMax", steps)
        per_element_steps = g.op("Expand", steps, shape)
    trip_count = _checked_steps(op, node, g, steps, trip_count)

    body = g.subgraph(f"{op.name or 'scalar_loop'}_body".replace(" ", "_"))
    iteration = body.input("iteration", "int64", [])
    body.input("condition", "bool", [])
    carried_init = []
    done = None
    if op.is_while:
        carried_init.append(g.op("Expand", g.const(np.zeros((), dtype=bool)), shape))
        done = body.input("done", "bool", [None] * rank)
    state = []
    for k, (value, dtype) in enumerate(zip(inputs[:n_update], state_dtypes)):
        carried_init.append(g.op("Expand", g.cast(value, dtype), shape))
        state.append(body.input(f"state{k}", dtype, [None] * rank))

    env = dict(zip(inner.inputs, [*state, *inputs[n_update:]], strict=True))
    convert_nodes(inner.toposort(), body, env, check_shapes=False, outputs=list(inner.outputs))
    results = [lookup(body, env, var) for var in inner.outputs]

    # Which elements take this step: those within their own n_steps and not done.
    active = None
    if per_element_steps is not None:
        active = body.op("Less", iteration, per_element_steps)
    if done is not None:
        not_done = body.op("Not", done)
        active = not_done if active is None else body.op("And", active, not_done)

    new_state = []
    for value, old, dtype in zip(results[:n_update], state, state_dtypes):
        value = body.cast(value, dtype)
        # Where also broadcasts an update that reads only constants to the full shape.
        new_state.append(body.op("Where", active, value, old) if active is not None
                         else body.op("Expand", value, body.op("Shape", old)))
    if done is not None:
        until = body.cast(results[n_update], "bool")
        new_done = body.op("Where", active, until, done)
        still_running = body.op("Not", new_done)
        if per_element_steps is not None:
            next_step = body.op("Add", iteration, int64_const(body, 1))
            still_running = body.op("And", still_running, body.op("Less", next_step, per_element_steps))
        body.output(_any(body, still_running), "continue")
        body.output(new_done, "done_out")
    else:
        body.output(body.op("Identity", body.const(np.array(True))), "continue")
    for k, value in enumerate(new_state):
        body.output(value, f"state_out{k}")

    finals = g.op("Loop", trip_count, g.const(np.array(True)), *carried_init, body=body, outputs=len(carried_init))
    if len(carried_init) == 1:
        finals = [finals]
    finals = list(finals)
    if op.is_while:
        finals = finals[1:] + finals[:1]  # the until flag is the last output
    return finals
