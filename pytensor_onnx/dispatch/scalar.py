"""Scalar ops, applied element-wise (through Elemwise) or on 0-d values.

Rules cast inputs to PyTensor's output dtype first, so ONNX computes in the
dtype NumPy would; where ONNX semantics differ from NumPy's (integer floor
division, modulo signs, rounding, division by zero) they build NumPy's result.
"""

import numpy as np
import pytensor.scalar.basic as ps

from pytensor_onnx.dispatch.basic import const, onnx_funcify


def out_dtype(node, i=0):
    return node.outputs[i].type.dtype


def cast_all(g, inputs, dtype):
    return [g.cast(v, dtype) for v in inputs]


def _is_unsigned(dtype):
    return dtype.startswith("uint")


def _is_int(dtype):
    return dtype.startswith(("int", "uint"))


def _is_float(dtype):
    return dtype.startswith("float")


def _fold(g, onnx_op, values):
    result = values[0]
    for v in values[1:]:
        result = g.op(onnx_op, result, v)
    return result


def _binary(onnx_op):
    def rule(op, node, g, *inputs):
        return _fold(g, onnx_op, cast_all(g, inputs, out_dtype(node)))

    return rule


def _unary(onnx_op):
    def rule(op, node, g, x):
        return g.op(onnx_op, g.cast(x, out_dtype(node)))

    return rule


for _scalar_op, _onnx_op in [
    (ps.Add, "Add"),
    (ps.Mul, "Mul"),
    (ps.Sub, "Sub"),
    (ps.TrueDiv, "Div"),
    (ps.Maximum, "Max"),
    (ps.Minimum, "Min"),
    (ps.Pow, "Pow"),
]:
    onnx_funcify.register(_scalar_op)(_binary(_onnx_op))

for _scalar_op, _onnx_op in [
    (ps.Exp, "Exp"),
    (ps.Log, "Log"),
    (ps.Sqrt, "Sqrt"),
    (ps.Abs, "Abs"),
    (ps.Sign, "Sign"),
]:
    onnx_funcify.register(_scalar_op)(_unary(_onnx_op))


@onnx_funcify.register(ps.Neg)
def _neg(op, node, g, x):
    dtype = out_dtype(node)
    x = g.cast(x, dtype)
    if _is_unsigned(dtype) or dtype == "bool":
        # ONNX Neg is signed-only; NumPy wraps: -x == 0 - x (mod 2^bits).
        return g.op("Sub", const(g, 0, dtype), x)
    return g.op("Neg", x)


def _floor_if_float(op_name):
    def rule(op, node, g, x):
        dtype = out_dtype(node)
        x = g.cast(x, dtype)
        if not _is_float(dtype):
            return x  # integers are already whole
        return g.op(op_name, x)

    return rule


onnx_funcify.register(ps.Floor)(_floor_if_float("Floor"))
onnx_funcify.register(ps.Ceil)(_floor_if_float("Ceil"))
onnx_funcify.register(ps.RoundHalfToEven)(_floor_if_float("Round"))


def trunc(g, x):
    """Round toward zero (ONNX has no Trunc)."""
    zero = const(g, 0, x.dtype)
    return g.op("Where", g.op("Less", x, zero), g.op("Ceil", x), g.op("Floor", x))


onnx_funcify.register(ps.Trunc)(lambda op, node, g, x: _trunc_rule(node, g, x))


def _trunc_rule(node, g, x):
    dtype = out_dtype(node)
    x = g.cast(x, dtype)
    return trunc(g, x) if _is_float(dtype) else x


@onnx_funcify.register(ps.RoundHalfAwayFromZero)
def _round_half_away(op, node, g, x):
    dtype = out_dtype(node)
    x = g.cast(x, dtype)
    if not _is_float(dtype):
        return x
    # t = trunc(x); |x - t| is exact in floating point, so comparing it with
    # 0.5 decides ties without the rounding error of floor(|x| + 0.5).
    t = trunc(g, x)
    frac = g.op("Abs", g.op("Sub", x, t))
    up = g.cast(g.op("GreaterOrEqual", frac, const(g, 0.5, dtype)), dtype)
    return g.op("Add", t, g.op("Mul", g.op("Sign", x), up))


def _safe_divisor(g, b):
    """(b == 0, b with zeros replaced by ones): NumPy returns 0 for integer x // 0
    and x % 0, where ONNX Runtime raises."""
    is_zero = g.op("Equal", b, const(g, 0, b.dtype))
    return is_zero, g.op("Where", is_zero, const(g, 1, b.dtype), b)


def _int_floor_div(g, a, b):
    is_zero, b = _safe_divisor(g, b)
    q = g.op("Div", a, b)  # truncates toward zero
    if not _is_unsigned(a.dtype):
        # Floor = trunc - 1 when the remainder is non-zero and the signs differ.
        zero = const(g, 0, a.dtype)
        r = g.op("Mod", a, b, fmod=1)
        needs_fix = g.op(
            "And",
            g.op("Not", g.op("Equal", r, zero)),
            g.op("Xor", g.op("Less", r, zero), g.op("Less", b, zero)),
        )
        q = g.op("Sub", q, g.cast(needs_fix, a.dtype))
    return g.op("Where", is_zero, const(g, 0, a.dtype), q)


