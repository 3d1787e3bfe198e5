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

}  // namespace pytensor_onnx::recipes
