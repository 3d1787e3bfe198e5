"""Element-wise work as one node of the kernel library (``pytensor_onnx.kernels``).

Mode ONNX keeps PyTensor's element-wise fusion: a ``Composite`` (or a lone
Elemwise whose portable form is many nodes, such as a special function)
becomes one ``Elemwise_<dtype>`` node that evaluates the scalar program at
every position of its broadcast inputs. The program is written in the dtypes
the portable rules compute in (``dispatch/scalar.py``): operands are cast to
PyTensor's output dtype, comparisons to the inputs' common dtype. Anything
the kernels do not evaluate (an op, a dtype) leaves the node to the portable
rules.
"""

from __future__ import annotations

import functools

import numpy as np
import pytensor.scalar.basic as ps
import pytensor.scalar.math as psm
from pytensor.graph.basic import Constant

from pytensor_onnx import compat, compiled_kernels, kernels

#: PyTensor's scalar ops the kernels evaluate, by their kernel op name
#: (``src/kernels/ops.cc``). Exact classes only: a subclass may compute
#: something else.
_KERNEL_NAMES = {
    cls: cls.__name__
    for cls in (
        ps.Add, ps.Sub, ps.Mul, ps.TrueDiv, ps.IntDiv, ps.Mod, ps.Maximum, ps.Minimum, ps.Pow, ps.ArcTan2,
        ps.Neg, ps.Abs, ps.Sign, ps.Sqr, ps.Exp, ps.Exp2, ps.Expm1, ps.Log, ps.Log2, ps.Log10, ps.Log1p,
        ps.Sqrt, ps.Reciprocal, ps.Floor, ps.Ceil, ps.Trunc, ps.RoundHalfToEven, ps.RoundHalfAwayFromZero,
        ps.Sin, ps.Cos, ps.Tan, ps.ArcSin, ps.ArcCos, ps.ArcTan, ps.Sinh, ps.Cosh, ps.Tanh, ps.ArcSinh,
        ps.ArcCosh, ps.ArcTanh, ps.Clip, ps.AND, ps.OR, ps.XOR, ps.Invert, ps.LT, ps.GT, ps.LE, ps.GE,
        ps.EQ, ps.NEQ, ps.IsNan, ps.IsInf, ps.Switch,
        psm.Erf, psm.Erfc, psm.Sigmoid, psm.Softplus, psm.Log1mexp, psm.GammaLn, psm.Gamma, psm.Psi,
        psm.TriGamma, psm.Erfinv, psm.Erfcinv, psm.GammaInc, psm.GammaIncC, psm.BetaInc, psm.GammaIncInv,
        psm.GammaIncCInv, psm.Owens_t, psm.I0, psm.I1, psm.Erfcx, psm.J0, psm.J1,
        psm.Jv, psm.Ive, psm.Kve, psm.BetaIncInv, psm.Hyp2F1,
    )
}
if compat.Iv is not None:  # PyTensor 2.38's (PyTensor 3 writes iv as ive times exp(|x|))
    _KERNEL_NAMES[compat.Iv] = "Iv"

#: Variadic PyTensor ops folded into a chain of the kernels' binary op.
_FOLDED = {ps.Add, ps.Mul, ps.AND, ps.OR, ps.XOR, ps.Maximum, ps.Minimum}

#: Lone Elemwise ops that ONNX Runtime runs as one native node of every dtype
#: the portable rules give them: a kernel node gains nothing there (and ONNX
#: Runtime's own loops are vectorised).
_NATIVE = (
    ps.Add, ps.Sub, ps.Mul, ps.Neg, ps.Abs, ps.Exp, ps.Log, ps.Sqrt, ps.Floor, ps.Ceil, ps.Sin, ps.Cos,
    ps.Tanh, ps.LT, ps.GT, ps.LE, ps.GE, ps.EQ, ps.NEQ, ps.Cast, ps.Identity, ps.Second, ps.Switch,
    ps.Maximum, ps.Minimum, ps.Sqr, ps.TrueDiv, ps.AND, ps.OR, ps.XOR, ps.Invert,
)


