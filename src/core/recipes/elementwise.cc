#include "elementwise.h"

#include <limits>

#include "errors.h"
#include "registry.h"

namespace pytensor_onnx::recipes {

Value* Ew::poly(Value* x, const double* coeffs, size_t n) const {
  if (n == 0) throw BuildError("poly: no coefficients");
  Value* p = c(coeffs[n - 1]);
  for (size_t j = n - 1; j-- > 0;) p = add(mul(p, x), coeffs[j]);
  return p;
}

Value* Ew::poly(Value* x, const std::vector<double>& coeffs) const { return poly(x, coeffs.data(), coeffs.size()); }

Value* Ew::table(Value* w, const PiecewiseTable& t) const {
  const size_t n = static_cast<size_t>(t.degree) + 1;
  const double scale = t.pieces / (t.hi - t.lo);
  Value* u = mul(sub(w, t.lo), scale);
  // Clipped before the Cast: NaN and out-of-range values pick an end piece
  // (whose polynomial then gives NaN or an extrapolation the caller discards).
  Value* k = min(max(floor(u), c(0.0)), c(t.pieces - 1));
  k = where(isnan(k), c(0.0), k);
  Value* s = sub(sub(u, k), 0.5);
  Value* index = g_.cast(k, DType::Int64);
  // One column of coefficients per power, gathered per element.
  std::vector<Value*> column(n);
  for (size_t j = 0; j < n; ++j) {
    std::vector<double> values(static_cast<size_t>(t.pieces));
    for (size_t k_ = 0; k_ < values.size(); ++k_) values[k_] = t.coefficients[k_ * n + j];
    Value* table = g_.constant(Tensor::from_values(DType::Float64, values, {t.pieces}), "table");
    table = g_.cast(table, dtype_);
    column[j] = g_.op1("Gather", {table, index}, {{"axis", int64_t{0}}});
  }
  Value* p = column[n - 1];
  for (size_t j = n - 1; j-- > 0;) p = add(mul(p, s), column[j]);
  return p;
}

// |x| above which exp(-x^2) is 0 and exp(x^2) inf in double (both from 27.3).
constexpr double kSquareExpLimit = 38.0;

std::pair<Value*, Value*> Ew::split(Value* x) const {
  // 2^27 + 1: for doubles the product splits x into 26 + 27 bits. Large |x|
  // (above 2^996) would overflow the product; callers only split values
  // whose squares are finite.
  Value* scaled = mul(x, 134217729.0);
  Value* hi = sub(scaled, sub(scaled, x));
  return {hi, sub(x, hi)};
}

Value* Ew::exp_neg_square(Value* x) const {
  auto [hi, lo] = split(x);
  Value* big = mul(hi, hi);
  Value* small = add(mul(mul(hi, lo), 2.0), mul(lo, lo));
  // exp(-x^2) is 0 in double from |x| = 27.3 on. Past that the two factors
  // can be 0 and inf (exp(-big) underflows while a negative `small` of a
  // few hundred overflows exp(-small), from |x| ~ 2e5): 0 * inf = NaN. So
  // the result is 0 from |x| = 38 on, where `small` is still below 1e-5.
  Value* value = mul(exp(neg(big)), exp(neg(small)));
  return where(gt(abs(x), kSquareExpLimit), 0.0, value);
}

Value* Ew::exp_square(Value* x) const {
  auto [hi, lo] = split(x);
  Value* big = mul(hi, hi);
  Value* small = add(mul(mul(hi, lo), 2.0), mul(lo, lo));
  // exp(x^2) overflows from |x| = 26.7 on; past 38, inf * 0 could be NaN
  // (see exp_neg_square).
  Value* value = mul(exp(big), exp(small));
  return where(gt(abs(x), kSquareExpLimit), std::numeric_limits<double>::infinity(), value);
}

std::vector<Value*> in_float64(GraphBuilder& g, const std::string& name, const std::vector<Value*>& inputs,
                               const Attributes& attrs, Float64Core core) {
  const DType dtype = inputs[0]->dtype;
  for (const Value* v : inputs) {
    if (v->dtype != dtype || !is_float(dtype)) {
      throw BuildError("recipe '" + name + "' takes floating inputs of one dtype, got " + dtype_name(v->dtype));
    }
  }
  if (dtype == DType::Float64) return core(Ew(g, DType::Float64), inputs, attrs);
  std::vector<Value*> wide;
  for (Value* v : inputs) wide.push_back(g.cast(v, DType::Float64));
  std::vector<Value*> outs = build_recipe_named(g, name, wide, attrs);
  for (Value*& v : outs) {
    if (is_float(v->dtype)) v = g.cast(v, dtype);
  }
  return outs;
}

}  // namespace pytensor_onnx::recipes
