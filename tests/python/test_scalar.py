"""Scalar-op rules (dispatch/scalar.py), applied element-wise to tensors.

Each op runs over every dtype PyTensor accepts for it, on edge values
(integer limits, negative numbers, ±0, ±inf, NaN, .5 ties), against
PyTensor's ``py`` linker.
"""

import itertools
from decimal import ROUND_HALF_UP, Decimal, localcontext

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from pytensor_onnx import export_onnx
from pytensor_onnx.testing import compare_onnx_and_py

from helpers import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, SIGNED_INT_DTYPES, UNARY_ELEMWISE


def edge_values(dtype):
    """Values where NumPy and ONNX are most likely to disagree."""
    if dtype == "bool":
        return np.array([False, True])
    if dtype in FLOAT_DTYPES:
        return np.array(
            [-np.inf, -1e30, -7.5, -7.0, -2.5, -2.0, -1.5, -1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0,
             2.5, 3.0, 7.5, 1e30, np.inf, np.nan],
            dtype=dtype,
        )  # fmt: skip
    info = np.iinfo(dtype)
    values = {info.min, info.min + 1, -7, -3, -2, -1, 0, 1, 2, 3, 7, 100, info.max - 1, info.max}
    if dtype == "uint64":
        values |= {2**53 + 1, 2**63 - 1, 2**63, 2**63 + 1}
    if dtype == "int64":
        values |= {2**53 + 1, -(2**53) - 1}
    return np.array(sorted(v for v in values if info.min <= v <= info.max), dtype=dtype)


def all_pairs(a_dtype, b_dtype):
    """Every pair of edge values, as two 1-d arrays."""
    a, b = zip(*itertools.product(edge_values(a_dtype), edge_values(b_dtype)), strict=True)
    return np.array(a, dtype=a_dtype), np.array(b, dtype=b_dtype)


def vector(dtype, name="x"):
    return pt.tensor(name, dtype=dtype, shape=(None,))


def builds(fn, *dtypes):
    """Whether PyTensor accepts ``fn`` on inputs of these dtypes."""
    try:
        fn(*[vector(d) for d in dtypes])
    except TypeError:
        return False
    return True


BINARY_OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "true_div": lambda a, b: a / b,
    "int_div": lambda a, b: a // b,
    "mod": lambda a, b: a % b,
    "maximum": pt.maximum,
    "minimum": pt.minimum,
}

MIXED_PAIRS = [
    ("int8", "float32"),
    ("float32", "int8"),
    ("uint8", "int8"),
    ("int8", "uint8"),
    ("bool", "int8"),
    ("int16", "bool"),
    ("bool", "float64"),
    ("uint32", "int32"),
    ("int64", "float32"),
    ("int32", "float32"),
    ("int16", "float32"),
    ("uint64", "int64"),
    ("int8", "uint64"),
    ("uint16", "float64"),
]


def binary_cases(dtype_pairs):
    return [
        pytest.param(name, a, b, id=f"{name}-{a}-{b}")
        for name, (a, b) in itertools.product(BINARY_OPS, dtype_pairs)
        if builds(BINARY_OPS[name], a, b)
    ]


@pytest.mark.parametrize("name, a_dtype, b_dtype", binary_cases([(d, d) for d in ALL_DTYPES]))
def test_binary_same_dtype(name, a_dtype, b_dtype):
    a, b = vector(a_dtype, "a"), vector(b_dtype, "b")
    compare_onnx_and_py([a, b], [BINARY_OPS[name](a, b)], all_pairs(a_dtype, b_dtype))


@pytest.mark.parametrize("name, a_dtype, b_dtype", binary_cases(MIXED_PAIRS))
def test_binary_mixed_dtypes(name, a_dtype, b_dtype):
    # The output dtype is PyTensor's upcast (e.g. int8 + float32 -> float32,
    # uint8 + int8 -> int16, uint64 + int64 -> float64).
    a, b = vector(a_dtype, "a"), vector(b_dtype, "b")
    out = BINARY_OPS[name](a, b)
    _, result = compare_onnx_and_py([a, b], [out], all_pairs(a_dtype, b_dtype))
    assert result[0].dtype == out.dtype


