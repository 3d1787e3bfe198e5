// Inference of the ops that reshape, reorder, join, split, slice, repeat
// or pad tensors, and of Shape and Size.
#include <algorithm>
#include <climits>
#include <string>

#include "errors.h"
#include "infer.h"
#include "infer/common.h"
#include "infer/rules.h"

namespace pytensor_onnx::infer {
namespace {

Shape reshape_shape(const Shape& in, const Value* shape_value, bool allowzero) {
  auto target = const_ints(shape_value);
  if (!target) {
    if (shape_value && shape_value->shape && shape_value->shape->size() == 1 &&
        (*shape_value->shape)[0].is_known()) {
      return unknown_dims_checked((*shape_value->shape)[0].size, "the target shape's length");
    }
    return std::nullopt;
  }
  std::vector<Dim> out;
  int64_t known_product = 1;
  int infer_at = -1;
  bool all_known = true;
  for (size_t i = 0; i < target->size(); ++i) {
    int64_t t = (*target)[i];
    if (t == 0 && !allowzero) {
      if (!in || i >= in->size()) throw BuildError("Reshape: 0 copies a dim the input does not have");
      out.push_back((*in)[i]);
      if ((*in)[i].is_known()) known_product *= (*in)[i].size;
      else all_known = false;
    } else if (t == -1) {
      if (infer_at >= 0) throw BuildError("Reshape: at most one -1 in the target shape");
      infer_at = static_cast<int>(i);
      out.push_back(Dim::unknown());
    } else if (t < -1) {
      throw BuildError("Reshape: invalid target dim " + std::to_string(t));
    } else {
      out.push_back(Dim::known(t));
      known_product *= t;
    }
  }
  if (infer_at >= 0 && all_known && is_fully_known(in) && known_product > 0) {
    int64_t total = 1;
    for (const auto& d : *in) total *= d.size;
    out[infer_at] = Dim::known(total / known_product);
  }
  return out;
}

std::vector<Dim> normalize_slice_dims(const std::vector<Dim>& in, const Node& node) {
  // Slice(data, starts, ends, axes?, steps?)
  std::vector<Dim> out = in;
  auto starts = const_ints(node.input(1));
  auto ends = const_ints(node.input(2));
  std::optional<std::vector<int64_t>> axes = node.input(3) ? const_ints(node.input(3)) : std::nullopt;
  std::optional<std::vector<int64_t>> steps = node.input(4) ? const_ints(node.input(4)) : std::nullopt;
  // starts, ends, axes and steps are read by position: one entry per sliced axis.
  const char* names[] = {"starts", "ends", "axes", "steps"};
  std::optional<int64_t> count;
  for (size_t i = 1; i < 5 && i < node.inputs.size(); ++i) {
    const std::optional<int64_t> n = require_vector(node, node.input(i), names[i - 1]);
    if (n && count && *n != *count) {
      throw BuildError("Slice: starts, ends, axes and steps must have one entry per sliced axis (" +
                       std::string(names[i - 1]) + " has " + std::to_string(*n) + ", " + names[0] + " " +
                       std::to_string(*count) + ")");
    }
    if (n) count = n;
  }
  const bool axes_known = !node.input(3) || axes;
  if (!axes_known) {
    for (auto& d : out) d = Dim::unknown();
    return out;
  }
  std::vector<int64_t> ax;
  if (axes) ax = *axes;
  else if (starts) for (size_t i = 0; i < starts->size(); ++i) ax.push_back(static_cast<int64_t>(i));
  else {
    for (auto& d : out) d = Dim::unknown();
    return out;
  }
  std::vector<bool> seen(in.size(), false);
  for (size_t i = 0; i < ax.size(); ++i) {
    const int64_t a = normalize_axis(ax[i], in.size(), node);
    // ONNX's checker refuses an axis named twice (-1 and rank - 1 too).
    if (seen[a]) throw BuildError("Slice: axis " + std::to_string(a) + " is sliced more than once");
    seen[a] = true;
    const Dim& dim = in[a];
    if (!starts || !ends || (node.input(4) && !steps) || !dim.is_known()) {
      out[a] = Dim::unknown();
      continue;
    }
    const int64_t n = dim.size;
    const int64_t step = steps ? (*steps)[i] : 1;
    if (step == 0) throw BuildError("Slice: step cannot be 0");
    int64_t s = (*starts)[i], e = (*ends)[i];
    if (s < 0) s += n;
    if (e < 0 && e > INT64_MIN + n) e += n;
    else if (e < 0) e = -1;
    int64_t len;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      len = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
      len = s > e ? (s - e + (-step) - 1) / (-step) : 0;
    }
    out[a] = Dim::known(len);
  }
  return out;
}

}  // namespace

