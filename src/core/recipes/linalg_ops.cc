#include "linalg_ops.h"

#include <limits>

#include "errors.h"

namespace pytensor_onnx::recipes::linalg {

size_t rank_of(const Value* x) {
  if (!x->rank()) throw BuildError("linalg recipe: input '" + x->name + "' has unknown rank");
  return *x->rank();
}

Value* Ops::int0(int64_t value) const { return g.constant(Tensor::int64_scalar(value), "int"); }

Value* Ops::dim(Value* x, int64_t axis) const {
  const auto rank = static_cast<int64_t>(rank_of(x));
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) throw BuildError("linalg recipe: axis out of range for '" + x->name + "'");
  const Dim& d = (*x->shape)[static_cast<size_t>(axis)];
  if (d.is_known()) return ints({d.size});
  return gather(shape(x), ints({axis}), 0);
}

Value* Ops::slice(Value* x, Value* starts, Value* ends, Value* axes, Value* steps) const {
  std::vector<Value*> inputs{x, starts, ends, axes};
  if (steps) inputs.push_back(steps);
  return op("Slice", std::move(inputs));
}

Value* Ops::swap_last2(Value* x) const {
  const size_t rank = rank_of(x);
  if (rank < 2) throw BuildError("linalg recipe: swap_last2 needs a rank >= 2");
  std::vector<int64_t> perm;
  for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(i));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return transpose(x, perm);
}

Value* Ops::reshape(Value* x, Value* target) const {
  if (target->constant) {
    bool has_zero = false;
    for (int64_t s : target->constant->to_int64s()) has_zero |= s == 0;
    if (!has_zero) return op("Reshape", {x, target});
  }
  if (g.opset() >= 14) return op("Reshape", {x, target}, {{"allowzero", int64_t{1}}});
  // Opset 13 reads a 0 in the target as "copy the input dim". Reshape a
  // zero-padded copy of the flat input to the target with every 0 replaced
  // by 1, then slice each axis down to its size: without zeros the padding
  // is empty and both steps are the identity.
  const int64_t rank = (*target->shape)[0].size;
  if (rank < 0) throw BuildError("linalg recipe: reshape target of unknown length");
  Value* nonzero = max(target, ints({1}));
  Value* padded_size = reduce("ReduceProd", nonzero, {0}, true);
  Value* flat = op("Reshape", {x, ints({-1})});
  Value* pad = sub(padded_size, unsqueeze(op("Size", {x}), {0}));
  flat = concat({flat, expand(real(x->dtype, 0.0), pad)}, 0);
  Value* padded = op("Reshape", {flat, nonzero});
  std::vector<int64_t> zeros(static_cast<size_t>(rank), 0), axes;
  for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  return slice(padded, ints(zeros), target, ints(axes));
}

Value* Ops::iota(Value* n) const {
  Value* scalar = n->rank() && *n->rank() == 1 ? scalar_of(n) : n;
  return op("Range", {int0(0), scalar, int0(1)});
}

Grid index_grid(const Ops& o, Value* n) {
  Value* i = o.iota(n);
  return {o.unsqueeze(i, {1}), o.unsqueeze(i, {0})};
}

Value* identity(const Ops& o, Value* n, DType dtype) {
  const Grid grid = index_grid(o, n);
  return o.cast(o.equal(grid.rows, grid.cols), dtype);
}

Value* triangle_mask(const Ops& o, const Grid& grid, bool lower, int64_t k) {
  Value* offset = o.sub(grid.rows, grid.cols);  // row - col
  // lower: row - col >= -k, i.e. row >= col + k counted the NumPy way (tril(k)).
  return lower ? o.op("GreaterOrEqual", {offset, o.int0(-k)}) : o.op("LessOrEqual", {offset, o.int0(-k)});
}

Value* triangle(const Ops& o, Value* x, const Grid& grid, bool lower, int64_t k) {
  return o.where(triangle_mask(o, grid, lower, k), x, o.real(x->dtype, 0.0));
}

Loop::Loop(GraphBuilder& g, const std::string& name, const std::vector<Value*>& carried,
           const std::vector<bool>& fixed_shape)
    : outer_(g), body_(std::make_unique<GraphBuilder>(g, name)), ops_{*body_}, initial_(carried) {
  iteration_ = body_->input("iteration", DType::Int64, std::vector<Dim>{});
  condition_ = body_->input("condition", DType::Bool, std::vector<Dim>{});
  for (size_t i = 0; i < carried.size(); ++i) {
    Value* v = carried[i];
    const bool fixed = i < fixed_shape.size() && fixed_shape[i];
    carried_.push_back(body_->input("state", v->dtype, fixed ? v->shape : unknown_dims(rank_of(v))));
  }
}

