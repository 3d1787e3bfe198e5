// The scalar functions of the element-wise kernels, with NumPy's semantics:
// integer arithmetic wraps, integer division and modulo by zero give 0 (as
// NumPy's do, which warn), floor division and modulo follow the divisor's
// sign, maximum/minimum propagate NaN. Each functor maps operands of one C++
// type to its result; the op table (ops.cc) says which dtypes each takes.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace pytensor_onnx::kernels::scalar {

// Integer arithmetic in the unsigned type of the same width: it wraps as
// NumPy's does, where signed overflow would be undefined in C++.
template <class T, bool = std::is_integral_v<T> && !std::is_same_v<T, bool>>
struct WideOf {
  using type = T;
};
template <class T>
struct WideOf<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <class T>
using Wide = typename WideOf<T>::type;

// On bools NumPy's add is `or` and its multiply `and`.
struct Add {
  template <class T> static T f(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b));
  }
};
struct Sub {
  template <class T> static T f(T a, T b) { return static_cast<T>(static_cast<Wide<T>>(a) - static_cast<Wide<T>>(b)); }
};
struct Mul {
  template <class T> static T f(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else return static_cast<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b));
  }
};
struct TrueDiv {
  template <class T> static T f(T a, T b) { return a / b; }
};

// NumPy's floating divmod (npymath's npy_divmod): the floor quotient and the
// remainder with the divisor's sign, consistent with each other.
template <class T>
inline T float_divmod(T a, T b, T* modulus) {
  T mod = std::fmod(a, b);
  if (b == 0) {
    *modulus = mod;
    return a / b;
  }
  T div = (a - mod) / b;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= T(1);
    }
  } else {
    mod = std::copysign(T(0), b);
  }
  T floordiv;
  if (div != 0) {
    floordiv = std::floor(div);
    if (div - floordiv > T(0.5)) floordiv += T(1);
  } else {
    floordiv = std::copysign(T(0), a / b);
  }
  *modulus = mod;
  return floordiv;
}

struct IntDiv {
  template <class T> static T f(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      T mod;
      return float_divmod(a, b, &mod);
    } else if constexpr (std::is_unsigned_v<T>) {
      return b == 0 ? T(0) : static_cast<T>(a / b);
    } else {
      if (b == 0) return 0;
      if (b == -1) return static_cast<T>(Wide<T>(0) - static_cast<Wide<T>>(a));  // MIN // -1 wraps to MIN
      T q = static_cast<T>(a / b);
      if (static_cast<T>(a % b) != 0 && ((a < 0) != (b < 0))) --q;
      return q;
    }
  }
};

struct Mod {
  template <class T> static T f(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      T mod;
      float_divmod(a, b, &mod);
      return mod;
    } else if constexpr (std::is_unsigned_v<T>) {
      return b == 0 ? T(0) : static_cast<T>(a % b);
    } else {
      if (b == 0 || b == -1) return 0;
      T r = static_cast<T>(a % b);
      if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
      return r;
    }
  }
};

// NaN in either operand gives NaN (NumPy); written as selects, which the
// compiler vectorizes, where early returns would not be.
struct Maximum {
  template <class T> static T f(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return (a >= b || a != a) ? a : b;
    else return a >= b ? a : b;
  }
};
struct Minimum {
  template <class T> static T f(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return (a <= b || a != a) ? a : b;
    else return a <= b ? a : b;
  }
};
struct Pow {
  template <class T> static T f(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::pow(a, b);
    } else {
      // Integers: squaring and multiplying, wrapping as NumPy's power does
      // (and as the portable graph computes it, dispatch/scalar.py's
      // _int_pow: a negative exponent, which NumPy refuses, gives a ** |b|
      // there, over the magnitude's low bits, and here).
      using U = std::make_unsigned_t<T>;
      U e = b < 0 ? static_cast<U>(U(0) - static_cast<U>(b)) : static_cast<U>(b);
      if constexpr (std::is_signed_v<T>) e &= static_cast<U>(std::numeric_limits<T>::max());
      uint64_t result = 1, base = static_cast<U>(a);  // (wrapping in 64 bits keeps the low bits of T's)
      for (; e != 0; e >>= 1) {
        if (e & 1) result *= base;
        base *= base;
      }
      return static_cast<T>(static_cast<U>(result));
    }
  }
};
struct ArcTan2 {
  template <class T> static T f(T a, T b) { return std::atan2(a, b); }
};