@pytest.mark.parametrize(
    "name, a_dtype, b_dtype",
    binary_cases([(d, d) for d in ["int8", "int16", "uint8", "uint16", "uint64", "bool"]] + [("uint8", "int8")]),
)
def test_binary_opset13(name, a_dtype, b_dtype):
    # At opset 13 ONNX Runtime has no Add/Sub/Mul/Div kernel for (u)int8/16:
    # the builder computes in a wider dtype and casts back (wrapping kept).
    a, b = vector(a_dtype, "a"), vector(b_dtype, "b")
    compare_onnx_and_py([a, b], [BINARY_OPS[name](a, b)], all_pairs(a_dtype, b_dtype), opset_version=13)


def test_bool_arithmetic_dtypes():
    # PyTensor: bool + bool and bool * bool stay bool (or / and), bool / bool is float.
    a, b = vector("bool", "a"), vector("bool", "b")
    outs = [a + b, a * b, a / b, pt.maximum(a, b), pt.minimum(a, b), a // b, a % b]
    _, results = compare_onnx_and_py([a, b], outs, all_pairs("bool", "bool"))
    assert [r.dtype.name for r in results] == ["bool", "bool", "float64", "bool", "bool", "bool", "bool"]
    np.testing.assert_array_equal(results[0], [False, True, True, True])


@pytest.mark.parametrize("dtype", SIGNED_INT_DTYPES)
def test_int_div_and_mod_at_the_limits(dtype):
    # INT_MIN // -1 and INT_MIN % -1 trap (SIGFPE) in ONNX Runtime's int32/int64
    # Div and Mod; x // 0 and x % 0 raise there. NumPy gives INT_MIN (wrapped),
    # 0, 0 and 0.
    info = np.iinfo(dtype)
    a = np.array([info.min, info.min, info.min, info.max, -7, 7, -7, 7, 0, info.min + 1, -1], dtype=dtype)
    b = np.array([-1, 0, 1, -1, 0, 0, -1, -1, 0, -1, info.min], dtype=dtype)
    x, y = vector(dtype, "a"), vector(dtype, "b")
    _, (quotient, remainder) = compare_onnx_and_py([x, y], [x // y, x % y], [a, b])
    assert quotient[0] == info.min and quotient[1] == 0 and remainder[1] == 0


def test_int_div_and_mod_large_int64():
    # ONNX Mod(fmod=1) on int64 computes in double: wrong above 2**53.
    a = np.array([2**62 + 1, -(2**62) - 1, 2**62 + 1, -(2**62) - 1, 2**53 + 1, 2**63 - 1], dtype="int64")
    b = np.array([3, 3, -3, -3, 2, 2**62 + 3], dtype="int64")
    x, y = vector("int64", "a"), vector("int64", "b")
    compare_onnx_and_py([x, y], [x // y, x % y], [a, b])


def test_float_int_div_and_mod_inf_and_zero():
    # npy_divmod cases: a zero quotient, infinite divisors (-1 // inf == -1,
    # -1 % inf == inf), infinite or NaN dividends, divisor 0 (a / 0 and NaN).
    a = np.array([0.0, -0.0, 4.0, -4.0, 1.0, -1.0, 0.0, 1.0, -1.0, np.inf, np.nan, 1.0, -1.0, 0.0, 1e300])
    b = np.array([3.0, 3.0, -2.0, 2.0, 3.0, -3.0, -np.inf, np.inf, np.inf, 2.0, 2.0, 0.0, -0.0, 0.0, 1e-300])
    x, y = vector("float64", "a"), vector("float64", "b")
    _, (quotient, remainder) = compare_onnx_and_py([x, y], [x // y, x % y], [a, b])
    assert quotient[8] == -1.0 and remainder[8] == np.inf


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_int_div_and_mod_signed_zeros(dtype):
    # NumPy's npy_divmod: a zero quotient is copysign(0, a / b), a zero
    # remainder copysign(0, b) (0.0 // -3 == -0.0, 0.0 % -3 == -0.0, 6 % -3 == -0.0).
    # ONNX Runtime's Where returns +0.0 for a -0.0 it picks from its X input,
    # so the portable graph's quotient once lost the sign (1 / (0.0 // -x) was
    # +inf, not -inf: fuzz case case-d023fc562311).
    values = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 6.0, -6.0, 3.0, np.inf, -np.inf, np.nan], dtype=dtype)
    divisors = np.array([3.0, -3.0, 2.0, -2.0, np.inf, -np.inf, 9e18 if dtype == "float64" else 9e9], dtype=dtype)
    a, b = (np.array(t, dtype) for t in zip(*itertools.product(values, divisors), strict=True))
    expected = [np.floor_divide(a, b), np.remainder(a, b)]
    assert np.signbit(expected[0][[0, 1, 7]]).tolist() == [False, True, True]  # 0 // 3, 0 // -3, 0 // -2

    def same_bits(got, py_result):
        np.testing.assert_array_equal(got, py_result)
        numbers = ~np.isnan(py_result)  # a NaN's sign bit is no result
        np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(py_result[numbers]))

    x, y = vector(dtype, "a"), vector(dtype, "b")
    _, results = compare_onnx_and_py([x, y], [x // y, x % y], [a, b], assert_fn=same_bits)
    for got, want in zip(results, expected, strict=True):
        same_bits(got, want)


def pow_cases():
    cases = [pytest.param(d, d, id=f"{d}-{d}") for d in INT_DTYPES + FLOAT_DTYPES + ["bool"]]
    mixed = [("int8", "float32"), ("uint8", "int8"), ("int32", "int64"), ("float32", "int64")]
    cases += [pytest.param(a, b, id=f"{a}-{b}") for a, b in mixed]
    return cases


@pytest.mark.parametrize("base_dtype, exponent_dtype", pow_cases())
def test_pow(base_dtype, exponent_dtype):
    # ONNX Runtime's integer Pow goes through double and saturates; NumPy wraps.
    base = edge_values(base_dtype)
    if exponent_dtype in FLOAT_DTYPES:
        exponents = edge_values(exponent_dtype)
    elif exponent_dtype == "bool":
        exponents = np.array([False, True])
    else:  # NumPy raises for negative integer exponents
        info = np.iinfo(exponent_dtype)
        candidates = [0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 63, 64, 100, info.max]
        exponents = np.array(sorted({v for v in candidates if v <= info.max}), exponent_dtype)
    a, b = zip(*itertools.product(base, exponents), strict=True)
    x, y = vector(base_dtype, "a"), vector(exponent_dtype, "b")
    compare_onnx_and_py([x, y], [x**y], [np.array(a, base_dtype), np.array(b, exponent_dtype)])


@pytest.mark.parametrize("dtype", ["int64", "int8", "uint64"])
def test_pow_constant_exponent(dtype):
    x = vector(dtype)
    exponent = pt.constant(np.array([0, 5, 13, 40], dtype=dtype))
    values = np.array([3, 7, 2, 255 if dtype.startswith("u") else -3], dtype=dtype)
    compare_onnx_and_py([x], [x**exponent], [values])


@pytest.mark.parametrize("dtype", ["int8", "int64", "float32"])
def test_pow_opset13(dtype):
    x, y = vector(dtype, "a"), vector(dtype, "b")
    a = np.array([3, -3, 2, 7, 0], dtype=dtype)
    b = np.array([5, 7, 62, 0, 0], dtype=dtype)
    compare_onnx_and_py([x, y], [x**y], [a, b], opset_version=13)


UNARY_OPS = {
    **UNARY_ELEMWISE,
    "tensor_copy": pt.tensor_copy,
}


def unary_cases(dtypes):
    return [
        pytest.param(name, dtype, id=f"{name}-{dtype}")
        for name, dtype in itertools.product(UNARY_OPS, dtypes)
        if builds(UNARY_OPS[name], dtype)
    ]


@pytest.mark.parametrize("name, dtype", unary_cases(ALL_DTYPES))
def test_unary(name, dtype):
    # neg wraps on unsigned ints and at INT_MIN, abs(INT_MIN) == INT_MIN,
    # floor/exp/... of ints are float, as PyTensor's types say.
    x = vector(dtype)
    values = edge_values(dtype)
    if name == "round_half_away_from_zero" and dtype == "float64":
        # Ties and their neighbours; the values where PyTensor's Python
        # implementation is off are in test_round_half_away_from_zero_is_exact.
        values = values[np.abs(values) < 2**52]
    # (round_half_away_from_zero is C's round(): +0.0 at +0.0, where PyTensor's
    # Python implementation gives ceil(-0.5) = -0.0; docs/semantics.md.)
    compare_onnx_and_py([x], [UNARY_OPS[name](x)], [values], zero_signs=name != "round_half_away_from_zero")


@pytest.mark.parametrize(
    "name, dtype",
    [
        case
        for case in unary_cases(["int8", "uint16", "float32"])
        if case.values[0] in ("neg", "abs", "sign", "floor", "round_half_to_even", "sqr", "exp2", "isnan")
    ],
)
def test_unary_opset13(name, dtype):
    x = vector(dtype)
    compare_onnx_and_py([x], [UNARY_OPS[name](x)], [edge_values(dtype)], opset_version=13)


def round_half_up(value):
    """Round half away from zero with exact decimal arithmetic."""
    if not np.isfinite(value):
        return value
    with localcontext() as context:
        context.prec = 400
        return float(Decimal(float(value)).quantize(Decimal(1), rounding=ROUND_HALF_UP)) or np.copysign(0.0, value)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_round_half_away_from_zero_is_exact(dtype):
    # Reference: exact decimal rounding, which is C's round() and PyTensor's C
    # backend. PyTensor's Python implementation computes floor(x + 0.5), which
    # rounds 0.49999999999999994 to 1 and odd float64 integers above 2**52 up.
    eps = np.finfo(dtype).eps
    values = np.array(
        [0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.5 - eps / 4, -(0.5 - eps / 4), 0.5 + eps / 2, 1.5 - eps,
         2 ** (np.finfo(dtype).nmant) + 1, -(2 ** np.finfo(dtype).nmant) - 1, 2 ** (np.finfo(dtype).nmant - 1) + 0.5,
         1e30, -0.0, 0.0, np.inf, -np.inf, np.nan, 1e-300 if dtype == "float64" else 1e-40],
        dtype=dtype,
    )  # fmt: skip
    expected = np.array([round_half_up(v) for v in values], dtype=dtype)
    assert expected[6] == 0.0 and expected[10] == values[10]  # the cases named above

    def matches_exact_rounding(got, _py_result):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))

    x = vector(dtype)
    compare_onnx_and_py([x], [pt.round(x, mode="half_away_from_zero")], [values], assert_fn=matches_exact_rounding)


def test_round_half_to_even_ties():
    x = vector("float64")
    values = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 0.49999999999999994, 2**52 + 1.0, 4.5000001])
    _, result = compare_onnx_and_py([x], pt.round(x, mode="half_to_even"), [values])
    np.testing.assert_array_equal(result[:6], [0.0, 2.0, 2.0, -0.0, -2.0, -2.0])


def compare_cases():
    pairs = [(d, d) for d in ALL_DTYPES] + MIXED_PAIRS
    pairs += [("uint64", "int8"), ("int32", "uint64"), ("uint64", "float32")]
    return [pytest.param(op, a, b, id=f"{op}-{a}-{b}") for op, (a, b) in itertools.product(COMPARISONS, pairs)]


COMPARISONS = {
    "lt": pt.lt,
    "gt": pt.gt,
    "le": pt.le,
    "ge": pt.ge,
    "eq": pt.eq,
    "neq": pt.neq,
}


@pytest.mark.parametrize("name, a_dtype, b_dtype", compare_cases())
def test_comparison(name, a_dtype, b_dtype):
    # NumPy compares uint64 with signed ints exactly (not through float64), NaN
    # is unequal to everything, bools order False < True.
    a, b = vector(a_dtype, "a"), vector(b_dtype, "b")
    compare_onnx_and_py([a, b], [COMPARISONS[name](a, b)], all_pairs(a_dtype, b_dtype))


def test_comparison_uint64_above_2_53():
    a = np.array([2**63 + 5, 2**64 - 1, 2**53 + 1, 5, 0, 2**63], dtype="uint64")
    b = np.array([2**63 - 1, -1, 2**53, 5, -(2**63), 2**63 - 1], dtype="int64")
    x, y = vector("uint64", "a"), vector("int64", "b")
    outs = [f(x, y) for f in COMPARISONS.values()] + [f(y, x) for f in COMPARISONS.values()]
    _, results = compare_onnx_and_py([x, y], outs, [a, b])
    np.testing.assert_array_equal(results[1], [True, True, True, False, True, True])  # x > y


@pytest.mark.parametrize("a_dtype, b_dtype", [("bool", "bool"), ("uint64", "int64"), ("int8", "uint8"), ("float32", "int64")])
def test_comparison_opset13(a_dtype, b_dtype):
    a, b = vector(a_dtype, "a"), vector(b_dtype, "b")
    outs = [f(a, b) for f in COMPARISONS.values()]
    compare_onnx_and_py([a, b], outs, all_pairs(a_dtype, b_dtype), opset_version=13)


def test_maximum_minimum_uint64():
    a = np.array([2**64 - 1, 2**63, 0, 2**63 + 1], dtype="uint64")
    b = np.array([2**63 + 1, 2**63 - 1, 1, 2**64 - 2], dtype="uint64")
    x, y = vector("uint64", "a"), vector("uint64", "b")
    compare_onnx_and_py([x, y], [pt.maximum(x, y), pt.minimum(x, y)], [a, b])
    compare_onnx_and_py([x, y], [pt.maximum(x, y), pt.minimum(x, y)], [a, b], opset_version=13)


def test_maximum_minimum_int64_same_high_word():
    # ONNX Runtime 1.31's int64 Max/Min kernels get these wrong: values sharing
    # their high 32 bits whose low halves straddle 2**31.
    a = np.array([2**31, 2**32 - 2, -(2**32) + 2**31, 2**40 + 2**31, 5, -1], dtype="int64")
    b = np.array([0, 1, -(2**32), 2**40, 2**31, -(2**31) - 1], dtype="int64")
    x, y = vector("int64", "a"), vector("int64", "b")
    _, (high, low) = compare_onnx_and_py([x, y], [pt.maximum(x, y), pt.minimum(x, y)], [a, b])
    np.testing.assert_array_equal(high[:2], [2**31, 2**32 - 2])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_sigmoid_tails(dtype):
    # ONNX Runtime's Sigmoid kernel returns 0 (float32: garbage) below about -20,
    # where expit is still tiny but positive: the default comparison holds
    # each tail value (1e-304 .. 4e-8) to rtol, not to an atol above them.
    x = vector(dtype)
    values = np.array([-745, -700, -100, -80, -40, -30, -20, -17, -10, 0, 20, 40, 800], dtype=dtype)
    _, result = compare_onnx_and_py([x], pt.sigmoid(x), [values])
    assert result[4] > 0


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_maximum_minimum_nan_either_side(dtype):
    a = np.array([np.nan, 1.0, np.nan, -np.inf, np.inf, -0.0], dtype=dtype)
    b = np.array([1.0, np.nan, np.nan, np.nan, 3.0, 0.0], dtype=dtype)
    x, y = vector(dtype, "a"), vector(dtype, "b")
    # (max(-0.0, +0.0) may be either zero: IEEE leaves it open, and NumPy's
    # result follows its loop's operand order.)
    _, (high, low) = compare_onnx_and_py([x, y], [pt.maximum(x, y), pt.minimum(x, y)], [a, b], zero_signs=False)
    assert np.isnan(high[:4]).all() and np.isnan(low[:4]).all()


@pytest.mark.parametrize("name", ["and", "or", "xor"])
@pytest.mark.parametrize("dtype", INT_DTYPES + ["bool"])
def test_bitwise_binary(name, dtype):
    op = {"and": pt.bitwise_and, "or": pt.bitwise_or, "xor": pt.bitwise_xor}[name]
    a, b = vector(dtype, "a"), vector(dtype, "b")
    compare_onnx_and_py([a, b], [op(a, b)], all_pairs(dtype, dtype))


def test_bitwise_mixed_int_dtypes():
    a, b = vector("uint8", "a"), vector("int8", "b")
    compare_onnx_and_py([a, b], [a & b, a | b, a ^ b], all_pairs("uint8", "int8"))


def test_bitwise_with_float_upcast_raises():
    # PyTensor types int8 & uint64 as float64; NumPy has no bitwise loop for it.
    a, b = vector("int8", "a"), vector("uint64", "b")
    assert (a & b).dtype == "float64"
    with pytest.raises(NotImplementedError, match="bitwise ops need integers"):
        compare_onnx_and_py([a, b], [a & b], all_pairs("int8", "uint64"))


def test_logic_on_bool_at_opset13():
    a, b = vector("bool", "a"), vector("bool", "b")
    compare_onnx_and_py([a, b], [a & b, a | b, a ^ b, ~a], all_pairs("bool", "bool"), opset_version=13)


@pytest.mark.parametrize("opset", [13, 15, 17])
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_bitwise_on_ints_before_opset18(dtype, opset):
    # ONNX has integer bitwise ops from opset 18 only: before, the builder
    # builds them from BitShift and wrapping arithmetic (recipes/bitwise.cc).
    a, b = vector(dtype, "a"), vector(dtype, "b")
    outputs = [a & b, a | b, a ^ b, ~a]
    compare_onnx_and_py([a, b], outputs, all_pairs(dtype, dtype), opset_version=opset)
    names = {f.name for f in export_onnx([a, b], outputs, opset_version=opset).functions}
    assert {f"bitwise_{op}_{dtype}" for op in ("and", "or", "xor")} <= names


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (2, 3)])
def test_bitwise_on_ints_before_opset18_of_any_rank(shape, rng):
    # The recipe's Loop carries flat vectors and reshapes them back; at opset
    # 13 (no Reshape allowzero) it sliced a padded copy, which ONNX Runtime
    # refused for scalars ("Cannot slice scalars"; found by the core fuzzer,
    # FUZZ_SEED=1712167046).
    a, b = pt.tensor("a", dtype="int64", shape=(None,) * len(shape)), pt.tensor("b", dtype="int64", shape=(None,) * len(shape))
    values = [rng.integers(-100, 100, shape), rng.integers(-100, 100, shape)]
    compare_onnx_and_py([a, b], [a & b, a | b, a ^ b, ~a], values, opset_version=13)


