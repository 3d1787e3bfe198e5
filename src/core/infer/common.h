// What the per-op inference functions (src/core/infer/*.cc) share: reading
// constant inputs, normalizing axes, broadcasting dims, reduced shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir.h"

namespace pytensor_onnx::infer {

// The integer values of a constant input, if the input is an initializer.
std::optional<std::vector<int64_t>> const_ints(const Value* v);

// `axis` in [0, rank); BuildError naming `node`'s op when out of range.
int64_t normalize_axis(int64_t axis, size_t rank, const Node& node);

// NumPy broadcasting of two dims; BuildError for static mismatches.
Dim broadcast_dim(const Dim& a, const Dim& b);

// The shape after reducing `axes` of `in` (nullopt axes: not known at build
// time; empty: all, or none with noop_with_empty_axes).
Shape reduce_shape(const Shape& in, const std::optional<std::vector<int64_t>>& axes, bool keepdims,
                   bool noop_with_empty_axes, const Node& node);

// Gives every output of `node` the dtype `t`.
void set_dtypes(Node& node, DType t);

// The dtype of the first input (Undefined when it has none).
DType first_dtype(const Node& node);

// The shape of the first input (unknown rank when it has none).
Shape first_shape(const Node& node);

// Gives every output the first input's dtype and returns that input's shape:
// the start of most inference functions.
Shape keep_dtype(Node& node);

// Squeeze's and Unsqueeze's axes: the constant input 1 (opset 13 on), or
// the attribute; nullopt when neither is known at build time.
std::optional<std::vector<int64_t>> axes_of(const Node& node);

}  // namespace pytensor_onnx::infer
