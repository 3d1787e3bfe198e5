// Building blocks of the linear-algebra recipes (linalg*.cc): short names for
// the standard ops they use, Loop construction, leading batch dims, and
// triangular/identity masks.
//
// The recipes work on stacks of matrices of shape (B, n, n): every input's
// leading batch dims are broadcast against the other inputs', flattened into
// one dim B on entry and restored on exit. Shapes are computed at run time
// (Shape/Gather/Concat), so one graph serves static and symbolic sizes, and
// zero sizes go through Reshape exactly (allowzero, or its opset-13
// emulation).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "builder.h"

namespace pytensor_onnx::recipes::linalg {

// The rank of x; BuildError when it is unknown.
size_t rank_of(const Value* x);

// Short names for the ops recipes build, on one builder (the main graph or a
// Loop body).
struct Ops {
  GraphBuilder& g;

  Value* op(const std::string& type, std::vector<Value*> inputs, Attributes attrs = {}) const {
    return g.op1(type, std::move(inputs), std::move(attrs));
  }
  std::vector<Value*> ops(const std::string& type, std::vector<Value*> inputs, Attributes attrs, size_t n) const {
    return g.op(type, std::move(inputs), std::move(attrs), n);
  }

  // Constants.
  Value* ints(const std::vector<int64_t>& values) const { return g.int64s(values); }  // 1-D int64
  Value* int0(int64_t value) const;                                                   // 0-D int64
  Value* real(DType dtype, double value) const { return g.scalar(dtype, value); }     // 0-D float

  // Arithmetic and logic.
  Value* add(Value* a, Value* b) const { return op("Add", {a, b}); }
  Value* sub(Value* a, Value* b) const { return op("Sub", {a, b}); }
  Value* mul(Value* a, Value* b) const { return op("Mul", {a, b}); }
  Value* div(Value* a, Value* b) const { return op("Div", {a, b}); }
  Value* neg(Value* a) const { return op("Neg", {a}); }
  Value* abs(Value* a) const { return op("Abs", {a}); }
  Value* sqrt(Value* a) const { return op("Sqrt", {a}); }
  Value* log(Value* a) const { return op("Log", {a}); }
  Value* exp(Value* a) const { return op("Exp", {a}); }
  Value* where(Value* c, Value* a, Value* b) const { return op("Where", {c, a, b}); }
  Value* equal(Value* a, Value* b) const { return op("Equal", {a, b}); }
  Value* less(Value* a, Value* b) const { return op("Less", {a, b}); }
  Value* greater(Value* a, Value* b) const { return op("Greater", {a, b}); }
  Value* and_(Value* a, Value* b) const { return op("And", {a, b}); }
  Value* or_(Value* a, Value* b) const { return op("Or", {a, b}); }
  Value* not_(Value* a) const { return op("Not", {a}); }
  Value* max(Value* a, Value* b) const { return op("Max", {a, b}); }
  Value* min(Value* a, Value* b) const { return op("Min", {a, b}); }
  Value* matmul(Value* a, Value* b) const { return op("MatMul", {a, b}); }
  Value* cast(Value* x, DType dtype) const { return g.cast(x, dtype); }
  // +1, -1 or 0 by sign (NaN stays NaN).
  Value* sign(Value* x) const { return op("Sign", {x}); }