class Unsupported(Exception):
    """A scalar op or dtype the kernels do not evaluate."""


class ScalarProgram:
    """A scalar program of the kernels (``src/kernels/program.h``) being written:
    registers 0..n-1 are the inputs, each instruction appends one."""

    def __init__(self, input_dtypes):
        self.dtypes = list(input_dtypes)  # per register
        self.lines: list[str] = []
        self._casts: dict[tuple[int, str], int] = {}
        self._consts: dict[tuple[str, str], int] = {}
        self._ops = kernels.ops()

    def _append(self, line: str, dtype: str) -> int:
        self.lines.append(line)
        self.dtypes.append(dtype)
        return len(self.dtypes) - 1

    def emit(self, name: str, dtype: str, *args: int) -> int:
        op = self._ops.get(name)
        operand = self.dtypes[args[-1]]
        if op is None or operand not in op.dtypes:
            raise Unsupported(f"{name} on {operand}")
        return self._append(" ".join([name, dtype, *map(str, args)]), dtype)

    def const(self, value, dtype: str) -> int:
        if dtype not in kernel_dtypes():
            raise Unsupported(f"constant of dtype {dtype}")
        if dtype.startswith("float"):
            literal = repr(float(value))
        else:
            literal = str(int(value))
        key = (literal, dtype)
        if key not in self._consts:
            self._consts[key] = self._append(f"Const {dtype} {literal}", dtype)
        return self._consts[key]

    def cast(self, register: int, dtype: str) -> int:
        if self.dtypes[register] == dtype:
            return register
        if dtype not in kernel_dtypes():
            raise Unsupported(f"cast to {dtype}")
        key = (register, dtype)
        if key not in self._casts:
            self._casts[key] = self._append(f"Cast {dtype} {register}", dtype)
        return self._casts[key]

    def text(self) -> str:
        return ";".join(self.lines)


def evaluates(scalar_op) -> bool:
    """Whether the kernels evaluate ``scalar_op`` (every op of a Composite's
    graph), as far as its op types tell: dtypes are checked when the program
    is built."""
    if isinstance(scalar_op, ps.Composite):
        return all(evaluates(n.op) for n in scalar_op.fgraph.apply_nodes)
    if type(scalar_op) in (ps.Cast, ps.Identity, ps.Second):
        return True
    name = _KERNEL_NAMES.get(type(scalar_op))
    return name is not None and name in kernels.ops()


def kernel_dtypes() -> frozenset[str]:
    """The dtypes the kernels compute in: those their Cast converts between
    (the library's own table, src/kernels/ops.cc)."""
    cast = kernels.ops().get("Cast")
    return cast.dtypes if cast is not None else frozenset()


def _common_dtype(dtypes) -> str:
    """The dtype a comparison of ``dtypes`` computes in (PyTensor's upcast)."""
    common = ps.upcast(*dtypes)
    # NumPy compares uint64 with signed integers exactly; no common dtype does.
    if common == "float64" and "uint64" in dtypes and any(d.startswith("int") for d in dtypes):
        raise Unsupported("uint64 compared with a signed integer")
    return common


def _apply(program: ScalarProgram, node, registers: list[int]) -> list[int]:
    op = node.op
    out_dtypes = [out.type.dtype for out in node.outputs]
    if any(d not in kernel_dtypes() for d in out_dtypes):
        raise Unsupported(f"output dtype {out_dtypes}")
    if isinstance(op, ps.Composite):
        return inline_scalar_graph(program, op.fgraph.inputs, op.fgraph.outputs, registers)
    out = out_dtypes[0]
    kind = type(op)
    if kind is ps.Cast:
        return [program.cast(registers[0], out)]
    if kind in (ps.Identity, ps.Second):
        return [program.cast(registers[-1], out)]
    name = _KERNEL_NAMES.get(kind)
    if name is None or name not in kernels.ops():
        raise Unsupported(f"scalar op {op}")
    signature = kernels.ops()[name].signature
    if signature == "compare":
        common = _common_dtype([program.dtypes[r] for r in registers])
        return [program.emit(name, out, *(program.cast(r, common) for r in registers))]
    if signature == "switch":
        cond = program.cast(registers[0], "bool")
        return [program.emit(name, out, cond, *(program.cast(r, out) for r in registers[1:]))]
    args = [program.cast(r, out) for r in registers]
    arity = kernels.ops()[name].arity
    if kind in _FOLDED and len(args) > arity:
        result = args[0]
        for arg in args[1:]:
            result = program.emit(name, out, result, arg)
        return [result]
    if len(args) != arity:
        raise Unsupported(f"{name} with {len(args)} operands")
    return [program.emit(name, out, *args)]


