"""Scalar ops, applied element-wise (through Elemwise) or on 0-d values.

Rules cast inputs to PyTensor's output dtype first, so ONNX computes in the
dtype NumPy would; where ONNX semantics differ from NumPy's (integer floor
division, modulo signs, rounding, division by zero, integer powers, mixed
signed/unsigned comparisons) they build NumPy's result. Dtypes ONNX Runtime
has no kernel for are handled by the builder (it casts around the kernel).

Functions ONNX lacks or ONNX Runtime has no float64 kernel for (tan, the
inverse trigonometric and hyperbolic functions, log1p, expm1, ...) are
recipes of the C++ library (``g.recipe``), accurate to a few ulp in
float64; other float dtypes are computed in float64 and rounded back.
Complex values raise NotImplementedError: ONNX Runtime has no complex
tensors.
"""

import numpy as np
import pytensor.scalar.basic as ps
import pytensor.scalar.math as psm

from pytensor_onnx import compat
from pytensor_onnx.dispatch.basic import const, onnx_dtype, onnx_funcify
from pytensor_onnx.dispatch.utils import output_dtype


def cast_all(g, inputs, dtype):
    return [_cast_input(g, v, dtype) for v in inputs]


def _cast_input(g, value, dtype):
    # A constant is cast here, as PyTensor's local_upcast_elemwise_constant_inputs
    # (left out of the ONNX rewrites, rewriting.py) would have: no Cast node for
    # ONNX Runtime to run on every call of a model it did not fold.
    if value.dtype != dtype:
        data = value.constant_value
        if data is not None:
            return g.const(np.asarray(data).astype(dtype))
    return g.cast(value, dtype)


def _is_unsigned(dtype):
    return dtype.startswith("uint")


def _is_signed_int(dtype):
    return dtype.startswith("int")


def _is_float(dtype):
    return dtype.startswith("float")


def _fold(g, onnx_op, values):
    result = values[0]
    for v in values[1:]:
        result = g.op(onnx_op, result, v)
    return result


def _binary(onnx_op):
    def rule(op, node, g, *inputs):
        return _fold(g, onnx_op, cast_all(g, inputs, output_dtype(node)))

    return rule


def _unary(onnx_op):
    def rule(op, node, g, x):
        return g.op(onnx_op, g.cast(x, output_dtype(node)))

    return rule


# Add/Sub/Mul on bool (Add: or, Mul: and) and Max/Min on bool run through the
# builder's cast to uint8; integer Add/Sub/Mul wrap like NumPy's.
for _scalar_op, _onnx_op in [
    (ps.Add, "Add"),
    (ps.Mul, "Mul"),
    (ps.Sub, "Sub"),
    (ps.TrueDiv, "Div"),
]:
    onnx_funcify.register(_scalar_op)(_binary(_onnx_op))


# ONNX Runtime's Max/Min propagate NaN from either input, like np.maximum; the
# builder routes int64 (whose ORT kernels are wrong) through exact comparisons.
onnx_funcify.register(ps.Maximum)(_binary("Max"))
onnx_funcify.register(ps.Minimum)(_binary("Min"))

# Float-only ONNX ops: PyTensor upgrades integer inputs to a float output dtype.
for _scalar_op, _onnx_op in [
    (ps.Exp, "Exp"),
    (ps.Log, "Log"),
    (ps.Sqrt, "Sqrt"),
    (ps.Reciprocal, "Reciprocal"),
    (ps.Tanh, "Tanh"),
    (ps.Sin, "Sin"),
    (ps.Cos, "Cos"),
]:
    onnx_funcify.register(_scalar_op)(_unary(_onnx_op))


def require_float(op, node, dtype):
    if not _is_float(dtype):
        raise NotImplementedError(
            f"{type(op).__name__} with output dtype {dtype} (node: {node}): the ONNX rule computes floating results only"
        )


