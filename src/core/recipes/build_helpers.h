// Small builders the recipe families share: int64 shape arithmetic and
// constants, written once so every recipe spells them the same way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "builder.h"
#include "errors.h"

namespace pytensor_onnx::recipes {

// `axis` made non-negative for a value of known rank; BuildError when out of range.
inline int64_t checked_axis(const Value* x, int64_t axis, const std::string& what) {
  if (!x->rank()) throw BuildError(what + ": the input's rank must be known");
  const auto rank = static_cast<int64_t>(*x->rank());
  if (axis < -rank || axis >= rank) {
    throw BuildError(what + ": axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

// The length of `axis` of `x` as a 1-element int64 vector (a constant when static).
inline Value* axis_length(GraphBuilder& g, Value* x, int64_t axis) {
  if (x->shape && (*x->shape)[axis].is_known()) return g.int64s({(*x->shape)[axis].size});
  return g.op1("Slice", {g.op1("Shape", {x}), g.int64s({axis}), g.int64s({axis + 1})});
}

// A 0-d int64 constant.
inline Value* int64_scalar(GraphBuilder& g, int64_t value) {
  return g.constant(Tensor::int64_scalar(value), "int");
}

// `flat`, the elements of a tensor of shape `shape` in order, reshaped to
// `shape`: a run-time int64 vector that may hold zeros. (Reshape reads a 0
// as "copy the input's dim" unless allowzero=1, which opset 13 lacks.)
inline Value* unflatten(GraphBuilder& g, Value* flat, Value* shape) {
  if (g.opset() >= 14) return g.op1("Reshape", {flat, shape}, {{"allowzero", int64_t{1}}});
  // Opset 13: a zero-padded copy reshaped to the shape with every 0 made 1,
  // then sliced down to the sizes; without zeros the padding is empty and
  // the slice takes everything. A leading axis of 1, squeezed at the end,
  // gives the Slice an axis to cut when the shape is a scalar's (ONNX
  // Runtime: "Cannot slice scalars"; bitwise_and of two int64 scalars).
  Value* nonzero = g.op1("Max", {shape, g.int64s({1})});
  Value* padded_size = g.op1("ReduceProd", {nonzero}, {{"keepdims", int64_t{1}}});
  Value* n_pad = g.op1("Sub", {padded_size, g.op1("Reshape", {g.op1("Size", {flat}), g.int64s({1})})});
  Value* pad = g.op1("ConstantOfShape", {n_pad}, {{"value", Tensor::scalar(flat->dtype, 0.0).with_dims({1})}});
  auto leading_one = [&](Value* v, int64_t first) {
    return g.op1("Concat", {g.int64s({first}), v}, {{"axis", int64_t{0}}});
  };
  Value* padded = g.op1("Reshape", {g.op1("Concat", {flat, pad}, {{"axis", int64_t{0}}}), leading_one(nonzero, 1)});
  Value* sliced = g.op1("Slice", {padded, leading_one(g.op1("Mul", {shape, g.int64s({0})}), 0), leading_one(shape, 1)});
  return g.op1("Squeeze", {sliced}, {{"axes", std::vector<int64_t>{0}}});
}

}  // namespace pytensor_onnx::recipes
