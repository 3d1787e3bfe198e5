#include "infer/common.h"

#include <algorithm>

#include "errors.h"

namespace pytensor_onnx::infer {

std::optional<std::vector<int64_t>> const_ints(const Value* v) {
  if (!v || !v->constant) return std::nullopt;
  if (!is_integer(v->constant->dtype())) return std::nullopt;
  return v->constant->to_int64s();
}

std::optional<int64_t> require_vector(const Node& node, const Value* v, const char* what) {
  if (!v || !v->shape) return std::nullopt;
  if (v->shape->size() != 1) {
    throw BuildError(node.op_type + ": " + what + " must be a 1-D tensor, got rank " +
                     std::to_string(v->shape->size()));
  }
  const Dim& d = (*v->shape)[0];
  return d.is_known() ? std::optional<int64_t>(d.size) : std::nullopt;
}

void require_length(const Node& node, const std::optional<std::vector<int64_t>>& values, size_t n,
                    const char* what) {
  if (values && values->size() != n) {
    throw BuildError(node.op_type + ": " + what + " has " + std::to_string(values->size()) + " values, expected " +
                     std::to_string(n));
  }
}

void require_matrices(const std::string& op, const Value* x) {
  if (x && x->shape && x->shape->size() < 2) {
    throw BuildError(op + " takes matrices (rank >= 2), got rank " + std::to_string(x->shape->size()));
  }
}

Shape unknown_dims_checked(int64_t rank, const char* what) {
  if (rank < 0 || rank > kMaxInferredRank) {
    throw BuildError(std::string(what) + " gives " + std::to_string(rank) + " dims; at most " +
                     std::to_string(kMaxInferredRank) + " are supported");
  }
  return unknown_dims(static_cast<size_t>(rank));
}

Dim product_dim(int64_t a, int64_t b) {
  int64_t result = 0;
  return __builtin_mul_overflow(a, b, &result) ? Dim::unknown() : Dim::known(result);
}

Dim sum_dim(int64_t a, int64_t b) {
  int64_t result = 0;
  return __builtin_add_overflow(a, b, &result) ? Dim::unknown() : Dim::known(result);
}

int64_t normalize_axis(int64_t axis, size_t rank, const Node& node) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    throw BuildError(node.op_type + ": axis " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(rank));
  }
  return axis < 0 ? axis + r : axis;
}

Dim broadcast_dim(const Dim& a, const Dim& b) {
  if (a.is_known() && a.size == 1) return b;
  if (b.is_known() && b.size == 1) return a;
  if (a.is_known() && b.is_known()) {
    if (a.size != b.size) {
      throw BuildError("cannot broadcast dims " + std::to_string(a.size) + " and " + std::to_string(b.size));
    }
    return a;
  }
  if (a.same_as(b)) return a;
  // One side static (not 1) wins: the other must equal it at run time.
  if (a.is_known()) return a;
  if (b.is_known()) return b;
  return Dim::unknown();
}

Shape reduce_shape(const Shape& in, const std::optional<std::vector<int64_t>>& axes, bool keepdims,
                   bool noop_with_empty_axes, const Node& node) {
  if (!in) return std::nullopt;
  const size_t rank = in->size();
  std::vector<bool> reduced(rank, false);
  if (!axes) return keepdims ? unknown_dims(rank) : Shape{};  // unknown axes
  if (axes->empty()) {
    if (noop_with_empty_axes) return in;
    std::fill(reduced.begin(), reduced.end(), true);
  }
  for (int64_t a : *axes) reduced[normalize_axis(a, rank, node)] = true;
  std::vector<Dim> out;
  for (size_t i = 0; i < rank; ++i) {
    if (!reduced[i]) out.push_back((*in)[i]);
    else if (keepdims) out.push_back(Dim::known(1));
  }
  return out;
}

void set_dtypes(Node& node, DType t) {
  for (Value* o : node.outputs) o->dtype = t;
}

DType first_dtype(const Node& node) { return node.input(0) ? node.input(0)->dtype : DType::Undefined; }

Shape first_shape(const Node& node) { return node.input(0) ? node.input(0)->shape : std::nullopt; }

Shape keep_dtype(Node& node) {
  set_dtypes(node, first_dtype(node));
  return first_shape(node);
}

std::optional<std::vector<int64_t>> axes_of(const Node& node) {
  return node.input(1) ? const_ints(node.input(1)) : node.attrs.get_ints("axes");
}

}  // namespace pytensor_onnx::infer