@pytest.mark.parametrize(
    "cond_dtype, a_dtype, b_dtype",
    [
        ("bool", "float64", "float64"),
        ("bool", "int8", "float32"),
        ("bool", "bool", "bool"),
        ("bool", "int16", "int16"),
        ("bool", "uint64", "uint64"),
        ("bool", "uint16", "int8"),
        ("int8", "float32", "float32"),
        ("float64", "int64", "int64"),
    ],
)
def test_switch(cond_dtype, a_dtype, b_dtype):
    # A non-bool condition is true where non-zero (NaN included), as in np.where.
    cond = vector(cond_dtype, "cond")
    a, b = vector(a_dtype, "a"), vector(b_dtype, "b")
    conditions = np.resize(edge_values(cond_dtype), 12).astype(cond_dtype)
    a_values = np.resize(edge_values(a_dtype), 12).astype(a_dtype)
    b_values = np.resize(edge_values(b_dtype)[::-1], 12).astype(b_dtype)
    compare_onnx_and_py([cond, a, b], [pt.switch(cond, a, b)], [conditions, a_values, b_values])


def test_switch_opset13_and_broadcasting():
    cond = pt.tensor("cond", dtype="bool", shape=(None, 1))
    a = pt.tensor("a", dtype="uint64", shape=(None,))
    b = pt.tensor("b", dtype="uint64", shape=())
    values = [np.array([[True], [False]]), np.array([2**64 - 1, 2**63, 0], "uint64"), np.array(7, "uint64")]
    compare_onnx_and_py([cond, a, b], [pt.switch(cond, a, b)], values, opset_version=13)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + ["int8", "uint8", "int64", "uint64"])
