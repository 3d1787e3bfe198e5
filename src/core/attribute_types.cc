#include "attribute_types.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "dtype.h"
#include "errors.h"
#include "ops.h"

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

// STRING is left out: no PyTensor dtype is a string, so nothing a rule builds
// can read a string tensor (a Cast to it made values the builder could not
// type, nor a caller feed: FUZZ_SEED=4129979009, the core fuzzer's hostile
// Cast to "string").
bool is_dtype_code(int64_t code) {
  switch (static_cast<DType>(code)) {
    case DType::Float32: case DType::UInt8: case DType::Int8: case DType::UInt16: case DType::Int16:
    case DType::Int32: case DType::Int64: case DType::Bool: case DType::Float16:
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
    case Kind::DTypeCode: return "an ONNX dtype code (TensorProto.DataType) of a number or bool type, not STRING";
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


void check_choice(const std::string& op_type, const Attributes& attrs, const std::string& name,
                  const std::vector<std::string>& choices) {
  auto value = attrs.get_string(name);
  if (!value) return;
  for (const std::string& choice : choices) {
    if (*value == choice) return;
  }
  std::string list;
  for (const std::string& choice : choices) list += (list.empty() ? "" : ", ") + choice;
  throw BuildError(op_type + ": attribute '" + name + "' must be one of " + list + ", got '" + *value + "'");
}

}  // namespace

void check_attribute_types(const std::string& op_type, Attributes& attrs) {
  const auto& kinds = attribute_kinds();
  const OpSchema* schema = find_op_schema(op_type);
  const std::vector<std::string>* known = schema && schema->attributes ? &*schema->attributes : nullptr;
  for (const Attribute& attr : std::vector<Attribute>(attrs.items())) {
    if (known && std::find(known->begin(), known->end(), attr.name) == known->end()) {
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
  if (schema) {
    for (const auto& [name, choices] : schema->choices) check_choice(op_type, attrs, name, choices);
  }
}

}  // namespace pytensor_onnx
