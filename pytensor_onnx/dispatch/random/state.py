"""The RNG state of the ONNX models: how a NumPy ``Generator`` becomes a
``uint64[2]`` state ``[seed, counter]`` and back (mode ONNX feeds and reads
shared RNGs through these; see docs/semantics.md, "Random variables"), and
the NumPy reference of the generator the models run."""

from __future__ import annotations

import copy

import numpy as np
from pytensor.tensor.random.type import RandomType

from pytensor_onnx.dispatch.basic import onnx_typify


#: The key that turns a seed into a node key: the first key of the Squares
#: paper's key list (keys.h of its reference code).
SEED_KEY = 0xC58EFD154CE32F6D

#: Marks a Philox key as an encoded ONNX RNG state (see ``state_generator``).
_STATE_MARK = 0x0A11CE5EED0A11CE

U64 = np.uint64


def squares32(counter, key):
    """NumPy reference of the generator the models run (uint64 arrays in,
    32-bit words as uint64 out); tests compare the ONNX words with it."""
    counter = np.asarray(counter, dtype=U64)
    key = U64(key)
    with np.errstate(over="ignore"):
        x = y = counter * key
        z = y + key
        for add in (y, z, y):
            x = x * x + add
            x = (x >> U64(32)) + (x << U64(32))
        return (x * x + z) >> U64(32)


def rng_state(generator) -> np.ndarray:
    """The ONNX RNG state ``uint64[2] = [seed, counter]`` of a NumPy Generator.

    A Generator made by ``state_generator`` decodes to its state; any other
    Generator gives ``[its next raw 64-bit word, 0]`` (read from a copy, so
    the Generator itself is left as it was): the same seeded Generator gives
    the same state, hence the same draws."""
    bitgen = generator.bit_generator
    if isinstance(bitgen, np.random.Philox):
        state = bitgen.state["state"]
        if int(state["key"][1]) == _STATE_MARK:
            return np.array([state["key"][0], state["counter"][0]], dtype=U64)
    seed = copy.deepcopy(bitgen).random_raw()
    return np.array([seed, 0], dtype=U64)


def state_generator(state) -> np.random.Generator:
    """A NumPy Generator that encodes the ONNX RNG ``state`` (and is a real
    Philox Generator, so PyTensor's other backends can draw from it)."""
    seed, counter = (int(v) for v in np.asarray(state, dtype=U64))
    bitgen = np.random.Philox(counter=[counter, 0, 0, 0], key=[seed, _STATE_MARK])
    return np.random.Generator(bitgen)


def is_rng(var) -> bool:
    return isinstance(var.type, RandomType)


@onnx_typify.register(np.random.Generator)
def _typify_generator(data, dtype=None, **kwargs):
    return rng_state(data)