def test_clip(dtype):
    # PyTensor's clip: below low -> low, else above high -> high; with low > high
    # that gives low below low and high elsewhere (ONNX Clip gives high).
    x = vector(dtype, "x")
    low, high = vector(dtype, "low"), vector(dtype, "high")
    values = edge_values(dtype)
    n = values.size
    rng = np.random.default_rng(0)
    lows = rng.choice(values, n)
    highs = rng.choice(values, n)
    compare_onnx_and_py([x, low, high], [pt.clip(x, low, high)], [values, lows, highs])


def test_clip_nan_and_crossed_bounds():
    x = vector("float64", "x")
    values = np.array([np.nan, -5.0, 0.0, 5.0, 2.0, np.inf])
    lows = np.array([0.0, np.nan, 3.0, 3.0, 1.0, 0.0])
    highs = np.array([1.0, 1.0, 1.0, 1.0, np.nan, 1.0])
    low, high = vector("float64", "low"), vector("float64", "high")
    _, result = compare_onnx_and_py([x, low, high], pt.clip(x, low, high), [values, lows, highs])
    np.testing.assert_array_equal(result[2:4], [3.0, 1.0])


CAST_SOURCES = {
    "float64": np.array([-2.7, -1.0, -0.0, 0.0, 0.5, 1.9, 100.2, 127.0]),
    "float32": np.array([-2.7, -1.0, -0.0, 0.0, 0.5, 1.9, 100.2, 127.0], "float32"),
    "int64": np.array([-(2**63), -300, -1, 0, 1, 300, 2**53 + 1, 2**63 - 1], "int64"),
    "uint64": np.array([0, 1, 255, 256, 2**53 + 1, 2**63, 2**64 - 1, 7], "uint64"),
    "int8": np.array([-128, -1, 0, 1, 127, 5, -7, 3], "int8"),
    "uint16": np.array([0, 1, 255, 256, 65535, 7, 300, 2], "uint16"),
    "bool": np.array([True, False, True, True, False, False, True, False]),
}


