"""Hypothesis settings shared by the fuzz tests: a fixed number of examples,
reproducible draws unless ``FUZZ_SEED`` is set (``make fuzz`` sets a fresh
one per batch), no example database, no deadline (docs/testing.md).

With ``FUZZ_FAILURE_FILE`` set (``make fuzz`` sets it), the first failing
example of a test appends the test's name to that file, so a batch stopped
at the end of its time while Hypothesis shrinks a failure is still known to
have failed.
"""

import functools
import os

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

FUZZ_SEED = os.environ.get("FUZZ_SEED")
FUZZ_FAILURE_FILE = os.environ.get("FUZZ_FAILURE_FILE")


def _marking_failures(fn):
    @functools.wraps(fn)
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception:  # not BaseException: Hypothesis ends examples with its own (StopTest)
            with open(FUZZ_FAILURE_FILE, "a") as f:
                f.write(f"{fn.__name__} {sorted((k, repr(v)) for k, v in kwargs.items() if k != 'data')}\n")
            raise

    return run


def fuzz_test(max_examples: int):
    """Decorator: run ``fn(..., data)`` on ``max_examples`` drawn examples."""

    def decorate(fn):
        if FUZZ_FAILURE_FILE:
            fn = _marking_failures(fn)
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
