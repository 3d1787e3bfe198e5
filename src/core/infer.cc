#include "infer.h"

#include <algorithm>
#include <cmath>
#include <climits>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "errors.h"
#include "kernel_ops.h"

namespace pytensor_onnx {
namespace {

const std::unordered_set<std::string>& same_type_elementwise() {
  static const std::unordered_set<std::string> ops = {
      "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos", "Cosh", "Erf",
      "Exp", "Floor", "Identity", "Log", "Neg", "Reciprocal", "Relu", "Round", "Sigmoid", "Sign",
      "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Tan", "Tanh", "BitwiseNot", "Softmax",
      "LogSoftmax", "Hardmax", "CumSum", "CumProd", "Trilu", "Clip", "Elu", "Selu", "LeakyRelu",
      "HardSigmoid", "Mish", "Gelu", "Celu", "ThresholdedRelu", "HardSwish"};
  return ops;
}

const std::unordered_set<std::string>& same_type_broadcasting() {
  static const std::unordered_set<std::string> ops = {
      "Add", "Sub", "Mul", "Div", "Mod", "Pow", "Max", "Min", "Sum", "Mean", "BitwiseAnd",
      "BitwiseOr", "BitwiseXor", "BitShift", "PRelu"};
  return ops;
}

const std::unordered_set<std::string>& bool_broadcasting() {
  static const std::unordered_set<std::string> ops = {
      "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"};
  return ops;
}

bool is_reduce(const std::string& op) { return op.rfind("Reduce", 0) == 0; }

// The integer values of a constant input, if the input is an initializer.
std::optional<std::vector<int64_t>> const_ints(const Value* v) {
  if (!v || !v->constant) return std::nullopt;
  if (!is_integer(v->constant->dtype())) return std::nullopt;
  return v->constant->to_int64s();
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

Shape matmul_shape(const Shape& a, const Shape& b) {
  if (!a || !b) return std::nullopt;
  if (a->empty() || b->empty()) throw BuildError("MatMul inputs must have rank >= 1");
  std::vector<Dim> av = *a, bv = *b;
  const bool a_vec = av.size() == 1, b_vec = bv.size() == 1;
  if (a_vec) av.insert(av.begin(), Dim::known(1));
  if (b_vec) bv.push_back(Dim::known(1));
  const Dim& k1 = av.back();
  const Dim& k2 = bv[bv.size() - 2];
  if (k1.is_known() && k2.is_known() && k1.size != k2.size) {
    throw BuildError("MatMul: contraction dims " + std::to_string(k1.size) + " and " +
                     std::to_string(k2.size) + " differ");
  }
  Shape batch_a = std::vector<Dim>(av.begin(), av.end() - 2);
  Shape batch_b = std::vector<Dim>(bv.begin(), bv.end() - 2);
  std::vector<Dim> out = *broadcast_shapes(batch_a, batch_b);
  if (!a_vec) out.push_back(av[av.size() - 2]);
  if (!b_vec) out.push_back(bv.back());
  return out;
}

Shape reshape_shape(const Shape& in, const Value* shape_value, bool allowzero) {
  auto target = const_ints(shape_value);
  if (!target) {
    if (shape_value && shape_value->shape && shape_value->shape->size() == 1 &&
        (*shape_value->shape)[0].is_known()) {
      return unknown_dims(static_cast<size_t>((*shape_value->shape)[0].size));
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
  for (size_t i = 0; i < ax.size(); ++i) {
    const int64_t a = normalize_axis(ax[i], in.size(), node);
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

// Einsum: each letter takes its operand dim; the "..." dims of all operands
// broadcast (aligned right). Unknown when the equation has no "->" output.
Shape einsum_shape(const Node& node) {
  const auto equation = node.attrs.find("equation");
  if (!equation || !std::holds_alternative<std::string>(*equation)) return std::nullopt;
  std::string eq;
  for (char c : std::get<std::string>(*equation)) {
    if (c != ' ') eq += c;
  }
  const size_t arrow = eq.find("->");
  if (arrow == std::string::npos) return std::nullopt;
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = eq.find(',', start);
    terms.push_back(eq.substr(start, std::min(comma, arrow) - start));
    if (comma == std::string::npos || comma > arrow) break;
    start = comma + 1;
  }
  if (terms.size() != node.inputs.size()) {
    // The ONNX checker rejects the model; say so while it is being built.
    throw BuildError("the equation has " + std::to_string(terms.size()) + " operands, but " +
                     std::to_string(node.inputs.size()) + " inputs were given");
  }
  std::unordered_map<char, Dim> letters;
  Shape ellipsis = std::vector<Dim>{};
  for (size_t i = 0; i < terms.size(); ++i) {
    const Value* v = node.inputs[i];
    if (!v || !v->shape) return std::nullopt;
    const std::string& term = terms[i];
    const size_t dots = term.find("...");
    const size_t n_letters = term.size() - (dots == std::string::npos ? 0 : 3);
    if (v->shape->size() < n_letters) return std::nullopt;
    const size_t n_ellipsis = v->shape->size() - n_letters;
    size_t dim = 0;
    for (size_t k = 0; k < term.size(); ++k) {
      if (k == dots) {
        ellipsis = broadcast_shapes(
            ellipsis, std::vector<Dim>(v->shape->begin() + dim, v->shape->begin() + dim + n_ellipsis));
        dim += n_ellipsis;
        k += 2;
        continue;
      }
      const Dim d = (*v->shape)[dim++];
      auto [it, inserted] = letters.emplace(term[k], d);
      if (!inserted) it->second = broadcast_dim(it->second, d);
    }
  }
  std::vector<Dim> out;
  const std::string rhs = eq.substr(arrow + 2);
  for (size_t k = 0; k < rhs.size(); ++k) {
    if (rhs.compare(k, 3, "...") == 0) {
      if (!ellipsis) return std::nullopt;
      out.insert(out.end(), ellipsis->begin(), ellipsis->end());
      k += 2;
      continue;
    }
    auto it = letters.find(rhs[k]);
    if (it == letters.end()) return std::nullopt;
    out.push_back(it->second);
  }
  return out;
}

void infer_shapes(Node& node) {
  const std::string& op = node.op_type;
  Value* x = node.input(0);
  Value* y = node.outputs.empty() ? nullptr : node.outputs[0];
  if (!y) return;
  const Shape in = x ? x->shape : std::nullopt;

  if (same_type_elementwise().count(op) || op == "Cast" || op == "CastLike" || op == "IsNaN" ||
      op == "IsInf" || op == "Not" || op == "EyeLike") {
    y->shape = in;
    return;
  }
  if (same_type_broadcasting().count(op) || bool_broadcasting().count(op) || op == "Where") {
    Shape s = in;
    for (size_t i = 1; i < node.inputs.size(); ++i) {
      if (node.inputs[i]) s = broadcast_shapes(s, node.inputs[i]->shape);
    }
    y->shape = s;
    return;
  }
  if (is_reduce(op)) {
    std::optional<std::vector<int64_t>> axes = node.attrs.get_ints("axes");
    if (!axes) {
      if (node.input(1)) axes = const_ints(node.input(1));
      else axes = std::vector<int64_t>{};
    }
    y->shape = reduce_shape(in, axes, node.attrs.get_int("keepdims", 1) != 0,
                            node.attrs.get_int("noop_with_empty_axes", 0) != 0, node);
    return;
  }
  if (op == "ArgMax" || op == "ArgMin") {
    y->shape = reduce_shape(in, std::vector<int64_t>{node.attrs.get_int("axis", 0)},
                            node.attrs.get_int("keepdims", 1) != 0, false, node);
    return;
  }
  if (op == "Einsum") {
    y->shape = einsum_shape(node);
    return;
  }
  if (op == "MatMul") {
    y->shape = matmul_shape(in, node.input(1)->shape);
    return;
  }
  if (op == "Gemm") {
    const Shape& b = node.input(1)->shape;
    if (in && b && in->size() == 2 && b->size() == 2) {
      const Dim m = node.attrs.get_int("transA", 0) ? (*in)[1] : (*in)[0];
      const Dim n = node.attrs.get_int("transB", 0) ? (*b)[0] : (*b)[1];
      y->shape = std::vector<Dim>{m, n};
    }
    return;
  }
  if (op == "Transpose") {
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
    return;
  }
  if (op == "Reshape") {
    y->shape = reshape_shape(in, node.input(1), node.attrs.get_int("allowzero", 0) != 0);
    return;
  }
  if (op == "Flatten") {
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
    return;
  }
  if (op == "Squeeze") {
    if (!in) return;
    std::optional<std::vector<int64_t>> axes =
        node.input(1) ? const_ints(node.input(1)) : node.attrs.get_ints("axes");
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
    return;
  }
  if (op == "Unsqueeze") {
    if (!in) return;
    std::optional<std::vector<int64_t>> axes =
        node.input(1) ? const_ints(node.input(1)) : node.attrs.get_ints("axes");
    if (!axes) return;
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
    return;
  }
  if (op == "Concat") {
    if (!in) return;
    const int64_t axis = normalize_axis(node.attrs.get_int("axis", 0), in->size(), node);
    std::vector<Dim> out = *in;
    int64_t total = 0;
    bool known = true;
    for (Value* v : node.inputs) {
      if (!v->shape || v->shape->size() != in->size()) {
        if (v->shape) throw BuildError("Concat: inputs have different ranks");
        known = false;
        continue;
      }
      const Dim& d = (*v->shape)[axis];
      if (d.is_known()) total += d.size;
      else known = false;
      for (size_t i = 0; i < out.size(); ++i) {
        if (static_cast<int64_t>(i) != axis && !out[i].is_known() && (*v->shape)[i].is_known()) {
          out[i] = (*v->shape)[i];
        }
      }
    }
    out[axis] = known ? Dim::known(total) : Dim::unknown();
    y->shape = out;
    return;
  }
  if (op == "Split") {
    if (!in) return;
    const int64_t axis = normalize_axis(node.attrs.get_int("axis", 0), in->size(), node);
    auto sizes = node.input(1) ? const_ints(node.input(1)) : std::nullopt;
    const size_t n = node.outputs.size();
    const Dim& d = (*in)[axis];
    if (!node.input(1) && d.is_known() && d.size > 0 && static_cast<int64_t>(n) > d.size) {
      // ONNX gives no parts for this (its shape inference then disagrees
      // with any split), so the checker rejects the model.
      throw BuildError("cannot split an axis of " + std::to_string(d.size) + " into " + std::to_string(n) +
                       " parts without sizes");
    }
    for (size_t i = 0; i < n; ++i) {
      std::vector<Dim> out = *in;
      if (sizes && sizes->size() == n) out[axis] = Dim::known((*sizes)[i]);
      else if (!node.input(1) && d.is_known()) {
        const int64_t chunk = (d.size + static_cast<int64_t>(n) - 1) / static_cast<int64_t>(n);
        out[axis] = Dim::known(std::min<int64_t>(chunk, std::max<int64_t>(d.size - chunk * i, 0)));
      } else {
        out[axis] = Dim::unknown();
      }
      node.outputs[i]->shape = out;
    }
    return;
  }
  if (op == "Slice") {
    if (in) y->shape = normalize_slice_dims(*in, node);
    return;
  }
  if (op == "Gather") {
    const Shape& idx = node.input(1)->shape;
    if (!in || !idx) return;
    const int64_t axis = normalize_axis(node.attrs.get_int("axis", 0), in->size(), node);
    std::vector<Dim> out(in->begin(), in->begin() + axis);
    out.insert(out.end(), idx->begin(), idx->end());
    out.insert(out.end(), in->begin() + axis + 1, in->end());
    y->shape = out;
    return;
  }
  if (op == "GatherElements") {
    y->shape = node.input(1)->shape;
    return;
  }
  if (op == "GatherND") {
    const Shape& idx = node.input(1)->shape;
    if (!in || !idx || idx->empty() || node.attrs.get_int("batch_dims", 0) != 0) return;
    const Dim& k = idx->back();
    if (!k.is_known()) return;
    std::vector<Dim> out(idx->begin(), idx->end() - 1);
    if (static_cast<size_t>(k.size) > in->size()) throw BuildError("GatherND: index depth exceeds data rank");
    out.insert(out.end(), in->begin() + k.size, in->end());
    y->shape = out;
    return;
  }
  if (op == "ScatterND" || op == "ScatterElements") {
    y->shape = in;
    return;
  }
  if (op == "Compress") {
    if (!node.attrs.has("axis")) {
      y->shape = unknown_dims(1);
    } else if (in) {
      std::vector<Dim> out = *in;
      out[normalize_axis(node.attrs.get_int("axis", 0), in->size(), node)] = Dim::unknown();
      y->shape = out;
    }
    return;
  }
  if (op == "Expand") {
    Value* shape_value = node.input(1);
    auto target = const_ints(shape_value);
    if (target) {
      y->shape = broadcast_shapes(in, shape_of_sizes(*target));
    } else if (in && shape_value->shape && (*shape_value->shape)[0].is_known()) {
      y->shape = unknown_dims(std::max<size_t>(in->size(), (*shape_value->shape)[0].size));
    }
    return;
  }
  if (op == "Tile") {
    if (!in) return;
    auto repeats = const_ints(node.input(1));
    std::vector<Dim> out = *in;
    for (size_t i = 0; i < out.size(); ++i) {
      if (repeats && out[i].is_known()) out[i] = Dim::known(out[i].size * (*repeats)[i]);
      else if (!repeats || (*repeats)[i] != 1) out[i] = Dim::unknown();
    }
    y->shape = out;
    return;
  }
  if (op == "Shape") {
    if (!in) { y->shape = unknown_dims(1); return; }
    const int64_t r = static_cast<int64_t>(in->size());
    int64_t start = node.attrs.get_int("start", 0), end = node.attrs.get_int("end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, 0, r);
    y->shape = std::vector<Dim>{Dim::known(std::max<int64_t>(end - start, 0))};
    return;
  }
  if (op == "Size") {
    y->shape = std::vector<Dim>{};
    return;
  }
  if (op == "ConstantOfShape") {
    if (auto dims = const_ints(x)) y->shape = shape_of_sizes(*dims);
    else if (x->shape && (*x->shape)[0].is_known()) y->shape = unknown_dims((*x->shape)[0].size);
    return;
  }
  if (op == "Range") {
    y->shape = unknown_dims(1);
    if (x->constant && node.input(1)->constant && node.input(2)->constant) {
      const double start = x->constant->to_doubles()[0];
      const double limit = node.input(1)->constant->to_doubles()[0];
      const double delta = node.input(2)->constant->to_doubles()[0];
      if (delta != 0) {
        const double n = std::ceil((limit - start) / delta);
        (*y->shape)[0] = Dim::known(n > 0 ? static_cast<int64_t>(n) : 0);
      }
    }
    return;
  }
  if (op == "TopK") {
    if (!in) return;
    const int64_t axis = normalize_axis(node.attrs.get_int("axis", -1), in->size(), node);
    std::vector<Dim> out = *in;
    auto k = const_ints(node.input(1));
    out[axis] = k ? Dim::known((*k)[0]) : Dim::unknown();
    for (Value* o : node.outputs) o->shape = out;
    return;
  }
  if (op == "NonZero") {
    // ONNX gives (rank, count); ONNX Runtime (1.21 to 1.32 at least) gives a
    // scalar one row, like a one-element vector: no known rows for rank 0.
    const bool rows_known = in && !in->empty();
    y->shape = std::vector<Dim>{rows_known ? Dim::known(static_cast<int64_t>(in->size())) : Dim::unknown(),
                                Dim::unknown()};
    return;
  }
  if (op == "Pad") {
    if (!in) return;
    auto pads = const_ints(node.input(1));
    std::vector<Dim> out = *in;
    const size_t r = in->size();
    for (size_t i = 0; i < r; ++i) {
      if (pads && pads->size() == 2 * r && out[i].is_known()) {
        out[i] = Dim::known(out[i].size + (*pads)[i] + (*pads)[i + r]);
      } else {
        out[i] = Dim::unknown();
      }
    }
    y->shape = out;
    return;
  }
  // Anything else: the rank is unknown.
}

void infer_dtypes(Node& node) {
  const std::string& op = node.op_type;
  const DType first = node.input(0) ? node.input(0)->dtype : DType::Undefined;
  auto set_all = [&](DType t) {
    for (Value* o : node.outputs) o->dtype = t;
  };
  if (op == "Cast") {
    const int64_t to = node.attrs.get_int("to", 0);
    set_all(static_cast<DType>(to));
  } else if (op == "CastLike") {
    set_all(node.input(1)->dtype);
  } else if (bool_broadcasting().count(op) || op == "Not" || op == "IsNaN" || op == "IsInf") {
    set_all(DType::Bool);
  } else if (op == "Shape" || op == "Size" || op == "ArgMax" || op == "ArgMin" || op == "NonZero") {
    set_all(DType::Int64);
  } else if (op == "Where") {
    set_all(node.input(1)->dtype);
  } else if (op == "TopK") {
    node.outputs[0]->dtype = first;
    if (node.outputs.size() > 1) node.outputs[1]->dtype = DType::Int64;
  } else if (op == "Unique") {
    node.outputs[0]->dtype = first;
    for (size_t i = 1; i < node.outputs.size(); ++i) node.outputs[i]->dtype = DType::Int64;
  } else if (op == "ConstantOfShape") {
    const AttrValue* value = node.attrs.find("value");
    const Tensor* t = value ? std::get_if<Tensor>(value) : nullptr;
    if (value && !t) throw BuildError("ConstantOfShape: attribute 'value' must be a one-element tensor");
    set_all(t ? t->dtype() : DType::Float32);
  } else if (op == "RandomNormal" || op == "RandomUniform") {
    // dtype defaults to float32; the shape is the 'shape' attribute.
    set_all(static_cast<DType>(node.attrs.get_int("dtype", static_cast<int64_t>(DType::Float32))));
    if (auto shape = node.attrs.get_ints("shape")) node.outputs[0]->shape = shape_of_sizes(*shape);
  } else if (op == "RandomNormalLike" || op == "RandomUniformLike" || op == "Bernoulli") {
    set_all(static_cast<DType>(node.attrs.get_int("dtype", static_cast<int64_t>(first))));
    if (node.input(0)) node.outputs[0]->shape = node.input(0)->shape;
  } else if (op == "EyeLike") {
    const AttrValue* dtype = node.attrs.find("dtype");
    set_all(dtype ? static_cast<DType>(node.attrs.get_int("dtype", 0)) : first);
  } else if (op == "Constant") {
    const AttrValue* value = node.attrs.find("value");
    const Tensor* t = value ? std::get_if<Tensor>(value) : nullptr;
    if (!t) throw BuildError("Constant needs its value as a tensor attribute 'value' (a NumPy array)");
    set_all(t->dtype());
    node.outputs[0]->shape = shape_of_sizes(t->dims());
  } else if (same_type_elementwise().count(op) || same_type_broadcasting().count(op) || is_reduce(op) ||
             op == "MatMul" || op == "Gemm" || op == "Transpose" || op == "Reshape" || op == "Flatten" ||
             op == "Squeeze" || op == "Unsqueeze" || op == "Concat" || op == "Split" || op == "Slice" ||
             op == "Gather" || op == "GatherElements" || op == "GatherND" || op == "ScatterND" ||
             op == "ScatterElements" || op == "Expand" || op == "Tile" || op == "Range" || op == "Pad" ||
             op == "Einsum" || op == "Det" || op == "Compress") {
    set_all(first);
  }
}

}  // namespace

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  if (!a || !b) return std::nullopt;
  const size_t rank = std::max(a->size(), b->size());
  std::vector<Dim> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const bool has_a = i < a->size(), has_b = i < b->size();
    const Dim da = has_a ? (*a)[a->size() - 1 - i] : Dim::known(1);
    const Dim db = has_b ? (*b)[b->size() - 1 - i] : Dim::known(1);
    out[rank - 1 - i] = broadcast_dim(da, db);
  }
  return out;
}

// If: each output takes its branches' dtype; a dim is kept where both branches agree.
void infer_if(Node& node) {
  const AttrValue* then_attr = node.attrs.find("then_branch");
  const AttrValue* else_attr = node.attrs.find("else_branch");
  if (!then_attr || !else_attr) throw BuildError("If needs then_branch and else_branch graphs");
  const auto& then_outs = std::get<std::shared_ptr<Graph>>(*then_attr)->outputs();
  const auto& else_outs = std::get<std::shared_ptr<Graph>>(*else_attr)->outputs();
  if (then_outs.size() != node.outputs.size() || else_outs.size() != node.outputs.size()) {
    throw BuildError("If branches must each have as many outputs as the node");
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const Value* a = then_outs[i];
    const Value* b = else_outs[i];
    if (a->dtype != b->dtype) {
      throw BuildError("If branches give output " + std::to_string(i) + " the dtypes " + dtype_name(a->dtype) +
                       " and " + dtype_name(b->dtype));
    }
    node.outputs[i]->dtype = a->dtype;
    if (a->shape && b->shape && a->shape->size() == b->shape->size()) {
      std::vector<Dim> dims(a->shape->size());
      for (size_t d = 0; d < dims.size(); ++d) {
        if ((*a->shape)[d].same_as((*b->shape)[d])) dims[d] = (*a->shape)[d];
      }
      node.outputs[i]->shape = dims;
    }
  }
}

// Loop(M, cond, v_initial...) with body (iter, cond, v...) -> (cond, v..., scan...):
// loop-carried outputs take the body's types; scan outputs gain a leading dim.
void infer_loop(Node& node) {
  const AttrValue* body_attr = node.attrs.find("body");
  if (!body_attr) throw BuildError("Loop needs a body graph");
  const auto& body_outs = std::get<std::shared_ptr<Graph>>(*body_attr)->outputs();
  const size_t n_carried = node.inputs.size() >= 2 ? node.inputs.size() - 2 : 0;
  if (body_outs.size() != 1 + node.outputs.size()) {
    throw BuildError("Loop body must output the condition plus one value per node output");
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const Value* b = body_outs[i + 1];
    node.outputs[i]->dtype = b->dtype;
    if (i < n_carried) {
      node.outputs[i]->shape = b->shape;
    } else if (b->shape) {
      std::vector<Dim> dims{Dim::unknown()};
      dims.insert(dims.end(), b->shape->begin(), b->shape->end());
      node.outputs[i]->shape = dims;
    }
  }
}

namespace {

// The first dims of `shape` (all but its last `core` ones), or unknown.
Shape leading_dims(const Shape& shape, size_t core) {
  if (!shape || shape->size() < core) return std::nullopt;
  return std::vector<Dim>(shape->begin(), shape->end() - static_cast<long>(core));
}

Shape with_core(const Shape& batch, const Shape& shape, size_t core) {
  if (!batch || !shape || shape->size() < core) return std::nullopt;
  std::vector<Dim> dims = *batch;
  dims.insert(dims.end(), shape->end() - static_cast<long>(core), shape->end());
  return dims;
}

// min(a, b) of two dims: known when both are, the dim itself when they are one.
Dim min_dim(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) return Dim::known(std::min(a.size, b.size));
  return a.same_as(b) ? a : Dim::unknown();
}

// The shapes of QR's and SVD's outputs from a stack of m x n matrices.
std::vector<Shape> qr_svd_shapes(const std::string& kernel, const Shape& a, bool full_matrices) {
  if (!a || a->size() < 2) return {std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  const std::vector<Dim> batch(a->begin(), a->end() - 2);
  const Dim m = (*a)[a->size() - 2], n = a->back(), k = min_dim(m, n);
  auto with = [&batch](std::initializer_list<Dim> tail) {
    std::vector<Dim> dims = batch;
    dims.insert(dims.end(), tail);
    return Shape(dims);
  };
  if (kernel == "QR") return {a, with({k}), with({m, m}), with({n})};
  if (kernel == "SVDValues") return {with({k})};
  return {with({m, full_matrices ? m : k}), with({k}), with({full_matrices ? n : k, n})};
}

// The linear-algebra kernels (src/kernels/linalg_kernel.h): the shapes their
// recipes give. False for another kernel.
bool infer_linalg_kernel(Node& node, const std::string& kernel, DType dtype) {
  std::vector<Shape> shapes;
  const Shape& a = node.inputs.at(0)->shape;
  if (kernel == "Cholesky" || kernel == "PivotToPermutations") {
    shapes = {a};
  } else if (kernel == "SolveTriangular" || kernel == "CholeskySolve" || kernel == "Solve") {
    const size_t b_core = static_cast<size_t>(node.attrs.get_int("b_ndim", 1));
    const Shape& b = node.inputs.at(1)->shape;
    shapes = {with_core(broadcast_shapes(leading_dims(a, 2), leading_dims(b, b_core)), b, b_core)};
  } else if (kernel == "LUFactor") {
    shapes = {a, leading_dims(a, 1), leading_dims(a, 1), leading_dims(a, 2)};
  } else if (kernel == "MatrixInverse") {
    shapes = {a, leading_dims(a, 2)};
  } else if (kernel == "Det") {
    shapes = {leading_dims(a, 2)};
  } else if (kernel == "SLogDet") {
    shapes = {leading_dims(a, 2), leading_dims(a, 2)};
  } else if (kernel == "Eigh") {
    shapes = {leading_dims(a, 1), a};
  } else if (kernel == "QR" || kernel == "SVD" || kernel == "SVDValues") {
    shapes = qr_svd_shapes(kernel, a, node.attrs.get_int("full_matrices", 1) != 0);
  } else {
    return false;
  }
  // The outputs that are not matrices of the kernel's dtype: flags and LU's pivots.
  const bool lu = kernel == "LUFactor";
  for (size_t i = 0; i < node.outputs.size() && i < shapes.size(); ++i) {
    const bool flag = (kernel == "MatrixInverse" && i == 1) || (lu && i == 3);
    const bool index = (lu && i > 0 && i < 3) || (kernel == "QR" && i == 3);
    node.outputs[i]->dtype = flag ? DType::Bool : index ? DType::Int64 : dtype;
    node.outputs[i]->shape = shapes[i];
  }
  return true;
}

}  // namespace

bool infer_kernel_node(Node& node) {
  if (node.domain != kKernelDomain) return false;
  // Every kernel op is "<kernel>_<output dtype>".
  const size_t cut = node.op_type.rfind('_');
  if (cut == std::string::npos) return true;
  const DType dtype = dtype_from_name(node.op_type.substr(cut + 1));
  if (infer_linalg_kernel(node, node.op_type.substr(0, cut), dtype)) return true;
  // The element-wise kernels (Elemwise, ScalarLoop): shaped as their inputs
  // broadcast, but for the outputs an Elemwise sums (0-d).
  Shape shape = std::vector<Dim>{};
  for (Value* input : node.inputs) {
    if (input) shape = broadcast_shapes(shape, input->shape);
  }
  const std::vector<int64_t> sums = node.attrs.get_ints("output_sums").value_or(std::vector<int64_t>{});
  for (size_t j = 0; j < node.outputs.size(); ++j) {
    node.outputs[j]->dtype = dtype;
    node.outputs[j]->shape = j < sums.size() && sums[j] ? Shape(std::vector<Dim>{}) : shape;
  }
  return true;
}

void infer_node(Node& node) {
  if (infer_kernel_node(node)) return;
  if (!node.domain.empty()) return;
  if (node.op_type == "If") {
    infer_if(node);
    return;
  }
  if (node.op_type == "Loop") {
    infer_loop(node);
    return;
  }
  infer_dtypes(node);
  infer_shapes(node);
}

}  // namespace pytensor_onnx
