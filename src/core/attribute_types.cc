#include "attribute_types.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "dtype.h"
#include "errors.h"

namespace pytensor_onnx {
namespace {

enum class Kind { Int, Flag, Ints, Float, String, Tensor, Graph, DTypeCode };

// Every attribute of these names has the same type in every default-domain
// op that has it (onnx/defs). Without this check a wrongly typed attribute
// reaches the model, which the ONNX checker and ONNX Runtime then reject.
const std::unordered_map<std::string, Kind>& attribute_kinds() {
  static const std::unordered_map<std::string, Kind> kinds = {
      {"axis", Kind::Int},           {"keepdims", Kind::Flag},    {"select_last_index", Kind::Flag},
      {"noop_with_empty_axes", Kind::Flag}, {"upper", Kind::Flag}, {"exclusive", Kind::Flag},
      {"reverse", Kind::Flag},       {"fmod", Kind::Flag},        {"allowzero", Kind::Flag},
      {"num_outputs", Kind::Int},    {"start", Kind::Int},        {"end", Kind::Int},
      {"transA", Kind::Flag},        {"transB", Kind::Flag},      {"sorted", Kind::Flag},
      {"largest", Kind::Flag},       {"batch_dims", Kind::Int},   {"k", Kind::Int},
      {"detect_negative", Kind::Flag}, {"detect_positive", Kind::Flag}, {"saturate", Kind::Flag},
      {"sample_size", Kind::Int},    {"shape", Kind::Ints},
      {"axes", Kind::Ints},          {"perm", Kind::Ints},        {"split", Kind::Ints},
      {"pads", Kind::Ints},          {"starts", Kind::Ints},      {"ends", Kind::Ints},
      {"alpha", Kind::Float},        {"beta", Kind::Float},       {"gamma", Kind::Float},
      {"seed", Kind::Float},         {"mean", Kind::Float},       {"scale", Kind::Float},
      {"low", Kind::Float},          {"high", Kind::Float},       {"epsilon", Kind::Float},
      {"mode", Kind::String},        {"reduction", Kind::String}, {"equation", Kind::String},
      {"direction", Kind::String},   {"approximate", Kind::String},
      {"value", Kind::Tensor},
      {"then_branch", Kind::Graph},  {"else_branch", Kind::Graph}, {"body", Kind::Graph},
      {"to", Kind::DTypeCode},       {"dtype", Kind::DTypeCode},
  };
  return kinds;
}

bool is_dtype_code(int64_t code) {
  switch (static_cast<DType>(code)) {
    case DType::Float32: case DType::UInt8: case DType::Int8: case DType::UInt16: case DType::Int16:
    case DType::Int32: case DType::Int64: case DType::String: case DType::Bool: case DType::Float16:
    case DType::Float64: case DType::UInt32: case DType::UInt64: case DType::BFloat16:
      return code == static_cast<int32_t>(code);
    default:
      return false;
  }
}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::Int: return "an int";
    case Kind::Flag: return "0 or 1";
    case Kind::Ints: return "a list of ints";
    case Kind::Float: return "a float";
    case Kind::String: return "a string";
    case Kind::Tensor: return "a tensor (NumPy array)";
    case Kind::Graph: return "a subgraph (GraphBuilder)";
    case Kind::DTypeCode: return "an ONNX dtype code (TensorProto.DataType)";
  }
  return "";
}

// The value converted to `kind`, or nullopt when it has another type.
std::optional<AttrValue> as_kind(const AttrValue& value, Kind kind) {
  switch (kind) {
    case Kind::Int:
      if (std::holds_alternative<int64_t>(value)) return value;
      return std::nullopt;
    case Kind::Flag:
      if (const auto* i = std::get_if<int64_t>(&value); i && (*i == 0 || *i == 1)) return value;
      return std::nullopt;
    case Kind::DTypeCode:
      if (const auto* i = std::get_if<int64_t>(&value); i && is_dtype_code(*i)) return value;
      return std::nullopt;
    case Kind::Ints:
      if (std::holds_alternative<std::vector<int64_t>>(value)) return value;
      if (const auto* i = std::get_if<int64_t>(&value)) return AttrValue(std::vector<int64_t>{*i});
      return std::nullopt;
    case Kind::Float:
      if (std::holds_alternative<double>(value)) return value;
      if (const auto* i = std::get_if<int64_t>(&value)) return AttrValue(static_cast<double>(*i));
      return std::nullopt;
    case Kind::String:
      if (std::holds_alternative<std::string>(value)) return value;
      return std::nullopt;
    case Kind::Tensor:
      if (std::holds_alternative<Tensor>(value)) return value;
      return std::nullopt;
    case Kind::Graph:
      if (const auto* g = std::get_if<std::shared_ptr<Graph>>(&value); g && *g) return value;
      return std::nullopt;
  }
  return std::nullopt;
}

