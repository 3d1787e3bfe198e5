"""How tightly the fuzzer checks its outputs, per family (issue 24 item 1):
draws fuzz cases as test_fuzz.py does, runs only PyTensor's reference, and
counts the non-exact float outputs by the relative accuracy their tolerance
demands (the largest ``(rtol |ref| + atol) / |ref|`` over finite non-zero
elements; "unchecked" when that is >= 1, i.e. zero would pass).

    .venv/bin/python tests/python/fuzz/tolerances.py [cases per focus, default 100]
"""

import collections
import sys
import warnings
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz.check import build_graph, reference, spreads, tolerance  # noqa: E402
from fuzz.program import StepNode, cases  # noqa: E402
from helpers import OPSETS  # noqa: E402
from test_fuzz import FOCUS  # noqa: E402

BUCKETS = [1e-12, 1e-9, 1e-6, 1e-3, 1.0]


def bucket(relative):
    for limit in BUCKETS:
        if relative <= limit:
            return f"<= {limit:g}" if limit < 1 else "< 1"
    return "unchecked"


def old_tolerance(state, index, ref_values):
    """The bound before issue 24: atol scaled by the largest |value| x size
    among everything the output depends on."""
    ancestors = state.ancestors(index)
    eps = max(np.finfo(state.metas[k].dtype).eps for k in ancestors if state.metas[k].kind == "f")
    scale = 1.0
    for k in ancestors:
        value = ref_values.get(k)
        if value is not None and value.dtype.kind in "fiu" and value.size:
            finite = np.abs(value[np.isfinite(value)].astype(np.float64)) if value.dtype.kind == "f" else np.abs(value.astype(np.float64))
            if finite.size:
                scale = max(scale, float(finite.max()) * max(1, value.size))
    return 2**10 * eps, 2**6 * eps * scale


def main(per_focus):
    warnings.simplefilter("ignore")
    counts = collections.defaultdict(collections.Counter)

    def record(case):
        state = build_graph(case)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref, error = reference(state, state.input_vars, case.values, case.outputs)
            if error is not None:
                return
            spread = spreads(case, state, state.input_vars, case.values, ref)
        for k in case.outputs:
            tol = tolerance(state, k, spread.get(k))
            value = ref[k].astype(np.float64)
            nonzero = np.isfinite(value) & (value != 0)
            if tol is None or not nonzero.any():
                continue
            node = case.nodes[k]
            family = (node.gen.split(".")[0] if isinstance(node, StepNode) else "input") + f" {state.metas[k].dtype}"
            for bound, (rtol, atol) in (("now", tol), ("old", old_tolerance(state, k, ref))):
                relative = float(np.max((rtol * np.abs(value) + np.broadcast_to(atol, value.shape))[nonzero] / np.abs(value[nonzero])))
                counts[bound, family][bucket(relative)] += 1

    for focus in sorted(FOCUS):
        @settings(max_examples=per_focus, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
        @given(st.data())
        def draw(data):
            record(data.draw(cases(OPSETS, families=FOCUS[focus])))

        draw()
    labels = [bucket(limit) for limit in BUCKETS] + ["unchecked"]
    print("| family, dtype | bound | outputs | " + " | ".join(labels) + " |")
    print("|---|---|---|" + "---|" * len(labels))
    for bound, family in sorted(counts, key=lambda key: (key[1], key[0] != "old")):
        row = counts[bound, family]
        print(f"| {family} | {bound} | {sum(row.values())} | " + " | ".join(str(row[label]) for label in labels) + " |")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
