#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "builder.h"
#include "errors.h"
#include "onnx_isolated.pb.h"
#include "opset.h"
#include "serialize.h"

namespace pytensor_onnx {
namespace {

namespace pb = ::pytensor_onnx_pb;

pb::ModelProto parse(const std::string& bytes) {
  pb::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(bytes));
  return model;
}

TEST(Serialize, ModelHeaderGraphAndInitializers) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, Shape{std::vector<Dim>{Dim::named("batch"), Dim::known(3)}});
  Value* w = g.constant(Tensor::from_values(DType::Float64, std::vector<double>{1, 2, 3}, {3}), "w");
  g.output(g.op1("Mul", {x, w}), "y");
  ModelOptions options;
  options.producer_version = "9.9";
  pb::ModelProto model = parse(serialize_model(g, options));
  EXPECT_EQ(model.ir_version(), 8);
  ASSERT_EQ(model.opset_import_size(), 1);
  EXPECT_EQ(model.opset_import(0).version(), 18);
  EXPECT_EQ(model.producer_name(), "pytensor-onnx");
  EXPECT_EQ(model.producer_version(), "9.9");
  const auto& graph = model.graph();
  ASSERT_EQ(graph.input_size(), 1);
  const auto& dims = graph.input(0).type().tensor_type().shape().dim();
  EXPECT_EQ(dims[0].dim_param(), "batch");
  EXPECT_EQ(dims[1].dim_value(), 3);
  ASSERT_EQ(graph.initializer_size(), 1);
  EXPECT_EQ(graph.initializer(0).raw_data().size(), 24u);
  EXPECT_EQ(graph.node(0).op_type(), "Mul");
  EXPECT_EQ(graph.output(0).name(), "y");
  EXPECT_EQ(graph.output(0).type().tensor_type().elem_type(), static_cast<int>(DType::Float64));
}

TEST(Serialize, MetadataAndDocsOfInputsAndOutputs) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({2}));
  g.output(g.op1("Exp", {x}), "y");
  ModelOptions options;
  options.metadata = {{"b_key", "2"}, {"a_key", "{\"json\": true}"}};
  options.value_docs = {{"x", "the input"}, {"y", "exp of x"}};
  pb::ModelProto model = parse(serialize_model(g, options));
  ASSERT_EQ(model.metadata_props_size(), 2);
  EXPECT_EQ(model.metadata_props(0).key(), "b_key");  // in the given order
  EXPECT_EQ(model.metadata_props(1).value(), "{\"json\": true}");
  EXPECT_EQ(model.graph().input(0).doc_string(), "the input");
  EXPECT_EQ(model.graph().output(0).doc_string(), "exp of x");

  options.value_docs = {{"z", "no such value"}};
  EXPECT_THROW(serialize_model(g, options), BuildError);
  options.value_docs = {};
  options.metadata = {{"k", "1"}, {"k", "2"}};
  EXPECT_THROW(serialize_model(g, options), BuildError);
}

TEST(Serialize, IrVersionFollowsTheOpset) {
  EXPECT_EQ(ir_version_for_opset(13), 7);
  EXPECT_EQ(ir_version_for_opset(15), 8);
  EXPECT_EQ(ir_version_for_opset(21), 10);
  EXPECT_EQ(ir_version_for_opset(26), 13);
  GraphBuilder g(21);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({1}));
  g.output(g.op1("Exp", {x}), "y");
  EXPECT_EQ(parse(serialize_model(g, {})).ir_version(), 10);
}

