"""The C++ table of ONNX Runtime CPU kernel dtypes (src/core/kernels.cc) must
match the installed runtime: every dtype it claims must run, and every dtype
the spec allows that it leaves out must really fail (else we cast for nothing).
The probe builds one-node models and runs them (tools/probe_ort_kernels.py)."""

import sys
from pathlib import Path

import pytest

from pytensor_onnx import _core

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import probe_ort_kernels as probe  # noqa: E402

# Table ops the probe knows how to build (its labels equal the op names here).
TABLE_OPS = [
    "Add", "Sub", "Mul", "Div", "Neg", "Max", "Min", "Clip", "Pow", "Where",
    "ReduceSum", "ReduceProd", "ReduceSumSquare", "ReduceMean", "ReduceLogSumExp",
    "ReduceMax", "ReduceMin", "ArgMax", "ArgMin", "MatMul", "Gemm", "Einsum",
    "CumSum", "Trilu", "Range", "Unique", "NonZero", "TopK", "Pad", "BitShift",
    "Sum", "Mean", "Erf", "Softplus",
]
# Kernels that exist but compute wrong results or fail on edge cases, so the
# table leaves them out on purpose (src/core/kernels.cc says why).
DELIBERATELY_AVOIDED = {("MatMul", "uint32"), ("MatMul", "uint64")}
# float16 kernels come and go with ORT's fp16 cast insertion; the exporter
# never relies on them.
CHECKED_DTYPES = [d for d in probe.DTYPES if d != "float16"]


@pytest.mark.parametrize("opset", [13, 18, 26])
@pytest.mark.parametrize("op", TABLE_OPS)
def test_kernel_table_matches_onnxruntime(op, opset):
    if not probe.applicable(op, opset):
        assert op == "Trilu" and opset < 14
        return
    claimed = set(_core.ort_kernel_dtypes(op, opset) or [])
    assert claimed, f"{op} has no table entry at opset {opset}"
    for dtype in CHECKED_DTYPES:
        verdict = probe.probe(op, dtype, opset)
        if dtype in claimed:
            assert verdict == "ok", f"table claims {op}/{dtype} at opset {opset} runs, probe says {verdict}"
        elif verdict != "spec":
            # ORT expands some ops as ONNX functions only at certain opsets (e.g.
            # Softplus/ReduceLogSumExp at 18); the table may be conservative
            # there, but must never miss a kernel that exists at every opset.
            assert verdict != "ok" or op in {"Softplus", "ReduceLogSumExp"} or (op, dtype) in DELIBERATELY_AVOIDED, (
                f"{op}/{dtype} runs at opset {opset} but the table leaves it out"
            )