def inline_scalar_graph(program: ScalarProgram, inputs, outputs, registers) -> list[int]:
    """Append the scalar graph ``inputs -> outputs`` reading ``registers``; return the outputs' registers."""
    from pytensor.graph.traversal import toposort

    env = dict(zip(inputs, registers, strict=True))

    def register_of(var):
        if var in env:
            return env[var]
        if isinstance(var, Constant):
            return program.const(np.asarray(var.data).item(), var.type.dtype)
        raise Unsupported(f"{var} is neither an input, a constant nor computed")

    for node in toposort(outputs, blockers=inputs):
        args = [register_of(var) for var in node.inputs]
        for var, register in zip(node.outputs, _apply(program, node, args), strict=True):
            env[var] = register
    return [register_of(out) for out in outputs]


#: At most this many native ops after a matrix product stay ONNX nodes.
_EPILOGUE_OPS = 3


def keeps_native_epilogue(op, node) -> bool:
    """Whether a small Composite of native ops reading a matrix product stays
    portable: ONNX Runtime fuses MatMul with a following Add and activation
    (Gemm, FusedMatMul), one pass over the product, where a kernel node would
    be a second one (a 64-unit MLP layer: 80 us instead of 66)."""
    from pytensor.tensor.blockwise import Blockwise
    from pytensor.tensor.math import Dot

    inner = op.fgraph.apply_nodes
    if len(inner) > _EPILOGUE_OPS or any(uses_kernel(n.op, n.outputs[0].type.dtype) for n in inner):
        return False
    for var in node.inputs:
        owner = var.owner
        op_ = owner.op if owner is not None else None
        if isinstance(op_, Dot) or (isinstance(op_, Blockwise) and isinstance(op_.core_op, Dot)):
            return True
    return False


#: Native ops whose portable form of a float output is not ONNX Runtime's own
#: node: float64 sin and cos are recipes (35 and 50 nodes, ONNX Runtime's Sin
#: on a reduced argument: src/core/recipes/trig.cc), and ONNX Runtime's
#: Where gives +0.0 where it selects a -0.0 of its X input (it merges its two
#: selections as `x != 0 ? x : y`), where a kernel selects the bits.
_NOT_NATIVE_FOR_FLOATS = {ps.Sin: ("float64",), ps.Cos: ("float64",), ps.Switch: ("float64", "float32", "float16")}


def uses_kernel(scalar_op, dtype: str) -> bool:
    """Whether a lone Elemwise of ``scalar_op`` with an output of ``dtype`` is
    worth a kernel node: its portable form is more than one native node, or
    not NumPy's result."""
    if isinstance(scalar_op, ps.Composite) or not isinstance(scalar_op, _NATIVE):
        return True
    return dtype in _NOT_NATIVE_FOR_FLOATS.get(type(scalar_op), ())


#: The kernels' reductions of an output over every position (attribute
#: ``output_reductions``, ``src/kernels/program.h``).
REDUCE_SUM, REDUCE_ALL, REDUCE_ANY, REDUCE_SEQUENTIAL_SUM = 1, 2, 3, 4