def float_recipe(name):
    """A rule computing the C++ recipe ``name`` on the inputs cast to the output dtype."""

    def rule(op, node, g, *inputs):
        dtype = output_dtype(node)
        require_float(op, node, dtype)
        return g.recipe(name, *cast_all(g, inputs, dtype))

    return rule


for _scalar_op, _recipe in [
    (ps.Tan, "tan"),
    (ps.ArcSin, "asin"),
    (ps.ArcCos, "acos"),
    (ps.ArcTan, "atan"),
    (ps.ArcTan2, "atan2"),
    (ps.Sinh, "sinh"),
    (ps.Cosh, "cosh"),
    (ps.ArcSinh, "asinh"),
    (ps.ArcCosh, "acosh"),
    (ps.ArcTanh, "atanh"),
    (ps.Log1p, "log1p"),
    (ps.Expm1, "expm1"),
]:
    onnx_funcify.register(_scalar_op)(float_recipe(_recipe))


def _scaled(factor):
    # NumPy's deg2rad/rad2deg multiply by the rounded constant.
    def rule(op, node, g, x):
        dtype = output_dtype(node)
        return g.op("Mul", g.cast(x, dtype), const(g, factor, dtype))

    return rule


if compat.Deg2Rad is not None:
    onnx_funcify.register(compat.Deg2Rad)(_scaled(np.pi / 180.0))
if compat.Rad2Deg is not None:
    onnx_funcify.register(compat.Rad2Deg)(_scaled(180.0 / np.pi))


def _no_complex(op, node):
    """The NotImplementedError of a complex graph input (onnx_dtype's), for a complex value inside the graph."""
    for var in [*node.inputs, *node.outputs]:
        if getattr(var.type, "dtype", "").startswith("complex"):
            onnx_dtype(var)


# The complex ops convert where every value is real (PyTensor's real(),
# imag() and angle() of a real tensor).
@onnx_funcify.register(ps.Real)
@onnx_funcify.register(ps.Conj)
def _real(op, node, g, x):
    _no_complex(op, node)
    return g.cast(x, output_dtype(node))


@onnx_funcify.register(ps.Imag)
def _imag(op, node, g, x):
    _no_complex(op, node)
    dtype = output_dtype(node)
    return g.op("Expand", const(g, 0, dtype), g.op("Shape", x))


def _angle(op, node, g, x):
    # np.angle of a real x: arctan2(0, x), pi for negative x and -0.0.
    _no_complex(op, node)
    dtype = output_dtype(node)
    x = g.cast(x, dtype)
    return g.recipe("atan2", const(g, 0, dtype), x)


if compat.Angle is not None:
    onnx_funcify.register(compat.Angle)(_angle)


@onnx_funcify.register(ps.Complex)
def _complex(op, node, g, *inputs):
    _no_complex(op, node)
    raise NotImplementedError(f"{type(op).__name__} (node: {node}) has no real-valued form")


if compat.ComplexFromPolar is not None:
    onnx_funcify.register(compat.ComplexFromPolar)(_complex)


@onnx_funcify.register(ps.Abs)
def _abs(op, node, g, x):
    dtype = output_dtype(node)
    x = g.cast(x, dtype)
    if dtype == "bool":
        return x  # ONNX Abs has no bool; |x| is x
    return g.op("Abs", x)  # Abs(INT_MIN) == INT_MIN, as in NumPy


@onnx_funcify.register(ps.Sign)
def _sign(op, node, g, x):
    return g.op("Sign", g.cast(x, output_dtype(node)))  # Sign(NaN) is NaN, as np.sign


@onnx_funcify.register(ps.Neg)
def _neg(op, node, g, x):
    dtype = output_dtype(node)
    x = g.cast(x, dtype)
    if _is_unsigned(dtype):
        # ONNX Neg is signed-only; NumPy wraps: -x == 0 - x (mod 2^bits).
        return g.op("Sub", const(g, 0, dtype), x)
    return g.op("Neg", x)


@onnx_funcify.register(ps.Sqr)
def _sqr(op, node, g, x):
    x = g.cast(x, output_dtype(node))
    return g.op("Mul", x, x)


