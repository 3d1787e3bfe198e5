#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "builder.h"
#include "passes/demote_float64.h"
#include "passes/pass_manager.h"

namespace pytensor_onnx {
namespace {

const Node* find(const Graph& g, const std::string& op) {
  for (const Node* node : g.nodes()) {
    if (node->op_type == op) return node;
  }
  return nullptr;
}

TEST(DemoteFloat64, ValuesInitializersAndCastTargets) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({3}));
  Value* n = g.input("n", DType::Int64, shape_of_sizes({3}));
  Value* w = g.constant(Tensor::from_values(DType::Float64, std::vector<double>{0.1, 2.5, -1e40}, {3}), "w");
  Value* scaled = g.op1("Mul", {x, w});
  Value* counts = g.op1("Cast", {n}, {{"to", static_cast<int64_t>(DType::Float64)}});
  Value* as_int = g.op1("Cast", {scaled}, {{"to", static_cast<int64_t>(DType::Int32)}});
  g.output(g.op1("Add", {scaled, counts}), "y");
  g.output(as_int, "k");

  EXPECT_TRUE(demote_float64_to_float32(g.graph()));
  EXPECT_EQ(x->dtype, DType::Float32);
  EXPECT_EQ(n->dtype, DType::Int64);  // integers stay
  EXPECT_EQ(as_int->dtype, DType::Int32);
  ASSERT_TRUE(w->constant);
  EXPECT_EQ(w->constant->dtype(), DType::Float32);
  const std::vector<double> values = w->constant->to_doubles();
  EXPECT_FLOAT_EQ(values[0], 0.1f);
  EXPECT_TRUE(std::isinf(values[2]));  // beyond float32's range: inf, as a C++ cast gives
  EXPECT_EQ(counts->dtype, DType::Float32);
  EXPECT_EQ(counts->producer->attrs.get_int("to", 0), static_cast<int64_t>(DType::Float32));
  EXPECT_EQ(as_int->producer->attrs.get_int("to", 0), static_cast<int64_t>(DType::Int32));
  EXPECT_FALSE(demote_float64_to_float32(g.graph()));  // nothing left to do
}

TEST(DemoteFloat64, CastsBetweenTheFloatsBecomeNoOps) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({2}));
  Value* wide = g.op1("Cast", {x}, {{"to", static_cast<int64_t>(DType::Float64)}});
  g.output(g.op1("Exp", {wide}), "y");
  demote_float64_to_float32(g.graph());
  optimize_graph(g.graph());
  EXPECT_EQ(find(g.graph(), "Cast"), nullptr);
  EXPECT_EQ(g.graph().outputs()[0]->dtype, DType::Float32);
}

TEST(DemoteFloat64, TensorAttributesDtypeAttributesAndSubgraphs) {
  GraphBuilder g(18);
  Value* cond = g.input("cond", DType::Bool, shape_of_sizes({}));
  Value* shape = g.int64s({2});
  Value* filled = g.op1("ConstantOfShape", {shape}, {{"value", Tensor::scalar(DType::Float64, 1.5)}});
  Value* eye = g.op1("EyeLike", {g.input("m", DType::Int64, shape_of_sizes({2, 2}))},
                     {{"dtype", static_cast<int64_t>(DType::Float64)}});
  GraphBuilder then_branch(g, "then");
  then_branch.output(then_branch.op1("Neg", {filled}), "then_out");
  GraphBuilder else_branch(g, "else");
  else_branch.output(filled, "else_out");
  Value* chosen = g.op1("If", {cond}, {{"then_branch", then_branch.shared_graph()},
                                        {"else_branch", else_branch.shared_graph()}});
  g.output(chosen, "y");
  g.output(eye, "eye");

  demote_float64_to_float32(g.graph());
  const auto* value = std::get_if<Tensor>(filled->producer->attrs.find("value"));
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(value->dtype(), DType::Float32);
  EXPECT_EQ(value->to_doubles()[0], 1.5);
  EXPECT_EQ(eye->producer->attrs.get_int("dtype", 0), static_cast<int64_t>(DType::Float32));
  EXPECT_EQ(eye->dtype, DType::Float32);
  for (const Value* out : then_branch.graph().outputs()) EXPECT_EQ(out->dtype, DType::Float32);
  for (const Value* out : else_branch.graph().outputs()) EXPECT_EQ(out->dtype, DType::Float32);
  EXPECT_EQ(chosen->dtype, DType::Float32);
}

}  // namespace
}  // namespace pytensor_onnx
