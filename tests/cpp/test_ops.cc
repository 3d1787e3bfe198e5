#include <gtest/gtest.h>

#include "builder.h"
#include "errors.h"
#include "ops.h"

namespace pytensor_onnx {
namespace {

TEST(OpTable, ArityFollowsTheOpset) {
  // ReduceSum's axes became an input at opset 13, the other reductions' at 18.
  EXPECT_EQ(op_input_arity("ReduceSum", 13)->max, 2u);
  EXPECT_EQ(op_input_arity("ReduceMax", 17)->max, 1u);
  EXPECT_EQ(op_input_arity("ReduceMax", 18)->max, 2u);
  EXPECT_EQ(op_input_arity("Pad", 17)->max, 3u);
  EXPECT_EQ(op_input_arity("Pad", 18)->max, 4u);
  EXPECT_EQ(op_input_arity("Concat", 18)->max, SIZE_MAX);
  EXPECT_FALSE(op_input_arity("Conv", 18));  // not checked
  EXPECT_FALSE(op_since_version("NoSuchOp"));
  EXPECT_EQ(op_since_version("BitwiseAnd"), 18);
}

TEST(OpTable, EveryEntryTheBuilderEmitsSaysWhenItCame) {
  // An entry with constraints or inference but no opset would be emitted
  // unchecked by nothing: op() refuses ops without a version.
  for (const char* op : {"Add", "Where", "ReduceSum", "Gather", "Loop", "If", "Constant", "Einsum", "Trilu"}) {
    const OpSchema* schema = find_op_schema(op);
    ASSERT_NE(schema, nullptr) << op;
    EXPECT_TRUE(schema->since) << op;
    EXPECT_NE(schema->infer, nullptr) << op;
  }
}

TEST(OpTable, TheBuilderReadsEachFactFromTheEntry) {
  // emit() builds exactly the node asked for, checked against its entry.
  GraphBuilder g(13);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({2, 3}));
  Value* i = g.input("i", DType::Int32, shape_of_sizes({2}));
  EXPECT_THROW(g.emit("Exp", {x}, {}, 2), BuildError);                          // output count
  EXPECT_EQ(g.emit("TopK", {x, g.int64s({1})}, {}, 2).size(), 2u);
  EXPECT_THROW(g.emit("Exp", {x}, {{"axis", int64_t{0}}}, 1), BuildError);      // attribute names
  EXPECT_THROW(g.emit("Pad", {x, g.int64s({0, 0, 0, 0})}, {{"mode", std::string("mirror")}}, 1),
               BuildError);                                                      // choices
  EXPECT_THROW(g.emit("Exp", {i}, {}, 1), BuildError);                          // type constraints
  EXPECT_THROW(g.emit("Relu", {i}, {}, 1), BuildError);                         // int32 from opset 14 only
  GraphBuilder g14(14);
  Value* relu = g14.emit("Relu", {g14.input("i", DType::Int32, shape_of_sizes({2}))}, {}, 1)[0];
  EXPECT_EQ(relu->dtype, DType::Int32);
  Value* s = g.emit("ReduceSum", {x, g.int64s({1})}, {{"keepdims", int64_t{0}}}, 1)[0];  // inference
  EXPECT_EQ(s->dtype, DType::Float32);
  ASSERT_TRUE(s->shape);
  EXPECT_EQ(known_sizes(s->shape), (std::vector<int64_t>{2}));
}

}  // namespace
}  // namespace pytensor_onnx