// The attributes each op has at some opset (onnx/defs). An op listed here
// takes no other attribute (ONNX Runtime refuses the model otherwise);
// unlisted ops are not checked.
const std::unordered_map<std::string, std::vector<std::string>>& attribute_names() {
  static const std::unordered_map<std::string, std::vector<std::string>> names = [] {
    std::unordered_map<std::string, std::vector<std::string>> t;
    for (const char* op : {"Abs", "Neg", "Exp", "Log", "Sqrt", "Floor", "Ceil", "Reciprocal", "Sigmoid", "Tanh",
                           "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
                           "Erf", "Sign", "Not", "BitwiseNot", "IsNaN", "Relu", "Softplus", "Softsign", "Identity",
                           "Size", "NonZero", "Det", "Round", "Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less",
                           "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "BitwiseAnd", "BitwiseOr",
                           "BitwiseXor", "Max", "Min", "Sum", "Mean", "MatMul", "Where", "Expand", "Tile", "Range",
                           "Clip", "Slice", "Mish", "HardSwish"}) {
      t[op] = {};
    }
    for (const char* op : {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceMean", "ReduceL1", "ReduceL2",
                           "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}) {
      t[op] = {"axes", "keepdims", "noop_with_empty_axes"};
    }
    for (const char* op : {"ArgMax", "ArgMin"}) t[op] = {"axis", "keepdims", "select_last_index"};
    for (const char* op : {"Softmax", "LogSoftmax", "Hardmax", "Concat", "Gather", "GatherElements", "Flatten",
                           "Compress", "OneHot"}) {
      t[op] = {"axis"};
    }
    t["Mod"] = {"fmod"};
    t["BitShift"] = {"direction"};
    t["Reshape"] = {"allowzero"};
    t["Cast"] = {"to", "saturate", "round_mode"};
    t["CastLike"] = {"saturate", "round_mode"};
    t["IsInf"] = {"detect_negative", "detect_positive"};
    t["Transpose"] = {"perm"};
    t["Squeeze"] = {"axes"};
    t["Unsqueeze"] = {"axes"};
    t["Split"] = {"axis", "split", "num_outputs"};
    t["GatherND"] = {"batch_dims"};
    t["ScatterND"] = {"reduction"};
    t["ScatterElements"] = {"axis", "reduction"};
    t["Shape"] = {"start", "end"};
    t["Pad"] = {"mode", "pads", "value"};
    t["CumSum"] = {"exclusive", "reverse"};
    t["Trilu"] = {"upper"};
    t["TopK"] = {"axis", "largest", "sorted"};
    t["Unique"] = {"axis", "sorted"};
    t["Einsum"] = {"equation"};
    t["Gemm"] = {"alpha", "beta", "transA", "transB"};
    t["ConstantOfShape"] = {"value"};
    t["EyeLike"] = {"dtype", "k"};
    t["Constant"] = {"value", "value_float", "value_floats", "value_int", "value_ints", "value_string",
                     "value_strings", "sparse_value"};
    t["If"] = {"then_branch", "else_branch"};
    t["Loop"] = {"body"};
    for (const char* op : {"Elu", "Celu", "LeakyRelu", "ThresholdedRelu"}) t[op] = {"alpha"};
    t["Selu"] = {"alpha", "gamma"};
    t["HardSigmoid"] = {"alpha", "beta"};
    t["Gelu"] = {"approximate"};
    t["RandomNormal"] = {"dtype", "mean", "scale", "seed", "shape"};
    t["RandomUniform"] = {"dtype", "high", "low", "seed", "shape"};
    t["RandomNormalLike"] = {"dtype", "mean", "scale", "seed"};
    t["RandomUniformLike"] = {"dtype", "high", "low", "seed"};
    t["Bernoulli"] = {"dtype", "seed"};
    t["Multinomial"] = {"dtype", "sample_size", "seed"};
    return t;
  }();
  return names;
}

}  // namespace

// String attributes that name one of a few choices.
void check_choice(const std::string& op_type, const Attributes& attrs, const std::string& name,
                  std::initializer_list<const char*> choices) {
  auto value = attrs.get_string(name);
  if (!value) return;
  for (const char* choice : choices) {
    if (*value == choice) return;
  }
  std::string list;
  for (const char* choice : choices) list += std::string(list.empty() ? "" : ", ") + choice;
  throw BuildError(op_type + ": attribute '" + name + "' must be one of " + list + ", got '" + *value + "'");
}

void check_attribute_types(const std::string& op_type, Attributes& attrs) {
  const auto& kinds = attribute_kinds();
  const auto known = attribute_names().find(op_type);
  for (const Attribute& attr : std::vector<Attribute>(attrs.items())) {
    if (known != attribute_names().end() &&
        std::find(known->second.begin(), known->second.end(), attr.name) == known->second.end()) {
      throw BuildError(op_type + " has no attribute '" + attr.name + "'");
    }
    auto it = kinds.find(attr.name);
    if (it == kinds.end()) continue;
    std::optional<AttrValue> converted = as_kind(attr.value, it->second);
    if (!converted) {
      throw BuildError(op_type + ": attribute '" + attr.name + "' must be " + kind_name(it->second));
    }
    attrs.set(attr.name, std::move(*converted));
  }
  if (op_type == "Pad") check_choice(op_type, attrs, "mode", {"constant", "reflect", "edge", "wrap"});
  if (op_type == "ScatterND" || op_type == "ScatterElements") {
    check_choice(op_type, attrs, "reduction", {"none", "add", "mul", "max", "min"});
  }
  if (op_type == "BitShift") check_choice(op_type, attrs, "direction", {"LEFT", "RIGHT"});
  if (op_type == "Gelu") check_choice(op_type, attrs, "approximate", {"none", "tanh"});
}

}  // namespace pytensor_onnx