// (-x of a float, NumPy's negative: -(+0.0) is -0.0, where 0 - x gave +0.0.)
struct Neg {
  template <class T> static T f(T a) {
    if constexpr (std::is_floating_point_v<T>) return -a;
    else return static_cast<T>(Wide<T>(0) - static_cast<Wide<T>>(a));
  }
};
struct Abs {
  template <class T> static T f(T a) {
    if constexpr (std::is_floating_point_v<T>) return std::fabs(a);
    else if constexpr (std::is_unsigned_v<T>) return a;
    else return a < 0 ? Neg::f(a) : a;
  }
};
struct Sign {
  template <class T> static T f(T a) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a)) return a;
      return static_cast<T>((a > 0) - (a < 0));
    } else if constexpr (std::is_unsigned_v<T>) {
      return static_cast<T>(a > 0);
    } else {
      return static_cast<T>((a > 0) - (a < 0));
    }
  }
};
struct Sqr {
  template <class T> static T f(T a) { return Mul::f(a, a); }
};
struct Identity {
  template <class T> static T f(T a) { return a; }
};

#define PYTENSOR_ONNX_FLOAT_UNARY(Name, expr) \
  struct Name {                               \
    template <class T> static T f(T x) { return expr; } \
  };
PYTENSOR_ONNX_FLOAT_UNARY(Exp, std::exp(x))
PYTENSOR_ONNX_FLOAT_UNARY(Exp2, std::exp2(x))
PYTENSOR_ONNX_FLOAT_UNARY(Expm1, std::expm1(x))
PYTENSOR_ONNX_FLOAT_UNARY(Log, std::log(x))
PYTENSOR_ONNX_FLOAT_UNARY(Log2, std::log2(x))
PYTENSOR_ONNX_FLOAT_UNARY(Log10, std::log10(x))
PYTENSOR_ONNX_FLOAT_UNARY(Log1p, std::log1p(x))
PYTENSOR_ONNX_FLOAT_UNARY(Sqrt, std::sqrt(x))
PYTENSOR_ONNX_FLOAT_UNARY(Reciprocal, T(1) / x)
PYTENSOR_ONNX_FLOAT_UNARY(Floor, std::floor(x))
PYTENSOR_ONNX_FLOAT_UNARY(Ceil, std::ceil(x))
PYTENSOR_ONNX_FLOAT_UNARY(Trunc, std::trunc(x))
// The default rounding mode rounds halves to even (NumPy's round); C's
// round() rounds them away from zero (PyTensor's C backend, and the
// portable graph, for round_half_away_from_zero).
PYTENSOR_ONNX_FLOAT_UNARY(RoundHalfToEven, std::nearbyint(x))
PYTENSOR_ONNX_FLOAT_UNARY(RoundHalfAwayFromZero, std::round(x))
PYTENSOR_ONNX_FLOAT_UNARY(Sin, std::sin(x))
PYTENSOR_ONNX_FLOAT_UNARY(Cos, std::cos(x))
PYTENSOR_ONNX_FLOAT_UNARY(Tan, std::tan(x))
PYTENSOR_ONNX_FLOAT_UNARY(ArcSin, std::asin(x))
PYTENSOR_ONNX_FLOAT_UNARY(ArcCos, std::acos(x))
PYTENSOR_ONNX_FLOAT_UNARY(ArcTan, std::atan(x))
PYTENSOR_ONNX_FLOAT_UNARY(Sinh, std::sinh(x))
PYTENSOR_ONNX_FLOAT_UNARY(Cosh, std::cosh(x))
PYTENSOR_ONNX_FLOAT_UNARY(Tanh, std::tanh(x))
PYTENSOR_ONNX_FLOAT_UNARY(ArcSinh, std::asinh(x))
PYTENSOR_ONNX_FLOAT_UNARY(ArcCosh, std::acosh(x))
PYTENSOR_ONNX_FLOAT_UNARY(ArcTanh, std::atanh(x))
PYTENSOR_ONNX_FLOAT_UNARY(Erf, std::erf(x))
PYTENSOR_ONNX_FLOAT_UNARY(Erfc, std::erfc(x))
#undef PYTENSOR_ONNX_FLOAT_UNARY