@pytest.mark.parametrize("target", ALL_DTYPES)
@pytest.mark.parametrize("source", list(CAST_SOURCES))
def test_cast(source, target):
    # Ints round to the nearest float, floats truncate toward zero, anything
    # non-zero is True. Only values the target holds: PyTensor's Python Cast
    # raises OverflowError for the others (and float -> int is undefined in C).
    values = CAST_SOURCES[source]
    if target in INT_DTYPES:
        info = np.iinfo(target)
        values = np.array([v for v in values if info.min <= int(v) <= info.max], dtype=source)
    x = vector(source)
    compare_onnx_and_py([x], [pt.cast(x, target)], [values])


@pytest.mark.parametrize("source", ["float64", "int64", "uint16", "bool"])
def test_cast_opset13(source):
    x = vector(source)
    values = CAST_SOURCES[source]
    small = np.array([v for v in values if 0 <= int(v) <= 127], dtype=source)  # fits every target
    outs = [pt.cast(x, target) for target in ["float32", "float64", "bool", "uint64"] if target != source]
    compare_onnx_and_py([x], outs + [pt.cast(x, "int8")], [small], opset_version=13)


def test_cast_float_specials_to_bool():
    x = vector("float64")
    _, result = compare_onnx_and_py([x], pt.cast(x, "bool"), [np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-300])])
    np.testing.assert_array_equal(result, [True, True, True, False, False, True])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_second_fill(dtype):
    x = pt.tensor("x", dtype="float32", shape=(None, None))
    y = pt.tensor("y", dtype=dtype, shape=(None,))
    out = pt.second(x, y)
    _, result = compare_onnx_and_py([x, y], out, [np.zeros((2, 3), "float32"), np.resize(edge_values(dtype), 3)])
    assert result.dtype == dtype and result.shape == (2, 3)


def test_sin_cos_float64_relative_accuracy(rng):
    # The float64 recipes (src/core/recipes/trig.cc) keep relative accuracy
    # near the zeros of sin and cos (multiples of pi/2, where ONNX Runtime's
    # own Sin returns 0), at huge arguments, and on every runtime (no float64
    # Cos kernel before 1.25). NumPy's libm values are within an ulp there.
    near_zeros = np.arange(-300, 301) * (np.pi / 2)
    values = np.concatenate([
        near_zeros, np.nextafter(near_zeros, np.inf), rng.uniform(-10, 10, 400), rng.uniform(1e3, 2e8, 200),
        rng.uniform(2e8, 1e15, 200), rng.uniform(1e15, 1e300, 100) * rng.choice([-1, 1], 100),
        [0.0, 1e-300, 5e-324, -1e-12, 2e8, 2.0000001e8, 1.7e308, -1.7e308],
    ])
    x = vector("float64")
    fn = pytensor.function([x], [pt.sin(x), pt.cos(x)], mode="ONNX")
    for got, want in zip(fn(values), (np.sin(values), np.cos(values)), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(np.isnan(fn(np.array([np.inf, -np.inf, np.nan]))), True)
