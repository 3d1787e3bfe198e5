#include "type_constraints.h"

#include <algorithm>
#include <string>

#include "errors.h"
#include "ops.h"

namespace pytensor_onnx {
namespace {

bool allows(Allowed allowed, DType t) {
  switch (allowed) {
    case Allowed::Float: return is_float(t);
    case Allowed::Bool: return t == DType::Bool;
    case Allowed::Integer: return is_integer(t);
    case Allowed::Unsigned: return is_unsigned_integer(t);
    case Allowed::Numeric: return is_float(t) || is_integer(t);
    case Allowed::Wide:
      return is_float(t) || t == DType::Int32 || t == DType::Int64 || t == DType::UInt32 || t == DType::UInt64;
    case Allowed::PowBase: return is_float(t) || t == DType::Int32 || t == DType::Int64;
    case Allowed::Signed: return is_float(t) || is_signed_integer(t);
    case Allowed::NumericOrBool: return is_float(t) || is_integer(t) || t == DType::Bool;
    case Allowed::Any: return true;
    case Allowed::Int64: return t == DType::Int64;
    case Allowed::Index: return t == DType::Int64 || t == DType::Int32;
  }
  return true;
}

const char* describe(Allowed allowed) {
  switch (allowed) {
    case Allowed::Float: return "a float dtype";
    case Allowed::Bool: return "bool";
    case Allowed::Integer: return "an integer dtype";
    case Allowed::Unsigned: return "an unsigned integer dtype";
    case Allowed::Numeric: return "a numeric dtype (not bool)";
    case Allowed::Wide: return "a float dtype or a 32/64-bit integer dtype";
    case Allowed::PowBase: return "a float dtype, int32 or int64";
    case Allowed::Signed: return "a float or signed integer dtype";
    case Allowed::NumericOrBool: return "a numeric or bool dtype";
    case Allowed::Any: return "any dtype";
    case Allowed::Int64: return "int64";
    case Allowed::Index: return "int32 or int64";
  }
  return "";
}

}  // namespace

void check_input_dtypes(const Node& node, int opset) {
  if (!node.domain.empty()) return;
  const OpSchema* schema = find_op_schema(node.op_type);
  if (!schema) return;
  std::vector<Constraint> constraints = schema->input_types;
  if (schema->types_at) schema->types_at(node, opset, constraints);
  for (const Constraint& c : constraints) {
    DType shared = DType::Undefined;
    size_t first = 0;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const Value* in = node.inputs[i];
      if (!in || in->dtype == DType::Undefined) continue;
      if (!c.positions.empty() && std::find(c.positions.begin(), c.positions.end(), i) == c.positions.end()) continue;
      if (!allows(c.allowed, in->dtype)) {
        throw BuildError("input " + std::to_string(i) + " has dtype " + dtype_name(in->dtype) + "; ONNX takes " +
                         describe(c.allowed) + " there");
      }
      if (shared == DType::Undefined) {
        shared = in->dtype;
        first = i;
      } else if (in->dtype != shared) {
        throw BuildError("inputs " + std::to_string(first) + " and " + std::to_string(i) + " must have one dtype, got " +
                         dtype_name(shared) + " and " + dtype_name(in->dtype) + " (cast one of them)");
      }
    }
  }
  if (schema->validate) schema->validate(node);
}

}  // namespace pytensor_onnx
