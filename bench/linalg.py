"""Linear algebra against LAPACK, from one run (issue 10, item 6; issue 21, item 4).

Time per call of Cholesky, Solve, SLogDet and Eigh on well-conditioned float64
matrices of order n = 16, 64, 256, in mode "ONNX" (the kernel library's LAPACK
kernels), in mode ONNX without the kernels ("ONNX portable": the standard-ONNX
recipes exported files hold: Loops over blocks of 8 columns for Cholesky, over
columns for LU, over sweeps for Eigh) and in PyTensor's default (FAST_RUN:
SciPy) and Numba modes (both call LAPACK), with SciPy/NumPy called directly as
the floor. The ratio columns are each ONNX mode over the fastest PyTensor
backend of the row.

    python bench/linalg.py               # every op and size
    python bench/linalg.py --only chol   # ops whose name contains "chol"

Timings on a shared, loaded machine are noisy: read ratios, not absolute numbers.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from backends import _time, machine, per_call_seconds

SIZES = (16, 64, 256)
# FAST_RUN is PyTensor's default (C linker; these ops have no C code and run
# their SciPy perform); mode "C" would refuse them.
BACKENDS = ("FAST_RUN", "NUMBA", "ONNX", "ONNX portable")
ONNX_MODES = ("ONNX", "ONNX portable")


def _spd(n: int, rng) -> np.ndarray:
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def workloads():
    """name -> (build(x, b) -> output, direct(a, b) -> result, uses_rhs)."""
    import pytensor.tensor as pt
    import scipy.linalg

    return {
        "cholesky": (lambda x, b: pt.linalg.cholesky(x), lambda a, b: scipy.linalg.cholesky(a, lower=True), False),
        "solve": (lambda x, b: pt.linalg.solve(x, b), lambda a, b: scipy.linalg.solve(a, b), True),
        "slogdet": (lambda x, b: pt.linalg.slogdet(x)[1], lambda a, b: np.linalg.slogdet(a)[1], False),
        "eigh": (lambda x, b: pt.linalg.eigh(x)[0], lambda a, b: np.linalg.eigh(a)[0], False),
    }


def measure(name: str, n: int, backend: str) -> float | str:
    import pytensor
    import pytensor.tensor as pt

    import pytensor_onnx  # registers mode "ONNX"

    build, _, uses_rhs = workloads()[name]
    rng = np.random.default_rng(n)
    a, b = _spd(n, rng), rng.standard_normal(n)
    x, rhs = pt.dmatrix("x"), pt.dvector("b")
    inputs = [x, rhs] if uses_rhs else [x]
    mode = pytensor_onnx.onnx_mode(kernels=False) if backend == "ONNX portable" else backend
    try:
        fn = pytensor.function(inputs, build(x, rhs), mode=mode)
    except Exception as exc:  # a backend that cannot compile the op: show why, keep going
        return f"— ({type(exc).__name__})"
    values = [a, b] if uses_rhs else [a]
    fn(*values)
    return per_call_seconds(lambda: fn(*values))


def loop_iteration_seconds(n: int = 64, iterations: int = 256) -> float:
    """ONNX Runtime's cost of one Loop iteration whose body adds a row to an n x n matrix.

    LU takes n such iterations (one column each), so this per-iteration cost
    times n is its floor in ONNX Runtime, whatever the arithmetic; the blocked
    Cholesky takes n / 8.
    """
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    matrix = [n, n]
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Add", ["a_in", "row"], ["a_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("a_in", TensorProto.DOUBLE, matrix)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("a_out", TensorProto.DOUBLE, matrix)],
    )
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trips", "", "a"], ["out"], body=body)],
        "loop_cost",
        [helper.make_tensor_value_info("a", TensorProto.DOUBLE, matrix),
         helper.make_tensor_value_info("row", TensorProto.DOUBLE, [1, n])],
        [helper.make_tensor_value_info("out", TensorProto.DOUBLE, matrix)],
        [helper.make_tensor("trips", TensorProto.INT64, [], [iterations])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feed = {"a": np.zeros((n, n)), "row": np.ones((1, n))}
    (out,) = session.run(None, feed)
    assert np.all(out == iterations)  # the loop really ran every iteration
    return per_call_seconds(lambda: session.run(None, feed)) / iterations


def node_seconds(shape=(64, 8), nodes: int = 256) -> float:
    """ONNX Runtime's cost of one node outside any Loop: a chain of Adds on a
    tensor of ``shape`` (one Cholesky panel of n = 64), per node.

    The blocked Cholesky runs ~7 such nodes per column, so this cost times 7n
    is its floor in ONNX Runtime, whatever the arithmetic.
    """
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    names = ["x"] + [f"a{i}" for i in range(nodes)]
    graph = helper.make_graph(
        [helper.make_node("Add", [names[i], "one"], [names[i + 1]]) for i in range(nodes)],
        "node_cost",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, list(shape))],
        [helper.make_tensor_value_info(names[-1], TensorProto.DOUBLE, list(shape))],
        [helper.make_tensor("one", TensorProto.DOUBLE, [], [1.0])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model, full_check=True)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # keep every Add
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feed = {"x": np.zeros(shape)}
    (out,) = session.run(None, feed)
    assert np.all(out == nodes)  # every node ran
    return per_call_seconds(lambda: session.run(None, feed)) / nodes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run only ops whose name contains this")
    args = parser.parse_args()
    print(f"Machine: {machine()}\n")
    print("Per call, best of 5 repeats; ratio = mode ONNX (kernels, portable) / fastest PyTensor backend.\n")
    print("| op | n | SciPy/NumPy direct | " + " | ".join(BACKENDS) + " | ONNX ratio | portable ratio |")
    print("|---|---|---|" + "---|" * len(BACKENDS) + "---|---|")
    for name, (_, direct, _) in workloads().items():
        if args.only.lower() not in name:
            continue
        for n in SIZES:
            rng = np.random.default_rng(n)
            a, b = _spd(n, rng), rng.standard_normal(n)
            floor = per_call_seconds(lambda: direct(a, b))
            times = {backend: measure(name, n, backend) for backend in BACKENDS}
            peers = [t for k, t in times.items() if k not in ONNX_MODES and isinstance(t, float)]
            ratios = [
                f"{times[k] / min(peers):.2f}x" if peers and isinstance(times[k], float) else "—" for k in ONNX_MODES
            ]
            cells = [_time(t) if isinstance(t, float) else t for t in times.values()]
            print(f"| {name} | {n} | {_time(floor)} | " + " | ".join(cells) + f" | **{ratios[0]}** | {ratios[1]} |",
                  flush=True)
    per_iteration = loop_iteration_seconds()
    per_node = node_seconds()
    print(f"\nONNX Runtime Loop, one iteration (body: one Add on a 64 x 64 matrix): {_time(per_iteration)}; "
          f"64 of them (one LU of n = 64, before any arithmetic): {_time(64 * per_iteration)}.")
    print(f"ONNX Runtime, one node (Add on a 64 x 8 panel, no Loop): {_time(per_node)}; "
          f"7 x 64 of them (the blocked Cholesky's column steps at n = 64): {_time(7 * 64 * per_node)}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
