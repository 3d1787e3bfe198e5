#include "elementwise.h"

#include <algorithm>
#include <limits>
#include <utility>

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

Value* Ew::table(Value* w, const PiecewiseTable& t) const { return tables({{w, &t, nullptr}}); }

Value* Ew::tables(const std::vector<TablePart>& parts) const {
  if (parts.empty()) throw BuildError("tables: no parts");
  size_t n = 0;  // coefficients per piece, the largest degree's
  int64_t total_pieces = 0;
  for (const TablePart& part : parts) {
    n = std::max(n, static_cast<size_t>(part.table->degree) + 1);
    total_pieces += part.table->pieces;
  }
  // Per part: the piece index k (offset into the concatenated pieces) and
  // the local variable s in [-1/2, 1/2].
  std::vector<Value*> index(parts.size()), local(parts.size());
  double offset = 0.0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const PiecewiseTable& t = *parts[i].table;
    Value* u = mul(sub(parts[i].w, t.lo), t.pieces / (t.hi - t.lo));
    // Clipped before the Cast: NaN and out-of-range values pick an end piece
    // (whose polynomial then gives NaN or an extrapolation the caller discards).
    Value* k = min(max(floor(u), c(0.0)), c(t.pieces - 1));
    k = where(isnan(k), c(0.0), k);
    local[i] = sub(sub(u, k), 0.5);
    index[i] = offset == 0.0 ? k : add(k, offset);
    offset += t.pieces;
  }
  // A single piece needs no look-up: its coefficients are constants.
  if (parts.size() == 1 && parts[0].table->pieces == 1) return poly(local[0], parts[0].table->coefficients, n);
  Value* k = index.back();
  Value* s = local.back();
  for (size_t i = parts.size() - 1; i-- > 0;) {
    if (parts[i].when == nullptr) throw BuildError("tables: only the last part may have no condition");
    k = where(parts[i].when, index[i], k);
    s = where(parts[i].when, local[i], s);
  }
  Value* piece = g_.cast(k, DType::Int64);
  // One column of coefficients per power, gathered per element.
  std::vector<Value*> column(n);
  for (size_t j = 0; j < n; ++j) {
    std::vector<double> values;
    values.reserve(static_cast<size_t>(total_pieces));
    for (const TablePart& part : parts) {
      const PiecewiseTable& t = *part.table;
      const size_t m = static_cast<size_t>(t.degree) + 1;
      for (int p = 0; p < t.pieces; ++p) values.push_back(j < m ? t.coefficients[static_cast<size_t>(p) * m + j] : 0.0);
    }
    Value* table = g_.constant(Tensor::from_values(DType::Float64, values, {total_pieces}), "table");
    table = g_.cast(table, dtype_);
    column[j] = g_.op1("Gather", {table, piece}, {{"axis", int64_t{0}}});
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
                               const Attributes& attrs, const Float64Core& core) {
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

namespace {

RecipeInfo float64_entry(const std::string& name, Float64Core core, size_t n_inputs, const std::string& what,
                         const std::string& note) {
  auto build = [name, core](GraphBuilder& g, const std::vector<Value*>& in, const Attributes& attrs) {
    return in_float64(g, name, in, attrs, core);
  };
  const std::string doc = what + " (" + (note.empty() ? "" : note + "; ") + "float inputs, computed in float64)";
  return {name, build, n_inputs, n_inputs, doc, FunctionUse::kElementwise};
}

}  // namespace

RecipeInfo float64_recipe(const std::string& name, Float64Core core, size_t n_inputs, const std::string& what,
                          const std::string& note) {
  return float64_entry(name, std::move(core), n_inputs, what, note);
}

RecipeInfo float64_recipe(const std::string& name, UnaryCore core, const std::string& what, const std::string& note) {
  auto one = [core](const Ew& f, const std::vector<Value*>& x, const Attributes&) {
    return std::vector<Value*>{core(f, x[0])};
  };
  return float64_entry(name, one, 1, what, note);
}

RecipeInfo float64_recipe(const std::string& name, BinaryCore core, const std::string& what, const std::string& note) {
  auto two = [core](const Ew& f, const std::vector<Value*>& x, const Attributes&) {
    return std::vector<Value*>{core(f, x[0], x[1])};
  };
  return float64_entry(name, two, 2, what, note);
}

}  // namespace pytensor_onnx::recipes
