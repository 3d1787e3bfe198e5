#include "kernels.h"

#include <algorithm>
#include <climits>
#include <unordered_map>

#include "builder.h"
#include "errors.h"

namespace pytensor_onnx {
namespace {

// How results may be computed on another dtype without changing them.
enum class Fidelity {
  kValue,    // only dtypes that hold every value exactly (widening)
  kBits,     // also same-width integer reinterpretation: the op is modular
             // (add, mul, ...) or only moves data, so low bits are enough
  kOrdered,  // widening, and uint64 through an order-preserving map to int64
  kTruth,    // only zero / non-zero matters: cast to bool
};

struct KernelEntry {
  std::vector<std::pair<int, std::vector<DType>>> types_since;  // (first opset, dtypes), ascending
  std::vector<size_t> typed_inputs;   // empty: every input
  std::vector<size_t> typed_outputs;  // which outputs have the input dtype; empty: every output
  Fidelity fidelity;
  bool outputs_typed = true;          // false: no output carries the input dtype
};

using D = DType;
const std::vector<DType> kFloats = {D::Float16, D::Float32, D::Float64};

std::vector<DType> floats_and(std::initializer_list<DType> more) {
  std::vector<DType> types = kFloats;
  types.insert(types.end(), more);
  return types;
}

const std::vector<DType> kAllNumeric = {D::Float16, D::Float32, D::Float64, D::Int8,   D::Int16,  D::Int32,
                                        D::Int64,   D::UInt8,   D::UInt16,  D::UInt32, D::UInt64};

// Facts from running ONNX Runtime's CPU provider on every dtype
// (tools/probe_ort_kernels.py). Exported models must load on every runtime
// in the supported range, so the table lists what the oldest supported
// runtime (1.21) has; newer ones gained kernels (int8/uint8 Max/Min, int8/
// int16/uint8 TopK, int32 Trilu, int8/uint32 Where, uint16 BitShift), which
// only cost a cast here (bench/kernel_table_cost.py).
// tests/python/test_kernel_table.py re-checks the table against the
// installed runtime: exact on the oldest, a subset on newer ones.
const std::unordered_map<std::string, KernelEntry>& kernel_table() {
  static const std::unordered_map<std::string, KernelEntry> table = [] {
    std::unordered_map<std::string, KernelEntry> t;
    const auto arith13 = floats_and({D::Int32, D::Int64, D::UInt32, D::UInt64});
    for (const char* op : {"Add", "Sub", "Mul"}) t[op] = {{{13, arith13}, {14, kAllNumeric}}, {}, {}, Fidelity::kBits};
    t["Div"] = {{{13, arith13}, {14, kAllNumeric}}, {}, {}, Fidelity::kValue};
    t["Neg"] = {{{13, floats_and({D::Int8, D::Int16, D::Int32, D::Int64})}}, {}, {}, Fidelity::kBits};
    const auto minmax = floats_and({D::Int32, D::Int64, D::UInt32, D::UInt64});
    t["Max"] = {{{13, minmax}}, {}, {}, Fidelity::kOrdered};
    t["Min"] = {{{13, minmax}}, {}, {}, Fidelity::kOrdered};
    t["Clip"] = {{{13, floats_and({D::Int8, D::Int32, D::Int64, D::UInt8, D::UInt32, D::UInt64})}}, {}, {0},
                 Fidelity::kOrdered};
    t["Pow"] = {{{13, floats_and({D::Int32, D::Int64})}}, {0}, {0}, Fidelity::kBits};
    t["Where"] = {{{13, floats_and({D::Int32, D::Int64, D::UInt8})}}, {1, 2}, {0}, Fidelity::kBits};
    const auto reduce = floats_and({D::Int32, D::Int64});
    for (const char* op : {"ReduceSum", "ReduceProd", "ReduceSumSquare"}) t[op] = {{{13, reduce}}, {0}, {0}, Fidelity::kBits};
    for (const char* op : {"ReduceMean", "ReduceLogSumExp", "ReduceL1", "ReduceL2", "ReduceLogSum"}) {
      t[op] = {{{13, reduce}}, {0}, {0}, Fidelity::kValue};
    }
    // No bool ReduceMax/ReduceMin although opset 20 allows it: ONNX Runtime's
    // bool kernel (1.21 to 1.32 at least) fails on an empty set ("not defined
    // for empty set with bool type") where all()/any() give True/False; the
    // uint8 kernel gives 255/0 (found by the fresh-seed fuzzer).
    const auto reduce_order = floats_and({D::Int8, D::Int32, D::Int64, D::UInt8});
    for (const char* op : {"ReduceMax", "ReduceMin"}) {
      t[op] = {{{13, reduce_order}}, {0}, {0}, Fidelity::kOrdered};
    }
    for (const char* op : {"ArgMax", "ArgMin"}) {
      t[op] = {{{13, reduce_order}}, {0}, {}, Fidelity::kOrdered, false};
    }
    // MatMul has uint32/uint64 kernels, but they fail on an empty inner dim;
    // the signed kernels give the same bits.
    t["MatMul"] = {{{13, reduce}}, {}, {}, Fidelity::kBits};
    t["Gemm"] = {{{13, kFloats}}, {0, 1, 2}, {}, Fidelity::kValue};
    t["Einsum"] = {{{13, reduce}}, {}, {}, Fidelity::kBits};
    t["CumSum"] = {{{13, {D::Float32, D::Float64, D::Int32, D::Int64}}, {14, reduce}}, {0}, {0}, Fidelity::kBits};
    t["Trilu"] = {{{14, floats_and({D::Int64, D::Bool})}}, {0}, {0}, Fidelity::kBits};
    t["Range"] = {{{13, {D::Float32, D::Float64, D::Int16, D::Int32, D::Int64}}}, {}, {}, Fidelity::kValue};
    t["Unique"] = {{{13, floats_and({D::Int8, D::Int64})}}, {0}, {0}, Fidelity::kOrdered};
    t["NonZero"] = {{{13, {D::Float16, D::Float32, D::Int32, D::Int64, D::UInt8, D::Bool}}}, {0}, {}, Fidelity::kTruth, false};
    t["TopK"] = {{{13, floats_and({D::Int32, D::Int64})}}, {0}, {0}, Fidelity::kOrdered};
    t["Pad"] = {{{13, floats_and({D::Int8, D::Int32, D::Int64, D::UInt8, D::UInt32, D::UInt64, D::Bool})}}, {0, 2}, {0}, Fidelity::kBits};
    t["BitShift"] = {{{13, {D::UInt8, D::UInt32, D::UInt64}}}, {}, {}, Fidelity::kBits};
    t["Sum"] = {{{13, kFloats}}, {}, {}, Fidelity::kValue};
    t["Mean"] = {{{13, {D::Float16, D::Float32}}}, {}, {}, Fidelity::kValue};
    // Float-only math with no float64 kernel: no exact way around, so these
    // raise for float64 instead of computing in float32.
    for (const char* op : {"Erf", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Softsign", "Det"}) {
      t[op] = {{{13, {D::Float16, D::Float32}}}, {}, {}, Fidelity::kValue};
    }
    t["Softplus"] = {{{13, {D::Float16, D::Float32}}}, {}, {}, Fidelity::kValue};
    return t;
  }();
  return table;
}

// Exactly representing wider dtypes, nearest first.
std::vector<DType> widenings(DType d) {
  switch (d) {
    case D::Bool: return {D::UInt8, D::Int8, D::Int16, D::Int32, D::Int64};
    case D::Int8: return {D::Int16, D::Int32, D::Int64};
    case D::UInt8: return {D::Int16, D::UInt16, D::Int32, D::UInt32, D::Int64, D::UInt64};
    case D::Int16: return {D::Int32, D::Int64};
    case D::UInt16: return {D::Int32, D::UInt32, D::Int64, D::UInt64};
    case D::Int32: return {D::Int64};
    case D::UInt32: return {D::Int64, D::UInt64};
    case D::Float16: return {D::Float32, D::Float64};
    case D::BFloat16: return {D::Float32, D::Float64};
    case D::Float32: return {D::Float64};
    default: return {};
  }
}

// Same-width reinterpretations, for ops whose low bits do not depend on the high bits.
std::vector<DType> reinterpretations(DType d) {
  switch (d) {
    case D::Int8: return {D::UInt8};
    case D::UInt8: return {D::Int8};
    case D::Int16: return {D::UInt16};
    case D::UInt16: return {D::Int16};
    case D::Int32: return {D::UInt32};
    case D::UInt32: return {D::Int32};
    case D::Int64: return {D::UInt64};
    case D::UInt64: return {D::Int64};
    default: return {};
  }
}

bool contains(const std::vector<DType>& types, DType d) {
  return std::find(types.begin(), types.end(), d) != types.end();
}

const std::vector<DType>* types_at(const KernelEntry& entry, int opset) {
  const std::vector<DType>* found = nullptr;
  for (const auto& [since, types] : entry.types_since) {
    if (since <= opset) found = &types;
  }
  return found;
}

bool has_index(const std::vector<size_t>& indices, size_t i) {
  return indices.empty() || std::find(indices.begin(), indices.end(), i) != indices.end();
}

// uint64 -> int64 preserving order: reinterpret, then flip the sign bit by
// adding INT64_MIN (ONNX integer Add wraps). The same map inverts it.
Value* flip_sign_bit(GraphBuilder& g, Value* v) {
  return g.emit("Add", {v, g.constant(Tensor::from_values(DType::Int64, std::vector<int64_t>{INT64_MIN}, {}), "sign_bit")},
                {}, 1)[0];
}

std::string no_kernel_message(const std::string& op_type, DType d) {
  return "ONNX Runtime has no CPU kernel for " + op_type + " on " + dtype_name(d) +
         ", and no cast to another dtype gives the same results";
}

// ONNX Runtime 1.31's vectorised int64 Max/Min (elementwise, Clip and
// ReduceMax/ReduceMin) compare the 32-bit halves separately: max(2^32-2, 1, 0, 0)
// gives 1. Comparisons, Where, ArgMax/ArgMin and GatherElements are right.
bool has_wrong_int64_kernel(const std::string& op_type) {
  return op_type == "Max" || op_type == "Min" || op_type == "Clip" || op_type == "ReduceMax" ||
         op_type == "ReduceMin";
}

Value* pick(GraphBuilder& g, const char* compare, Value* a, Value* b) {
  // a if (a compare b) else b
  return g.op1("Where", {g.op1(compare, {a, b}), a, b});
}

std::vector<Value*> int64_minmax_recipe(GraphBuilder& g, const std::string& op_type, const std::vector<Value*>& inputs,
                                        const Attributes& attrs) {
  if (op_type == "Max" || op_type == "Min") {
    const char* compare = op_type == "Max" ? "Greater" : "Less";
    Value* result = inputs[0];
    for (size_t i = 1; i < inputs.size(); ++i) result = pick(g, compare, result, inputs[i]);
    return {result};
  }
  if (op_type == "Clip") {
    // Clip = min(max(x, lo), hi); with lo > hi the result is hi, as ONNX specifies.
    Value* result = inputs[0];
    if (inputs.size() > 1 && inputs[1]) result = pick(g, "Greater", result, inputs[1]);
    if (inputs.size() > 2 && inputs[2]) result = pick(g, "Less", result, inputs[2]);
    return {result};
  }
  // ReduceMax/ReduceMin: gather the extreme at ArgMax/ArgMin, one axis at a time.
  Value* x = inputs[0];
  const size_t rank = x->shape ? x->shape->size() : 0;
  std::vector<int64_t> axes;
  if (auto from_attr = attrs.get_ints("axes")) axes = *from_attr;
  else if (inputs.size() > 1 && inputs[1]) {
    if (!inputs[1]->constant) throw UnsupportedError(op_type + " on int64 with run-time axes is not supported");
    axes = inputs[1]->constant->to_int64s();
  }
  if (!x->shape) throw UnsupportedError(op_type + " on int64 needs an input of known rank");
  if (axes.empty()) {
    if (attrs.get_int("noop_with_empty_axes", 0)) return {x};
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  for (auto& a : axes) a = a < 0 ? a + static_cast<int64_t>(rank) : a;
  const char* arg_op = op_type == "ReduceMax" ? "ArgMax" : "ArgMin";
  for (int64_t axis : axes) {
    Value* index = g.op1(arg_op, {x}, {{"axis", axis}, {"keepdims", int64_t{1}}});
    x = g.op1("GatherElements", {x, index}, {{"axis", axis}});
  }
  if (attrs.get_int("keepdims", 1) == 0) x = g.op1("Squeeze", {x}, {{"axes", axes}});
  return {x};
}

// The value `v` is the last-two-axes transpose of, if it is one (seen
// through Identity nodes, which ONNX Runtime removes before fusing).
Value* untransposed(Value* v) {
  while (v->producer && v->producer->op_type == "Identity" && v->producer->domain.empty()) v = v->producer->inputs[0];
  const Node* node = v->producer;
  if (!node || node->op_type != "Transpose" || !node->domain.empty() || !v->shape) return nullptr;
  const auto perm = node->attrs.get_ints("perm");
  const size_t rank = v->shape->size();
  if (!perm || perm->size() != rank || rank < 2) return nullptr;
  for (size_t i = 0; i < rank; ++i) {
    const size_t want = i + 2 < rank ? i : (i == rank - 2 ? rank - 1 : rank - 2);
    if ((*perm)[i] != static_cast<int64_t>(want)) return nullptr;
  }
  return node->inputs[0];
}

// The value `v` may reach a MatMul as a Transpose once ONNX Runtime has
// rewritten the graph: it is a Transpose of a non-constant value, or the
// output of a model-local function (inlined at load; its body may end in
// one), seen through Squeeze, Unsqueeze and Cast. The transpose optimizer
// moves a Transpose below a Squeeze or Unsqueeze, and the MatMul transpose
// fusion looks through a Cast. (Small graphs rarely show it; PyMC's MvNormal
// gradient and the SVD gradients in the tests do, on ONNX Runtime 1.21.)
bool may_read_transpose(Value* v) {
  for (const Node* node = v->producer; node; node = v->producer) {
    if (!node->domain.empty()) return true;
    if (node->op_type == "Transpose") return !node->inputs[0]->constant;
    if (node->op_type != "Identity" && node->op_type != "Squeeze" && node->op_type != "Unsqueeze" &&
        node->op_type != "Cast")
      return false;
    v = node->inputs[0];
  }
  return false;
}

// ONNX Runtime before 1.26 fuses a Transpose that feeds a MatMul into its
// com.microsoft FusedMatMul, which has no float64 kernel: the session fails
// to load (onnxruntime issues #10151, #28136). A float64 product of a
// transposed operand reads the untransposed value instead: Gemm with
// transA/transB for matrices, Einsum otherwise. An operand that may become a
// Transpose next to the MatMul is read as it is, by the same Gemm (whose own
// transpose fusion keeps a float64 kernel) or Einsum.
std::optional<std::vector<Value*>> float64_matmul_of_transposed(GraphBuilder& g, const std::vector<Value*>& inputs) {
  if (inputs.size() != 2 || !inputs[0] || !inputs[1] || inputs[0]->dtype != DType::Float64) return std::nullopt;
  Value* a = inputs[0];
  Value* b = inputs[1];
  // ONNX Runtime folds the transpose of a constant before fusing: leave those.
  auto transposed_from = [](Value* v) -> Value* {
    Value* source = untransposed(v);
    return source && !source->constant ? source : nullptr;
  };
  Value* a_source = transposed_from(a);
  Value* b_source = transposed_from(b);
  if (!a_source && !b_source && !may_read_transpose(a) && !may_read_transpose(b)) return std::nullopt;
  if (!a->shape || !b->shape) return std::nullopt;
  const size_t rank_a = a->shape->size(), rank_b = b->shape->size();
  if (rank_a == 2 && rank_b == 2) {
    return g.emit("Gemm", {a_source ? a_source : a, b_source ? b_source : b},
                  {{"transA", int64_t{a_source ? 1 : 0}}, {"transB", int64_t{b_source ? 1 : 0}}}, 1);
  }
  // a: i by j (..., batched), b: j by k.
  std::string lhs = rank_a == 1 ? "j" : (a_source ? "...ji" : "...ij");
  std::string rhs = rank_b == 1 ? "j" : (b_source ? "...kj" : "...jk");
  std::string out = (rank_a > 1 || rank_b > 1 ? std::string("...") : std::string()) + (rank_a > 1 ? "i" : "") +
                    (rank_b > 1 ? "k" : "");
  Value* lhs_value = a_source ? a_source : a;
  Value* rhs_value = b_source ? b_source : b;
  const Attributes einsum{{"equation", lhs + "," + rhs + "->" + out}};
  auto nonempty = [](const Value* v) {
    if (!v->shape) return false;
    for (const auto& d : *v->shape)
      if (!d.is_known() || d.size == 0) return false;
    return true;
  };
  if ((nonempty(lhs_value) && nonempty(rhs_value)) || rank_a < 2 || rank_b < 2) {
    return g.emit("Einsum", {lhs_value, rhs_value}, einsum, 1);
  }
  // ONNX Runtime before 1.26 also crashes (SIGSEGV) in Einsum on operands
  // with an empty dim. With an empty operand the product is computed as a
  // broadcast multiply and a sum over j, which is cheap exactly then: the
  // (..., i, j, k) product is empty, or j is empty and the sum gives zeros.
  auto is_empty = [&g](Value* v) {
    Value* size = g.emit("Size", {v}, {}, 1)[0];
    return g.emit("Equal", {size, g.constant(Tensor::int64_scalar(0), "zero")}, {}, 1)[0];
  };
  Value* empty = g.emit("Or", {is_empty(lhs_value), is_empty(rhs_value)}, {}, 1)[0];
  // The branch reads the transposed values themselves (no MatMul reads them: nothing to fuse).
  GraphBuilder by_sum(g, "empty_product");
  {
    Value* products = by_sum.op1("Mul", {by_sum.op1("Unsqueeze", {a}, {{"axes", std::vector<int64_t>{-1}}}),
                                         by_sum.op1("Unsqueeze", {b}, {{"axes", std::vector<int64_t>{-3}}})});
    // A non-negative axis: ONNX Runtime 1.21 leaves empty inputs unreduced for axis -2.
    const auto j_axis = static_cast<int64_t>(std::max(rank_a, rank_b)) - 1;
    by_sum.output(by_sum.op1("ReduceSum", {products}, {{"axes", std::vector<int64_t>{j_axis}}, {"keepdims", int64_t{0}}}),
                  "product");
  }
  GraphBuilder by_einsum(g, "nonempty_product");
  by_einsum.output(by_einsum.emit("Einsum", {lhs_value, rhs_value}, einsum, 1)[0], "product");
  return g.emit("If", {empty}, {{"then_branch", by_sum.shared_graph()}, {"else_branch", by_einsum.shared_graph()}}, 1);
}

// ONNX Runtime before 1.26 (seen on 1.21) leaves every batch entry after the
// first uninitialised when its float32 FusedMatMul contracts over an empty
// dim: a batched float32 product of a transposed operand returns arena
// garbage instead of zeros. Unless the contracted size is known to be
// positive, such a product is replaced by zeros when that size is 0.
std::vector<Value*> zero_if_empty_contraction(GraphBuilder& g, Value* a, Value* b, std::vector<Value*> product) {
  const bool fusable = a->dtype == DType::Float32 && (may_read_transpose(a) || may_read_transpose(b));
  const bool batched = a->shape && b->shape && std::max(a->shape->size(), b->shape->size()) > 2;
  if (!fusable || !batched || a->shape->empty()) return product;
  const auto& contracted = a->shape->back();
  if (contracted.is_known() && contracted.size > 0) return product;
  Value* size = g.op1("Gather", {g.op1("Shape", {a}), g.constant(Tensor::int64_scalar(-1), "last")}, {{"axis", int64_t{0}}});
  Value* empty = g.op1("Equal", {size, g.constant(Tensor::int64_scalar(0), "zero")});
  return {g.op1("Where", {empty, g.constant(Tensor::scalar(DType::Float32, 0.0), "zero"), product[0]})};
}

}  // namespace

std::vector<Value*> emit_on_kernel(GraphBuilder& g, const std::string& op_type, const std::vector<Value*>& inputs,
                                   const Attributes& attrs, size_t n_outputs) {
  if (has_wrong_int64_kernel(op_type) && !inputs.empty() && inputs[0] && inputs[0]->dtype == DType::Int64) {
    return int64_minmax_recipe(g, op_type, inputs, attrs);
  }
  if (op_type == "MatMul") {
    if (auto product = float64_matmul_of_transposed(g, inputs)) return *product;
    if (inputs.size() == 2 && inputs[0] && inputs[1])
      return zero_if_empty_contraction(g, inputs[0], inputs[1], g.emit(op_type, inputs, attrs, n_outputs));
  }
  return g.emit(op_type, inputs, attrs, n_outputs);
}

std::optional<std::vector<DType>> ort_kernel_dtypes(const std::string& op_type, int opset) {
  auto it = kernel_table().find(op_type);
  if (it == kernel_table().end()) return std::nullopt;
  const std::vector<DType>* types = types_at(it->second, opset);
  if (!types) return std::nullopt;
  return *types;
}

namespace {

// ONNX Runtime's ScatterND and ScatterElements kernels (1.21 to 1.32) refuse
// float16 with reduction add/mul, ScatterND float16 with max/min, and bool
// with max/min ("... data type is not supported with ScatterND opset 18 when
// reduction is 'max'"); reduction none takes every dtype. Float16 is computed
// in float32 (one rounding back, as float16 arithmetic rounds), bool max/min
// in uint8 (0/1, whose max/min is or/and). Found by the core fuzzer,
// FUZZ_SEED=1094003243 and 1094003280.
std::optional<KernelEntry> scatter_reduction_entry(const std::string& op_type, const Attributes& attrs) {
  if (op_type != "ScatterND" && op_type != "ScatterElements") return std::nullopt;
  const std::string reduction = attrs.get_string("reduction").value_or("none");
  if (reduction == "none") return std::nullopt;
  const bool ordering = reduction == "max" || reduction == "min";
  std::vector<DType> types = kAllNumeric;
  if (!ordering) types.push_back(D::Bool);
  if (!ordering || op_type == "ScatterND") types.erase(std::find(types.begin(), types.end(), D::Float16));
  return KernelEntry{{{16, types}}, {0, 2}, {0}, ordering ? Fidelity::kOrdered : Fidelity::kValue};
}

// The kernel dtypes of `op_type` with these attributes, if ONNX Runtime lacks some.
std::optional<KernelEntry> kernel_entry(const std::string& op_type, const Attributes& attrs) {
  if (auto scatter = scatter_reduction_entry(op_type, attrs)) return scatter;
  auto it = kernel_table().find(op_type);
  if (it == kernel_table().end()) return std::nullopt;
  return it->second;
}

std::optional<std::vector<Value*>> adapt_input_dtypes(GraphBuilder& g, const std::string& op_type,
                                                      const std::vector<Value*>& inputs,
                                                      const Attributes& attrs, size_t n_outputs) {
  const std::optional<KernelEntry> found = kernel_entry(op_type, attrs);
  if (!found) return std::nullopt;
  const KernelEntry& entry = *found;
  const std::vector<DType>* supported = types_at(entry, g.opset());
  if (!supported) return std::nullopt;

  // The dtype of the constrained inputs (they share one in every entry).
  DType original = DType::Undefined;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i] || !has_index(entry.typed_inputs, i)) continue;
    // Inputs of differing dtypes are a type error for the op's own checks
    // to refuse: casting them all to one dtype would hide it.
    if (original != DType::Undefined && inputs[i]->dtype != original) return std::nullopt;
    original = inputs[i]->dtype;
  }
  if (original == DType::Undefined || contains(*supported, original)) return std::nullopt;

