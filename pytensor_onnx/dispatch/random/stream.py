"""The generator the models run, as ONNX ops: "Squares" (B. Widynski,
"Squares: A Fast Counter-Based RNG", 2020, arXiv:2004.06278; four rounds,
32-bit output, passes BigCrush) at counter ``counter + i`` with a key derived
from the seed. Squares needs only uint64 multiply, add and shifts (its
32-bit rotation is a sum of two shifts), which ONNX Runtime has at opset 13.
Each float is built from two words (53 random bits). Also what every RV rule
uses: the registration, the shape of the draws, rejection loops.
"""

from __future__ import annotations

import functools

import numpy as np
from pytensor.tensor.type_other import NoneTypeT

from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.random.state import SEED_KEY, U64
from pytensor_onnx.dispatch.utils import INT64_MAX, int64_const, output_dtype, reshape_to


def _u64(g, value):
    return g.const(np.asarray(value, dtype=U64))


def f64(g, value):
    return g.const(np.asarray(value, dtype=np.float64))


def _shift(g, x, bits, direction):
    return g.op("BitShift", x, _u64(g, bits), direction=direction)


def _squares32(g, counter, key):
    """Squares (4 rounds) on uint64 counters: 32-bit words as uint64."""
    x = y = g.op("Mul", counter, key)
    z = g.op("Add", y, key)
    for add in (y, z, y):
        x = g.op("Add", g.op("Mul", x, x), add)
        x = g.op("Add", _shift(g, x, 32, "RIGHT"), _shift(g, x, 32, "LEFT"))
    return _shift(g, g.op("Add", g.op("Mul", x, x), z), 32, "RIGHT")


def _split_state(g, state):
    seed = g.op("Slice", state, int64_const(g, [0]), int64_const(g, [1]))
    counter = g.op("Slice", state, int64_const(g, [1]), int64_const(g, [2]))
    return seed, counter


def _key(g, seed):
    """An odd 64-bit key from the seed (two Squares words under a fixed key)."""
    twice = g.op("Add", seed, seed)
    hi = _squares32(g, twice, _u64(g, SEED_KEY))
    lo = _squares32(g, g.op("Add", twice, _u64(g, 1)), _u64(g, SEED_KEY))
    key = g.op("Add", _shift(g, hi, 32, "LEFT"), lo)
    return g.op("Add", _shift(g, _shift(g, key, 1, "RIGHT"), 1, "LEFT"), _u64(g, 1))


class Stream:
    """Draws from one RNG state, advancing it: ``uniform(shape)`` gives
    float64 draws in the open interval (0, 1); ``state`` is the next state."""

    def __init__(self, g, state):
        self.g = g
        self.seed, self.counter = _split_state(g, state)
        self.key = _key(g, self.seed)

    def inside(self, body, counter):
        """A stream drawing in the subgraph ``body`` from ``counter`` (a
        loop-carried uint64[1]); seed and key are read from the enclosing graph."""
        inner = object.__new__(Stream)
        inner.g, inner.seed, inner.key, inner.counter = body, self.seed, self.key, counter
        return inner

    def uniform(self, shape):
        g = self.g
        known = shape.constant_value
        if known is not None and 0 in known:
            # ONNX Runtime 1.21's optimizer breaks on constant-folded empty
            # tensors broadcast with the [1] counter (it gives shape {1}).
            return g.const(np.zeros(tuple(int(d) for d in known), dtype=np.float64))
        n = g.op("Size", g.op("ConstantOfShape", shape))
        index = g.cast(g.op("Range", int64_const(g, 0), n, int64_const(g, 1)), "uint64")
        first = g.op("Add", self.counter, g.op("Add", index, index))
        high = _squares32(g, first, self.key)
        low = _squares32(g, g.op("Add", first, _u64(g, 1)), self.key)
        # 53 bits: 32 from the first word, 21 from the second
        bits = g.op("Add", _shift(g, high, 21, "LEFT"), _shift(g, low, 11, "RIGHT"))
        # (bits + 0.5) / 2**53 lies strictly inside (0, 1)
        u = g.op("Mul", g.op("Add", g.cast(bits, "float64"), f64(g, 0.5)), f64(g, 2.0**-53))
        used = g.cast(g.op("Add", n, n), "uint64")
        self.counter = g.op("Add", self.counter, g.op("Unsqueeze", used, axes=[0]))
        return reshape_to(g, u, shape)

    def normal(self, shape):
        g = self.g
        radius = g.op("Sqrt", g.op("Mul", f64(g, -2.0), g.op("Log", self.uniform(shape))))
        angle = g.op("Mul", f64(g, 2 * np.pi), self.uniform(shape))
        return g.op("Mul", radius, g.op("Cos", angle))

    @property
    def state(self):
        return self.g.op("Concat", self.seed, self.counter, axis=0)


