// Element-wise arithmetic for recipes: the builder's ops on one floating
// dtype under short names, constants of that dtype, and polynomial
// evaluation (one polynomial, or a piecewise table looked up per element).
//
// Every method emits standard ONNX ops through the builder (so they are
// adapted to the opset and to ONNX Runtime's kernels like any rule's ops).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "builder.h"
#include "piecewise_table.h"
#include "registry.h"

namespace pytensor_onnx::recipes {

class Ew {
 public:
  Ew(GraphBuilder& g, DType dtype) : g_(g), dtype_(dtype) {}

  GraphBuilder& g() const { return g_; }
  DType dtype() const { return dtype_; }

  Value* c(double v) const { return g_.scalar(dtype_, v); }
  Value* op(const char* type, std::vector<Value*> inputs) const { return g_.op1(type, std::move(inputs)); }

  Value* add(Value* a, Value* b) const { return op("Add", {a, b}); }
  Value* sub(Value* a, Value* b) const { return op("Sub", {a, b}); }
  Value* mul(Value* a, Value* b) const { return op("Mul", {a, b}); }
  Value* div(Value* a, Value* b) const { return op("Div", {a, b}); }
  Value* add(Value* a, double b) const { return add(a, c(b)); }
  Value* sub(Value* a, double b) const { return sub(a, c(b)); }
  Value* sub(double a, Value* b) const { return sub(c(a), b); }
  Value* mul(Value* a, double b) const { return mul(a, c(b)); }
  Value* div(double a, Value* b) const { return div(c(a), b); }
  Value* div(Value* a, double b) const { return div(a, c(b)); }
  Value* neg(Value* a) const { return op("Neg", {a}); }
  Value* abs(Value* a) const { return op("Abs", {a}); }
  Value* sqr(Value* a) const { return mul(a, a); }
  Value* exp(Value* a) const { return op("Exp", {a}); }
  Value* log(Value* a) const { return op("Log", {a}); }
  Value* sqrt(Value* a) const { return op("Sqrt", {a}); }
  Value* floor(Value* a) const { return op("Floor", {a}); }
  Value* round(Value* a) const { return op("Round", {a}); }  // halves to even
  Value* sign(Value* a) const { return op("Sign", {a}); }
  Value* min(Value* a, Value* b) const { return op("Min", {a, b}); }
  Value* max(Value* a, Value* b) const { return op("Max", {a, b}); }

  Value* where(Value* cond, Value* a, Value* b) const { return op("Where", {cond, a, b}); }
  Value* where(Value* cond, double a, Value* b) const { return where(cond, c(a), b); }
  Value* where(Value* cond, Value* a, double b) const { return where(cond, a, c(b)); }
  Value* where(Value* cond, double a, double b) const { return where(cond, c(a), c(b)); }
  Value* lt(Value* a, Value* b) const { return op("Less", {a, b}); }
  Value* le(Value* a, Value* b) const { return op("LessOrEqual", {a, b}); }
  Value* gt(Value* a, Value* b) const { return op("Greater", {a, b}); }
  Value* ge(Value* a, Value* b) const { return op("GreaterOrEqual", {a, b}); }
  Value* eq(Value* a, Value* b) const { return op("Equal", {a, b}); }
  Value* lt(Value* a, double b) const { return lt(a, c(b)); }
  Value* le(Value* a, double b) const { return le(a, c(b)); }
  Value* gt(Value* a, double b) const { return gt(a, c(b)); }
  Value* ge(Value* a, double b) const { return ge(a, c(b)); }
  Value* eq(Value* a, double b) const { return eq(a, c(b)); }
  Value* and_(Value* a, Value* b) const { return op("And", {a, b}); }
  Value* or_(Value* a, Value* b) const { return op("Or", {a, b}); }
  Value* not_(Value* a) const { return op("Not", {a}); }
  Value* isnan(Value* a) const { return op("IsNaN", {a}); }
  Value* isinf(Value* a) const { return op("IsInf", {a}); }
  // a != a for NaN too: whether a is an integer (inf counts as one).
  Value* is_integer(Value* a) const { return eq(floor(a), a); }

  // sum_j coeffs[j] * x^j (Horner).
  Value* poly(Value* x, const std::vector<double>& coeffs) const;
  Value* poly(Value* x, const double* coeffs, size_t n) const;
  // The piecewise table at w (w outside [lo, hi] uses the nearest piece).
  Value* table(Value* w, const PiecewiseTable& table) const;
  // One part of a `tables` look-up: `table` at `w` where `when` holds
  // (`when` is null for the last part, which takes every other element).
  struct TablePart {
    Value* w;
    const PiecewiseTable* table;
    Value* when;
  };
  // Per element, the first part whose `when` holds, evaluated as `table`
  // would: bit for bit the same values. The parts share one Gather per
  // coefficient and one Horner chain (their pieces concatenated, lower
  // degrees padded with leading zeros, which Horner passes through exactly):
  // ONNX Runtime runs every node over every element, so a recipe that picks
  // one of several tables per element costs ~3 nodes per coefficient once
  // instead of once per table.
  Value* tables(const std::vector<TablePart>& parts) const;

  // (hi, lo) with hi + lo == x exactly and hi holding the upper 26 bits (so
  // products of two hi parts are exact); Veltkamp's splitting.
  std::pair<Value*, Value*> split(Value* x) const;
  // exp(-x^2) with x^2 taken exactly (hi^2 + (2 hi lo + lo^2)): the
  // rounding error of x^2 would cost up to 740 ulp near the underflow.
  Value* exp_neg_square(Value* x) const;
  // exp(x^2), the same way.
  Value* exp_square(Value* x) const;

 private:
  GraphBuilder& g_;
  DType dtype_;
};

// Recipes on floating inputs that compute in float64. `core` builds the
// float64 result; inputs of another float dtype (all of one dtype) are cast
// to float64, built by the recipe `name` itself (so they share its float64
// function) and the results cast back. BuildError for non-float inputs.
using Float64Core = std::function<std::vector<Value*>(const Ew& f, const std::vector<Value*>& x, const Attributes& attrs)>;
std::vector<Value*> in_float64(GraphBuilder& g, const std::string& name, const std::vector<Value*>& inputs,
                               const Attributes& attrs, const Float64Core& core);

// The registry entry of such a recipe: element-wise, built by in_float64
// with `core`, documented as `what` plus " (float inputs, computed in
// float64)", or " (<note>; float inputs, computed in float64)" with a note
// (the doc is the model-local function's doc_string). The one way the
// float64 recipe families register.
RecipeInfo float64_recipe(const std::string& name, Float64Core core, size_t n_inputs, const std::string& what,
                          const std::string& note = "");
// The same for a core of one or two tensors and one result.
using UnaryCore = Value* (*)(const Ew& f, Value* x);
using BinaryCore = Value* (*)(const Ew& f, Value* x, Value* y);
RecipeInfo float64_recipe(const std::string& name, UnaryCore core, const std::string& what,
                          const std::string& note = "");
RecipeInfo float64_recipe(const std::string& name, BinaryCore core, const std::string& what,
                          const std::string& note = "");

}  // namespace pytensor_onnx::recipes