  DType compute = DType::Undefined;
  bool order_map = false;
  if (entry.fidelity == Fidelity::kTruth) {
    compute = DType::Bool;
  } else {
    for (DType candidate : widenings(original)) {
      if (contains(*supported, candidate)) {
        compute = candidate;
        break;
      }
    }
    if (compute == DType::Undefined && entry.fidelity == Fidelity::kBits) {
      for (DType candidate : reinterpretations(original)) {
        if (contains(*supported, candidate)) compute = candidate;
      }
    }
    if (compute == DType::Undefined && entry.fidelity == Fidelity::kOrdered && original == DType::UInt64 &&
        contains(*supported, DType::Int64)) {
      compute = DType::Int64;
      order_map = true;
    }
  }
  if (compute == DType::Undefined || !contains(*supported, compute)) {
    throw UnsupportedError(no_kernel_message(op_type, original));
  }

  std::vector<Value*> converted = inputs;
  for (size_t i = 0; i < converted.size(); ++i) {
    if (!converted[i] || !has_index(entry.typed_inputs, i)) continue;
    Value* v = g.cast(converted[i], compute);
    if (order_map) v = flip_sign_bit(g, v);
    converted[i] = v;
  }
  std::vector<Value*> outputs = emit_on_kernel(g, op_type, converted, attrs, n_outputs);
  if (!entry.outputs_typed) return outputs;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!has_index(entry.typed_outputs, i)) continue;
    Value* v = outputs[i];
    if (order_map) v = flip_sign_bit(g, v);
    outputs[i] = g.cast(v, original);
  }
  return outputs;
}

