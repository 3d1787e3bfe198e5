// sin and cos in float64 from ONNX Runtime's Sin kernel on a reduced
// argument.
//
// x = n * pi/2 + r with |r| <= pi/4: n = round(x * 2/pi), and r is x minus
// n times pi/2 split into 26-bit pieces, so each product n * piece is exact
// for |n| < 2^27 and r keeps its relative accuracy even when x is close to a
// multiple of pi/2 (where sin or cos is close to zero). The Sin kernel is
// accurate on |r| <= pi/4; cos(r) = 1 - 2 sin(r/2)^2 has no cancellation
// there (the result is above 0.7). The quadrant n mod 4 picks the sign and
// which of the two to use.
//
// Beyond |x| = 2e8 the reduction would lose exactness: there sin uses the
// kernel directly (accurate at large arguments), and cos = sin(2x) / (2 sin x)
// where |sin x| >= 1/2, else 1 - 2 sin(x/2)^2 (no cancellation when
// |cos x| > 0.86). NaN and +-inf give NaN.
#include <vector>

#include "errors.h"
#include "recipes.h"
#include "registry.h"

namespace pytensor_onnx::recipes {
namespace {

constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
constexpr double kPi = 0x1.921fb54442d18p+1;
// pi/2 = sum of these, each of the first four with 26 significant bits.
constexpr double kPiOver2Parts[] = {0x1.921fb50000000p+0, 0x1.110b460000000p-26, 0x1.1a62630000000p-54,
                                    0x1.8a2e030000000p-81, 0x1.c1cd129024e09p-107};
// |x| below this has |n| < 2^27, where the reduction is exact.
constexpr double kReductionLimit = 2e8;
// Above this 2x overflows.
constexpr double kDoublingLimit = 0x1p+1022;

struct F64 {
  GraphBuilder& g;
  Value* c(double v) const { return g.scalar(DType::Float64, v); }
  Value* op(const char* type, std::vector<Value*> inputs) const { return g.op1(type, std::move(inputs)); }
  Value* add(Value* a, Value* b) const { return op("Add", {a, b}); }
  Value* sub(Value* a, Value* b) const { return op("Sub", {a, b}); }
  Value* mul(Value* a, Value* b) const { return op("Mul", {a, b}); }
  Value* where(Value* cond, Value* a, Value* b) const { return op("Where", {cond, a, b}); }
  // The kernel itself: emitted as is, never replaced by a recipe again.
  Value* sin_kernel(Value* x) const { return g.emit("Sin", {x}, {}, 1)[0]; }
  // 1 - 2 sin(x/2)^2
  Value* cos_by_half_angle(Value* x) const {
    Value* h = sin_kernel(mul(x, c(0.5)));
    return sub(c(1.0), mul(c(2.0), mul(h, h)));
  }
};

struct Reduced {
  Value* sin_r;   // sin(r)
  Value* cos_r;   // cos(r)
  Value* odd;     // n mod 4 is 1 or 3
  Value* upper;   // n mod 4 is 2 or 3
};

Reduced reduce(const F64& f, Value* x) {
  Value* n = f.op("Round", {f.mul(x, f.c(kTwoOverPi))});
  Value* r = x;
  for (double part : kPiOver2Parts) r = f.sub(r, f.mul(n, f.c(part)));
  // n mod 4 and n mod 2 of an integer-valued double (exact below 2^53).
  Value* q = f.sub(n, f.mul(f.c(4.0), f.op("Floor", {f.mul(n, f.c(0.25))})));
  Value* parity = f.sub(q, f.mul(f.c(2.0), f.op("Floor", {f.mul(q, f.c(0.5))})));
  return {f.sin_kernel(r), f.cos_by_half_angle(r), f.op("Equal", {parity, f.c(1.0)}),
          f.op("GreaterOrEqual", {q, f.c(2.0)})};
}

Value* small(const F64& f, Value* x) { return f.op("LessOrEqual", {f.op("Abs", {x}), f.c(kReductionLimit)}); }

}  // namespace

Value* sin_float64(GraphBuilder& g, Value* x) {
  const F64 f{g};
  const Reduced red = reduce(f, x);
  // sin(r + n pi/2): sin r, cos r, -sin r, -cos r for n mod 4 = 0..3.
  Value* magnitude = f.where(red.odd, red.cos_r, red.sin_r);
  Value* reduced = f.where(red.upper, f.op("Neg", {magnitude}), magnitude);
  return f.where(small(f, x), reduced, f.sin_kernel(x));
}

Value* tan_float64(GraphBuilder& g, Value* x) {
  const F64 f{g};
  const Reduced red = reduce(f, x);
  // tan(r + n pi/2): tan r for even n, -1 / tan r = -cos r / sin r for odd n.
  Value* reduced = f.where(red.odd, f.op("Neg", {f.op("Div", {red.cos_r, red.sin_r})}),
                           f.op("Div", {red.sin_r, red.cos_r}));
  Value* large = f.op("Div", {build_recipe_named(g, "sin_float64", {x}, {})[0],
                              build_recipe_named(g, "cos_float64", {x}, {})[0]});
  return f.where(small(f, x), reduced, large);
}

namespace {

// sin(pi r) and cos(pi r) for |r| <= 1/4 (kernel accurate there), and the
// quadrant of x = r + n/2.
Reduced reduce_pi(const F64& f, Value* x) {
  // n = round(2x) and r = x - n/2 are exact: n/2 is within 1/4 of x.
  Value* n = f.op("Round", {f.mul(x, f.c(2.0))});
  Value* r = f.sub(x, f.mul(n, f.c(0.5)));
  Value* pi_r = f.mul(r, f.c(kPi));
  Value* q = f.sub(n, f.mul(f.c(4.0), f.op("Floor", {f.mul(n, f.c(0.25))})));
  Value* parity = f.sub(q, f.mul(f.c(2.0), f.op("Floor", {f.mul(q, f.c(0.5))})));
  return {f.sin_kernel(pi_r), f.cos_by_half_angle(pi_r), f.op("Equal", {parity, f.c(1.0)}),
          f.op("GreaterOrEqual", {q, f.c(2.0)})};
}

}  // namespace

Value* sinpi_float64(GraphBuilder& g, Value* x) {
  const F64 f{g};
  const Reduced red = reduce_pi(f, x);
  Value* magnitude = f.where(red.odd, red.cos_r, red.sin_r);
  return f.where(red.upper, f.op("Neg", {magnitude}), magnitude);
}

Value* cospi_float64(GraphBuilder& g, Value* x) {
  const F64 f{g};
  const Reduced red = reduce_pi(f, x);
  Value* magnitude = f.where(red.odd, red.sin_r, red.cos_r);
  return f.where(f.op("Xor", {red.odd, red.upper}), f.op("Neg", {magnitude}), magnitude);
}

Value* cos_float64(GraphBuilder& g, Value* x) {
  const F64 f{g};
  const Reduced red = reduce(f, x);
  // cos(r + n pi/2): cos r, -sin r, -cos r, sin r for n mod 4 = 0..3.
  Value* magnitude = f.where(red.odd, red.sin_r, red.cos_r);
  Value* reduced = f.where(f.op("Xor", {red.odd, red.upper}), f.op("Neg", {magnitude}), magnitude);

  Value* sin_x = f.sin_kernel(x);
  Value* half_angle = f.cos_by_half_angle(x);
  Value* doubled = f.op("Div", {f.sin_kernel(f.mul(x, f.c(2.0))), f.mul(f.c(2.0), sin_x)});
  Value* abs_x = f.op("Abs", {x});
  Value* use_doubling = f.op("And", {f.op("GreaterOrEqual", {f.op("Abs", {sin_x}), f.c(0.5)}),
                                     f.op("Less", {abs_x, f.c(kDoublingLimit)})});
  Value* large = f.where(use_doubling, doubled, half_angle);
  // +-inf and NaN: sin_x is NaN, and so is the half-angle form.
  return f.where(small(f, x), reduced, large);
}

namespace {

template <Value* (*Fn)(GraphBuilder&, Value*)>
std::vector<Value*> on_float64(GraphBuilder& g, const std::vector<Value*>& inputs, const Attributes&) {
  if (inputs[0]->dtype != DType::Float64) throw BuildError("this recipe takes a float64 input");
  return {Fn(g, inputs[0])};
}

}  // namespace

void add_trig_recipes(std::vector<RecipeInfo>& table) {
  table.push_back({"sin_float64", on_float64<sin_float64>, 1, 1, "sin of a float64 tensor, a few ulp everywhere",
                   FunctionUse::kElementwise});
  table.push_back({"cos_float64", on_float64<cos_float64>, 1, 1, "cos of a float64 tensor, a few ulp everywhere",
                   FunctionUse::kElementwise});
  table.push_back({"tan_float64", on_float64<tan_float64>, 1, 1, "tan of a float64 tensor, a few ulp everywhere",
                   FunctionUse::kElementwise});
  table.push_back({"sinpi_float64", on_float64<sinpi_float64>, 1, 1,
                   "sin(pi x) of a float64 tensor, a few ulp everywhere (exact zeros at integers)",
                   FunctionUse::kElementwise});
  table.push_back({"cospi_float64", on_float64<cospi_float64>, 1, 1,
                   "cos(pi x) of a float64 tensor, a few ulp everywhere (exact zeros at half-integers)",
                   FunctionUse::kElementwise});
}

}  // namespace pytensor_onnx::recipes
