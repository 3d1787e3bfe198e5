#include "ops.h"

#include <climits>
#include <stdexcept>
#include <unordered_map>

#include "errors.h"
#include "infer/rules.h"

namespace pytensor_onnx {
namespace {

using A = Allowed;
constexpr size_t kMany = SIZE_MAX;

// Every input has the one dtype of class `allowed`, or the inputs at `positions` have.
Constraint all(Allowed allowed) { return {allowed, {}}; }
Constraint at(Allowed allowed, std::vector<size_t> positions) { return {allowed, std::move(positions)}; }

// Reduce*'s axes became an input at opset 13 (ReduceSum) or 18 (the others).
std::optional<Arity> reduce_inputs(int opset) { return Arity{1, opset >= 18 ? size_t{2} : size_t{1}}; }
std::optional<Arity> reduce_sum_inputs(int opset) { return Arity{1, opset >= 13 ? size_t{2} : size_t{1}}; }
// Pad's axes input came at opset 18.
std::optional<Arity> pad_inputs(int opset) { return Arity{2, opset >= 18 ? size_t{4} : size_t{3}}; }

// ReduceMax/ReduceMin take bool from opset 20.
void reduce_max_min_types(const Node&, int opset, std::vector<Constraint>& constraints) {
  if (opset < 20) constraints.insert(constraints.begin(), at(A::Numeric, {0}));
}

// Add, Sub, Mul, Div take 8- and 16-bit integers from opset 14.
void arithmetic_types(const Node&, int opset, std::vector<Constraint>& constraints) {
  if (opset < 14) constraints.push_back(all(A::Wide));
}

// Relu takes signed integers from opset 14.
void relu_types(const Node&, int opset, std::vector<Constraint>& constraints) {
  constraints.push_back(all(opset >= 14 ? A::Signed : A::Float));
}

void is_inf_types(const Node& node, int opset, std::vector<Constraint>&) {
  if (opset < 20 && node.input(0) &&
      (node.input(0)->dtype == DType::Float16 || node.input(0)->dtype == DType::BFloat16)) {
    throw BuildError("IsInf takes float16/bfloat16 from opset 20; cast to float32 first");
  }
}

void mod_fmod(const Node& node) {
  if (node.attrs.get_int("fmod", 0) == 0 && node.input(0) && is_float(node.input(0)->dtype)) {
    throw BuildError("float inputs need fmod=1 (fmod=0 is integer-only in ONNX)");
  }
}

// Fills in one entry, one fact per call.
class Entry {
 public:
  explicit Entry(OpSchema& schema) : s_(schema) {}
  Entry& since(int opset) { s_.since = opset; return *this; }
  Entry& inputs(size_t n) { return inputs(n, n); }
  Entry& inputs(size_t min, size_t max) { s_.inputs = Arity{min, max}; return *this; }
  Entry& inputs_at(std::optional<Arity> (*arity)(int)) { s_.inputs_at = arity; return *this; }
  Entry& outputs(size_t n) { return outputs(n, n); }
  Entry& outputs(size_t min, size_t max) { s_.outputs = Arity{min, max}; return *this; }
  Entry& attributes(std::vector<std::string> names) { s_.attributes = std::move(names); return *this; }
  Entry& choice(std::string name, std::vector<std::string> values) {
    s_.choices.emplace_back(std::move(name), std::move(values));
    return *this;
  }
  Entry& types(std::vector<Constraint> constraints) { s_.input_types = std::move(constraints); return *this; }
  Entry& types_at(void (*adjust)(const Node&, int, std::vector<Constraint>&)) { s_.types_at = adjust; return *this; }
  Entry& validate(void (*check)(const Node&)) { s_.validate = check; return *this; }
  Entry& infer(void (*rule)(Node&)) { s_.infer = rule; return *this; }