@onnx_funcify.register(ps.Log2)
def _log2(op, node, g, x):
    dtype = output_dtype(node)
    return g.op("Div", g.op("Log", g.cast(x, dtype)), const(g, np.log(2.0), dtype))


@onnx_funcify.register(ps.Log10)
def _log10(op, node, g, x):
    dtype = output_dtype(node)
    return g.op("Div", g.op("Log", g.cast(x, dtype)), const(g, np.log(10.0), dtype))


@onnx_funcify.register(ps.Exp2)
def _exp2(op, node, g, x):
    # pow(2, x) is correctly rounded where exp(x * ln 2) would amplify the
    # rounding error of x * ln 2 by |x|.
    dtype = output_dtype(node)
    return g.op("Pow", const(g, 2.0, dtype), g.cast(x, dtype))


@onnx_funcify.register(psm.Sigmoid)
def _sigmoid(op, node, g, x):
    # scipy.special.expit is 1 / (1 + exp(-x)). ONNX Runtime's Sigmoid kernel
    # loses all relative precision for x < -20 (it returns 0 where expit is
    # 2e-9), so build the formula; exp(-x) = inf gives the exact limit 0.
    dtype = output_dtype(node)
    x = g.cast(x, dtype)
    one = const(g, 1, dtype)
    return g.op("Div", one, g.op("Add", one, g.op("Exp", g.op("Neg", x))))


def _floor_if_float(op_name):
    def rule(op, node, g, x):
        dtype = output_dtype(node)
        x = g.cast(x, dtype)
        if not _is_float(dtype):
            return x  # integers are already whole
        return g.op(op_name, x)

    return rule


onnx_funcify.register(ps.Floor)(_floor_if_float("Floor"))
onnx_funcify.register(ps.Ceil)(_floor_if_float("Ceil"))
# ONNX Round rounds halves to even, like np.round.
onnx_funcify.register(ps.RoundHalfToEven)(_floor_if_float("Round"))


# Signed zeros are not guaranteed: ONNX Runtime's Where returns +0.0 where it
# picks a -0.0 from its first (X) input, and its graph optimizer swaps
# Where(Not(c), a, b) to Where(c, b, a). The rounding rules keep -0.0 where
# ONNX Runtime lets them (a possibly negative zero goes to Where's Y input).


def trunc(g, x):
    """Round toward zero (ONNX has no Trunc); -0.0 and NaN pass through Ceil."""
    zero = const(g, 0, x.dtype)
    return g.op("Where", g.op("Greater", x, zero), g.op("Floor", x), g.op("Ceil", x))


@onnx_funcify.register(ps.Trunc)
def _trunc(op, node, g, x):
    dtype = output_dtype(node)
    x = g.cast(x, dtype)
    return trunc(g, x) if _is_float(dtype) else x


@onnx_funcify.register(ps.RoundHalfAwayFromZero)
def _round_half_away(op, node, g, x):
    # C's round(), as PyTensor's C backend computes it. (Its Python
    # implementation, floor(x + 0.5), is off by one where x + 0.5 rounds: at
    # 0.49999999999999994 and at odd integers above 2**52; this is exact.)
    dtype = output_dtype(node)
    x = g.cast(x, dtype)
    if not _is_float(dtype):
        return x
    # t = trunc(x); |x - t| is exact in floating point, so comparing it with
    # 0.5 decides ties without the rounding error of floor(|x| + 0.5).
    t = trunc(g, x)
    frac = g.op("Abs", g.op("Sub", x, t))
    away = g.op("GreaterOrEqual", frac, const(g, 0.5, dtype))  # NaN/inf: frac is NaN, so false
    return g.op("Where", away, g.op("Add", t, g.op("Sign", x)), t)


# Integer division and modulo.
#
# ONNX Runtime raises on an integer divisor of 0 and the CPU traps (SIGFPE,
# killing the process) on INT_MIN / -1 for int32/int64, so divisors 0 and -1
# are replaced by 1 and their results are built separately. NumPy gives 0 for
# x // 0 and x % 0, -x (wrapping) for x // -1 and 0 for x % -1.


