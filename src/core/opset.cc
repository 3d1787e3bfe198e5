#include "opset.h"

#include <cstdint>
#include <unordered_map>

namespace pytensor_onnx {

int ir_version_for_opset(int opset) {
  // From the ONNX release table (onnx.helper.VERSION_TABLE).
  if (opset <= 8) return 3;
  if (opset == 9) return 4;
  if (opset == 10) return 5;
  if (opset == 11) return 6;
  if (opset <= 14) return 7;
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  if (opset <= 22) return 10;
  if (opset == 23) return 11;
  if (opset == 24) return 12;
  if (opset <= 27) return 13;
  return 14;
}

std::optional<int> op_since_version(const std::string& op_type) {
  // The version in which each op first appeared in the default domain
  // (onnx/defs, docs/Changelog.md).
  static const std::unordered_map<std::string, int> kSince = {
      {"Abs", 1}, {"Acos", 7}, {"Acosh", 9}, {"Add", 1}, {"And", 1}, {"ArgMax", 1}, {"ArgMin", 1},
      {"Asin", 7}, {"Asinh", 9}, {"Atan", 7}, {"Atanh", 9}, {"AveragePool", 1},
      {"BatchNormalization", 1}, {"Bernoulli", 15}, {"BitShift", 11}, {"BitwiseAnd", 18},
      {"BitwiseNot", 18}, {"BitwiseOr", 18}, {"BitwiseXor", 18}, {"Cast", 1}, {"CastLike", 15},
      {"Ceil", 1}, {"Celu", 12}, {"Clip", 1}, {"Col2Im", 18}, {"Compress", 9}, {"Concat", 1},
      {"ConcatFromSequence", 11}, {"Constant", 1}, {"ConstantOfShape", 9}, {"Conv", 1},
      {"ConvTranspose", 1}, {"Cos", 7}, {"Cosh", 9}, {"CumProd", 26}, {"CumSum", 11},
      {"DepthToSpace", 1}, {"Det", 11}, {"Div", 1}, {"Dropout", 1}, {"Einsum", 12}, {"Elu", 1},
      {"Equal", 1}, {"Erf", 9}, {"Exp", 1}, {"Expand", 8}, {"EyeLike", 9}, {"Flatten", 1},
      {"Floor", 1}, {"Gather", 1}, {"GatherElements", 11}, {"GatherND", 11}, {"Gelu", 20},
      {"Gemm", 1}, {"Greater", 1}, {"GreaterOrEqual", 12}, {"HardSigmoid", 1}, {"HardSwish", 14},
      {"Hardmax", 1}, {"Identity", 1}, {"If", 1}, {"IsInf", 10}, {"IsNaN", 9},
      {"LayerNormalization", 17}, {"LeakyRelu", 1}, {"Less", 1}, {"LessOrEqual", 12}, {"Log", 1},
      {"LogSoftmax", 1}, {"Loop", 1}, {"MatMul", 1}, {"Max", 1}, {"MaxPool", 1}, {"Mean", 1},
      {"Min", 1}, {"Mish", 18}, {"Mod", 10}, {"Mul", 1}, {"Multinomial", 7}, {"Neg", 1},
      {"NonZero", 9}, {"Not", 1}, {"OneHot", 9}, {"Optional", 15}, {"OptionalGetElement", 15},
      {"OptionalHasElement", 15}, {"Or", 1}, {"PRelu", 1}, {"Pad", 1}, {"Pow", 1},
      {"RandomNormal", 1}, {"RandomNormalLike", 1}, {"RandomUniform", 1}, {"RandomUniformLike", 1},
      {"Range", 11}, {"Reciprocal", 1}, {"ReduceL1", 1}, {"ReduceL2", 1}, {"ReduceLogSum", 1},
      {"ReduceLogSumExp", 1}, {"ReduceMax", 1}, {"ReduceMean", 1}, {"ReduceMin", 1},
      {"ReduceProd", 1}, {"ReduceSum", 1}, {"ReduceSumSquare", 1}, {"Relu", 1}, {"Reshape", 1},
      {"Resize", 10}, {"ReverseSequence", 10}, {"Round", 11}, {"ScatterElements", 11},
      {"ScatterND", 11}, {"Selu", 1}, {"SequenceAt", 11}, {"SequenceConstruct", 11},
      {"SequenceEmpty", 11}, {"SequenceErase", 11}, {"SequenceInsert", 11}, {"SequenceLength", 11},
      {"SequenceMap", 17}, {"Shape", 1}, {"Shrink", 9}, {"Sigmoid", 1}, {"Sign", 9}, {"Sin", 7},
      {"Sinh", 9}, {"Size", 1}, {"Slice", 1}, {"Softmax", 1}, {"Softplus", 1}, {"Softsign", 1},
      {"SpaceToDepth", 1}, {"Split", 1}, {"SplitToSequence", 11}, {"Sqrt", 1}, {"Squeeze", 1},
      {"Sub", 1}, {"Sum", 1}, {"Tan", 7}, {"Tanh", 1}, {"ThresholdedRelu", 10}, {"Tile", 1},
      {"TopK", 1}, {"Transpose", 1}, {"Trilu", 14}, {"Unique", 11}, {"Unsqueeze", 1}, {"Where", 9},
      {"Xor", 1},
  };
  auto it = kSince.find(op_type);
  if (it == kSince.end()) return std::nullopt;
  return it->second;
}

std::optional<Arity> op_input_arity(const std::string& op_type, int opset) {
  constexpr size_t kMany = SIZE_MAX;
  static const std::unordered_map<std::string, Arity> kArity = {
      // Unary element-wise and other one-input ops.
      {"Abs", {1, 1}}, {"Acos", {1, 1}}, {"Acosh", {1, 1}}, {"Asin", {1, 1}}, {"Asinh", {1, 1}},
      {"Atan", {1, 1}}, {"Atanh", {1, 1}}, {"Ceil", {1, 1}}, {"Cos", {1, 1}}, {"Cosh", {1, 1}},
      {"Erf", {1, 1}}, {"Exp", {1, 1}}, {"Floor", {1, 1}}, {"Identity", {1, 1}}, {"IsInf", {1, 1}},
      {"IsNaN", {1, 1}}, {"Log", {1, 1}}, {"Neg", {1, 1}}, {"Not", {1, 1}}, {"Reciprocal", {1, 1}},
      {"Relu", {1, 1}}, {"Round", {1, 1}}, {"Sigmoid", {1, 1}}, {"Sign", {1, 1}}, {"Sin", {1, 1}},
      {"Sinh", {1, 1}}, {"Softplus", {1, 1}}, {"Sqrt", {1, 1}}, {"Tan", {1, 1}}, {"Tanh", {1, 1}},
      {"BitwiseNot", {1, 1}}, {"Cast", {1, 1}}, {"Shape", {1, 1}}, {"Size", {1, 1}},
      {"Softmax", {1, 1}}, {"LogSoftmax", {1, 1}}, {"Transpose", {1, 1}}, {"Flatten", {1, 1}},
      {"NonZero", {1, 1}}, {"ArgMax", {1, 1}}, {"ArgMin", {1, 1}}, {"EyeLike", {1, 1}},
      {"ConstantOfShape", {1, 1}}, {"Det", {1, 1}}, {"Constant", {0, 0}},
      {"RandomNormal", {0, 0}}, {"RandomUniform", {0, 0}}, {"RandomNormalLike", {1, 1}},
      {"RandomUniformLike", {1, 1}}, {"Bernoulli", {1, 1}}, {"Multinomial", {1, 1}},
      // Binary.
      {"Add", {2, 2}}, {"Sub", {2, 2}}, {"Mul", {2, 2}}, {"Div", {2, 2}}, {"Mod", {2, 2}}, {"Pow", {2, 2}},
      {"Equal", {2, 2}}, {"Less", {2, 2}}, {"Greater", {2, 2}}, {"LessOrEqual", {2, 2}},
      {"GreaterOrEqual", {2, 2}}, {"And", {2, 2}}, {"Or", {2, 2}}, {"Xor", {2, 2}}, {"BitwiseAnd", {2, 2}},
      {"BitwiseOr", {2, 2}}, {"BitwiseXor", {2, 2}}, {"BitShift", {2, 2}}, {"MatMul", {2, 2}},
      {"CastLike", {2, 2}}, {"Reshape", {2, 2}}, {"Expand", {2, 2}}, {"Tile", {2, 2}}, {"Gather", {2, 2}},
      {"GatherElements", {2, 2}}, {"GatherND", {2, 2}}, {"Unsqueeze", {2, 2}}, {"TopK", {2, 2}},
      {"CumSum", {2, 2}},
      // Other fixed or ranged arities.
      {"Where", {3, 3}}, {"Range", {3, 3}}, {"ScatterND", {3, 3}}, {"ScatterElements", {3, 3}},
      {"Gemm", {2, 3}}, {"Clip", {1, 3}}, {"Squeeze", {1, 2}}, {"Split", {1, 2}}, {"Trilu", {1, 2}},
      {"Slice", {3, 5}}, {"Unique", {1, 1}}, {"If", {1, 1}}, {"Compress", {2, 2}}, {"Loop", {2, kMany}},
      // Variadic.
      {"Concat", {1, kMany}}, {"Max", {1, kMany}}, {"Min", {1, kMany}}, {"Sum", {1, kMany}},
      {"Mean", {1, kMany}}, {"Einsum", {1, kMany}},
  };
  if (op_type.rfind("Reduce", 0) == 0) {
    const bool axes_input = op_type == "ReduceSum" ? opset >= 13 : opset >= 18;
    return Arity{1, axes_input ? size_t{2} : size_t{1}};
  }
  if (op_type == "Pad") return Arity{2, opset >= 18 ? size_t{4} : size_t{3}};
  auto it = kArity.find(op_type);
  if (it == kArity.end()) return std::nullopt;
  return it->second;
}

}  // namespace pytensor_onnx
