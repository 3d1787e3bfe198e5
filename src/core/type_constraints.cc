#include "type_constraints.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "errors.h"

namespace pytensor_onnx {
namespace {

enum class Allowed { Float, Bool, Integer, Unsigned, Numeric, Wide, Signed, NumericOrBool, Any, Int64, Index, PowBase };

// One constraint: the inputs at `positions` (empty: every input) all have
// one dtype, of the `allowed` class.
struct Constraint {
  Allowed allowed;
  std::vector<size_t> positions;
};

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

using Table = std::unordered_map<std::string, std::vector<Constraint>>;

const Table& table() {
  static const Table t = [] {
    Table t;
    using A = Allowed;
    for (const char* op : {"Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sigmoid", "Tanh", "Sin",
                           "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Erf",
                           "Softplus", "Softsign", "Softmax", "LogSoftmax", "Hardmax", "IsNaN", "IsInf", "Elu",
                           "Selu", "Celu", "LeakyRelu", "HardSigmoid", "HardSwish", "Mish", "Gelu",
                           "ThresholdedRelu", "Det", "Sum", "Mean"}) {
      t[op] = {{A::Float, {}}};
    }
    for (const char* op : {"And", "Or", "Xor", "Not"}) t[op] = {{A::Bool, {}}};
    for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"}) t[op] = {{A::Integer, {}}};
    t["BitShift"] = {{A::Unsigned, {}}};
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Mod", "Max", "Min", "Less", "Greater", "LessOrEqual",
                           "GreaterOrEqual", "Einsum", "Abs", "Sign", "Clip"}) {
      t[op] = {{A::Numeric, {}}};
    }
    t["MatMul"] = {{A::Wide, {}}};
    t["Gemm"] = {{A::Wide, {0, 1, 2}}};
    t["Neg"] = {{A::Signed, {}}};
    t["Pow"] = {{A::PowBase, {0}}, {A::Numeric, {1}}};
    t["Equal"] = {{A::NumericOrBool, {}}};
    t["Concat"] = {{A::Any, {}}};
    t["Where"] = {{A::Bool, {0}}, {A::Any, {1, 2}}};
    t["Compress"] = {{A::Bool, {1}}};
    t["Range"] = {{A::Numeric, {}}};
    for (const char* op : {"ArgMax", "ArgMin", "TopK"}) t[op] = {{A::Numeric, {0}}};
    for (const char* op : {"CumSum", "ReduceSum", "ReduceProd", "ReduceMean", "ReduceL1", "ReduceL2", "ReduceLogSum",
                           "ReduceLogSumExp", "ReduceSumSquare"}) {
      t[op] = {{A::Wide, {0}}};
    }
    for (const char* op : {"ReduceSum", "ReduceProd", "ReduceMean", "ReduceL1", "ReduceL2", "ReduceLogSum",
                           "ReduceLogSumExp", "ReduceSumSquare", "ReduceMax", "ReduceMin", "Squeeze", "Unsqueeze"}) {
      t[op].push_back({A::Int64, {1}});  // axes
    }
    for (const char* op : {"Reshape", "Expand", "Tile", "Pad", "TopK", "Trilu", "Split"}) t[op].push_back({A::Int64, {1}});
    t["ConstantOfShape"] = {{A::Int64, {0}}};
    t["Pad"].push_back({A::Any, {0, 2}});
    t["ScatterND"] = {{A::Any, {0, 2}}, {A::Int64, {1}}};
    t["GatherND"] = {{A::Int64, {1}}};
    t["ScatterElements"] = {{A::Any, {0, 2}}, {A::Index, {1}}};
    t["Gather"] = {{A::Index, {1}}};
    t["GatherElements"] = {{A::Index, {1}}};
    t["CumSum"].push_back({A::Index, {1}});
    t["Slice"] = {{A::Index, {1, 2, 3, 4}}};
    return t;
  }();
  return t;
}

}  // namespace

void check_input_dtypes(const Node& node, int opset) {
  if (!node.domain.empty()) return;
  const std::string& op = node.op_type;
  auto it = table().find(op);
  std::vector<Constraint> constraints = it == table().end() ? std::vector<Constraint>{} : it->second;
  // Versions where a constraint widens.
  if ((op == "ReduceMax" || op == "ReduceMin") && opset < 20) constraints.insert(constraints.begin(), {Allowed::Numeric, {0}});
  if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div") && opset < 14) constraints.push_back({Allowed::Wide, {}});
  if (op == "Relu") constraints.push_back({opset >= 14 ? Allowed::Signed : Allowed::Float, {}});
  if (op == "IsInf" && opset < 20 && node.input(0) &&
      (node.input(0)->dtype == DType::Float16 || node.input(0)->dtype == DType::BFloat16)) {
    throw BuildError("IsInf takes float16/bfloat16 from opset 20; cast to float32 first");
  }
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
  if (op == "Mod" && node.attrs.get_int("fmod", 0) == 0 && node.input(0) && is_float(node.input(0)->dtype)) {
    throw BuildError("float inputs need fmod=1 (fmod=0 is integer-only in ONNX)");
  }
}

}  // namespace pytensor_onnx
