"""Composite (fused elemwise) ops, as PyTensor's fusion rewrite builds them."""

import numpy as np
import pytensor
import pytensor.scalar as ps
import pytensor.tensor as pt
import pytest
from pytensor.compile.mode import Mode
from pytensor.tensor.elemwise import Elemwise

import pytensor_onnx
from pytensor_onnx.testing import assert_same_result, check_model, compare_onnx_and_py, py_function

from helpers import run_model

FUSING_MODE = Mode(linker="py", optimizer="fast_run")  # fast_run fuses elemwise chains into Composite


def _has_composite(fn):
    return any(
        isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, ps.Composite)
        for node in fn.maker.fgraph.apply_nodes
    )


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_exported_fused_function_matches_pytensor(dtype, rng):
    x = pt.matrix("x", dtype=dtype)
    y = pt.vector("y", dtype=dtype)
    out = pt.exp(x) * 2 + pt.maximum(y, 0.5) - x / 3
    fn = pytensor.function([x, y], out, mode=FUSING_MODE)
    assert _has_composite(fn), "the fast_run fusion should have built a Composite"
    xv = rng.normal(size=(3, 4)).astype(dtype)
    yv = rng.normal(size=4).astype(dtype)
    model = pytensor_onnx.export_function_onnx(fn)
    check_model(model)
    [got] = run_model(model, xv, yv)
    want = py_function([x, y], out)(xv, yv)
    assert_same_result(got, want)


def test_composite_with_several_outputs_and_integer_constants(rng):
    a = ps.float64("a")
    b = ps.int32("b")
    composite = ps.Composite([a, b], [a * 2 + b, b // 3, b % -4])
    x = pt.matrix("x")
    k = pt.vector("k", dtype="int32")
    outs = Elemwise(composite)(x, k[None, :])
    compare_onnx_and_py([x, k], list(outs), [rng.normal(size=(2, 3)), np.array([-7, 0, 9], dtype="int32")])