def reducing_readers(node) -> list:
    """Per output of the Elemwise ``node`` that is not a graph output: its
    only reader when that reduces it over all its axes, with the kernels'
    reduction (``(reader, REDUCE_*)``), or None. A Sum (float64 in and out,
    accumulated in float64), or an All or Any (of a bool output). The kernel
    node then reduces that output itself instead of writing an array that a
    ReduceSum or ReduceMax reads back. It adds a Sum's terms pairwise, as
    NumPy's add.reduce (the py linker's Sum) does, to the same bits (PyTensor's
    C backend adds them in position order, its Numba backend in the lanes of
    LLVM's vector loop), and a ``rewriting.SequentialSum`` (a Scan's running
    total) in position order."""
    from pytensor.tensor.math import All, Any, Sum

    from pytensor_onnx.dispatch.basic import current_scope
    from pytensor_onnx.rewriting import SequentialSum

    scope = current_scope()
    if scope is None or scope.outputs is None or _has_lazy_branches(scope):
        # (The IfElse rule converts again, inside a branch, the nodes only
        # that branch reads, a Sum among them: it needs the array.)
        return [None] * len(node.outputs)
    found = []
    for out in node.outputs:
        readers = scope.clients(out)
        reader = readers[0] if len(readers) == 1 else None
        kind = None
        if (
            reader is not None
            and out not in scope.outputs
            and type(reader.op) in (Sum, SequentialSum, All, Any)
            and _over_every_axis(reader.op.axis, out.type.ndim)
        ):
            if _is_float64_sum(reader, out):
                kind = _sum_kind(reader)
            elif type(reader.op) in (All, Any) and out.type.dtype == "bool" and reader.outputs[0].type.dtype == "bool":
                kind = REDUCE_ALL if type(reader.op) is All else REDUCE_ANY
        found.append((reader, kind) if kind is not None else None)
    return found


def _is_float64_sum(reader, out) -> bool:
    """Whether ``reader`` is a Sum (or SequentialSum) of ``out`` over every
    axis that the kernels add: float64 in and out, accumulated in float64."""
    from pytensor.tensor.math import Sum

    from pytensor_onnx.rewriting import SequentialSum

    return (
        type(reader.op) in (Sum, SequentialSum)
        and _over_every_axis(reader.op.axis, out.type.ndim)
        and out.type.dtype == "float64"
        and reader.outputs[0].type.dtype == "float64"
        and getattr(reader.op, "acc_dtype", None) in (None, "float64")
    )


def _sum_kind(reader) -> int:
    from pytensor_onnx.rewriting import SequentialSum

    return REDUCE_SEQUENTIAL_SUM if type(reader.op) is SequentialSum else REDUCE_SUM


def summing_readers(node, readers) -> list:
    """``(output index, reader)`` for the Sums over every axis (float64,
    ``_is_float64_sum``) of the Elemwise ``node``'s outputs that other nodes
    read too (``readers``: ``reducing_readers(node)``, whose outputs are
    reduced already): the kernel node gives such a sum as one more output of
    the same register, beside the array, instead of a ReduceSum node reading
    the array back (PyMC's gradients use terms both summed and as arrays)."""
    from pytensor_onnx.dispatch.basic import current_scope

    scope = current_scope()
    if scope is None or scope.outputs is None or _has_lazy_branches(scope):
        return []
    found = []
    for i, (out, sole) in enumerate(zip(node.outputs, readers, strict=True)):
        if sole is not None:
            continue
        found += [(i, reader) for reader in scope.clients(out) if _is_float64_sum(reader, out)]
    return found


def _over_every_axis(axis, ndim) -> bool:
    return axis is None or sorted(a % ndim for a in axis) == list(range(ndim))


def _has_lazy_branches(scope) -> bool:
    """Whether ``scope`` holds an IfElse (computed once per scope: every
    element-wise kernel node of the graph asks)."""
    cached = getattr(scope, "_has_lazy_branches", None)
    if cached is None:
        from pytensor_onnx.compat import IfElse, LazyIfElse

        lazy = tuple(op for op in (IfElse, LazyIfElse) if op is not None)
        cached = scope._has_lazy_branches = any(isinstance(n.op, lazy) for n in scope.nodes)
    return cached