void transpose(Node& node) {
  const Shape in = keep_dtype(node);
  Value* y = node.outputs[0];
  if (!in) return;
  auto perm = node.attrs.get_ints("perm");
  // Checked before it is read: a shorter perm was read past its end.
  if (perm && perm->size() != in->size()) throw BuildError("Transpose: perm length differs from rank");
  std::vector<Dim> out;
  std::vector<bool> taken(in->size(), false);
  for (size_t i = 0; i < in->size(); ++i) {
    const size_t src = perm ? static_cast<size_t>((*perm)[i]) : in->size() - 1 - i;
    if (src >= in->size()) throw BuildError("Transpose: perm entry out of range");
    if (taken[src]) throw BuildError("Transpose: perm repeats axis " + std::to_string(src));
    taken[src] = true;
    out.push_back((*in)[src]);
  }
  y->shape = out;
}

void reshape(Node& node) {
  const Shape in = keep_dtype(node);
  Value* y = node.outputs[0];
  require_vector(node, node.input(1), "the target shape");
  y->shape = reshape_shape(in, node.input(1), node.attrs.get_int("allowzero", 0) != 0);
}

void flatten(Node& node) {
  const Shape in = keep_dtype(node);
  Value* y = node.outputs[0];
  if (!in) { y->shape = unknown_dims(2); return; }
  int64_t axis = node.attrs.get_int("axis", 1);
  const auto rank = static_cast<int64_t>(in->size());
  // Flatten's axis lies in [-rank, rank] (both ends included: all dims go to one side).
  if (axis < -rank || axis > rank) {
    throw BuildError("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  if (axis < 0) axis += rank;
  auto product = [&](size_t lo, size_t hi) {
    int64_t p = 1;
    for (size_t i = lo; i < hi; ++i) {
      if (!(*in)[i].is_known()) return Dim::unknown();
      p *= (*in)[i].size;
    }
    return Dim::known(p);
  };
  y->shape = std::vector<Dim>{product(0, axis), product(axis, in->size())};
}

void squeeze(Node& node) {
  const Shape in = keep_dtype(node);
  Value* y = node.outputs[0];
  if (!in) return;
  std::optional<std::vector<int64_t>> axes = axes_of(node);
  const bool axes_given = node.input(1) || node.attrs.has("axes");
  if (axes_given && !axes) return;  // runtime axes: rank unknown
  std::vector<bool> drop(in->size(), false);
  if (axes) {
    for (int64_t a : *axes) drop[normalize_axis(a, in->size(), node)] = true;
  } else {
    for (size_t i = 0; i < in->size(); ++i) {
      if (!(*in)[i].is_known()) return;  // rank depends on run-time sizes
      drop[i] = (*in)[i].size == 1;
    }
  }
  std::vector<Dim> out;
  for (size_t i = 0; i < in->size(); ++i) {
    if (!drop[i]) out.push_back((*in)[i]);
    else if ((*in)[i].is_known() && (*in)[i].size != 1) {
      throw BuildError("Squeeze: axis " + std::to_string(i) + " has size " +
                       std::to_string((*in)[i].size) + ", not 1");
    }
  }
  y->shape = out;
}

void unsqueeze(Node& node) {
  const Shape in = keep_dtype(node);
  Value* y = node.outputs[0];
  if (!in) return;
  std::optional<std::vector<int64_t>> axes = axes_of(node);
  if (!axes) {
    // Run-time axes (a run-time check's data dependency, dispatch/broadcast.py
    // checked_outputs: Unsqueeze at the check's [0], Squeeze back): where
    // their count is static, the rank is known, not where the 1s go. (An If
    // branch's result lost its rank so, and a rule reading the If's rank
    // failed: fuzz case-35fa1e78653a.)
    const Value* given = node.input(1);
    // (A hostile count, a declared length of 2**40, is refused, not allocated.)
    if (given && given->shape && given->shape->size() == 1 && (*given->shape)[0].is_known()) {
      y->shape = unknown_dims_checked(static_cast<int64_t>(in->size()) + (*given->shape)[0].size,
                                      "Unsqueeze's axes count");
    }
    return;
  }
  const size_t out_rank = in->size() + axes->size();
  std::vector<bool> inserted(out_rank, false);
  for (int64_t a : *axes) {
    size_t i = static_cast<size_t>(normalize_axis(a, out_rank, node));
    if (inserted[i]) throw BuildError("Unsqueeze: repeated axis");
    inserted[i] = true;
  }
  std::vector<Dim> out;
  size_t j = 0;
  for (size_t i = 0; i < out_rank; ++i) out.push_back(inserted[i] ? Dim::known(1) : (*in)[j++]);
  y->shape = out;
}

void concat(Node& node) {
  const Shape in = keep_dtype(node);
  Value* y = node.outputs[0];
  if (!in) return;
  const int64_t axis = normalize_axis(node.attrs.get_int("axis", 0), in->size(), node);
  std::vector<Dim> out = *in;
  Dim total = Dim::known(0);
  for (Value* v : node.inputs) {
    if (!v->shape || v->shape->size() != in->size()) {
      if (v->shape) throw BuildError("Concat: inputs have different ranks");
      total = Dim::unknown();
      continue;
    }
    const Dim& d = (*v->shape)[axis];
    total = total.is_known() && d.is_known() ? sum_dim(total.size, d.size) : Dim::unknown();
    for (size_t i = 0; i < out.size(); ++i) {
      if (static_cast<int64_t>(i) == axis) continue;
      const Dim& other = (*v->shape)[i];
      // Off the joined axis the inputs must agree: ONNX's checker refuses
      // static sizes that differ (found by the fresh-seed core fuzzer).
      if (out[i].is_known() && other.is_known() && out[i].size != other.size) {
        throw BuildError("Concat: inputs differ in axis " + std::to_string(i) + " (" + std::to_string(out[i].size) +
                         " and " + std::to_string(other.size) + "), which is not the joined axis " +
                         std::to_string(axis));
      }
      if (!out[i].is_known() && other.is_known()) out[i] = other;
    }
  }
  out[axis] = total;
  y->shape = out;
}

void split(Node& node) {
  const Shape in = keep_dtype(node);
  if (!in) return;
  const int64_t axis = normalize_axis(node.attrs.get_int("axis", 0), in->size(), node);
  if (node.input(1)) require_vector(node, node.input(1), "the split sizes");
  auto sizes = node.input(1) ? const_ints(node.input(1)) : std::nullopt;
  const size_t n = node.outputs.size();
  const Dim& d = (*in)[axis];
  if (sizes) {
    // ONNX Runtime refuses other sizes when it runs the node; their static
    // dims would be wrong (a size of 2**63 - 1 beside -2**63 "summed" to 0).
    if (sizes->size() != n) {
      throw BuildError("Split: " + std::to_string(sizes->size()) + " split sizes for " + std::to_string(n) +
                       " outputs");
    }
    Dim total = Dim::known(0);
    for (int64_t size : *sizes) {
      if (size < 0) throw BuildError("Split: a split size is negative (" + std::to_string(size) + ")");
      total = total.is_known() ? sum_dim(total.size, size) : total;
    }
    if (d.is_known() && (!total.is_known() || total.size != d.size)) {
      throw BuildError("Split: the split sizes do not add up to the axis' size " + std::to_string(d.size));
    }
  }
  if (!node.input(1) && d.is_known() && d.size > 0 && static_cast<int64_t>(n) > d.size) {
    // ONNX gives no parts for this (its shape inference then disagrees
    // with any split), so the checker rejects the model.
    throw BuildError("cannot split an axis of " + std::to_string(d.size) + " into " + std::to_string(n) +
                     " parts without sizes");
  }
  for (size_t i = 0; i < n; ++i) {
    std::vector<Dim> out = *in;
    if (sizes) out[axis] = Dim::known((*sizes)[i]);
    else if (!node.input(1) && d.is_known()) {
      const int64_t chunk = (d.size + static_cast<int64_t>(n) - 1) / static_cast<int64_t>(n);
      out[axis] = Dim::known(std::min<int64_t>(chunk, std::max<int64_t>(d.size - chunk * i, 0)));
    } else {
      out[axis] = Dim::unknown();
    }
    node.outputs[i]->shape = out;
  }
}

void slice(Node& node) {
  const Shape in = keep_dtype(node);
  Value* y = node.outputs[0];
  if (in) y->shape = normalize_slice_dims(*in, node);
}

void expand(Node& node) {
  const Shape in = keep_dtype(node);
  Value* y = node.outputs[0];
  Value* shape_value = node.input(1);
  require_vector(node, shape_value, "the target shape");
  auto target = const_ints(shape_value);
  if (target) {
    y->shape = broadcast_shapes(in, shape_of_sizes(*target));
  } else if (in && shape_value->shape && (*shape_value->shape)[0].is_known()) {
    const int64_t length = (*shape_value->shape)[0].size;
    y->shape = unknown_dims_checked(std::max(static_cast<int64_t>(in->size()), length),
                                    "the target shape's length");
  }
}

void tile(Node& node) {
  const Shape in = keep_dtype(node);
  Value* y = node.outputs[0];
  const std::optional<int64_t> n = require_vector(node, node.input(1), "repeats");
  if (!in) return;
  if (n && *n != static_cast<int64_t>(in->size())) {
    throw BuildError("Tile: repeats has " + std::to_string(*n) + " entries for an input of rank " +
                     std::to_string(in->size()) + " (one per axis)");
  }
  auto repeats = const_ints(node.input(1));
  std::vector<Dim> out = *in;
  for (size_t i = 0; i < out.size(); ++i) {
    if (repeats && out[i].is_known()) out[i] = product_dim(out[i].size, (*repeats)[i]);
    else if (!repeats || (*repeats)[i] != 1) out[i] = Dim::unknown();
  }
  y->shape = out;
}

void pad(Node& node) {
  const Shape in = keep_dtype(node);
  Value* y = node.outputs[0];
  if (!in) return;
  auto pads = const_ints(node.input(1));
  std::vector<Dim> out = *in;
  const size_t r = in->size();
  for (size_t i = 0; i < r; ++i) {
    if (pads && pads->size() == 2 * r && out[i].is_known()) {
      const Dim before = sum_dim(out[i].size, (*pads)[i]);
      out[i] = before.is_known() ? sum_dim(before.size, (*pads)[i + r]) : Dim::unknown();
    } else {
      out[i] = Dim::unknown();
    }
  }
  y->shape = out;
}

void shape(Node& node) {
  set_dtypes(node, DType::Int64);
  const Shape in = first_shape(node);
  Value* y = node.outputs[0];
  if (!in) { y->shape = unknown_dims(1); return; }
  const int64_t r = static_cast<int64_t>(in->size());
  int64_t start = node.attrs.get_int("start", 0), end = node.attrs.get_int("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  y->shape = std::vector<Dim>{Dim::known(std::max<int64_t>(end - start, 0))};
}

void size(Node& node) {
  set_dtypes(node, DType::Int64);
  Value* y = node.outputs[0];
  y->shape = std::vector<Dim>{};
}

}  // namespace pytensor_onnx::infer