def _safe_int_divisor(g, b):
    """(b == 0, b == -1 or None, b with those divisors replaced by 1)."""
    dtype = b.dtype
    is_zero = g.op("Equal", b, const(g, 0, dtype))
    if _is_unsigned(dtype):
        return is_zero, None, g.op("Where", is_zero, const(g, 1, dtype), b)
    is_minus_one = g.op("Equal", b, const(g, -1, dtype))
    unsafe = g.op("Or", is_zero, is_minus_one)
    return is_zero, is_minus_one, g.op("Where", unsafe, const(g, 1, dtype), b)


def _int_floor_div(g, a, b):
    dtype = a.dtype
    zero = const(g, 0, dtype)
    is_zero, is_minus_one, b = _safe_int_divisor(g, b)
    q = g.op("Div", a, b)  # truncates toward zero
    if is_minus_one is not None:
        # Floor = trunc - 1 when the remainder is non-zero and its sign differs
        # from the divisor's. The remainder comes from integer arithmetic:
        # ONNX Mod(fmod=1) on int64 computes in double and is wrong above 2**53.
        r = g.op("Sub", a, g.op("Mul", q, b))
        needs_fix = g.op(
            "And",
            g.op("Not", g.op("Equal", r, zero)),
            g.op("Xor", g.op("Less", r, zero), g.op("Less", b, zero)),
        )
        q = g.op("Sub", q, g.cast(needs_fix, dtype))
        q = g.op("Where", is_minus_one, g.op("Sub", zero, a), q)
    return g.op("Where", is_zero, zero, q)


def _int_mod(g, a, b):
    # Mod(fmod=0) is Python's modulo (the divisor's sign), exact for all ints;
    # x % 1 == 0 is also NumPy's x % 0 and x % -1.
    _, _, b = _safe_int_divisor(g, b)
    return g.op("Mod", a, b, fmod=0)


def _fmod_and_fix(g, a, b):
    """fmod(a, b) and whether NumPy's divmod moves it to the divisor's sign."""
    zero = const(g, 0, a.dtype)
    mod = g.op("Mod", a, b, fmod=1)  # C fmod: the dividend's sign
    fix = g.op(
        "And",
        g.op("Not", g.op("Equal", mod, zero)),
        g.op("Xor", g.op("Less", b, zero), g.op("Less", mod, zero)),
    )
    return mod, fix


def _float_floor_div(g, a, b):
    # NumPy's npy_divmod: d = (a - fmod(a, b)) / b, minus 1 where the remainder
    # moves to the divisor's sign, then snapped to the nearest whole number;
    # b == 0 gives a / b.
    dtype = a.dtype
    zero = const(g, 0, dtype)
    mod, fix = _fmod_and_fix(g, a, b)
    div = g.op("Div", g.op("Sub", a, mod), b)
    div = g.op("Sub", div, g.cast(fix, dtype))
    floor_div = g.op("Floor", div)
    snap = g.op("Greater", g.op("Sub", div, floor_div), const(g, 0.5, dtype))
    floor_div = g.op("Add", floor_div, g.cast(snap, dtype))
    # div == 0: NumPy returns copysign(0, a / b); |a| < |b| here, so a / b is
    # finite and (a / b) * 0 is that zero. It goes to Where's Y input, which
    # keeps a -0.0 (see above), under a condition no rewrite swaps (not a Not).
    exact = g.op("Div", a, b)
    nonzero = g.op("Greater", g.op("Abs", div), zero)
    floor_div = g.op("Where", nonzero, floor_div, g.op("Mul", exact, zero))
    return g.op("Where", g.op("Equal", b, zero), exact, floor_div)


