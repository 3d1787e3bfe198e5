"""The C++ table of ONNX Runtime CPU kernel dtypes (src/core/kernels.cc)
against the installed runtime. The probe builds one-node models and runs
them (tools/probe_ort_kernels.py).

- Every dtype the table claims must run: a claim the runtime cannot keep
  would make models that fail to load. This fails the test.
- A dtype the runtime runs that the table leaves out only costs a cast
  (bench/kernel_table_cost.py measures it). Runtimes gain kernels between
  releases, and exported models must run on every runtime in the supported
  range, so the table stays at what the oldest supported runtime has: a
  newer runtime's extra kernels are reported as a warning, not a failure.
  On the oldest supported runtime itself (CI leg "pymc5") a kernel the table
  leaves out fails the test: there the table must be exact.
"""

import sys
from pathlib import Path

import re
import warnings
from importlib.metadata import requires

import onnxruntime as ort
import pytest

from pytensor_onnx import _core
from pytensor_onnx.runtime import newest_runtime_opset

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import probe_ort_kernels as probe  # noqa: E402

# Table ops the probe knows how to build (its labels equal the op names here).
TABLE_OPS = [
    "Add", "Sub", "Mul", "Div", "Neg", "Max", "Min", "Clip", "Pow", "Where",
    "ReduceSum", "ReduceProd", "ReduceSumSquare", "ReduceMean", "ReduceLogSumExp", "ReduceL1", "ReduceL2", "ReduceLogSum",
    "ReduceMax", "ReduceMin", "ArgMax", "ArgMin", "MatMul", "Gemm", "Einsum",
    "CumSum", "Trilu", "Range", "Unique", "NonZero", "TopK", "Pad", "BitShift",
    "Sum", "Mean", "Erf", "Softplus",
]
# Kernels that exist but compute wrong results or fail on edge cases, so the
# table leaves them out on purpose (src/core/kernels.cc says why).
DELIBERATELY_AVOIDED = {("MatMul", "uint32"), ("MatMul", "uint64"), ("ReduceMax", "bool"), ("ReduceMin", "bool")}
# float16 kernels come and go with ORT's fp16 cast insertion; the exporter
# never relies on them.
CHECKED_DTYPES = [d for d in probe.DTYPES if d != "float16"]
# Ops that ORT runs through their ONNX function body only at some opsets
# (e.g. Softplus/ReduceLogSumExp at 18); the table may be conservative there.
FUNCTION_BODY_FALLBACK = {"Softplus", "ReduceLogSumExp"}


def _oldest_supported_runtime() -> tuple[int, int]:
    """(major, minor) of the onnxruntime lower bound this package declares."""
    for requirement in requires("pytensor-onnx") or []:
        match = re.match(r"onnxruntime\s*>=\s*(\d+)\.(\d+)", requirement)
        if match:
            return int(match[1]), int(match[2])
    raise AssertionError("pytensor-onnx declares no onnxruntime lower bound")


ON_OLDEST_RUNTIME = tuple(int(part) for part in ort.__version__.split(".")[:2]) == _oldest_supported_runtime()


@pytest.mark.parametrize("opset", sorted({13, 18, newest_runtime_opset()}))
@pytest.mark.parametrize("op", TABLE_OPS)
def test_kernel_table_matches_onnxruntime(op, opset):
    if not probe.applicable(op, opset):
        assert op == "Trilu" and opset < 14
        return
    claimed = set(_core.ort_kernel_dtypes(op, opset) or [])
    assert claimed, f"{op} has no table entry at opset {opset}"
    gained = []
    for dtype in CHECKED_DTYPES:
        verdict = probe.probe(op, dtype, opset)
        if dtype in claimed:
            assert verdict == "ok", f"table claims {op}/{dtype} at opset {opset} runs, probe says {verdict}"
        elif verdict == "ok" and (op, dtype) not in DELIBERATELY_AVOIDED:
            gained.append(dtype)
    if gained and ON_OLDEST_RUNTIME and op not in FUNCTION_BODY_FALLBACK:
        raise AssertionError(
            f"{op} runs on {', '.join(gained)} at opset {opset} on the oldest supported runtime "
            f"({ort.__version__}), but the table leaves it out: add it to src/core/kernels.cc"
        )
    if gained:
        warnings.warn(
            f"ONNX Runtime {ort.__version__} runs {op} on {', '.join(gained)} at opset {opset}, which the kernel "
            "table leaves out (the exporter casts around it). Add it to src/core/kernels.cc once the oldest "
            "supported runtime has it.",
            stacklevel=1,
        )