TEST(Serialize, LargeInitializersGoToExternalData) {
  const auto dir = std::filesystem::temp_directory_path() / "pytensor_onnx_serialize_test";
  std::filesystem::create_directories(dir);
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({1000}));
  std::vector<float> big(1000, 0.5f);
  Value* w = g.constant(Tensor::from_values(DType::Float32, big, {1000}), "big");
  Value* small = g.constant(Tensor::from_values(DType::Float32, std::vector<float>{2.f}, {1}), "small");
  g.output(g.op1("Mul", {g.op1("Add", {x, w}), small}), "y");
  ModelOptions options;
  options.external_data_path = (dir / "model.onnx.data").string();
  options.external_data_location = "model.onnx.data";
  options.external_data_threshold = 1024;
  pb::ModelProto model = parse(serialize_model(g, options));
  int external = 0;
  for (const auto& init : model.graph().initializer()) {
    if (init.data_location() == pb::TensorProto::EXTERNAL) {
      ++external;
      EXPECT_EQ(init.name(), "big");
      EXPECT_TRUE(init.raw_data().empty());
      ASSERT_EQ(init.external_data_size(), 3);
      EXPECT_EQ(init.external_data(0).value(), "model.onnx.data");
      EXPECT_EQ(init.external_data(2).value(), "4000");
    } else {
      EXPECT_EQ(init.raw_data().size(), 4u);
    }
  }
  EXPECT_EQ(external, 1);
  std::ifstream data(options.external_data_path, std::ios::binary | std::ios::ate);
  EXPECT_EQ(static_cast<size_t>(data.tellg()), 4000u);
  std::filesystem::remove_all(dir);
}

TEST(Serialize, SubgraphsAndOmittedOptionalInputs) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({4}));
  // Slice with starts/ends and steps but no axes: the omitted input is "".
  Value* s = g.emit("Slice", {x, g.int64s({0}), g.int64s({4}), nullptr, g.int64s({2})}, {}, 1)[0];
  GraphBuilder body(g, "then");
  body.output(body.op1("Exp", {s}), "then_y");
  GraphBuilder other(g, "else");
  other.output(other.op1("Log", {s}), "else_y");
  Value* cond = g.input("c", DType::Bool, shape_of_sizes({}));
  g.output(g.op1("If", {cond}, {{"then_branch", body.shared_graph()}, {"else_branch", other.shared_graph()}}), "y");
  pb::ModelProto model = parse(serialize_model(g, {}));
  const auto& slice = model.graph().node(0);
  ASSERT_EQ(slice.input_size(), 5);
  EXPECT_EQ(slice.input(3), "");
  const auto& if_node = model.graph().node(1);
  ASSERT_EQ(if_node.attribute_size(), 2);
  EXPECT_EQ(if_node.attribute(0).type(), pb::AttributeProto::GRAPH);
  EXPECT_EQ(if_node.attribute(0).g().node(0).input(0), s->name);
}

}  // namespace
}  // namespace pytensor_onnx

namespace pytensor_onnx {
namespace {

TEST(Serialize, ViewsOfOneBufferShareExternalData) {
  const auto dir = std::filesystem::temp_directory_path() / "pytensor_onnx_shared_view_test";
  std::filesystem::create_directories(dir);
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({1000}));
  Tensor weights = Tensor::from_values(DType::Float32, std::vector<float>(1000, 1.5f), {1000});
  Value* flat = g.constant(weights, "flat");
  Value* column = g.constant(weights.with_dims({1000, 1}), "column");
  g.output(g.op1("Add", {x, flat}), "y");
  g.output(g.op1("MatMul", {g.op1("Unsqueeze", {x}, {{"axes", std::vector<int64_t>{0}}}), column}), "z");
  ModelOptions options;
  options.external_data_path = (dir / "m.onnx.data").string();
  options.external_data_location = "m.onnx.data";
  pb::ModelProto model = parse(serialize_model(g, options));
  int external = 0;
  for (const auto& init : model.graph().initializer()) {
    if (init.data_location() != pb::TensorProto::EXTERNAL) continue;
    ++external;
    EXPECT_EQ(init.external_data(1).value(), "0");  // both point at the first copy
  }
  EXPECT_EQ(external, 2);
  EXPECT_EQ(std::filesystem::file_size(options.external_data_path), 4000u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pytensor_onnx