def _float_mod(g, a, b):
    # NumPy's remainder: fmod moved to the divisor's sign; b == 0 gives fmod's
    # NaN; a zero remainder is copysign(0, b), which |mod| / b is for every b
    # that gets here (an infinite b too), and a NaN stays NaN. It goes to
    # Where's Y input (see above), under a condition no rewrite swaps.
    zero = const(g, 0, a.dtype)
    mod, fix = _fmod_and_fix(g, a, b)
    mod = g.op("Where", fix, g.op("Add", mod, b), mod)
    magnitude = g.op("Abs", mod)
    return g.op("Where", g.op("Greater", magnitude, zero), mod, g.op("Div", magnitude, b))


def _divmod_rule(float_rule, int_rule):
    def rule(op, node, g, a, b):
        dtype = output_dtype(node)
        if dtype == "bool":
            # NumPy has no bool loop for these: it computes in int8.
            a, b = cast_all(g, [a, b], "int8")
            return g.cast(int_rule(g, a, b), dtype)
        a, b = cast_all(g, [a, b], dtype)
        return float_rule(g, a, b) if _is_float(dtype) else int_rule(g, a, b)

    return rule


onnx_funcify.register(ps.IntDiv)(_divmod_rule(_float_floor_div, _int_floor_div))
onnx_funcify.register(ps.Mod)(_divmod_rule(_float_mod, _int_mod))


def _int_pow(g, base, exponent):
    """base ** exponent by binary exponentiation with wrapping multiplication.

    ONNX Runtime's integer Pow goes through double and saturates (3**40 in
    int64 is off, 3**20 in int32 gives INT_MIN); NumPy wraps. Exponents must
    be >= 0 (NumPy raises for negative integer powers).
    """
    dtype = base.dtype
    n_bits = np.iinfo(dtype).bits - (1 if _is_signed_int(dtype) else 0)
    known = exponent.constant_value
    if known is not None and known.size and known.min() >= 0:
        n_bits = max(int(known.max()).bit_length(), 1)
    one = const(g, 1, dtype)
    two = const(g, 2, dtype)
    result = None
    for k in range(n_bits):
        bit = g.op("Mod", exponent, two, fmod=0)
        # factor = base if the bit is set else 1, without a Where per bit.
        factor = g.op("Add", one, g.op("Mul", bit, g.op("Sub", base, one)))
        result = factor if result is None else g.op("Mul", result, factor)
        if k + 1 < n_bits:
            exponent = g.op("Div", exponent, two)
            base = g.op("Mul", base, base)
    return result


@onnx_funcify.register(ps.Pow)
def _pow(op, node, g, base, exponent):
    dtype = output_dtype(node)
    base, exponent = cast_all(g, [base, exponent], dtype)
    if _is_float(dtype):
        return g.op("Pow", base, exponent)
    return _int_pow(g, base, exponent)


@onnx_funcify.register(ps.Clip)
def _clip(op, node, g, x, low, high):
    # PyTensor's Clip: x < low -> low, else x > high -> high, else x. Unlike
    # ONNX Clip, low > high gives low below low, and a NaN bound never applies.
    dtype = output_dtype(node)
    x, low, high = cast_all(g, [x, low, high], dtype)
    below = _ordered(g, "Less", x, low)
    above = _ordered(g, "Greater", x, high)
    return g.op("Where", below, low, g.op("Where", above, high, x))


@onnx_funcify.register(ps.Cast)
def _cast(op, node, g, x):
    _no_complex(op, node)  # pt.cast(x, "complex128"): the error of a complex input
    return g.cast(x, output_dtype(node))


@onnx_funcify.register(ps.Identity)
def _identity(op, node, g, x):
    return g.cast(x, output_dtype(node))


@onnx_funcify.register(ps.Second)
def _second(op, node, g, x, y):
    # fill(x, y): y broadcast to the broadcast shape of x and y (Expand
    # broadcasts y's shape with x's).
    y = g.cast(y, output_dtype(node))
    return g.op("Expand", y, g.op("Shape", x))


# Comparisons, logic and selection.


def _ordered(g, onnx_op, a, b):
    """An order comparison of two values of one dtype (ONNX's have no bool)."""
    if a.dtype == "bool":
        a, b = cast_all(g, [a, b], "uint8")
    return g.op(onnx_op, a, b)