#: The message of an Elemwise kernel node's failure (``strict_axes``): the
#: only way such a node fails on the graphs mode ONNX builds is a shape its
#: inputs do not fit, which PyTensor raises as ValueError.
SHAPE_MISMATCH = "Input dimension mismatch: the inputs of an element-wise node do not fit (PyTensor's ValueError)"


def strict_axes(node) -> list[int]:
    """``[input, axis, ...]``: the dims of unknown size of the Elemwise
    ``node``'s inputs. PyTensor broadcasts a dim only where the input's type
    says it is 1, so at run time each of these must have the output's size,
    1 or not; the kernel node checks that (``check_strict_axes`` in
    src/kernels/elemwise.cc). Dims of known size need no check: the model's
    inputs declare them."""
    pairs = []
    for i, var in enumerate(node.inputs):
        for axis, size in enumerate(var.type.shape):
            if size is None:
                pairs += [i, axis]
    return pairs


def elemwise_kernel(g, scalar_inputs, scalar_outputs, values, out_dtypes, reductions=None, strict=()):
    """The kernel nodes computing ``scalar_outputs`` of the scalar graph on ``values``
    (the ONNX values of ``scalar_inputs``), or None when the kernels cannot.
    One node per output dtype; each reads every input, so its output has the
    shape of all inputs broadcast, as the Elemwise's has, except the outputs
    with a reduction in ``reductions`` (``REDUCE_*``, 0 for none): those are
    reduced over every position (0-d).
    ``strict``: see ``strict_axes``."""
    if not kernels.ops():
        return None
    input_dtypes = [v.dtype for v in values]
    if any(d not in kernel_dtypes() for d in input_dtypes):
        kernels.logger.debug("kernels: %s stays portable: input dtypes %s", scalar_outputs, input_dtypes)
        return None
    program = ScalarProgram(input_dtypes)
    try:
        registers = inline_scalar_graph(program, scalar_inputs, scalar_outputs, list(range(len(values))))
        registers = [program.cast(r, dtype) for r, dtype in zip(registers, out_dtypes)]
    except Unsupported as why:
        kernels.logger.debug("kernels: %s stays portable: %s", scalar_outputs, why)
        return None
    g.require_domain(kernels.DOMAIN, kernels.DOMAIN_VERSION)
    results = [None] * len(registers)
    out_dtypes = list(out_dtypes)
    reductions = list(reductions) if reductions is not None else [0] * len(out_dtypes)
    counted = _count_reduced_conditions(program, registers, out_dtypes, reductions)
    # Inputs of one element whatever the run (their static shape says so):
    # the compiled program reads them once.
    scalar_inputs = [v.shape is not None and all(d == 1 and isinstance(d, int) for d in v.shape) for v in values]
    for dtype in dict.fromkeys(out_dtypes):
        positions = [i for i, d in enumerate(out_dtypes) if d == dtype]
        outs = _elemwise_node(g, values, input_dtypes, scalar_inputs, program, [registers[i] for i in positions],
                              [int(reductions[i]) for i in positions], strict, dtype)
        for i, value in zip(positions, outs):
            results[i] = value
    if counted:
        # all(c) is "no position fails c", any(c) "some position meets it".
        tests = ScalarProgram(["float64"] * len(counted))
        zero = tests.const(0.0, "float64")
        tested = [tests.emit("EQ" if kind == REDUCE_ALL else "NEQ", "bool", k, zero) for k, kind in enumerate(counted.values())]
        outs = _elemwise_node(g, [results[i] for i in counted], tests.dtypes[: len(counted)], [True] * len(counted),
                              tests, tested, [0] * len(counted), (), "bool")
        for i, value in zip(counted, outs):
            results[i] = value
    return results


