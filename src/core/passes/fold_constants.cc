#include "fold_constants.h"

#include <algorithm>
#include <climits>
#include <optional>

#include "../errors.h"

namespace pytensor_onnx {
namespace {

// Constants larger than this are real data, not shape arithmetic.
constexpr int64_t kMaxFoldElements = 1024;

struct IntArray {
  std::vector<int64_t> values;
  std::vector<int64_t> dims;
};

std::optional<IntArray> int_constant(const Value* v) {
  if (!v || !v->constant) return std::nullopt;
  const DType d = v->constant->dtype();
  if (d != DType::Int64 && d != DType::Int32) return std::nullopt;
  if (v->constant->numel() > kMaxFoldElements) return std::nullopt;
  return IntArray{v->constant->to_int64s(), v->constant->dims()};
}

int64_t normalize(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

std::optional<IntArray> elementwise(const std::string& op, const IntArray& a, const IntArray& b) {
  // Only same-shape or scalar-broadcast folding; anything else is left to the runtime.
  if (a.values.empty() || b.values.empty()) {
    // An empty operand (the shape of a scalar) broadcast with one value or
    // an empty one of its dims: the result is empty, shaped as it is.
    const IntArray& empty = a.values.empty() ? a : b;
    const IntArray& other = a.values.empty() ? b : a;
    if (other.values.size() > 1 || other.dims.size() > empty.dims.size()) return std::nullopt;
    if (other.values.empty() && other.dims != empty.dims) return std::nullopt;
    return IntArray{{}, empty.dims};
  }
  const IntArray* big = a.values.size() >= b.values.size() ? &a : &b;
  if (a.values.size() != b.values.size() && a.values.size() != 1 && b.values.size() != 1) return std::nullopt;
  if (a.dims.size() != b.dims.size() && a.values.size() != 1 && b.values.size() != 1) return std::nullopt;
  IntArray out{{}, big->dims};
  if (a.dims.size() > out.dims.size()) out.dims = a.dims;
  if (b.dims.size() > out.dims.size()) out.dims = b.dims;
  for (size_t i = 0; i < big->values.size(); ++i) {
    const int64_t x = a.values[a.values.size() == 1 ? 0 : i];
    const int64_t y = b.values[b.values.size() == 1 ? 0 : i];
    int64_t r;
    if (op == "Add") r = static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
    else if (op == "Sub") r = static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
    else if (op == "Mul") r = static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
    else if (op == "Div") {
      if (y == 0 || (x == INT64_MIN && y == -1)) return std::nullopt;  // leave run-time errors to the runtime
      r = x / y;  // ONNX Div truncates, as C++ does
    } else if (op == "Max") r = std::max(x, y);
    else if (op == "Min") r = std::min(x, y);
    else return std::nullopt;
    out.values.push_back(r);
  }
  return out;
}

std::optional<IntArray> evaluate(const Node& node) {
  const std::string& op = node.op_type;
  const Value* x = node.input(0);
  if (op == "Shape" && x && is_fully_known(x->shape)) {
    std::vector<int64_t> dims = known_sizes(x->shape);
    const int64_t r = static_cast<int64_t>(dims.size());
    int64_t start = std::clamp<int64_t>(normalize(node.attrs.get_int("start", 0), r), 0, r);
    int64_t end = std::clamp<int64_t>(normalize(node.attrs.get_int("end", r), r), 0, r);
    std::vector<int64_t> sliced(dims.begin() + start, dims.begin() + std::max(start, end));
    return IntArray{sliced, {static_cast<int64_t>(sliced.size())}};
  }
  if (op == "Size" && x && is_fully_known(x->shape)) {
    int64_t n = 1;
    for (int64_t d : known_sizes(x->shape)) n *= d;
    return IntArray{{n}, {}};
  }
  // Gather of statically known dims out of a Shape whose other dims are unknown.
  if (op == "Gather" && x && x->producer && x->producer->op_type == "Shape" && !x->producer->attrs.has("start") &&
      !x->producer->attrs.has("end") && x->producer->input(0)->shape) {
    auto idx = int_constant(node.input(1));
    const auto& dims = *x->producer->input(0)->shape;
    if (idx) {
      IntArray out{{}, idx->dims};
      for (int64_t i : idx->values) {
        const int64_t j = normalize(i, static_cast<int64_t>(dims.size()));
        if (j < 0 || j >= static_cast<int64_t>(dims.size()) || !dims[j].is_known()) return std::nullopt;
        out.values.push_back(dims[j].size);
      }
      return out;
    }
  }

  std::vector<IntArray> in;
  for (const Value* v : node.inputs) {
    if (!v) {
      in.push_back(IntArray{});
      continue;
    }
    auto c = int_constant(v);
    if (!c) return std::nullopt;
    in.push_back(*c);
  }
  if (in.empty()) return std::nullopt;
  const IntArray& a = in[0];
  if (op == "Identity") return a;
  if (op == "Cast") {
    const auto to = static_cast<DType>(node.attrs.get_int("to", 0));
    if (to != DType::Int64 && to != DType::Int32) return std::nullopt;
    IntArray out = a;
    if (to == DType::Int32) {
      for (auto& v : out.values) v = static_cast<int32_t>(v);
    }
    return out;
  }
  if (op == "Neg") {
    IntArray out = a;
    for (auto& v : out.values) v = static_cast<int64_t>(0 - static_cast<uint64_t>(v));
    return out;
  }
  if (in.size() == 2 && (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" || op == "Min")) {
    return elementwise(op, a, in[1]);
  }
  if (op == "Gather" && a.dims.size() == 1 && node.attrs.get_int("axis", 0) == 0) {
    IntArray out{{}, in[1].dims};
    const int64_t n = static_cast<int64_t>(a.values.size());
    for (int64_t i : in[1].values) {
      const int64_t j = normalize(i, n);
      if (j < 0 || j >= n) return std::nullopt;
      out.values.push_back(a.values[j]);
    }
    return out;
  }
  if (op == "Concat" && a.dims.size() == 1) {
    IntArray out{{}, {0}};
    for (const auto& part : in) {
      if (part.dims.size() != 1) return std::nullopt;
      out.values.insert(out.values.end(), part.values.begin(), part.values.end());
    }
    out.dims[0] = static_cast<int64_t>(out.values.size());
    return out;
  }
  if (op == "Slice" && a.dims.size() == 1 && in.size() >= 3) {
    const int64_t n = static_cast<int64_t>(a.values.size());
    if (in.size() > 3 && !in[3].values.empty() && normalize(in[3].values[0], 1) != 0) return std::nullopt;
    int64_t start = in[1].values.at(0), end = in[2].values.at(0);
    const int64_t step = in.size() > 4 && !in[4].values.empty() ? in[4].values[0] : 1;
    if (step == 0) return std::nullopt;
    if (start < 0) start += n;
    if (end < 0) end = end <= INT64_MIN + n ? -1 : end + n;
    IntArray out;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, n);
      end = std::clamp<int64_t>(end, 0, n);
      for (int64_t i = start; i < end; i += step) out.values.push_back(a.values[i]);
    } else {
      start = std::clamp<int64_t>(start, 0, n - 1);
      end = std::clamp<int64_t>(end, -1, n - 1);
      for (int64_t i = start; i > end; i += step) out.values.push_back(a.values[i]);
    }
    out.dims = {static_cast<int64_t>(out.values.size())};
    return out;
  }
  if ((op == "Unsqueeze" || op == "Squeeze" || op == "Reshape") && node.outputs[0]->shape &&
      is_fully_known(node.outputs[0]->shape)) {
    IntArray out = a;
    out.dims = known_sizes(node.outputs[0]->shape);
    return out;
  }
  if ((op == "ReduceProd" || op == "ReduceSum") && node.outputs[0]->shape && node.outputs[0]->shape->empty() &&
      a.dims.size() <= 1) {
    int64_t r = op == "ReduceProd" ? 1 : 0;
    for (int64_t v : a.values) r = op == "ReduceProd" ? r * v : r + v;
    return IntArray{{r}, {}};
  }
  return std::nullopt;
}

// Ops that only relabel the dims of their first input.
bool is_view_op(const std::string& op) {
  return op == "Identity" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten";
}

bool all_inputs_constant(const Node& node) {
  for (const Value* v : node.inputs) {
    if (v && !v->constant) return false;
  }
  return true;
}

}  // namespace

bool fold_constants(Graph& graph) {
  bool changed = false;
  for (Node* node : graph.nodes()) {
    if (!node->domain.empty() || node->outputs.size() != 1) continue;
    Value* out = node->outputs[0];
    if (graph.is_output(out)) continue;
    if (is_view_op(node->op_type) && all_inputs_constant(*node) && is_fully_known(out->shape)) {
      Value* c = graph.add_initializer(out->name + "_folded", node->inputs[0]->constant->with_dims(known_sizes(out->shape)));
      graph.replace_all_uses(out, c);
      changed = true;
      continue;
    }
    std::optional<IntArray> folded;
    try {
      folded = evaluate(*node);
    } catch (const std::exception&) {
      folded = std::nullopt;  // malformed constant arithmetic: leave it for the runtime to report
    }
    if (!folded) continue;
    const DType dtype = out->dtype == DType::Int32 ? DType::Int32 : DType::Int64;
    Tensor t = dtype == DType::Int64
                   ? Tensor::from_values(DType::Int64, folded->values, folded->dims)
                   : Tensor::from_values(DType::Int32, std::vector<int32_t>(folded->values.begin(), folded->values.end()),
                                         folded->dims);
    Value* c = graph.add_initializer(out->name + "_folded", std::move(t));
    graph.replace_all_uses(out, c);
    changed = true;
  }
  return changed;
}

}  // namespace pytensor_onnx