# For a uint64 value u and a negative signed value s: the result of `u op s`.
_UNSIGNED_VS_NEGATIVE = {"Less": False, "Greater": True, "LessOrEqual": False, "GreaterOrEqual": True, "Equal": False}
_MIRRORED = {"Less": "Greater", "Greater": "Less", "LessOrEqual": "GreaterOrEqual", "GreaterOrEqual": "LessOrEqual"}


def _compare_uint64_signed(g, onnx_op, a, b):
    # NumPy compares uint64 with signed integers exactly (loops qQ/Qq); their
    # common dtype is float64, which would merge values above 2**53. A negative
    # signed value is below every unsigned one; otherwise both fit in uint64.
    unsigned_first = a.dtype == "uint64"
    u, s = (a, b) if unsigned_first else (b, a)
    s = g.cast(s, "int64")
    s_negative = g.op("Less", s, const(g, 0, "int64"))
    s = g.cast(s, "uint64")
    compared = g.op(onnx_op, u, s) if unsigned_first else g.op(onnx_op, s, u)
    # Where s < 0 the result is fixed: "u op s" by the table, "s op u" by the
    # table entry of the mirrored comparison.
    if not unsigned_first:
        onnx_op = _MIRRORED.get(onnx_op, onnx_op)
    if _UNSIGNED_VS_NEGATIVE[onnx_op]:
        return g.op("Or", s_negative, compared)
    return g.op("And", g.op("Not", s_negative), compared)


def _compare(onnx_op, negate=False):
    def rule(op, node, g, a, b):
        if {a.dtype, b.dtype} & {"uint64"} and (_is_signed_int(a.dtype) or _is_signed_int(b.dtype)):
            result = _compare_uint64_signed(g, onnx_op, a, b)
        else:
            # NumPy compares in the common dtype of the inputs.
            dtype = np.result_type(a.dtype, b.dtype).name
            a, b = cast_all(g, [a, b], dtype)
            result = g.op(onnx_op, a, b) if onnx_op == "Equal" else _ordered(g, onnx_op, a, b)
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
    dtype = output_dtype(node)
    cond = g.cast(cond, "bool")  # non-zero (and NaN) is true, as in np.where
    return g.op("Where", cond, g.cast(a, dtype), g.cast(b, dtype))


def _bitwise(bool_op, int_op):
    def rule(op, node, g, *inputs):
        dtype = output_dtype(node)
        if _is_float(dtype):
            # e.g. int8 & uint64: PyTensor's upcast is float64, where NumPy
            # (and so PyTensor's own backends) have no bitwise loop either.
            raise NotImplementedError(f"{type(op).__name__} with output dtype {dtype}: bitwise ops need integers")
        inputs = cast_all(g, inputs, dtype)
        # Bitwise* exist from opset 18; the builder raises a clear
        # NotImplementedError before that.
        return _fold(g, bool_op if dtype == "bool" else int_op, inputs)

    return rule


onnx_funcify.register(ps.AND)(_bitwise("And", "BitwiseAnd"))
onnx_funcify.register(ps.OR)(_bitwise("Or", "BitwiseOr"))
onnx_funcify.register(ps.XOR)(_bitwise("Xor", "BitwiseXor"))


@onnx_funcify.register(ps.Invert)
def _invert(op, node, g, x):
    dtype = output_dtype(node)
    x = g.cast(x, dtype)
    return g.op("Not", x) if dtype == "bool" else g.op("BitwiseNot", x)


def _all_false(g, x):
    # Integers are never NaN or infinite.
    return g.op("Expand", const(g, False, "bool"), g.op("Shape", x))


@onnx_funcify.register(ps.IsNan)
def _isnan(op, node, g, x):
    return g.op("IsNaN", x) if _is_float(x.dtype) else _all_false(g, x)


@onnx_funcify.register(ps.IsInf)
def _isinf(op, node, g, x):
    return g.op("IsInf", x) if _is_float(x.dtype) else _all_false(g, x)
