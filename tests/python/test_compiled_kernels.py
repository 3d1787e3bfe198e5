"""Kernel programs compiled to machine code (pytensor_onnx/compiled_kernels.py,
src/kernels/kernel_ir.h): mode ONNX compiles the program of every element-wise
kernel node with llvmlite, and the compiled code must give the interpreter's
bits. Each case runs here (compiled) and in a process with
PYTENSOR_ONNX_COMPILE_KERNELS=0 (interpreted); the outputs must be equal to
the last bit, and match PyTensor's py linker (compare_onnx_and_py)."""

import importlib.util

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from pytensor_onnx import compiled_kernels, kernels
from pytensor_onnx.mode import onnx_mode
from pytensor_onnx.testing import compare_onnx_and_py

from helpers import assert_interpreter_bits

SPECIAL = np.array([-3.5, -1.0, -0.0, 0.0, 1e-300, 0.5, 1.0, 2.5, 40.0, np.inf, -np.inf, np.nan])


def _values(rng, n, low=-3.0, high=3.0):
    """n floats with the edge cases first: signed zeros, inf, NaN, tiny, huge."""
    return np.concatenate([SPECIAL, rng.uniform(low, high, max(n - len(SPECIAL), 0))])[:n]


def _cases():
    """(name, inputs, outputs, values) covering the ops the IR writer writes
    out, those it calls the interpreter's loop for, the dtypes, broadcasting,
    scalar inputs (static and at run time), reductions, empty and large arrays."""
    rng = np.random.default_rng(11)
    cases = []
    x, y = pt.dvector("x"), pt.dvector("y")
    xv, yv = _values(rng, 40), _values(rng, 40)[::-1].copy()
    cases.append(("arithmetic", [x, y], [x + y * 2.0 - x / y, -x, abs(y), pt.sqr(x) - pt.sqrt(abs(y)),
                                         pt.maximum(x, y), pt.minimum(x, y), pt.reciprocal(y)], [xv, yv]))
    cases.append(("libm", [x], [pt.exp(x), pt.log(abs(x)), pt.log1p(abs(x)), pt.expm1(x), pt.sin(x), pt.cos(x),
                                pt.tanh(x), pt.arctan(x), pt.erf(x), pt.erfc(x), pt.floor(x), pt.ceil(x),
                                pt.round(x, mode="half_to_even"), pt.round(x, mode="half_away_from_zero")], [xv]))
    cases.append(("comparisons_and_logic", [x, y], [pt.switch((x < y) | ~(x >= 0.5) ^ pt.eq(x, y), x, y),
                                                   pt.neq(x, y) & pt.le(x, 1.0) | pt.gt(y, 0.0),
                                                   pt.isnan(x) | pt.isinf(y)], [xv, yv]))
    cases.append(("special_functions", [x], [pt.gammaln(x), pt.psi(x), pt.sigmoid(x), pt.softplus(x),
                                            pt.log1mexp(-abs(x)), pt.erfcx(x), pt.sign(x), pt.clip(x, -1.0, 2.0),
                                            pt.gammainc(abs(x) + 0.1, 2.0)], [xv]))
    i, j = pt.lvector("i"), pt.lvector("j")
    iv = np.array([-7, 7, 0, -1, 2**62, -(2**63), 3, 5, -3, 9], dtype=np.int64)
    jv = np.array([2, -2, 3, 0, 3, -1, 0, 5, 2, -4], dtype=np.int64)
    cases.append(("integers", [i, j, x], [i * j + i - j, i // j, i % j, -i, i & j | ~i, pt.switch(i > j, i, j),
                                       pt.cast(i % 100, "int8") * pt.cast(j, "int8"), pt.cast(i, "float64") / 3.0,
                                       pt.cast(x * 1e3, "int64")], [iv, jv, rng.uniform(-1e3, 1e3, 10)]))
    f32, u8 = pt.fvector("f32"), pt.vector("u8", dtype="uint8")
    fv = _values(rng, 40).astype(np.float32)
    uv = rng.integers(0, 256, 40).astype(np.uint8)
    cases.append(("float32_and_uint8", [f32, u8], [f32 * 3.0 + pt.cast(u8, "float32"), pt.exp(f32),
                                                   pt.cast(f32, "float64") - 1e-9, (u8 + u8) * u8, u8 > 100,
                                                   pt.cast(abs(pt.cast(u8, "float32") - 0.5), "uint8")], [fv, uv]))
    m, r, s = pt.dmatrix("m"), pt.drow("r"), pt.dscalar("s")
    mv = rng.normal(size=(7, 5))
    cases.append(("broadcast_and_scalars", [m, r, s, y],
                  [m * r + s, pt.exp(s) * m - r, (m - s).sum(), (m > r).all(), (m > s).any(),
                   y * s + pt.gammaln(s)], [mv, rng.normal(size=(1, 5)), np.float64(1.5), np.array([2.0])]))
    # Runs of one block (up to 512 elements) call the compiled function on
    # the inputs' own memory and reduce its values themselves (evaluate.cc,
    # run_one_compiled_block): whole arrays, one-element arrays the function
    # reads as one value (static shape (1,)) or, their length unknown when it
    # was compiled, as an array of one, sums, all and any (of one element
    # too), and the first run of two blocks.
    one, v1 = pt.tensor("one", shape=(1,), dtype="float64"), pt.dvector("v1")
    x512, x513, f512 = pt.dvector("x512"), pt.dvector("x513"), pt.dvector("f512")
    cases.append(("one_block_runs", [x, one, v1, s, x512, x513, f512],
                  [x * one + s, pt.exp(one) - x, v1 * s - pt.log1p(v1), pt.exp(x512) * s, pt.exp(x513) * s,
                   (x * one - s).sum(), (x > s).all(), (x > 2.0).any(), (v1 * s).sum(), (v1 > s).all(),
                   (v1 < s).any(), (pt.exp(f512) * s).sum(), (f512 * s > -100.0).all(), (f512 > 0.0).all(),
                   (f512 * s > 100.0).any(), (f512 > 0.0).any(), (f512[:40] * one).sum(), (pt.exp(x513) * s).sum()],
                  [xv, np.array([0.7]), np.array([0.3]), np.float64(-2.5), _values(rng, 512), _values(rng, 513),
                   rng.normal(size=512)]))
    big = pt.dvector("big")
    bv = rng.normal(size=70_000)
    cases.append(("large_with_sums", [big], [pt.exp(-big * big) * 3.0 + abs(big), (big * big).sum(), pt.log1p(abs(big)).sum(),
                                             (big > 4.0).any()], [bv]))
    cases.append(("empty", [x, y], [x * y + 1.0, (x - y).sum(), (x > y).all()], [np.zeros(0), np.zeros(0)]))
    # ONNX's arithmetic that rules write beside kernel nodes (a log-softmax's
    # recipe, a softmax divided, a product with a solve), merged by the core
    # as one-instruction stages: compiled from the final graph.
    sq, lower, rhs = pt.dmatrix("sq"), pt.dmatrix("lower"), pt.dmatrix("rhs")
    sqv = rng.normal(size=(5, 5))
    sqv[1, 2], sqv[3, 0] = np.inf, np.nan
    cases.append(("merged_onnx_arithmetic", [sq, lower, rhs],
                  [pt.special.log_softmax(sq, axis=-1) * 2.0, pt.special.softmax(sq, axis=0),
                   pt.linalg.solve_triangular(lower, rhs, lower=True) * sq],
                  [sqv, np.tril(rng.normal(size=(5, 5))) + 5 * np.eye(5), rng.normal(size=(5, 5))]))
    return cases