def register_rv(op_class):
    """Register an RV rule; draws PyTensor knows to be empty skip it (a
    constant empty result, the state unchanged): ONNX Runtime 1.21 crashes on
    some constant-folded empty tensors in these graphs."""

    def decorate(rule):
        @functools.wraps(rule)
        def rv_rule(op, node, g, rng, *inputs):
            static = node.outputs[1].type.shape
            if 0 in static and None not in static:
                return rng, g.const(np.zeros(static, dtype=output_dtype(node, 1)))
            return rule(op, node, g, rng, *inputs)

        return onnx_funcify.register(op_class)(rv_rule)

    return decorate


def batch_shape(g, node, params, core_ndims):
    """int64 shape of the draws: ``size`` when given, else the broadcast
    batch shape of the parameters (PyTensor makes their batch ranks equal)."""
    op = node.op
    static = node.outputs[1].type.shape
    if all(dim is not None for dim in static):
        return int64_const(g, np.array(static[: len(static) - op.ndim_supp], dtype=np.int64))
    size_var = node.inputs[1]
    if not isinstance(size_var.type, NoneTypeT):
        return g.cast(params["size"], "int64")
    batch_ndim = node.outputs[1].type.ndim - op.ndim_supp
    shape = None
    for value, core in zip(params["dist"], core_ndims):
        dims = g.op("Slice", g.op("Shape", value), int64_const(g, [0]), int64_const(g, [batch_ndim]))
        # broadcasting per axis: a 1 takes the other size (also 0)
        shape = dims if shape is None else g.op("Where", g.op("Equal", shape, int64_const(g, 1)), dims, shape)
    return shape if shape is not None else int64_const(g, np.zeros(0, np.int64))


def last_dim(g, x):
    """The last dim of ``x`` as int64 [1]."""
    return g.op("Slice", g.op("Shape", x), int64_const(g, [-1]), int64_const(g, [INT64_MAX]))


def as_float(g, value):
    return g.cast(value, "float64")


def draws_rank(node):
    return node.outputs[1].type.ndim

#: Most rounds a rejection sampler's Loop runs. Marsaglia-Tsang accepts with
#: probability > 0.95 per round, so an element still rejected after them has
#: probability < 1e-1000; it is NaN rather than silently wrong.
_MAX_ROUNDS = 1000


def full(g, shape, value):
    return g.op("Expand", f64(g, value), shape)


def rejection_loop(g, stream, shape, rank, name, propose, done=None, fill=np.nan):
    """Vectorised rejection sampling of ``shape``: a Loop whose every round
    draws a proposal for all elements, ``propose(body, inner_stream) ->
    (candidate, accept)``, and keeps each element's first accepted candidate;
    it stops when all are accepted (at most ``_MAX_ROUNDS`` rounds; an element
    never accepted keeps ``fill``). ``done`` marks elements to skip."""
    body = g.subgraph(name)
    body.input("iteration", "int64", [])
    body.input("condition", "bool", [])
    counter = body.input("counter", "uint64", [1])
    result = body.input("result", "float64", [None] * rank)
    accepted = body.input("done", "bool", [None] * rank)
    inner = stream.inside(body, counter)
    b = body
    candidate, accept = propose(b, inner)
    result = b.op("Where", b.op("And", accept, b.op("Not", accepted)), candidate, result)
    accepted = b.op("Or", accepted, accept)
    pending = b.op("ReduceSum", b.cast(b.op("Not", accepted), "int64"), keepdims=0)
    b.output(b.op("Greater", pending, int64_const(b, 0)), "continue")
    b.output(inner.counter, "counter_out")
    b.output(result, "result_out")
    b.output(accepted, "done_out")
    if done is None:
        done = g.op("Less", full(g, shape, 0.0), f64(g, 0.0))
    stream.counter, result, _ = g.op(
        "Loop", int64_const(g, _MAX_ROUNDS), g.const(np.array(True)), stream.counter, full(g, shape, fill), done,
        body=body, outputs=3,
    )
    return result


def batch_axes(g, x, rank):
    """``x`` (K,) with ``rank`` trailing unit axes, to broadcast against draws."""
    return g.op("Unsqueeze", x, axes=list(range(1, rank + 1))) if rank else x