std::vector<Value*> Loop::finish(Value* trip_count, const std::vector<Value*>& carried_out,
                                 const std::vector<Value*>& scan_out, Value* cond_out, Value* cond_init) {
  if (carried_out.size() != carried_.size()) throw BuildError("linalg recipe: loop state count changed");
  body_->output(cond_out ? cond_out : condition_, "more");
  for (Value* v : carried_out) body_->output(v, "state_out");
  for (Value* v : scan_out) body_->output(v, "scan_out");
  std::vector<Value*> inputs{trip_count, cond_init};
  inputs.insert(inputs.end(), initial_.begin(), initial_.end());
  return outer_.op("Loop", std::move(inputs), {{"body", body_->shared_graph()}}, carried_.size() + scan_out.size());
}

Value* batch_shape(const Ops& o, Value* x, size_t core_rank) {
  const auto rank = static_cast<int64_t>(rank_of(x));
  const int64_t batch_rank = rank - static_cast<int64_t>(core_rank);
  if (batch_rank < 0) throw BuildError("linalg recipe: input has fewer dims than its core");
  if (batch_rank == 0) return o.ints({});
  return o.slice(o.shape(x), o.ints({0}), o.ints({batch_rank}), o.ints({0}));
}

Value* broadcast_batch_shapes(const Ops& o, const std::vector<Value*>& shapes) {
  Value* first = shapes.at(0);
  bool all_same = true;
  for (Value* s : shapes) all_same &= s == first;
  if (all_same) return first;
  // The shape of a sum of zero tensors of each shape: NumPy's broadcast,
  // empty dims included.
  Value* zero = o.g.constant(Tensor::scalar(DType::Int32, 0.0), "zero");
  Value* sum = nullptr;
  for (Value* s : shapes) {
    Value* z = o.expand(zero, s);
    sum = sum ? o.add(sum, z) : z;
  }
  return o.shape(sum);
}

namespace {

int64_t length_of(Value* one_d) {
  if (!one_d->shape || one_d->shape->size() != 1 || !(*one_d->shape)[0].is_known()) {
    throw BuildError("linalg recipe: batch shape of unknown length");
  }
  return (*one_d->shape)[0].size;
}

}  // namespace

Value* flatten_batch(const Ops& o, Value* x, size_t core_rank, Value* batch, bool broadcast) {
  const auto rank = static_cast<int64_t>(rank_of(x));
  const auto core = static_cast<int64_t>(core_rank);
  Value* core_shape = o.slice(o.shape(x), o.ints({rank - core}), o.ints({rank}), o.ints({0}));
  const int64_t batch_rank = length_of(batch);
  if (broadcast) {
    x = o.expand(x, o.concat({batch, core_shape}, 0));
  }
  if (batch_rank == 0) return o.unsqueeze(x, {0});
  if (batch_rank == 1) return x;
  return o.reshape(x, o.concat({o.reduce("ReduceProd", batch, {0}, true), core_shape}, 0));
}

Value* unflatten_batch(const Ops& o, Value* y, size_t core_rank, Value* batch) {
  const int64_t batch_rank = length_of(batch);
  if (batch_rank == 0) return o.squeeze(y, {0});
  if (batch_rank == 1) return y;
  const auto core = static_cast<int64_t>(core_rank);
  Value* core_shape = o.slice(o.shape(y), o.ints({1}), o.ints({1 + core}), o.ints({0}));
  return o.reshape(y, o.concat({batch, core_shape}, 0));
}

Value* diagonal(const Ops& o, Value* x, Value* n) {
  Value* flat = o.op("Flatten", {x}, {{"axis", int64_t{1}}});
  return o.slice(flat, o.ints({0}), o.mul(n, n), o.ints({1}), o.add(n, o.ints({1})));
}

Value* pad_with_identity(const Ops& o, Value* x, Value* n, Value* extra) {
  Value* pads = o.concat({o.ints({0, 0, 0, 0}), extra, extra}, 0);
  Value* padded = o.op("Pad", {x, pads, o.real(x->dtype, 0.0)});
  const Grid grid = index_grid(o, o.add(n, extra));
  Value* new_diagonal = o.and_(o.equal(grid.rows, grid.cols), o.op("GreaterOrEqual", {grid.rows, n}));
  return o.where(new_diagonal, o.real(x->dtype, 1.0), padded);
}

Value* leading_block(const Ops& o, Value* x, Value* rows, Value* cols) {
  return o.slice(x, o.ints({0, 0}), o.concat({rows, cols}, 0), o.ints({1, 2}));
}

Value* nan_where(const Ops& o, Value* bad, Value* x) {
  return o.where(bad, o.real(x->dtype, std::numeric_limits<double>::quiet_NaN()), x);
}

Value* any_nan(const Ops& o, Value* x) {
  Value* count = o.reduce("ReduceSum", o.cast(o.op("IsNaN", {x}), x->dtype), {1, 2}, true);
  return o.greater(count, o.real(x->dtype, 0.0));
}

}  // namespace pytensor_onnx::recipes::linalg