// ONNX Runtime's Pow kernels take float32/float64/int32/int64 exponents
// only (the spec allows any numeric type); others are widened exactly.
// Returns whether it changed `inputs`.
bool widen_pow_exponent(GraphBuilder& g, std::vector<Value*>& inputs) {
  static const std::vector<DType> kExponents = {D::Float32, D::Float64, D::Int32, D::Int64};
  Value* exponent = inputs.size() > 1 ? inputs[1] : nullptr;
  if (!exponent || exponent->dtype == DType::Undefined || contains(kExponents, exponent->dtype)) return false;
  for (DType candidate : widenings(exponent->dtype)) {
    if (contains(kExponents, candidate)) {
      inputs[1] = g.cast(exponent, candidate);
      return true;
    }
  }
  throw UnsupportedError("ONNX Runtime has no Pow kernel for " + dtype_name(exponent->dtype) +
                         " exponents, and no wider dtype holds every such exponent exactly; cast the exponent");
}

}  // namespace

std::optional<std::vector<Value*>> adapt_kernel_dtypes(GraphBuilder& g, const std::string& op_type,
                                                       const std::vector<Value*>& given_inputs,
                                                       const Attributes& attrs, size_t n_outputs) {
  std::vector<Value*> inputs = given_inputs;
  const bool exponent_widened = op_type == "Pow" && widen_pow_exponent(g, inputs);
  auto adapted = adapt_input_dtypes(g, op_type, inputs, attrs, n_outputs);
  if (!adapted && exponent_widened) return emit_on_kernel(g, op_type, inputs, attrs, n_outputs);
  return adapted;
}

}  // namespace pytensor_onnx
