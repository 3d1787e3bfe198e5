"""Replays the shrunk failures the fuzzer found (tests/python/fuzz_cases/*.json;
docs/testing.md, "When it fails: regression cases")."""

import pytest

from fuzz.check import CASES_DIR, load_cases, run_case

CASES = load_cases()

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def test_the_store_holds_cases():
    # The directory exists and its files parse (load_cases would have raised).
    assert CASES_DIR.is_dir() and CASES


@pytest.mark.parametrize("case", [case for _, case in CASES], ids=[name for name, _ in CASES])
def test_saved_case(case):
    run_case(case)
