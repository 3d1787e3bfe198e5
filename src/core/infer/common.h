// What the per-op inference functions (src/core/infer/*.cc) share: reading
// constant inputs, normalizing axes, broadcasting dims, reduced shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir.h"

namespace pytensor_onnx::infer {

// The integer values of a constant input, if the input is an initializer.
std::optional<std::vector<int64_t>> const_ints(const Value* v);

// Shape-like inputs (shapes, repeats, starts, k, ...) are 1-D in ONNX and
// inference reads their first dim: BuildError naming `node`'s op and `what`
// when `v`'s rank is known and is not 1. Returns v's known length, if any.
std::optional<int64_t> require_vector(const Node& node, const Value* v, const char* what);

// The same for a constant's values read by position: BuildError unless the
// constant `v` (when it is one) holds exactly `n` values.
void require_length(const Node& node, const std::optional<std::vector<int64_t>>& values, size_t n,
                    const char* what);

// Ops on stacks of matrices (Trilu): BuildError naming `op` when `x`'s rank is
// known and below 2. ONNX's checker refuses such a model, so the builder does.
void require_matrices(const std::string& op, const Value* x);

// The most dims inference gives an output whose rank is the static length
// of a shape-like input (or an attribute): far above NumPy's 64, and small
// enough that its dims cost little memory. A hostile length (a declared dim
// of 2**40) made inference allocate that many dims.
constexpr int64_t kMaxInferredRank = 1024;

// `rank` unknown dims, `what` saying where the rank came from; BuildError
// beyond kMaxInferredRank (the builder names the op).
Shape unknown_dims_checked(int64_t rank, const char* what);

// A static size computed from others: a * b or a + b, as a known dim, or an
// unknown one when it overflows int64 (wrapped, it was a wrong static size:
// Tile of a 2**40 dim by 2**40 inferred 0; such a run fails anyway).
Dim product_dim(int64_t a, int64_t b);
Dim sum_dim(int64_t a, int64_t b);

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