  // Shapes and layout.
  Value* shape(Value* x) const { return op("Shape", {x}); }
  // Dim `axis` (negative counts from the end) of x as a 1-D int64 of one element.
  Value* dim(Value* x, int64_t axis) const;
  Value* gather(Value* x, Value* index, int64_t axis) const { return op("Gather", {x, index}, {{"axis", axis}}); }
  Value* gather_elements(Value* x, Value* index, int64_t axis) const {
    return op("GatherElements", {x, index}, {{"axis", axis}});
  }
  Value* slice(Value* x, Value* starts, Value* ends, Value* axes, Value* steps = nullptr) const;
  Value* concat(std::vector<Value*> values, int64_t axis) const {
    return op("Concat", std::move(values), {{"axis", axis}});
  }
  Value* unsqueeze(Value* x, std::vector<int64_t> axes) const { return op("Unsqueeze", {x}, {{"axes", axes}}); }
  Value* squeeze(Value* x, std::vector<int64_t> axes) const { return op("Squeeze", {x}, {{"axes", axes}}); }
  Value* transpose(Value* x, std::vector<int64_t> perm) const { return op("Transpose", {x}, {{"perm", perm}}); }
  // Swaps the last two axes of a tensor of known rank.
  Value* swap_last2(Value* x) const;
  Value* expand(Value* x, Value* shape) const { return op("Expand", {x, shape}); }
  Value* reduce(const std::string& type, Value* x, std::vector<int64_t> axes, bool keepdims) const {
    return op(type, {x}, {{"axes", axes}, {"keepdims", static_cast<int64_t>(keepdims)}});
  }
  // NumPy's reshape to `target` (1-D int64 of sizes, zeros allowed, no -1).
  Value* reshape(Value* x, Value* target) const;
  // 0, 1, ..., n-1 as int64, for `n` a 0-D or one-element int64.
  Value* iota(Value* n) const;
  // A 0-D int64 from a one-element 1-D int64.
  Value* scalar_of(Value* one) const { return squeeze(one, {0}); }
  // A tensor of `shape` filled with the 0-D `value`.
  Value* filled(Value* value, Value* shape) const { return expand(value, shape); }
  // Zeros with x's shape and dtype (never reads x's values: NaN-safe).
  Value* zeros_like(Value* x) const { return expand(real(x->dtype, 0.0), shape(x)); }
};

// Rows (n, 1) and columns (1, n) index grids of an n x n matrix, int64.
struct Grid {
  Value* rows;
  Value* cols;
};
Grid index_grid(const Ops& o, Value* n);
// The (n, n) identity of `dtype`.
Value* identity(const Ops& o, Value* n, DType dtype);
// Bool (n, n): row >= col + k (lower) or row <= col + k (upper).
Value* triangle_mask(const Ops& o, const Grid& grid, bool lower, int64_t k = 0);
// x with the other triangle (excluding diagonal offset k) set to 0.
Value* triangle(const Ops& o, Value* x, const Grid& grid, bool lower, int64_t k = 0);

// A Loop under construction. The body reads the carried values (in order)
// and may read any value of the enclosing graphs; `finish` emits the Loop.
class Loop {
 public:
  // `carried`: initial values of the loop-carried state. Their dims may
  // change across iterations, except where `fixed_shape` says they keep the
  // initial value's (so the body knows them, e.g. a shape vector's length).
  Loop(GraphBuilder& g, const std::string& name, const std::vector<Value*>& carried,
       const std::vector<bool>& fixed_shape = {});
  Ops& body() { return ops_; }
  Value* iteration() const { return iteration_; }  // 0-D int64
  Value* condition() const { return condition_; }  // 0-D bool
  const std::vector<Value*>& carried() const { return carried_; }
  // Emits Loop(trip_count, cond_init) and returns its outputs: the final
  // carried values, then each scan output stacked on a new leading axis.
  // `cond_out` null: the loop runs trip_count times.
  std::vector<Value*> finish(Value* trip_count, const std::vector<Value*>& carried_out,
                             const std::vector<Value*>& scan_out = {}, Value* cond_out = nullptr,
                             Value* cond_init = nullptr);

 private:
  GraphBuilder& outer_;
  std::unique_ptr<GraphBuilder> body_;
  Ops ops_;
  Value* iteration_;
  Value* condition_;
  std::vector<Value*> initial_;
  std::vector<Value*> carried_;
};

// Leading batch dims: a stack of matrices (or vectors) flattened to one batch dim.
struct Stack {
  Value* value;        // (B, core...)
  Value* batch_shape;  // 1-D int64: the batch dims B stands for
};
// The batch dims of x (all but the last `core_rank`), as a 1-D int64.
Value* batch_shape(const Ops& o, Value* x, size_t core_rank);
// The broadcast of several batch shapes (NumPy rules, zero sizes included).
Value* broadcast_batch_shapes(const Ops& o, const std::vector<Value*>& shapes);
// x (batch..., core...) flattened to (B, core...); with `broadcast`, its
// batch dims are first broadcast to `batch` (else `batch` must be its own).
Value* flatten_batch(const Ops& o, Value* x, size_t core_rank, Value* batch, bool broadcast = false);
// y (B, core...) back to (batch..., core...).
Value* unflatten_batch(const Ops& o, Value* y, size_t core_rank, Value* batch);

// The diagonal (B, n) of matrices (B, n, n).
Value* diagonal(const Ops& o, Value* x, Value* n);
// Matrices (B, n, n) grown to (B, n + extra, n + extra) with identity in the new rows and columns.
Value* pad_with_identity(const Ops& o, Value* x, Value* n, Value* extra);
// The leading (B, rows, cols) block of (B, r, c) matrices.
Value* leading_block(const Ops& o, Value* x, Value* rows, Value* cols);
// x where `bad` (bool, broadcast against x) is false, NaN where it is true.
Value* nan_where(const Ops& o, Value* bad, Value* x);
// Per matrix of (B, r, c): whether any element is NaN, as (B, 1, 1) bool.
Value* any_nan(const Ops& o, Value* x);

}  // namespace pytensor_onnx::recipes::linalg
