"""Input values of fuzz cases: Hypothesis strategies per dtype and domain, and
their JSON form."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

#: Floats where implementations tend to differ: signed zeros, ties of
#: rounding, infinities, NaN, values near overflow and underflow.
SPECIAL_FLOATS = [0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 1.0, -1.0, 2.0, np.inf, -np.inf, np.nan, 1e30, -1e-30, 3.0]


def elements(dtype):
    """Any value of ``dtype``, biased towards small and special ones."""
    if dtype == "bool":
        return st.booleans()
    if dtype.startswith("float"):
        width = 32 if dtype == "float32" else 64
        return st.one_of(
            st.sampled_from(SPECIAL_FLOATS).map(lambda v: np.array(v, dtype=dtype)[()]),
            st.floats(-10, 10, width=width),
            st.integers(-8, 8).map(float),
            st.floats(width=width),
        )
    info = np.iinfo(dtype)
    return st.one_of(
        st.integers(max(info.min, -8), min(info.max, 8)),
        st.sampled_from([int(info.min), int(info.max), 0, 1]),
        st.integers(int(info.min), int(info.max)),
    )


def values_for(node):
    """The values of an input node. Domains:

    - ``None``: any value of the dtype (``elements``);
    - ``"index:<n>"``: integers in ``[-n, n - 1]`` (valid indices of a size-n axis);
    - ``"range:<lo>:<hi>"``: integers in ``[lo, hi]``.
    A node with a fixed ``value`` always gets that value.
    """
    dtype, shape = node.dtype, tuple(node.shape)
    if node.value is not None:
        return st.just(np.array(node.value, dtype=dtype).reshape(shape))
    domain = node.domain
    if domain is None:
        strategy = elements(dtype)
    elif domain.startswith("index:"):
        n = int(domain.split(":")[1])
        strategy = st.integers(-n, n - 1)
    elif domain.startswith("range:"):
        _, lo, hi = domain.split(":")
        strategy = st.integers(int(lo), int(hi))
    else:
        raise ValueError(f"unknown value domain {domain!r}")
    return hnp.arrays(dtype, shape, elements=strategy)


def array_to_json(value) -> dict:
    value = np.asarray(value)
    data = value.tolist()
    return {"dtype": value.dtype.name, "shape": list(value.shape), "data": data}


def array_from_json(data) -> np.ndarray:
    return np.array(data["data"], dtype=data["dtype"]).reshape(data["shape"])