def _float_floor_div(g, a, b):
    # NumPy's npy_divmod: d = (a - fmod(a, b)) / b, corrected by the remainder's
    # sign, then snapped to the nearest whole number; b == 0 gives a / b.
    dtype = a.dtype
    zero = const(g, 0, dtype)
    mod = g.op("Mod", a, b, fmod=1)
    div = g.op("Div", g.op("Sub", a, mod), b)
    fix = g.op(
        "And",
        g.op("Not", g.op("Equal", mod, zero)),
        g.op("Xor", g.op("Less", b, zero), g.op("Less", mod, zero)),
    )
    div = g.op("Sub", div, g.cast(fix, dtype))
    floor_div = g.op("Floor", div)
    snap = g.op("Greater", g.op("Sub", div, floor_div), const(g, 0.5, dtype))
    floor_div = g.op("Add", floor_div, g.cast(snap, dtype))
    # div == 0: keep the sign of a / b (NumPy returns copysign(0, a/b)).
    exact = g.op("Div", a, b)
    floor_div = g.op("Where", g.op("Equal", div, zero), g.op("Mul", exact, zero), floor_div)
    return g.op("Where", g.op("Equal", b, zero), exact, floor_div)


@onnx_funcify.register(ps.IntDiv)
def _int_div(op, node, g, a, b):
    dtype = out_dtype(node)
    a, b = cast_all(g, [a, b], dtype)
    if _is_float(dtype):
        return _float_floor_div(g, a, b)
    if dtype == "bool":
        raise NotImplementedError("IntDiv on bool has no NumPy meaning")
    return _int_floor_div(g, a, b)


@onnx_funcify.register(ps.Mod)
def _mod(op, node, g, a, b):
    dtype = out_dtype(node)
    a, b = cast_all(g, [a, b], dtype)
    if _is_float(dtype):
        # fmod keeps the dividend's sign; NumPy's remainder takes the divisor's.
        zero = const(g, 0, dtype)
        r = g.op("Mod", a, b, fmod=1)
        adjust = g.op(
            "And",
            g.op("Not", g.op("Equal", r, zero)),
            g.op("Xor", g.op("Less", r, zero), g.op("Less", b, zero)),
        )
        return g.op("Where", adjust, g.op("Add", r, b), r)
    is_zero, safe_b = _safe_divisor(g, b)
    r = g.op("Mod", a, safe_b, fmod=0)  # integer Mod follows the divisor's sign
    return g.op("Where", is_zero, const(g, 0, dtype), r)


@onnx_funcify.register(ps.Cast)
def _cast(op, node, g, x):
    return g.cast(x, out_dtype(node))


@onnx_funcify.register(ps.Identity)
def _identity(op, node, g, x):
    return g.cast(x, out_dtype(node))


@onnx_funcify.register(ps.Second)
def _second(op, node, g, x, y):
    # fill(x, y): y broadcast to the broadcast shape of x and y.
    y = g.cast(y, out_dtype(node))
    return g.op("Expand", y, g.op("Shape", x))


# Comparisons, logic and selection: small, and produced by PyTensor's own rewrites
# (e.g. gradients of max), so the Tier-1 graphs need them.
def _compare(onnx_op, negate=False):
    def rule(op, node, g, a, b):
        dtype = np.result_type(a.dtype, b.dtype).name
        result = g.op(onnx_op, g.cast(a, dtype), g.cast(b, dtype))
        return g.op("Not", result) if negate else result

    return rule


onnx_funcify.register(ps.LT)(_compare("Less"))
onnx_funcify.register(ps.GT)(_compare("Greater"))
onnx_funcify.register(ps.LE)(_compare("LessOrEqual"))
onnx_funcify.register(ps.GE)(_compare("GreaterOrEqual"))
onnx_funcify.register(ps.EQ)(_compare("Equal"))
onnx_funcify.register(ps.NEQ)(_compare("Equal", negate=True))


@onnx_funcify.register(ps.Switch)
def _switch(op, node, g, cond, a, b):
    dtype = out_dtype(node)
    cond = g.cast(cond, "bool")
    return g.op("Where", cond, g.cast(a, dtype), g.cast(b, dtype))


def _bitwise(bool_op, int_op):
    def rule(op, node, g, *inputs):
        dtype = out_dtype(node)
        inputs = cast_all(g, inputs, dtype)
        if dtype == "bool":
            return _fold(g, bool_op, inputs)
        return _fold(g, int_op, inputs)

    return rule


onnx_funcify.register(ps.AND)(_bitwise("And", "BitwiseAnd"))
onnx_funcify.register(ps.OR)(_bitwise("Or", "BitwiseOr"))
onnx_funcify.register(ps.XOR)(_bitwise("Xor", "BitwiseXor"))


@onnx_funcify.register(ps.Invert)
def _invert(op, node, g, x):
    dtype = out_dtype(node)
    x = g.cast(x, dtype)
    return g.op("Not", x) if dtype == "bool" else g.op("BitwiseNot", x)


@onnx_funcify.register(ps.IsNan)
def _isnan(op, node, g, x):
    if not _is_float(x.dtype):
        return _all_false(g, x)
    return g.op("IsNaN", x)


@onnx_funcify.register(ps.IsInf)
def _isinf(op, node, g, x):
    if not _is_float(x.dtype):
        return _all_false(g, x)
    return g.op("IsInf", x)


def _all_false(g, x):
    # Integers are never NaN or infinite.
    return g.op("Expand", const(g, False, "bool"), g.op("Shape", x))
