#include "adapt.h"

#include <algorithm>
#include <climits>

#include "errors.h"
#include "infer/common.h"
#include "recipes/recipes.h"

namespace pytensor_onnx {
namespace {

std::vector<int64_t> ints_of(const AttrValue& value, const std::string& what) {
  if (const auto* ints = std::get_if<std::vector<int64_t>>(&value)) return *ints;
  if (const auto* i = std::get_if<int64_t>(&value)) return {*i};
  throw BuildError(what + " must be a list of ints");
}

void set_input(std::vector<Value*>& inputs, size_t index, Value* value) {
  if (inputs.size() <= index) inputs.resize(index + 1, nullptr);
  inputs[index] = value;
}

// `axes` is an attribute before `input_since` and input `index` from then on.
// Rules may give either form; the builder writes the one the opset wants.
void place_axes(GraphBuilder& g, const std::string& op_type, std::vector<Value*>& inputs, Attributes& attrs,
                int input_since, size_t index) {
  const bool has_input = inputs.size() > index && inputs[index] != nullptr;
  if (g.opset() >= input_since) {
    if (auto axes = attrs.take("axes")) {
      if (has_input) throw BuildError(op_type + ": give axes as an attribute or as an input, not both");
      std::vector<int64_t> values = ints_of(*axes, op_type + " axes");
      // An empty axes attribute means "all axes" for reductions: omit the input.
      if (!values.empty() || op_type.rfind("Reduce", 0) != 0) set_input(inputs, index, g.int64s(values));
    }
    return;
  }
  if (!has_input) {
    if (auto axes = attrs.find("axes")) {
      if (ints_of(*axes, op_type + " axes").empty()) attrs.take("axes");
    }
    return;
  }
  Value* axes = inputs[index];
  if (!axes->constant) {
    throw UnsupportedError(op_type + " with axes computed at run time needs opset >= " +
                           std::to_string(input_since) + "; export with opset_version >= " +
                           std::to_string(input_since));
  }
  std::vector<int64_t> values = axes->constant->to_int64s();
  inputs.resize(index);
  if (!values.empty()) attrs.set("axes", values);
}

void attribute_to_input(GraphBuilder& g, std::vector<Value*>& inputs, Attributes& attrs, const std::string& name,
                        size_t index, DType dtype) {
  auto value = attrs.take(name);
  if (!value) return;
  Tensor t;
  if (const auto* ints = std::get_if<std::vector<int64_t>>(&*value)) t = Tensor::int64s(*ints);
  else if (const auto* i = std::get_if<int64_t>(&*value)) t = Tensor::scalar(dtype, static_cast<double>(*i));
  else if (const auto* f = std::get_if<double>(&*value)) t = Tensor::scalar(dtype, *f);
  else if (const auto* tensor = std::get_if<Tensor>(&*value)) t = *tensor;
  else throw BuildError("attribute '" + name + "' cannot become an input");
  set_input(inputs, index, g.constant(std::move(t), name));
}

// A num_outputs other than the node's number of outputs builds a Split that
// ONNX Runtime refuses to run ("Number of outputs (1) does not match
// num_outputs (0)"; a hostile attribute of the core fuzzer, FUZZ_SEED=1094003224).
void refuse_num_outputs_mismatch(const Attributes& attrs, size_t n_outputs) {
  if (!attrs.has("num_outputs")) return;
  const int64_t count = attrs.get_int("num_outputs", 0);
  if (count != static_cast<int64_t>(n_outputs)) {
    throw BuildError("Split: num_outputs=" + std::to_string(count) + " for " + std::to_string(n_outputs) + " outputs");
  }
}

Value* range_0_to(GraphBuilder& g, Value* limit) {
  return g.op1("Range", {g.constant(Tensor::int64_scalar(0), "zero"), limit, g.constant(Tensor::int64_scalar(1), "one")});
}

// Trilu before opset 14: keep x where (col - row) >= k (upper) or <= k (lower).
std::vector<Value*> trilu_recipe(GraphBuilder& g, const std::vector<Value*>& inputs, const Attributes& attrs) {
  Value* x = inputs[0];
  infer::require_matrices("Trilu", x);
  const bool upper = attrs.get_int("upper", 1) != 0;
  Value* shape = g.op1("Shape", {x});
  Value* rows = g.op1("Gather", {shape, g.constant(Tensor::int64_scalar(-2), "minus_two")}, {{"axis", int64_t{0}}});
  Value* cols = g.op1("Gather", {shape, g.constant(Tensor::int64_scalar(-1), "minus_one")}, {{"axis", int64_t{0}}});
  Value* row_ids = g.op1("Unsqueeze", {range_0_to(g, rows)}, {{"axes", std::vector<int64_t>{1}}});
  Value* col_ids = g.op1("Unsqueeze", {range_0_to(g, cols)}, {{"axes", std::vector<int64_t>{0}}});
  Value* offset = g.op1("Sub", {col_ids, row_ids});
  Value* k = inputs.size() > 1 && inputs[1] ? g.cast(inputs[1], DType::Int64) : g.constant(Tensor::int64_scalar(0), "zero");
  Value* keep = g.op1(upper ? "GreaterOrEqual" : "LessOrEqual", {offset, k});
  Value* zero = g.constant(Tensor::scalar(x->dtype, 0.0), "zero");
  return {g.op1("Where", {keep, x, zero})};
}

// Shape with start/end before opset 15: Shape then Slice (both clamp alike).
std::vector<Value*> shape_slice_recipe(GraphBuilder& g, const std::vector<Value*>& inputs, const Attributes& attrs) {
  Value* shape = g.emit("Shape", {inputs[0]}, {}, 1)[0];
  const int64_t start = attrs.get_int("start", 0);
  const int64_t end = attrs.get_int("end", INT64_MAX);
  return {g.op1("Slice", {shape, g.int64s({start}), g.int64s({end})})};
}

}  // namespace

// ONNX Runtime (1.21 to 1.32 at least) reads a Slice end of INT32_MAX or
// INT64_MAX with a negative step as "through element 0"; ONNX clamps it to
// size - 1, which makes the slice empty from any start (as Python does):
// x[0:2**31-1:-1] gave [x[0]] instead of []. With a negative step every end
// >= size - 1 means the same, so those two ends become one less (exact for
// axes shorter than 2**31 - 1 elements). Constant ends are rewritten; ends or
// steps known only at run time get the same replacement as a Where.
void avoid_slice_end_sentinels(GraphBuilder& g, std::vector<Value*>& inputs) {
  Value* ends = inputs.size() > 2 ? inputs[2] : nullptr;
  Value* steps = inputs.size() > 4 ? inputs[4] : nullptr;
  if (!ends || !steps || (ends->dtype != DType::Int64 && ends->dtype != DType::Int32) || ends->dtype != steps->dtype) {
    return;  // no step (1), or a malformed Slice the checks after this report
  }
  const auto sentinel = [](int64_t end) { return end == INT32_MAX || end == INT64_MAX; };
  if (steps->constant) {
    const auto step_values = steps->constant->to_int64s();
    if (std::none_of(step_values.begin(), step_values.end(), [](int64_t s) { return s < 0; })) return;
    if (ends->constant) {
      auto end_values = ends->constant->to_int64s();
      if (end_values.size() != step_values.size()) return;
      bool changed = false;
      for (size_t i = 0; i < end_values.size(); ++i) {
        if (step_values[i] < 0 && sentinel(end_values[i])) {
          end_values[i] -= 1;
          changed = true;
        }
      }
      if (!changed) return;
      const std::vector<int64_t> dims{static_cast<int64_t>(end_values.size())};
      inputs[2] = ends->dtype == DType::Int64
                      ? g.int64s(end_values)
                      : g.constant(Tensor::from_values(DType::Int32, std::vector<int32_t>(end_values.begin(), end_values.end()), dims), "ints");
      return;
    }
  }
  const DType dtype = ends->dtype;
  Value* zero = g.constant(Tensor::scalar(dtype, 0.0), "zero");
  Value* at_sentinel = g.op1("Equal", {ends, g.constant(Tensor::scalar(dtype, INT32_MAX), "int32_max")});
  if (dtype == DType::Int64) {
    Value* int64_max = g.constant(Tensor::from_values(DType::Int64, std::vector<int64_t>{INT64_MAX}, {}), "int64_max");
    at_sentinel = g.op1("Or", {at_sentinel, g.op1("Equal", {ends, int64_max})});
  }
  Value* misread = g.op1("And", {at_sentinel, g.op1("Less", {steps, zero})});
  Value* one = g.constant(Tensor::scalar(dtype, 1.0), "one");
  inputs[2] = g.op1("Where", {misread, g.op1("Sub", {ends, one}), ends});
}

// ONNX Runtime's ExpandElimination (1.21 and 1.32) can drop an Expand of a
// size-1 dim to a constant size 0 once it has inferred the input's shape:
// set_subtensor(x[0, :], y) of a (2, 0) x and a (1,) y made ScatterND get
// the unexpanded (1,) update (found by the differential fuzzer). Where the
// target size is a constant 0, the input is first sliced to 0 along that
// axis: the Expand then leaves the input's shape as it is, so dropping it is
// right. (An input dim other than 1 or 0 there is not broadcastable anyway.)
static void empty_expand_input_where_target_is_empty(GraphBuilder& g, std::vector<Value*>& inputs) {
  if (inputs.size() != 2 || !inputs[0] || !inputs[1] || !inputs[1]->constant || !inputs[0]->shape) return;
  if (inputs[1]->dtype != DType::Int64) return;
  const auto target = inputs[1]->constant->to_int64s();
  const auto& dims = *inputs[0]->shape;
  const auto rank = static_cast<int64_t>(dims.size());
  const auto offset = static_cast<int64_t>(target.size()) - rank;
  std::vector<int64_t> axes;
  for (int64_t axis = 0; axis < rank; ++axis) {
    const int64_t wanted = axis + offset;
    if (wanted >= 0 && target[wanted] == 0 && !(dims[axis].is_known() && dims[axis].size == 0)) axes.push_back(axis);
  }
  if (axes.empty()) return;
  const std::vector<int64_t> zeros(axes.size(), 0);
  inputs[0] = g.op1("Slice", {inputs[0], g.int64s(zeros), g.int64s(zeros), g.int64s(axes)});
}

// ONNX Runtime 1.21 returns an empty input unreduced when a reduction's axis
// is negative: ReduceSum(axes=[-1]) of a (0,) array gave (0,), not (), and
// ArgMax(axis=-1) of a (0, 2) array gave (0, 2), not (0,) (found by the core
// fuzzer). Axes given as attributes are made non-negative where the rank is
// known (out-of-range ones are left for the checks after this).
void make_reduction_axes_nonnegative(const std::string& op_type, const std::vector<Value*>& inputs,
                                     Attributes& attrs) {
  const bool is_arg = op_type == "ArgMax" || op_type == "ArgMin";
  if (!is_arg && op_type.rfind("Reduce", 0) != 0) return;
  if (inputs.empty() || !inputs[0] || !inputs[0]->rank()) return;
  const auto rank = static_cast<int64_t>(*inputs[0]->rank());
  const auto nonnegative = [rank](int64_t axis) { return axis < 0 && axis >= -rank ? axis + rank : axis; };
  if (is_arg) {
    const AttrValue* axis = attrs.find("axis");
    if (axis && std::holds_alternative<int64_t>(*axis)) attrs.set("axis", nonnegative(std::get<int64_t>(*axis)));
    return;
  }
  const AttrValue* axes = attrs.find("axes");
  if (!axes || !std::holds_alternative<std::vector<int64_t>>(*axes)) return;
  std::vector<int64_t> values = std::get<std::vector<int64_t>>(*axes);
  for (auto& axis : values) axis = nonnegative(axis);
  attrs.set("axes", values);
}

void adapt_interface(GraphBuilder& g, const std::string& op_type, std::vector<Value*>& inputs, Attributes& attrs,
                     size_t n_outputs) {
  if (op_type == "Slice") avoid_slice_end_sentinels(g, inputs);
  if (op_type == "Expand") empty_expand_input_where_target_is_empty(g, inputs);
  make_reduction_axes_nonnegative(op_type, inputs, attrs);
  if (op_type == "ReduceSum") {
    place_axes(g, op_type, inputs, attrs, 13, 1);
  } else if (op_type.rfind("Reduce", 0) == 0) {
    place_axes(g, op_type, inputs, attrs, 18, 1);
  } else if (op_type == "Squeeze" || op_type == "Unsqueeze") {
    place_axes(g, op_type, inputs, attrs, 13, 1);
  } else if (op_type == "Split") {
    refuse_num_outputs_mismatch(attrs, n_outputs);
    attribute_to_input(g, inputs, attrs, "split", 1, DType::Int64);
    const bool has_sizes = inputs.size() > 1 && inputs[1] != nullptr;
    if (g.opset() < 18) {
      // Before 18 a Split without sizes makes equal parts; 18's num_outputs
      // makes ceil(n / k)-sized parts, the last smaller. Where the size is
      // known, give those sizes explicitly.
      auto count = attrs.take("num_outputs");
      const Shape& shape = inputs[0]->shape;
      const int64_t axis = attrs.get_int("axis", 0);
      if (count && !has_sizes && shape && n_outputs > 0) {
        const int64_t rank = static_cast<int64_t>(shape->size());
        const int64_t a = axis < 0 ? axis + rank : axis;
        if (a >= 0 && a < rank && (*shape)[a].is_known()) {
          const int64_t size = (*shape)[a].size, parts = static_cast<int64_t>(n_outputs);
          const int64_t chunk = (size + parts - 1) / parts;
          std::vector<int64_t> sizes;
          for (int64_t i = 0, left = size; i < parts; ++i) {
            sizes.push_back(std::min(chunk, left));
            left -= sizes.back();
          }
          set_input(inputs, 1, g.int64s(sizes));
        }
      }
    } else if (!has_sizes && !attrs.has("num_outputs")) {
      attrs.set("num_outputs", static_cast<int64_t>(n_outputs));
    }
    if (has_sizes) attrs.take("num_outputs");
  } else if (op_type == "Pad") {
    if (g.opset() < 19 && attrs.get_string("mode").value_or("") == "wrap") {
      throw UnsupportedError("Pad with mode='wrap' needs opset >= 19; export with opset_version >= 19");
    }
    attribute_to_input(g, inputs, attrs, "pads", 1, DType::Int64);
    attribute_to_input(g, inputs, attrs, "value", 2, inputs[0]->dtype);
    if (g.opset() < 18 && inputs.size() > 3 && inputs[3]) {
      throw UnsupportedError("Pad with an axes input needs opset >= 18; give pads for every axis instead");
    }
  } else if (op_type == "Clip") {
    attribute_to_input(g, inputs, attrs, "min", 1, inputs[0]->dtype);
    attribute_to_input(g, inputs, attrs, "max", 2, inputs[0]->dtype);
  } else if (op_type == "ScatterND" || op_type == "ScatterElements") {
    const std::string reduction = attrs.get_string("reduction").value_or("none");
    const int needed = (reduction == "add" || reduction == "mul") ? 16 : (reduction == "none" ? 0 : 18);
    if (g.opset() < needed) {
      throw UnsupportedError(op_type + " with reduction='" + reduction + "' needs opset >= " +
                             std::to_string(needed) + "; export with opset_version >= " + std::to_string(needed));
    }
    if (g.opset() < 16) attrs.take("reduction");  // "none", the only form before 16 (no attribute)
  }
}

std::optional<std::vector<Value*>> build_recipe(GraphBuilder& g, const std::string& op_type,
                                                const std::vector<Value*>& inputs, const Attributes& attrs,
                                                size_t /*n_outputs*/) {
  if (auto replaced = recipes::replacing(g, op_type, inputs, attrs)) return replaced;
  if (op_type == "Trilu" && g.opset() < 14) return trilu_recipe(g, inputs, attrs);
  if (op_type == "Shape" && g.opset() < 15 && (attrs.has("start") || attrs.has("end"))) {
    return shape_slice_recipe(g, inputs, attrs);
  }
  return std::nullopt;
}

}  // namespace pytensor_onnx
