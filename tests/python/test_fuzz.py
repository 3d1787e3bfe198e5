"""Differential fuzzing: random graphs over every op family the backend
converts, in mode ONNX and as exported models, against PyTensor's
pure-Python reference (docs/testing.md).

Budget: FUZZ_EXAMPLES graphs per test (default 25; 9 tests), reproducible
draws unless FUZZ_SEED is set (``make fuzz`` sets a fresh one per batch). A
failure is shrunk by Hypothesis and written to tests/python/fuzz_cases/,
which test_fuzz_regressions.py replays.
"""

import os

import pytest
from hypothesis import event
from hypothesis.control import current_build_context

from fuzz.budget import fuzz_test
from fuzz.check import run_case, save_case
from fuzz.program import StepNode, cases

from helpers import OPSETS

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

FUZZ_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", 25))
#: Each test weighs some families four times more than the rest (None: all alike).
FOCUS = {
    "mixed": None,
    "elemwise": ["elemwise"],
    "reductions": ["math", "special"],
    "shape": ["shape"],
    "subtensor": ["subtensor"],
    "tensor_basic": ["tensor_basic"],
    "special_functions": ["special_functions"],
    "linalg": ["linalg"],
    "control": ["control"],
}


@pytest.mark.parametrize("focus", sorted(FOCUS))
@fuzz_test(FUZZ_EXAMPLES)
def test_fuzz(focus, data):
    case = data.draw(cases(OPSETS, families=FOCUS[focus]), label="case")
    for node in case.nodes:
        if isinstance(node, StepNode):
            event(f"generator {node.gen}")
    try:
        run_case(case)
    except AssertionError as exc:
        if current_build_context().is_final:
            path = save_case(case, str(exc).splitlines()[0][:500])
            raise AssertionError(f"{exc}\n\nShrunk case saved to {path} (replayed by test_fuzz_regressions.py)") from None
        raise