def _count_reduced_conditions(program, registers, out_dtypes, reductions) -> dict[int, int]:
    """Turn the bool outputs that are all reduced by All or Any (PyMC's checks
    of its parameters, ``reducing_readers``) beside float64 outputs into
    float64 sums: of the positions failing the condition (All) or meeting it
    (Any); the caller tests each count against 0. Edits the lists in place;
    returns ``{output: REDUCE_ALL or REDUCE_ANY}`` of those it turned.
    A custom op's outputs share one dtype, so the bool outputs would
    otherwise be a second node that runs the program again, every
    instruction the conditions read (PyMC's logistic regression: the
    sigmoid of every position). The counts are exact (whole numbers below
    2**53) in any order of adding."""
    bools = [i for i, d in enumerate(out_dtypes) if d == "bool"]
    if "float64" not in out_dtypes or not bools or any(reductions[i] not in (REDUCE_ALL, REDUCE_ANY) for i in bools):
        return {}
    counted = {}
    for i in bools:
        meets = program.cast(registers[i], "float64")
        if reductions[i] == REDUCE_ALL:
            meets = program.emit("Sub", "float64", program.const(1.0, "float64"), meets)
        counted[i] = reductions[i]
        registers[i], out_dtypes[i], reductions[i] = meets, "float64", REDUCE_SUM
    return counted


def _elemwise_node(g, values, input_dtypes, scalar_inputs, program, registers, reduced, strict, dtype) -> list:
    """The outputs of one ``Elemwise_<dtype>`` kernel node: ``program``'s
    ``registers`` on ``values``, each reduced as ``reduced`` says (0: not)."""
    # (Before the session builds the kernel, which looks the compiled program up.)
    compiled_kernels.compile_block(" ".join(input_dtypes), program.text(), registers, scalar_inputs)
    outs = g.op(
        f"Elemwise_{dtype}",
        *values,
        domain=kernels.DOMAIN,
        outputs=len(registers),
        input_dtypes=" ".join(input_dtypes),
        program=program.text(),
        output_registers=list(registers),
        **({"output_reductions": reduced} if any(reduced) else {}),
        # (NumPy's chunks, where its sums add in them: compat.numpy_sum_chunk.)
        **({"sum_chunk": compat.numpy_sum_chunk()} if REDUCE_SUM in reduced and compat.numpy_sum_chunk() else {}),
        **({"strict_axes": list(strict), "node_name": _shape_check_name()} if strict else {}),
    )
    return list(outs) if isinstance(outs, list | tuple) else [outs]


def elemwise_node_kernel(g, node, scalar_inputs, scalar_outputs, values):
    """The outputs of the Elemwise ``node`` (its scalar graph ``scalar_inputs ->
    scalar_outputs`` on ``values``) as kernel nodes, or None when the kernels
    cannot: an output that only a Sum, All or Any reads is reduced by the
    node itself (see ``reducing_readers``); it gets no value of its own
    (``FUSED``) and the reduction its result."""
    from pytensor_onnx.dispatch.basic import FUSED, current_scope

    readers = reducing_readers(node)
    extra = summing_readers(node, readers)
    dtypes = [o.type.dtype for o in node.outputs] + ["float64"] * len(extra)
    scope = current_scope()
    strict = strict_axes(node) if scope is not None else []
    kinds = [r[1] if r is not None else 0 for r in readers] + [_sum_kind(reader) for _i, reader in extra]
    scalar_outputs = list(scalar_outputs) + [scalar_outputs[i] for i, _reader in extra]
    outs = elemwise_kernel(g, scalar_inputs, scalar_outputs, values, dtypes, kinds, strict)
    if outs is None:
        return None
    if scope is not None:
        scope.checked_in_kernels.add(node)
    for i, found in enumerate(readers):
        if found is not None:
            reader = found[0]
            scope.env[reader.outputs[0]] = outs[i]
            scope.converted.add(reader)
            outs[i] = FUSED
    for (_i, reader), value in zip(extra, outs[len(node.outputs):], strict=True):
        scope.env[reader.outputs[0]] = value
        scope.converted.add(reader)
    return outs[: len(node.outputs)]


@functools.cache
def _shape_check_name() -> str:
    """The node name that makes the linker raise a kernel node's failure as
    ValueError (``raise_op.raised_check_error``)."""
    from pytensor.raise_op import CheckAndRaise

    from pytensor_onnx.dispatch.raise_op import check_node_name

    return check_node_name(CheckAndRaise(ValueError, SHAPE_MISMATCH))