def _case_results(name):
    (case,) = [c for c in _cases() if c[0] == name]
    _, inputs, outputs, values = case
    fn = pytensor.function(inputs, outputs, mode=onnx_mode(kernels=True))
    return fn, [np.asarray(r) for r in fn(*values)]


@pytest.mark.parametrize("name", [case[0] for case in _cases()])
def test_compiled_programs_give_the_interpreters_bits(name, tmp_path):
    if not compiled_kernels.enabled() or not onnx_mode(kernels=True).linker.kernels:
        pytest.skip("the kernel library or compiled kernels are off in this environment")
    pytest.importorskip("llvmlite")
    fn, compiled = _case_results(name)
    # (Every program stage, one-instruction stages the core merged in too.)
    nodes = [n for n in fn.maker.linker.onnx_model.graph.node
             if n.op_type.startswith("Elemwise_") and any("program" in s for s in kernels.elemwise_stages(n))]
    assert nodes
    if name == "merged_onnx_arithmetic":
        programs = [s["program"] for n in nodes for s in kernels.elemwise_stages(n) if "program" in s]
        assert sum(";" not in p for p in programs) >= 5, programs  # (2.38's log-softmax adds a program of its own)
    assert all(compiled_kernels.node_is_compiled(n) for n in nodes), [n.name for n in nodes]
    assert_interpreter_bits(__file__, name, compiled, tmp_path)
    _, inputs, outputs, values = [c for c in _cases() if c[0] == name][0]
    # (Zero signs: "libm" rounds half away from zero with C's round(), +0.0 at
    # +0.0 where PyTensor's Python implementation gives -0.0; docs/semantics.md.)
    compare_onnx_and_py(inputs, outputs, values, zero_signs=name != "libm")


def test_inputs_of_one_element_at_run_time_where_the_program_reads_arrays():
    # x and y hold one element at run time though their types allow any
    # length: the compiled program, written for arrays there, reads them
    # filled into a block (the kernel's scalar fast path does not apply).
    if not compiled_kernels.enabled():
        pytest.skip("compiled kernels are off")
    x, y = pt.dvector("x"), pt.dvector("y")
    fn, _ = compare_onnx_and_py([x, y], [x * y + pt.exp(y), (x - y).sum()], [np.array([3.0]), np.array([0.5])])
    nodes = [n for n in fn.maker.linker.onnx_model.graph.node if n.op_type.startswith("Elemwise_")]
    assert nodes and all(compiled_kernels.node_is_compiled(n) for n in nodes)


def test_a_program_llvm_refuses_is_interpreted_with_a_warning(monkeypatch, caplog):
    # A bug of the IR writer must not break mode ONNX: the programs of that
    # conversion are interpreted, and the log says so.
    def refuse(irs):
        raise RuntimeError("error: expected value token")

    monkeypatch.setattr(compiled_kernels, "_machine_code", refuse)
    x = pt.dvector("x")
    with caplog.at_level("WARNING", logger="pytensor_onnx"):
        fn, _ = compare_onnx_and_py([x], [pt.exp(x) * 2.0 + 1.0 / 7.0], [np.linspace(-2, 2, 9)])
    nodes = [n for n in fn.maker.linker.onnx_model.graph.node if n.op_type.startswith("Elemwise_")]
    assert nodes and not any(compiled_kernels.node_is_compiled(n) for n in nodes)
    if compiled_kernels.enabled() and importlib.util.find_spec("llvmlite") is not None:
        assert "interpreted" in caplog.text and "expected value token" in caplog.text
