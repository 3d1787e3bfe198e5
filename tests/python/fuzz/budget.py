"""Hypothesis settings shared by the fuzz tests: a fixed number of examples,
reproducible draws unless ``FUZZ_SEED`` is set (``make fuzz`` sets a fresh
one per batch), no example database, no deadline (docs/testing.md)."""

import os

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

FUZZ_SEED = os.environ.get("FUZZ_SEED")


def fuzz_test(max_examples: int):
    """Decorator: run ``fn(..., data)`` on ``max_examples`` drawn examples."""

    def decorate(fn):
        fn = given(data=st.data())(fn)
        fn = settings(
            max_examples=max_examples,
            deadline=None,
            derandomize=FUZZ_SEED is None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )(fn)
        if FUZZ_SEED is not None:
            fn = seed(int(FUZZ_SEED))(fn)
        return fn

    return decorate
