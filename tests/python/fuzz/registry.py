"""The registry of op generators: one small generator per way of applying an op.

A generator (a subclass of ``OpGenerator`` decorated with ``@register``)
turns one variable of the graph being grown (its *primary operand*) into a
new variable. It declares

- ``accepts(meta)``: which variables it can take as primary operand (dtype,
  rank, size, exactness; see ``Meta``); a *source* generator (``source =
  True``) takes none and makes a variable from nothing (``arange``, ``eye``);
- ``draw(ctx, meta)``: draws its parameters (a JSON-able dict) with
  ``ctx.draw``; it may add operands, picked from the graph (``ctx.pick``) or
  made as new graph inputs (``ctx.new_input``, with the shape, static dims and
  value domain it needs);
- ``build(params, *operands)``: the PyTensor expression, from the parameters
  alone (saved cases are rebuilt with it);
- ``shape(params, *operand_shapes)``: the concrete run-time shape of the result;
- ``exact`` / ``is_exact(params, metas)``: whether the result is IEEE-exact
  given exact operands (``True`` for ``+``, ``max``, indexing, ...; ``False``
  for ``exp`` or float sums, whose rounding differs between implementations);
  ``keeps_zero_signs``: whether IEEE also fixes the signs of its zeros (not
  for ``max`` and ``min``, which may give either of +0.0 and -0.0).

Discontinuous operations (comparisons, ``floor``, casts to integers, argmax)
accept only exact operands, so a last-bit difference upstream cannot flip
their result. Value domains are part of ``build``: a generator whose op is
undefined for some values (integer division by zero, integer negative powers,
float -> int casts out of range) maps its operand into the domain with graph
operations, which works for computed operands too.

Families live in ``fuzz/families/<family>.py`` (named after PyTensor's and the
dispatch modules) and register with ``@generator(...)``; every module of that
package is imported, so adding a family is adding a file.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass

import numpy as np


@dataclass
class Meta:
    """What the fuzzer knows about a variable of the graph being grown."""

    index: int  # position in the program's variable list
    var: object  # the PyTensor variable
    shape: tuple  # concrete run-time shape
    exact: bool  # IEEE-exact (see the module docstring)
    zero_signs: bool = True  # exact, and IEEE fixes the signs of its zeros (OpGenerator.keeps_zero_signs)

    @property
    def dtype(self) -> str:
        return self.var.type.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def static(self) -> tuple:
        return tuple(self.var.type.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def kind(self) -> str:
        """"b" (bool), "i" (signed), "u" (unsigned) or "f" (float)."""
        return np.dtype(self.dtype).kind


class OpGenerator:
    """Base class of generators; subclasses override what differs.

    ``draw``, ``build`` and ``shape`` receive the parameters first; operands
    are PyTensor variables in ``build``, concrete shapes in ``shape`` and
    ``Meta`` objects in ``draw`` (the primary operand; a source gets none).
    """

    name: str = ""  # "<family>.<what>", stored in saved cases
    source: bool = False
    weight: float = 1.0
    exact: bool = True

    @property
    def family(self) -> str:
        return self.name.split(".")[0]

    def accepts(self, meta) -> bool:
        return True

    def draw(self, ctx, *metas) -> dict:
        return {}

    def build(self, params, *operands):
        raise NotImplementedError

    def shape(self, params, *shapes) -> tuple:
        return tuple(shapes[0])

    def is_exact(self, params, metas) -> bool:
        """Whether the result is IEEE-exact given exact operands."""
        return self.exact

    def result_is_exact(self, params, metas) -> bool:
        return all(m.exact for m in metas) and self.is_exact(params, metas)

    def keeps_zero_signs(self, params, metas) -> bool:
        """Whether IEEE fixes the signs of an exact result's zeros, given
        operands whose zero signs are fixed: not where the result is the
        larger or smaller of +0.0 and -0.0, which IEEE lets be either (NumPy's
        SIMD loops pick by operand order)."""
        return True

    def result_keeps_zero_signs(self, params, metas) -> bool:
        return (self.result_is_exact(params, metas) and all(m.zero_signs for m in metas)
                and self.keeps_zero_signs(params, metas))


REGISTRY: dict[str, OpGenerator] = {}


def register(cls):
    """Class decorator: add an instance of the ``OpGenerator`` subclass to ``REGISTRY``."""
    if not cls.name or cls.name in REGISTRY:
        raise ValueError(f"fuzz generator {cls.__name__} needs a unique name, got {cls.name!r}")
    REGISTRY[cls.name] = cls()
    return cls


def load_families() -> dict[str, OpGenerator]:
    """Import every module of ``fuzz.families`` (each registers its generators)."""
    from fuzz import families

    for info in pkgutil.iter_modules(families.__path__):
        importlib.import_module(f"fuzz.families.{info.name}")
    return REGISTRY


# -- helpers shared by the families ---------------------------------------------


def same_shape(params, shape, *rest):
    return tuple(shape)


def broadcast_shapes(params, *shapes):
    return tuple(np.broadcast_shapes(*shapes))


def numpy_shape(fn):
    """A ``shape`` function computed by NumPy on stride-0 arrays (no memory used)."""

    def shape(params, *shapes):
        arrays = [np.broadcast_to(np.zeros((), dtype=bool), s) for s in shapes]
        return tuple(fn(params, *arrays).shape)

    return shape


def is_float(meta) -> bool:
    return meta.kind == "f"


def is_int(meta) -> bool:
    return meta.kind in "iu"


def is_numeric(meta) -> bool:
    return meta.kind in "iuf"