// SciPy's expit (PyTensor's sigmoid: its py linker calls expit, its C code
// is the same expression), in the dtype's precision: for x < 0 the other
// form, exp(x) / (1 + exp(x)), differed in the last bit in 42% of float64
// values, and gave float32's subnormals below -88 where exp(-x) overflows
// and expit gives 0 (FUZZ_SEED=455654170).
struct Sigmoid {
  template <class T> static T f(T x) { return T(1) / (T(1) + std::exp(-x)); }
};
// PyTensor's softplus, piece for piece (pytensor.scalar.math.Softplus).
struct Softplus {
  template <class T> static T f(T x) {
    if (x < T(-37)) return std::exp(x);
    if (x < T(18)) return std::log1p(std::exp(x));
    if (x < T(33.3)) return x + std::exp(-x);
    return x;
  }
};
// log(1 - exp(x)), PyTensor's two branches (pytensor.scalar.math.Log1mexp).
struct Log1mexp {
  template <class T> static T f(T x) {
    if (x < T(-0.6931471805599453)) return std::log1p(-std::exp(x));
    return std::log(-std::expm1(x));
  }
};
struct LT {
  template <class T> static bool f(T a, T b) { return a < b; }
};
struct GT {
  template <class T> static bool f(T a, T b) { return a > b; }
};
struct LE {
  template <class T> static bool f(T a, T b) { return a <= b; }
};
struct GE {
  template <class T> static bool f(T a, T b) { return a >= b; }
};
struct EQ {
  template <class T> static bool f(T a, T b) { return a == b; }
};
struct NEQ {
  template <class T> static bool f(T a, T b) { return a != b; }
};
struct IsNan {
  template <class T> static bool f(T a) { return std::isnan(a); }
};
struct IsInf {
  template <class T> static bool f(T a) { return std::isinf(a); }
};

// Bitwise on integers, logical on bool (NumPy's &, |, ^, ~).
struct AND {
  template <class T> static T f(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else return static_cast<T>(a & b);
  }
};
struct OR {
  template <class T> static T f(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else return static_cast<T>(a | b);
  }
};
struct XOR {
  template <class T> static T f(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) return a != b;
    else return static_cast<T>(a ^ b);
  }
};
struct Invert {
  template <class T> static T f(T a) {
    if constexpr (std::is_same_v<T, bool>) return !a;
    else return static_cast<T>(~a);
  }
};

// PyTensor's clip (pytensor.scalar.basic.Clip.impl): below lo gives lo, else
// above hi gives hi (so lo > hi gives lo below lo, hi elsewhere); a NaN x
// stays NaN, NaN bounds compare false.
struct Clip {
  template <class T> static T f(T x, T lo, T hi) { return x < lo ? lo : (x > hi ? hi : x); }
};

// A conversion with NumPy's results where C++ leaves it undefined: a float
// outside the target's range (or NaN) goes through int64 as x86 does
// (INT64_MIN for out-of-range values), then keeps the low bits; int32 targets
// get INT32_MIN, as NumPy's direct conversion gives on x86.
template <class To, class From>
inline To convert(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if constexpr (std::is_same_v<To, int32_t>) {
      if (!(x > -2147483649.0 && x < 2147483648.0)) return std::numeric_limits<int32_t>::min();
      return static_cast<int32_t>(x);
    } else if constexpr (std::is_same_v<To, uint64_t>) {
      if (x >= 0 && x < 18446744073709551616.0) return static_cast<uint64_t>(x);
      if (!(x > -9223372036854775809.0 && x < 9223372036854775808.0)) return uint64_t{1} << 63;
      return static_cast<uint64_t>(static_cast<int64_t>(x));
    } else {
      if (!(x > -9223372036854775809.0 && x < 9223372036854775808.0)) {
        return static_cast<To>(static_cast<uint64_t>(std::numeric_limits<int64_t>::min()));
      }
      return static_cast<To>(static_cast<uint64_t>(static_cast<int64_t>(x)));
    }
  } else {
    return static_cast<To>(x);
  }
}

}  // namespace pytensor_onnx::kernels::scalar
