"""How far each PyMC model of the suite can go on ONNX Runtime: its call against a do-nothing run.

For every model of ``tests/python/pymc_models.py``, the log-density and gradient
compiled in mode ONNX (native session) are timed three ways: the whole call
(``Function.__call__``, trust_input), the session's run alone (on the
function's storage cells), and the same run of a model of the same signature
whose nodes do nothing (an ``Identity`` of a constant per output, scalars
packed into one input and output as the function's are). The call less its
node's work, ``call - run + do-nothing run``, is the floor: what mode ONNX
would cost were the model's node free. It is
printed beside the fastest of PyTensor's C and Numba backends (bench/results.md,
"fifteenth step"). Issue 21, item 6.

    python bench/call_floor.py                # every model
    python bench/call_floor.py --only eight   # models whose name contains "eight"

Timings on a shared, loaded machine are noisy: read ratios, not absolute numbers.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
from pathlib import Path

from backends import machine, per_call_seconds
from pymc_suite import logp_and_gradient

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))  # the model suite


def do_nothing_session(linker, fed_names, results):
    """A native session of the signature of the native session of `linker`'s
    model (the graph inputs it feeds, `fed_names`, and its outputs, scalars
    packed as the function's are) whose nodes do nothing: each output an
    ``Identity`` of a constant, the value it had in a run (`results`, the
    function's outputs)."""
    import numpy as np
    from onnx import helper, numpy_helper

    from pytensor_onnx.runtime import NativeSession

    model = linker.onnx_model
    by_name = dict(zip(linker._output_names, results))
    for packed, elements, _ in linker.packed_outputs:
        by_name[packed] = np.concatenate([np.asarray(by_name[name], dtype=np.float64).reshape(-1) for name in elements])
    outputs = list(model.graph.output)
    constants = [numpy_helper.from_array(np.asarray(by_name[o.name]), f"value_{j}") for j, o in enumerate(outputs)]
    nodes = [helper.make_node("Identity", [f"value_{j}"], [o.name]) for j, o in enumerate(outputs)]
    fed = set(fed_names) | {name for name, _, _ in linker.packed_inputs}
    inputs = [i for i in model.graph.input if i.name in fed]
    graph = helper.make_graph(nodes, "do_nothing", inputs, outputs, initializer=constants)
    nothing = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    return NativeSession(nothing.SerializeToString(), fed_names, linker._output_names,
                         packed=linker.packed_outputs, packed_inputs=linker.packed_inputs)


def measure(name: str) -> dict:
    import pymc as pm
    import pytensor

    from pytensor_onnx.runtime import NativeSession, native_unavailable_reason

    model, inputs, outputs, values = logp_and_gradient(name)
    times = {}
    functions = {}
    for label in ("ONNX", "C", "NUMBA"):
        mode = label if label != "C" or "C" in pytensor.compile.mode.predefined_modes else "FAST_RUN"
        try:
            with model:
                fn = pm.pytensorf.compile(inputs, outputs, mode=mode)
            fn.trust_input = True
            fn(*values)
        except Exception:  # a backend missing here (no C code for an op, Numba not installed)
            continue
        times[label] = per_call_seconds(lambda: fn(*values))
        functions[label] = fn
    fn = functions["ONNX"]
    session = fn.maker.linker.session
    if not isinstance(session, NativeSession):
        raise SystemExit(f"mode ONNX runs no native session here: {native_unavailable_reason()}")
    runner = fn.maker.linker.runner
    cells = [[value] for value in values]
    fed = tuple(cell for name, cell in zip(runner.names, cells) if name in session.input_names)
    if len(fed) + 1 != len(runner.out_cells):
        raise SystemExit(f"{name}: {len(fed)} inputs fed for {len(runner.out_cells)} outputs; not a log-density and its gradients")
    out_cells = tuple([None] for _ in runner.out_cells)
    run = per_call_seconds(functools.partial(session.run_cells, fed, out_cells))
    nothing = do_nothing_session(fn.maker.linker, session.input_names, fn(*values))
    do_nothing = per_call_seconds(functools.partial(nothing.run_cells, fed, out_cells))
    peers = {label: t for label, t in times.items() if label != "ONNX"}
    fastest = min(peers, key=peers.get)
    return {"call": times["ONNX"], "run": run, "do_nothing": do_nothing, "fastest": peers[fastest], "peer": fastest}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    from pymc_models import MODELS

    print(f"Machine: {machine()}\n")
    print("| model | call | run | do-nothing run | floor | fastest peer | ratio | floor ratio |")
    print("|---|---|---|---|---|---|---|---|")
    floors = []
    for case in MODELS:
        if args.only not in case.name:
            continue
        r = measure(case.name)
        # (A call costs at least its run: a difference below 0 is the noise of
        # a loaded machine, which made the floor negative.)
        floor = max(r["call"] - r["run"], 0.0) + r["do_nothing"]
        floors.append(floor / r["fastest"])
        us = [f"{r[k] * 1e6:.2f} µs" for k in ("call", "run", "do_nothing")]
        print(f"| {case.name} | {' | '.join(us)} | {floor * 1e6:.2f} µs | {r['fastest'] * 1e6:.2f} µs ({r['peer']}) | "
              f"{r['call'] / r['fastest']:.2f}x | {floor / r['fastest']:.2f}x |", flush=True)
    if floors:
        mean = math.exp(sum(math.log(f) for f in floors) / len(floors))
        print(f"\nFloor ratios: geometric mean {mean:.2f}x; above 1.0x: {sum(f > 1.0 for f in floors)} of {len(floors)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
