#include <gtest/gtest.h>

#include <algorithm>

#include "bake.h"
#include "builder.h"
#include "errors.h"
#include "onnx_isolated.pb.h"
#include "serialize.h"

namespace pytensor_onnx {
namespace {

namespace pb = ::pytensor_onnx_pb;

// y = x + w, and If(c) returning -v or v, where v is read only inside the
// branches; u is an input nothing reads.
std::string model_with_shared_inputs() {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({3}));
  Value* w = g.input("w", DType::Float64, shape_of_sizes({3}));
  g.input("u", DType::Float64, shape_of_sizes({2}));
  Value* v = g.input("v", DType::Float64, shape_of_sizes({3}));
  Value* c = g.input("c", DType::Bool, shape_of_sizes({}));
  g.output(g.op1("Add", {x, w}), "y");
  GraphBuilder then_branch(g, "then");
  then_branch.output(then_branch.op1("Neg", {v}), "then_out");
  GraphBuilder else_branch(g, "else");
  else_branch.output(else_branch.op1("Identity", {v}), "else_out");
  g.output(g.op1("If", {c}, {{"then_branch", then_branch.shared_graph()}, {"else_branch", else_branch.shared_graph()}}),
           "z");
  return serialize_model(g, ModelOptions{});
}

Tensor values(std::vector<double> v) {
  return Tensor::from_values(DType::Float64, v, {static_cast<int64_t>(v.size())});
}

std::vector<std::string> input_names(const pb::GraphProto& graph) {
  std::vector<std::string> names;
  for (const auto& input : graph.input()) names.push_back(input.name());
  return names;
}

TEST(Bake, InputsBecomeInitializersWithTheirBytes) {
  const std::vector<std::string> names = {"w", "u", "v"};
  std::vector<size_t> asked;
  BakedModel baked = bake_inputs(
      model_with_shared_inputs(), names,
      [&asked](size_t i) {
        asked.push_back(i);
        return values({1.0 + static_cast<double>(i), 2.0, 3.0});
      },
      "");
  // u is read by nothing: removed from the inputs, not added (ONNX Runtime
  // would drop it and then fail to bind it); v is read inside If's branches.
  EXPECT_EQ(baked.baked, (std::vector<std::string>{"w", "v"}));
  EXPECT_EQ(asked, (std::vector<size_t>{0, 2}));
  pb::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(baked.bytes));
  EXPECT_EQ(input_names(model.graph()), (std::vector<std::string>{"x", "c"}));  // in their order
  ASSERT_EQ(model.graph().initializer_size(), 2);
  const pb::TensorProto& w = model.graph().initializer(0);
  EXPECT_EQ(w.name(), "w");
  EXPECT_EQ(w.data_type(), static_cast<int>(DType::Float64));
  ASSERT_EQ(w.dims_size(), 1);
  EXPECT_EQ(w.dims(0), 3);
  const Tensor expected = values({1.0, 2.0, 3.0});
  EXPECT_EQ(w.raw_data(), std::string(reinterpret_cast<const char*>(expected.data()), expected.nbytes()));
  EXPECT_FALSE(w.has_data_location());
  EXPECT_EQ(model.graph().initializer(1).name(), "v");
}

TEST(Bake, PlaceholdersPointAtExternalData) {
  BakedModel baked = bake_inputs(model_with_shared_inputs(), {"w"}, [](size_t) { return values({1, 2, 3}); },
                                 "pytensor-onnx-shared-value");
  pb::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(baked.bytes));
  const pb::TensorProto& w = model.graph().initializer(0);
  EXPECT_EQ(w.data_location(), pb::TensorProto::EXTERNAL);
  EXPECT_FALSE(w.has_raw_data());
  ASSERT_EQ(w.external_data_size(), 1);
  EXPECT_EQ(w.external_data(0).key(), "location");
  EXPECT_EQ(w.external_data(0).value(), "pytensor-onnx-shared-value");
}

TEST(Bake, EmptyAndScalarValues) {
  GraphBuilder g(18);
  Value* e = g.input("e", DType::Float32, shape_of_sizes({0}));
  Value* s = g.input("s", DType::Int64, shape_of_sizes({}));
  g.output(g.op1("Identity", {e}), "e_out");
  g.output(g.op1("Identity", {s}), "s_out");
  BakedModel baked = bake_inputs(
      serialize_model(g, ModelOptions{}), {"e", "s"},
      [](size_t i) { return i == 0 ? Tensor(DType::Float32, {0}, {}) : Tensor::int64_scalar(7); }, "");
  pb::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(baked.bytes));
  EXPECT_EQ(model.graph().input_size(), 0);
  const pb::TensorProto& empty = model.graph().initializer(0);
  EXPECT_TRUE(empty.has_raw_data());  // present and empty, as NumPy's tobytes() gives
  EXPECT_EQ(empty.raw_data(), "");
  EXPECT_EQ(model.graph().initializer(1).dims_size(), 0);
  EXPECT_EQ(model.graph().initializer(1).raw_data().size(), 8u);
}

TEST(Bake, RefusesBytesThatAreNotAModel) {
  EXPECT_THROW(bake_inputs("not a model", {"w"}, [](size_t) { return Tensor(); }, ""), BuildError);
}

}  // namespace
}  // namespace pytensor_onnx
