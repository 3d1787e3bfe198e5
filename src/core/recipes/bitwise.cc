// BitwiseAnd/Or/Xor/Not before opset 18 (where ONNX has no bitwise ops on
// integers), from BitShift (opset 11) and wrapping arithmetic.
//
// Every integer dtype goes through uint64: a signed value's conversion keeps
// its two's-complement low bits, and the result's conversion back keeps the
// low bits again. a AND b is collected one bit per Loop step (stopping once
// a or b has no bits left); a + b = (a XOR b) + 2 (a AND b) and
// a OR b = (a XOR b) + (a AND b) give the others, and NOT a = 2^64 - 1 - a.
#include <cstdint>

#include "errors.h"
#include "loops.h"
#include "recipes.h"
#include "registry.h"

namespace pytensor_onnx::recipes {
namespace {

void check_integer(const std::vector<Value*>& inputs, const char* name) {
  for (const Value* v : inputs) {
    if (!is_integer(v->dtype)) {
      throw BuildError(std::string(name) + " takes integer inputs of one dtype, got " + dtype_name(v->dtype));
    }
    if (v->dtype != inputs[0]->dtype) throw BuildError(std::string(name) + ": the inputs must share a dtype");
  }
}

Value* u64(GraphBuilder& g, double v) {
  return g.constant(Tensor::from_values(DType::UInt64, std::vector<uint64_t>{static_cast<uint64_t>(v)}, {}), "u64");
}

int64_t bits_of(DType dtype) {
  switch (dtype) {
    case DType::Int8:
    case DType::UInt8:
      return 8;
    case DType::Int16:
    case DType::UInt16:
      return 16;
    case DType::Int32:
    case DType::UInt32:
      return 32;
    default:
      return 64;
  }
}

// a AND b of two uint64 values, for the low `bits` bits.
Value* and_u64(GraphBuilder& g, Value* a, Value* b, int64_t bits) {
  Value* one = g.constant(Tensor::from_values(DType::UInt64, std::vector<uint64_t>{1}, {}), "one");
  LoopResult r = elementwise_loop(
      g, {a, b, g.op1("Mul", {a, u64(g, 0)}), one}, bits,
      [](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        Value* one_ = body.constant(Tensor::from_values(DType::UInt64, std::vector<uint64_t>{1}, {}), "one");
        auto shr = [&](Value* v) { return body.op1("BitShift", {v, one_}, {{"direction", std::string("RIGHT")}}); };
        auto low_bit = [&](Value* v, Value* shifted) {
          return body.op1("Sub", {v, body.op1("BitShift", {shifted, one_}, {{"direction", std::string("LEFT")}})});
        };
        Value *a_ = s[0], *b_ = s[1], *acc = s[2], *weight = s[3];
        Value* a_next = shr(a_);
        Value* b_next = shr(b_);
        Value* both = body.op1("Mul", {low_bit(a_, a_next), low_bit(b_, b_next)});
        Value* sum = body.op1("Add", {acc, body.op1("Mul", {both, weight})});
        Value* zero = body.constant(Tensor::from_values(DType::UInt64, std::vector<uint64_t>{0}, {}), "zero");
        Value* done = body.op1("Or", {body.op1("Equal", {a_next, zero}), body.op1("Equal", {b_next, zero})});
        return LoopStep{{a_next, b_next, sum, body.op1("Add", {weight, weight})}, done};
      },
      "bit_by_bit_and");
  return r.state[2];
}

std::vector<Value*> build_bitwise(GraphBuilder& g, const std::vector<Value*>& inputs, const char* name, char which) {
  check_integer(inputs, name);
  const DType dtype = inputs[0]->dtype;
  Value* a = g.cast(inputs[0], DType::UInt64);
  if (which == '~') {
    Value* all_ones =
        g.constant(Tensor::from_values(DType::UInt64, std::vector<uint64_t>{UINT64_MAX}, {}), "all_ones");
    return {g.cast(g.op1("Sub", {all_ones, a}), dtype)};
  }
  Value* b = g.cast(inputs[1], DType::UInt64);
  Value* both = and_u64(g, a, b, bits_of(dtype));
  Value* result = both;
  if (which != '&') {
    Value* sum = g.op1("Add", {a, b});
    // a | b = a + b - (a & b); a ^ b = a + b - 2 (a & b), all wrapping.
    result = g.op1("Sub", {sum, which == '|' ? both : g.op1("Add", {both, both})});
  }
  return {g.cast(result, dtype)};
}

std::vector<Value*> bitwise_and(GraphBuilder& g, const std::vector<Value*>& in, const Attributes&) {
  return build_bitwise(g, in, "bitwise_and", '&');
}
std::vector<Value*> bitwise_or(GraphBuilder& g, const std::vector<Value*>& in, const Attributes&) {
  return build_bitwise(g, in, "bitwise_or", '|');
}
std::vector<Value*> bitwise_xor(GraphBuilder& g, const std::vector<Value*>& in, const Attributes&) {
  return build_bitwise(g, in, "bitwise_xor", '^');
}
std::vector<Value*> bitwise_not(GraphBuilder& g, const std::vector<Value*>& in, const Attributes&) {
  return build_bitwise(g, in, "bitwise_not", '~');
}

}  // namespace

std::optional<std::vector<Value*>> bitwise_before_opset18(GraphBuilder& g, const std::string& op_type,
                                                          const std::vector<Value*>& inputs) {
  if (g.opset() >= 18) return std::nullopt;
  if (op_type == "BitwiseAnd") return build_recipe_named(g, "bitwise_and", inputs, {});
  if (op_type == "BitwiseOr") return build_recipe_named(g, "bitwise_or", inputs, {});
  if (op_type == "BitwiseXor") return build_recipe_named(g, "bitwise_xor", inputs, {});
  if (op_type == "BitwiseNot") return build_recipe_named(g, "bitwise_not", inputs, {});
  return std::nullopt;
}

void add_bitwise_recipes(std::vector<RecipeInfo>& table) {
  constexpr auto kEw = FunctionUse::kElementwise;
  table.push_back({"bitwise_and", bitwise_and, 2, 2, "a AND b of integers without BitwiseAnd (opset < 18)", kEw});
  table.push_back({"bitwise_or", bitwise_or, 2, 2, "a OR b of integers without BitwiseOr (opset < 18)", kEw});
  table.push_back({"bitwise_xor", bitwise_xor, 2, 2, "a XOR b of integers without BitwiseXor (opset < 18)", kEw});
  table.push_back({"bitwise_not", bitwise_not, 1, 1, "NOT a of integers without BitwiseNot (opset < 18)", kEw});
}

}  // namespace pytensor_onnx::recipes
