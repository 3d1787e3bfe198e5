#include "ops.h"

#include <cstdint>
#include <stdexcept>

#include "method_constants.h"
#include "scalar_ops.h"
#include "scipy_special.h"
#include "special.h"
#include "special_bessel_j01.h"
#include "special_bessel_ik.h"
#include "special_bessel_jv.h"
#include "special_betaincinv.h"
#include "special_hyp2f1.h"
#include "special_owens_t.h"

namespace pytensor_onnx::kernels {
namespace {

template <class T>
constexpr uint32_t bit() {
  if constexpr (std::is_same_v<T, bool>) return 1u << static_cast<int>(DType::Bool);
  else if constexpr (std::is_same_v<T, int8_t>) return 1u << static_cast<int>(DType::Int8);
  else if constexpr (std::is_same_v<T, int16_t>) return 1u << static_cast<int>(DType::Int16);
  else if constexpr (std::is_same_v<T, int32_t>) return 1u << static_cast<int>(DType::Int32);
  else if constexpr (std::is_same_v<T, int64_t>) return 1u << static_cast<int>(DType::Int64);
  else if constexpr (std::is_same_v<T, uint8_t>) return 1u << static_cast<int>(DType::UInt8);
  else if constexpr (std::is_same_v<T, uint16_t>) return 1u << static_cast<int>(DType::UInt16);
  else if constexpr (std::is_same_v<T, uint32_t>) return 1u << static_cast<int>(DType::UInt32);
  else if constexpr (std::is_same_v<T, uint64_t>) return 1u << static_cast<int>(DType::UInt64);
  else if constexpr (std::is_same_v<T, float>) return 1u << static_cast<int>(DType::Float32);
  else return 1u << static_cast<int>(DType::Float64);
}

constexpr uint32_t kBool = bit<bool>();
constexpr uint32_t kFloats = bit<float>() | bit<double>();
constexpr uint32_t kInts = bit<int8_t>() | bit<int16_t>() | bit<int32_t>() | bit<int64_t>() | bit<uint8_t>() |
                           bit<uint16_t>() | bit<uint32_t>() | bit<uint64_t>();
constexpr uint32_t kNumbers = kInts | kFloats;
constexpr uint32_t kAll = kNumbers | kBool;

// Rough per-element costs of the ops, in adds (a vectorised add ~0.3 ns;
// exp or log ~10 ns; gammaln ~25 ns; the iterative special functions
// 100 ns-2 us): they decide when a node's work pays for the pool's threads.
constexpr int kCheap = 1;
constexpr int kElementary = 20;
constexpr int kSpecial = 60;
constexpr int kIterative = 500;

// Loops over a block. Result type R, operand type A; F::f gives one element.
template <class F, class R, class A>
void loop1(const Operand* x, void* out, size_t n) {
  const A* a = static_cast<const A*>(x[0].data);
  R* o = static_cast<R*>(out);
  if (x[0].scalar) {
    const R v = F::f(a[0]);
    for (size_t i = 0; i < n; ++i) o[i] = v;
    return;
  }
  for (size_t i = 0; i < n; ++i) o[i] = F::f(a[i]);
}

template <class F, class R, class A>
void loop2(const Operand* x, void* out, size_t n) {
  const A* a = static_cast<const A*>(x[0].data);
  const A* b = static_cast<const A*>(x[1].data);
  R* o = static_cast<R*>(out);
  if (!x[0].scalar && !x[1].scalar) {
    for (size_t i = 0; i < n; ++i) o[i] = F::f(a[i], b[i]);
  } else if (x[0].scalar && !x[1].scalar) {
    const A av = a[0];
    for (size_t i = 0; i < n; ++i) o[i] = F::f(av, b[i]);
  } else if (!x[0].scalar) {
    const A bv = b[0];
    for (size_t i = 0; i < n; ++i) o[i] = F::f(a[i], bv);
  } else {
    const R v = F::f(a[0], b[0]);
    for (size_t i = 0; i < n; ++i) o[i] = v;
  }
}

template <class F, class R, class A>
void loop3(const Operand* x, void* out, size_t n) {
  const A* a = static_cast<const A*>(x[0].data);
  const A* b = static_cast<const A*>(x[1].data);
  const A* c = static_cast<const A*>(x[2].data);
  const size_t sa = x[0].scalar ? 0 : 1, sb = x[1].scalar ? 0 : 1, sc = x[2].scalar ? 0 : 1;
  R* o = static_cast<R*>(out);
  for (size_t i = 0; i < n; ++i) o[i] = F::f(a[i * sa], b[i * sb], c[i * sc]);
}

template <class F, class R, class A>
void loop4(const Operand* x, void* out, size_t n) {
  const A* a = static_cast<const A*>(x[0].data);
  const A* b = static_cast<const A*>(x[1].data);
  const A* c = static_cast<const A*>(x[2].data);
  const A* d = static_cast<const A*>(x[3].data);
  const size_t sa = x[0].scalar ? 0 : 1, sb = x[1].scalar ? 0 : 1, sc = x[2].scalar ? 0 : 1;
  const size_t sd = x[3].scalar ? 0 : 1;
  R* o = static_cast<R*>(out);
  for (size_t i = 0; i < n; ++i) o[i] = F::f(a[i * sa], b[i * sb], c[i * sc], d[i * sd]);
}

template <class T>
void switch_loop(const Operand* x, void* out, size_t n) {
  const bool* c = static_cast<const bool*>(x[0].data);
  const T* a = static_cast<const T*>(x[1].data);
  const T* b = static_cast<const T*>(x[2].data);
  T* o = static_cast<T*>(out);
  if (!x[0].scalar && !x[1].scalar && !x[2].scalar) {
    for (size_t i = 0; i < n; ++i) o[i] = c[i] ? a[i] : b[i];
    return;
  }
  const size_t sc = x[0].scalar ? 0 : 1, sa = x[1].scalar ? 0 : 1, sb = x[2].scalar ? 0 : 1;
  for (size_t i = 0; i < n; ++i) o[i] = c[i * sc] ? a[i * sa] : b[i * sb];
}

template <class To, class From>
void cast_loop(const Operand* x, void* out, size_t n) {
  const From* a = static_cast<const From*>(x[0].data);
  To* o = static_cast<To*>(out);
  const size_t s = x[0].scalar ? 0 : 1;
  for (size_t i = 0; i < n; ++i) o[i] = scalar::convert<To>(a[i * s]);
}

// Special functions: float64 arithmetic for float32 operands too.
template <double (*F)(double)>
struct Special1 {
  template <class T> static T f(T x) { return static_cast<T>(F(double(x))); }
};
template <double (*F)(double, double)>
struct Special2 {
  template <class T> static T f(T x, T y) { return static_cast<T>(F(double(x), double(y))); }
};
template <double (*F)(double, double, double)>
struct Special3 {
  template <class T> static T f(T x, T y, T z) { return static_cast<T>(F(double(x), double(y), double(z))); }
};
// hyp2f1 gives NaN where its error estimate exceeds the tolerance of the
// result's dtype, as its recipe does (1e-11 for float64, 1e-8 for float32).
struct Hyp2F1 {
  template <class T> static T f(T a, T b, T c, T z) {
    if constexpr (std::is_same_v<T, float>) {
      return static_cast<T>(special::hyp2f1(a, b, c, z, recipes::hyp2f1_method::kFloat32Tolerance));
    }
    else return static_cast<T>(special::hyp2f1(double(a), double(b), double(c), double(z)));
  }
};

// Op F on one float64 element of each operand, as its loops compute it.
template <class F, int Arity>
double float64_of(double a, double b, double c, double d) {
  if constexpr (Arity == 1) return F::template f<double>(a);
  else if constexpr (Arity == 2) return F::template f<double>(a, b);
  else if constexpr (Arity == 3) return F::template f<double>(a, b, c);
  else return F::template f<double>(a, b, c, d);
}
using Float64Fn = double (*)(double, double, double, double);

struct Entry {
  const char* name;
  int arity;
  Signature signature;
  uint32_t dtypes;  // operand dtypes taken (the condition of Switch excluded)
  LoopFn (*select)(DType operand);
  bool from_scipy = false;  // evaluated by a function SciPy hands over (scipy_special.h)
  int cost = kCheap;        // per element, in adds (see op_cost)
  Float64Fn float64 = nullptr;  // the op on float64 scalars (Same ops taking float64)
};

// The loop of F on operand dtype `d` for a Same/Compare op of `Arity`
// operands, instantiated only for the dtypes of `Mask`.
template <class F, int Arity, Signature S, uint32_t Mask>
LoopFn select_for(DType d) {
  return visit_dtype(d, [](auto tag) -> LoopFn {
    using T = decltype(tag);
    if constexpr ((Mask & bit<T>()) == 0) {
      return nullptr;
    } else {
      using R = std::conditional_t<S == Signature::Compare, bool, T>;
      if constexpr (Arity == 1) return &loop1<F, R, T>;
      else if constexpr (Arity == 2) return &loop2<F, R, T>;
      else if constexpr (Arity == 3) return &loop3<F, R, T>;
      else return &loop4<F, R, T>;
    }
  });
}

LoopFn select_switch(DType d) {
  return visit_dtype(d, [](auto tag) -> LoopFn { return &switch_loop<decltype(tag)>; });
}

template <class F, int Arity, uint32_t Mask>
constexpr Entry same(const char* name, int cost = kCheap) {
  Float64Fn scalar = nullptr;
  if constexpr ((Mask & bit<double>()) != 0) scalar = &float64_of<F, Arity>;
  return {name, Arity, Signature::Same, Mask, &select_for<F, Arity, Signature::Same, Mask>, false, cost, scalar};
}
template <class F, int Arity>
constexpr Entry from_scipy(const char* name, int cost) {
  return {name,  Arity, Signature::Same, kFloats, &select_for<F, Arity, Signature::Same, kFloats>,
          true,  cost,  &float64_of<F, Arity>};
}
template <class F, int Arity, uint32_t Mask>
constexpr Entry compare(const char* name) {
  return {name, Arity, Signature::Compare, Mask, &select_for<F, Arity, Signature::Compare, Mask>};
}

namespace s = scalar;
const Entry kOps[] = {
    same<s::Add, 2, kAll>("Add"),
    same<s::Sub, 2, kNumbers>("Sub"),
    same<s::Mul, 2, kAll>("Mul"),
    same<s::TrueDiv, 2, kFloats>("TrueDiv"),
    same<s::IntDiv, 2, kNumbers>("IntDiv"),
    same<s::Mod, 2, kNumbers>("Mod"),
    same<s::Maximum, 2, kAll>("Maximum"),
    same<s::Minimum, 2, kAll>("Minimum"),
    same<s::Pow, 2, kNumbers>("Pow", kElementary),
    same<s::ArcTan2, 2, kFloats>("ArcTan2", kElementary),
    same<s::Neg, 1, kNumbers>("Neg"),
    same<s::Abs, 1, kNumbers>("Abs"),
    same<s::Sign, 1, kNumbers>("Sign"),
    same<s::Sqr, 1, kNumbers>("Sqr"),
    same<s::Identity, 1, kAll>("Identity"),
    same<s::Exp, 1, kFloats>("Exp", kElementary),
    same<s::Exp2, 1, kFloats>("Exp2", kElementary),
    same<s::Expm1, 1, kFloats>("Expm1", kElementary),
    same<s::Log, 1, kFloats>("Log", kElementary),
    same<s::Log2, 1, kFloats>("Log2", kElementary),
    same<s::Log10, 1, kFloats>("Log10", kElementary),
    same<s::Log1p, 1, kFloats>("Log1p", kElementary),
    same<s::Sqrt, 1, kFloats>("Sqrt"),
    same<s::Reciprocal, 1, kFloats>("Reciprocal"),
    same<s::Floor, 1, kFloats>("Floor"),
    same<s::Ceil, 1, kFloats>("Ceil"),
    same<s::Trunc, 1, kFloats>("Trunc"),
    same<s::RoundHalfToEven, 1, kFloats>("RoundHalfToEven"),
    same<s::RoundHalfAwayFromZero, 1, kFloats>("RoundHalfAwayFromZero"),
    same<s::Sin, 1, kFloats>("Sin", kElementary),
    same<s::Cos, 1, kFloats>("Cos", kElementary),
    same<s::Tan, 1, kFloats>("Tan", kElementary),
    same<s::ArcSin, 1, kFloats>("ArcSin", kElementary),
    same<s::ArcCos, 1, kFloats>("ArcCos", kElementary),
    same<s::ArcTan, 1, kFloats>("ArcTan", kElementary),
    same<s::Sinh, 1, kFloats>("Sinh", kElementary),
    same<s::Cosh, 1, kFloats>("Cosh", kElementary),
    same<s::Tanh, 1, kFloats>("Tanh", kElementary),
    same<s::ArcSinh, 1, kFloats>("ArcSinh", kElementary),
    same<s::ArcCosh, 1, kFloats>("ArcCosh", kElementary),
    same<s::ArcTanh, 1, kFloats>("ArcTanh", kElementary),
    same<s::Erf, 1, kFloats>("Erf", kElementary),
    same<s::Erfc, 1, kFloats>("Erfc", kElementary),
    same<s::Sigmoid, 1, kFloats>("Sigmoid", kElementary),
    same<s::Softplus, 1, kFloats>("Softplus", kElementary),
    same<s::Log1mexp, 1, kFloats>("Log1mexp", kElementary),
    same<Special1<special::gammaln>, 1, kFloats>("GammaLn", kSpecial),
    same<Special1<special::gamma>, 1, kFloats>("Gamma", kSpecial),
    same<Special1<special::psi>, 1, kFloats>("Psi", kSpecial),
    same<Special1<special::trigamma>, 1, kFloats>("TriGamma", kSpecial),
    same<Special1<special::erfinv>, 1, kFloats>("Erfinv", kSpecial),
    same<Special1<special::erfcinv>, 1, kFloats>("Erfcinv", kSpecial),
    same<Special2<special::gammainc>, 2, kFloats>("GammaInc", kIterative),
    same<Special2<special::gammaincc>, 2, kFloats>("GammaIncC", kIterative),
    same<Special3<special::betainc>, 3, kFloats>("BetaInc", kIterative),
    same<Special2<special::gammaincinv>, 2, kFloats>("GammaIncInv", kIterative),
    same<Special2<special::gammainccinv>, 2, kFloats>("GammaIncCInv", kIterative),
    same<Special2<special::owens_t>, 2, kFloats>("Owens_t", kIterative),
    same<Special3<special::betaincinv>, 3, kFloats>("BetaIncInv", kIterative),
    same<Hyp2F1, 4, kFloats>("Hyp2F1", kIterative),
    from_scipy<Special1<scipy_special::erfcx>, 1>("Erfcx", kSpecial),
    same<Special1<special::i0>, 1, kFloats>("I0", kSpecial),
    same<Special1<special::i1>, 1, kFloats>("I1", kSpecial),
    same<Special1<special::j0>, 1, kFloats>("J0", kSpecial),
    same<Special1<special::j1>, 1, kFloats>("J1", kSpecial),
    same<Special2<special::jv>, 2, kFloats>("Jv", kIterative),
    same<Special2<special::ive>, 2, kFloats>("Ive", kIterative),
    same<Special2<special::iv>, 2, kFloats>("Iv", kIterative),
    same<Special2<special::kve>, 2, kFloats>("Kve", kIterative),
    same<s::Clip, 3, kNumbers>("Clip"),
    same<s::AND, 2, kInts | kBool>("AND"),
    same<s::OR, 2, kInts | kBool>("OR"),
    same<s::XOR, 2, kInts | kBool>("XOR"),
    same<s::Invert, 1, kInts | kBool>("Invert"),
    compare<s::LT, 2, kAll>("LT"),
    compare<s::GT, 2, kAll>("GT"),
    compare<s::LE, 2, kAll>("LE"),
    compare<s::GE, 2, kAll>("GE"),
    compare<s::EQ, 2, kAll>("EQ"),
    compare<s::NEQ, 2, kAll>("NEQ"),
    compare<s::IsNan, 1, kFloats>("IsNan"),
    compare<s::IsInf, 1, kFloats>("IsInf"),
    {"Switch", 3, Signature::Switch, kAll, &select_switch},
    {"Cast", 1, Signature::Cast, kAll, nullptr},
};

LoopFn select_cast(DType from, DType to) {
  return visit_dtype(to, [from](auto to_tag) -> LoopFn {
    using To = decltype(to_tag);
    return visit_dtype(from, [](auto from_tag) -> LoopFn { return &cast_loop<To, decltype(from_tag)>; });
  });
}

const char* signature_name(Signature s) {
  switch (s) {
    case Signature::Same: return "same";
    case Signature::Compare: return "compare";
    case Signature::Switch: return "switch";
    case Signature::Cast: break;
  }
  return "cast";
}

}  // namespace

LoopFn select_loop(const std::string& name, const std::vector<DType>& args, DType result) {
  for (const Entry& e : kOps) {
    if (name != e.name) continue;
    if (e.from_scipy && !scipy_special::available(name)) {
      throw std::invalid_argument(name + " is evaluated by SciPy's function, which pytensor_onnx hands the library "
                                         "(pytensor_onnx.kernels); it is not set in this process");
    }
    if (static_cast<int>(args.size()) != e.arity) {
      throw std::invalid_argument(name + " takes " + std::to_string(e.arity) + " operands, got " +
                                  std::to_string(args.size()));
    }
    if (e.signature == Signature::Cast) return select_cast(args[0], result);
    const size_t first = e.signature == Signature::Switch ? 1 : 0;
    if (e.signature == Signature::Switch && args[0] != DType::Bool) {
      throw std::invalid_argument("Switch needs a bool condition, got " + std::string(dtype_name(args[0])));
    }
    const DType operand = args[first];
    for (size_t i = first; i < args.size(); ++i) {
      if (args[i] != operand) {
        throw std::invalid_argument(name + ": operands of one dtype expected, got " + dtype_name(operand) + " and " +
                                    dtype_name(args[i]));
      }
    }
    const DType expected = e.signature == Signature::Compare ? DType::Bool : operand;
    if (result != expected) {
      throw std::invalid_argument(name + " on " + dtype_name(operand) + " gives " + dtype_name(expected) + ", not " +
                                  dtype_name(result));
    }
    if ((e.dtypes & (1u << static_cast<int>(operand))) == 0) {
      throw std::invalid_argument(name + " has no " + dtype_name(operand) + " loop");
    }
    return e.select(operand);
  }
  throw std::invalid_argument("unknown scalar op '" + name + "'");
}

const void* float64_function(const std::string& name) {
  for (const Entry& e : kOps) {
    if (name == e.name) return reinterpret_cast<const void*>(e.float64);
  }
  return nullptr;
}

int op_cost(const std::string& name) {
  for (const Entry& e : kOps) {
    if (name == e.name) return e.cost;
  }
  return kCheap;
}

std::string describe_ops() {
  std::string out;
  for (const Entry& e : kOps) {
    if (e.from_scipy && !scipy_special::available(e.name)) continue;
    out += e.name;
    out += ' ' + std::to_string(e.arity) + ' ' + signature_name(e.signature) + ' ';
    bool first = true;
    for (int d = 0; d < kNumDTypes; ++d) {
      if (e.dtypes & (1u << d)) {
        if (!first) out += ',';
        out += dtype_name(static_cast<DType>(d));
        first = false;
      }
    }
    out += ';';
  }
  return out;
}

}  // namespace pytensor_onnx::kernels