 private:
  OpSchema& s_;
};

using Table = std::unordered_map<std::string, OpSchema>;

// Versions from onnx/defs and docs/Changelog.md; counts, attributes and
// type constraints from the op schemas (onnx/defs).
Table make_table() {
  Table t;
  auto op = [&t](const char* name) {
    auto [it, inserted] = t.emplace(name, OpSchema{});
    if (!inserted) throw std::logic_error(std::string("two entries for ") + name);
    return Entry(it->second);
  };
  // The Reduce* family shares its inputs (axes an attribute, then an input),
  // attributes and inference.
  auto reduction = [&op](const char* name) {
    return op(name).since(1).inputs_at(reduce_inputs).attributes({"axes", "keepdims", "noop_with_empty_axes"})
        .infer(infer::reduce);
  };
  op("Abs").since(1).inputs(1).attributes({}).types({all(A::Numeric)}).infer(infer::same_as_input);
  op("Acos").since(7).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Acosh").since(9).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Add").since(1).inputs(2).attributes({}).types({all(A::Numeric)}).types_at(arithmetic_types)
      .infer(infer::broadcast);
  op("And").since(1).inputs(2).attributes({}).types({all(A::Bool)}).infer(infer::comparison);
  op("ArgMax").since(1).inputs(1).attributes({"axis", "keepdims", "select_last_index"}).types({at(A::Numeric, {0})})
      .infer(infer::arg_reduce);
  op("ArgMin").since(1).inputs(1).attributes({"axis", "keepdims", "select_last_index"}).types({at(A::Numeric, {0})})
      .infer(infer::arg_reduce);
  op("Asin").since(7).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Asinh").since(9).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Atan").since(7).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Atanh").since(9).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("AveragePool").since(1);
  op("BatchNormalization").since(1).outputs(1, 3);
  op("Bernoulli").since(15).inputs(1).attributes({"dtype", "seed"}).infer(infer::random_like);
  op("BitShift").since(11).inputs(2).attributes({"direction"}).choice("direction", {"LEFT", "RIGHT"})
      .types({all(A::Unsigned)}).infer(infer::broadcast);
  op("BitwiseAnd").since(18).inputs(2).attributes({}).types({all(A::Integer)}).infer(infer::broadcast);
  op("BitwiseNot").since(18).inputs(1).attributes({}).types({all(A::Integer)}).infer(infer::same_as_input);
  op("BitwiseOr").since(18).inputs(2).attributes({}).types({all(A::Integer)}).infer(infer::broadcast);
  op("BitwiseXor").since(18).inputs(2).attributes({}).types({all(A::Integer)}).infer(infer::broadcast);
  op("Cast").since(1).inputs(1).attributes({"to", "saturate", "round_mode"}).infer(infer::cast);
  op("CastLike").since(15).inputs(2).attributes({"saturate", "round_mode"}).infer(infer::cast_like);
  op("Ceil").since(1).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Celu").since(12).attributes({"alpha"}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Clip").since(1).inputs(1, 3).attributes({}).types({all(A::Numeric)}).infer(infer::same_as_input);
  op("Col2Im").since(18);
  op("Compress").since(9).inputs(2).attributes({"axis"}).types({at(A::Bool, {1})}).infer(infer::compress);
  op("Concat").since(1).inputs(1, kMany).attributes({"axis"}).types({all(A::Any)}).infer(infer::concat);
  op("ConcatFromSequence").since(11);
  op("Constant").since(1).inputs(0)
      .attributes({"value", "value_float", "value_floats", "value_int", "value_ints", "value_string", "value_strings",
                   "sparse_value"})
      .infer(infer::constant);
  op("ConstantOfShape").since(9).inputs(1).attributes({"value"}).types({at(A::Int64, {0})})
      .infer(infer::constant_of_shape);
  op("Conv").since(1);
  op("ConvTranspose").since(1);
  op("Cos").since(7).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Cosh").since(9).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("CumProd").since(26).infer(infer::same_as_input);
  op("CumSum").since(11).inputs(2).attributes({"exclusive", "reverse"}).types({at(A::Wide, {0}), at(A::Index, {1})})
      .infer(infer::same_as_input);
  op("DepthToSpace").since(1);
  op("Det").since(11).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::det);
  op("Div").since(1).inputs(2).attributes({}).types({all(A::Numeric)}).types_at(arithmetic_types)
      .infer(infer::broadcast);
  op("Dropout").since(1).outputs(1, 2);
  op("DynamicQuantizeLinear").outputs(3);
  op("Einsum").since(12).inputs(1, kMany).attributes({"equation"}).types({all(A::Numeric)}).infer(infer::einsum);
  op("Elu").since(1).attributes({"alpha"}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Equal").since(1).inputs(2).attributes({}).types({all(A::NumericOrBool)}).infer(infer::comparison);
  op("Erf").since(9).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Exp").since(1).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Expand").since(8).inputs(2).attributes({}).types({at(A::Int64, {1})}).infer(infer::expand);
  op("EyeLike").since(9).inputs(1).attributes({"dtype", "k"}).infer(infer::eye_like);
  op("Flatten").since(1).inputs(1).attributes({"axis"}).infer(infer::flatten);
  op("Floor").since(1).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Gather").since(1).inputs(2).attributes({"axis"}).types({at(A::Index, {1})}).infer(infer::gather);
  op("GatherElements").since(11).inputs(2).attributes({"axis"}).types({at(A::Index, {1})})
      .infer(infer::gather_elements);
  op("GatherND").since(11).inputs(2).attributes({"batch_dims"}).types({at(A::Int64, {1})}).infer(infer::gather_nd);
  op("Gelu").since(20).attributes({"approximate"}).choice("approximate", {"none", "tanh"}).types({all(A::Float)})
      .infer(infer::same_as_input);
  op("Gemm").since(1).inputs(2, 3).attributes({"alpha", "beta", "transA", "transB"}).types({at(A::Wide, {0, 1, 2})})
      .infer(infer::gemm);
  op("Greater").since(1).inputs(2).attributes({}).types({all(A::Numeric)}).infer(infer::comparison);
  op("GreaterOrEqual").since(12).inputs(2).attributes({}).types({all(A::Numeric)}).infer(infer::comparison);
  op("GRU").outputs(0, 2);
  op("Hardmax").since(1).attributes({"axis"}).types({all(A::Float)}).infer(infer::same_as_input);
  op("HardSigmoid").since(1).attributes({"alpha", "beta"}).types({all(A::Float)}).infer(infer::same_as_input);
  op("HardSwish").since(14).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Identity").since(1).inputs(1).attributes({}).infer(infer::same_as_input);
  op("If").since(1).inputs(1).outputs(1, kMany).attributes({"then_branch", "else_branch"}).infer(infer::if_);
  op("IsInf").since(10).inputs(1).attributes({"detect_negative", "detect_positive"}).types({all(A::Float)})
      .types_at(is_inf_types).infer(infer::predicate);
  op("IsNaN").since(9).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::predicate);
  op("LayerNormalization").since(17).outputs(1, 3);
  op("LeakyRelu").since(1).attributes({"alpha"}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Less").since(1).inputs(2).attributes({}).types({all(A::Numeric)}).infer(infer::comparison);
  op("LessOrEqual").since(12).inputs(2).attributes({}).types({all(A::Numeric)}).infer(infer::comparison);
  op("Log").since(1).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("LogSoftmax").since(1).inputs(1).attributes({"axis"}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Loop").since(1).inputs(2, kMany).outputs(1, kMany).attributes({"body"}).infer(infer::loop);
  op("LSTM").outputs(0, 3);
  op("MatMul").since(1).inputs(2).attributes({}).types({all(A::Wide)}).infer(infer::matmul);
  op("Max").since(1).inputs(1, kMany).attributes({}).types({all(A::Numeric)}).infer(infer::broadcast);
  op("MaxPool").since(1).outputs(1, 2);
  op("Mean").since(1).inputs(1, kMany).attributes({}).types({all(A::Float)}).infer(infer::broadcast);
  op("Min").since(1).inputs(1, kMany).attributes({}).types({all(A::Numeric)}).infer(infer::broadcast);
  op("Mish").since(18).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Mod").since(10).inputs(2).attributes({"fmod"}).types({all(A::Numeric)}).validate(mod_fmod)
      .infer(infer::broadcast);
  op("Mul").since(1).inputs(2).attributes({}).types({all(A::Numeric)}).types_at(arithmetic_types)
      .infer(infer::broadcast);
  op("Multinomial").since(7).inputs(1).attributes({"dtype", "sample_size", "seed"});
  op("Neg").since(1).inputs(1).attributes({}).types({all(A::Signed)}).infer(infer::same_as_input);
  op("NonZero").since(9).inputs(1).attributes({}).infer(infer::nonzero);
  op("Not").since(1).inputs(1).attributes({}).types({all(A::Bool)}).infer(infer::predicate);
  op("OneHot").since(9).attributes({"axis"});
  op("Optional").since(15);
  op("OptionalGetElement").since(15);
  op("OptionalHasElement").since(15);
  op("Or").since(1).inputs(2).attributes({}).types({all(A::Bool)}).infer(infer::comparison);
  op("Pad").since(1).inputs_at(pad_inputs).attributes({"mode", "pads", "value"})
      .choice("mode", {"constant", "reflect", "edge", "wrap"}).types({at(A::Int64, {1}), at(A::Any, {0, 2})})
      .infer(infer::pad);
  op("Pow").since(1).inputs(2).attributes({}).types({at(A::PowBase, {0}), at(A::Numeric, {1})}).infer(infer::broadcast);
  op("PRelu").since(1).infer(infer::broadcast);
  op("RandomNormal").since(1).inputs(0).attributes({"dtype", "mean", "scale", "seed", "shape"}).infer(infer::random);
  op("RandomNormalLike").since(1).inputs(1).attributes({"dtype", "mean", "scale", "seed"}).infer(infer::random_like);
  op("RandomUniform").since(1).inputs(0).attributes({"dtype", "high", "low", "seed", "shape"}).infer(infer::random);
  op("RandomUniformLike").since(1).inputs(1).attributes({"dtype", "high", "low", "seed"}).infer(infer::random_like);
  op("Range").since(11).inputs(3).attributes({}).types({all(A::Numeric)}).infer(infer::range);
  op("Reciprocal").since(1).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  reduction("ReduceL1").types({at(A::Wide, {0}), at(A::Int64, {1})});
  reduction("ReduceL2").types({at(A::Wide, {0}), at(A::Int64, {1})});
  reduction("ReduceLogSum").types({at(A::Wide, {0}), at(A::Int64, {1})});
  reduction("ReduceLogSumExp").types({at(A::Wide, {0}), at(A::Int64, {1})});
  reduction("ReduceMax").types({at(A::Int64, {1})}).types_at(reduce_max_min_types);
  reduction("ReduceMean").types({at(A::Wide, {0}), at(A::Int64, {1})});
  reduction("ReduceMin").types({at(A::Int64, {1})}).types_at(reduce_max_min_types);
  reduction("ReduceProd").types({at(A::Wide, {0}), at(A::Int64, {1})});
  reduction("ReduceSum").inputs_at(reduce_sum_inputs).types({at(A::Wide, {0}), at(A::Int64, {1})});
  reduction("ReduceSumSquare").types({at(A::Wide, {0}), at(A::Int64, {1})});
  op("Relu").since(1).inputs(1).attributes({}).types_at(relu_types).infer(infer::same_as_input);
  op("Reshape").since(1).inputs(2).attributes({"allowzero"}).types({at(A::Int64, {1})}).infer(infer::reshape);
  op("Resize").since(10);
  op("ReverseSequence").since(10);
  op("RNN").outputs(0, 2);
  op("Round").since(11).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Scan").outputs(1, kMany);
  op("ScatterElements").since(11).inputs(3).attributes({"axis", "reduction"})
      .choice("reduction", {"none", "add", "mul", "max", "min"}).types({at(A::Any, {0, 2}), at(A::Index, {1})})
      .infer(infer::scatter);
  op("ScatterND").since(11).inputs(3).attributes({"reduction"})
      .choice("reduction", {"none", "add", "mul", "max", "min"}).types({at(A::Any, {0, 2}), at(A::Int64, {1})})
      .infer(infer::scatter);
  op("Selu").since(1).attributes({"alpha", "gamma"}).types({all(A::Float)}).infer(infer::same_as_input);
  op("SequenceAt").since(11);
  op("SequenceConstruct").since(11);
  op("SequenceEmpty").since(11);
  op("SequenceErase").since(11);
  op("SequenceInsert").since(11);
  op("SequenceLength").since(11);
  op("SequenceMap").since(17);
  op("Shape").since(1).inputs(1).attributes({"start", "end"}).infer(infer::shape);
  op("Shrink").since(9);
  op("Sigmoid").since(1).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Sign").since(9).inputs(1).attributes({}).types({all(A::Numeric)}).infer(infer::same_as_input);
  op("Sin").since(7).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Sinh").since(9).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Size").since(1).inputs(1).attributes({}).infer(infer::size);
  op("Slice").since(1).inputs(3, 5).attributes({}).types({at(A::Index, {1, 2, 3, 4})}).infer(infer::slice);
  op("Softmax").since(1).inputs(1).attributes({"axis"}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Softplus").since(1).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Softsign").since(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("SpaceToDepth").since(1);
  op("Split").since(1).inputs(1, 2).outputs(1, kMany).attributes({"axis", "split", "num_outputs"})
      .types({at(A::Int64, {1})}).infer(infer::split);
  op("SplitToSequence").since(11).outputs(1);
  op("Sqrt").since(1).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Squeeze").since(1).inputs(1, 2).attributes({"axes"}).types({at(A::Int64, {1})}).infer(infer::squeeze);
  op("Sub").since(1).inputs(2).attributes({}).types({all(A::Numeric)}).types_at(arithmetic_types)
      .infer(infer::broadcast);
  op("Sum").since(1).inputs(1, kMany).attributes({}).types({all(A::Float)}).infer(infer::broadcast);
  op("Tan").since(7).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Tanh").since(1).inputs(1).attributes({}).types({all(A::Float)}).infer(infer::same_as_input);
  op("ThresholdedRelu").since(10).attributes({"alpha"}).types({all(A::Float)}).infer(infer::same_as_input);
  op("Tile").since(1).inputs(2).attributes({}).types({at(A::Int64, {1})}).infer(infer::tile);
  op("TopK").since(1).inputs(2).outputs(2).attributes({"axis", "largest", "sorted"})
      .types({at(A::Numeric, {0}), at(A::Int64, {1})}).infer(infer::topk);
  op("Transpose").since(1).inputs(1).attributes({"perm"}).infer(infer::transpose);
  op("Trilu").since(14).inputs(1, 2).attributes({"upper"}).types({at(A::Int64, {1})}).infer(infer::trilu);
  op("Unique").since(11).inputs(1).outputs(1, 4).attributes({"axis", "sorted"}).infer(infer::unique);
  op("Unsqueeze").since(1).inputs(2).attributes({"axes"}).types({at(A::Int64, {1})}).infer(infer::unsqueeze);
  op("Where").since(9).inputs(3).attributes({}).types({at(A::Bool, {0}), at(A::Any, {1, 2})}).infer(infer::where);
  op("Xor").since(1).inputs(2).attributes({}).types({all(A::Bool)}).infer(infer::comparison);
  return t;
}

const Table& table() {
  static const Table t = make_table();
  return t;
}

}  // namespace

const OpSchema* find_op_schema(const std::string& op_type) {
  auto it = table().find(op_type);
  return it == table().end() ? nullptr : &it->second;
}

std::optional<int> op_since_version(const std::string& op_type) {
  const OpSchema* schema = find_op_schema(op_type);
  return schema ? schema->since : std::nullopt;
}

std::optional<Arity> op_input_arity(const std::string& op_type, int opset) {
  const OpSchema* schema = find_op_schema(op_type);
  if (!schema) return std::nullopt;
  return schema->inputs_at ? schema->inputs_at(opset) : schema->inputs;
}

}  // namespace pytensor_onnx
