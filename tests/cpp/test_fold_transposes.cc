// The MatMul kernel node's inference and the pass that lets it read a
// transposed operand in place (passes/fold_transposes_into_kernels.h).
#include <gtest/gtest.h>

#include <vector>

#include "builder.h"
#include "errors.h"
#include "kernel_ops.h"
#include "passes/fold_transposes_into_kernels.h"
#include "passes/pass_manager.h"

namespace pytensor_onnx {
namespace {

size_t count(const Graph& g, const std::string& op) {
  size_t n = 0;
  for (const Node* node : g.nodes()) n += node->op_type == op;
  return n;
}

Value* matmul_kernel(GraphBuilder& g, Value* a, Value* b, Attributes attrs = {}) {
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  return g.op("MatMul_float64", {a, b}, std::move(attrs), 1, kKernelDomain)[0];
}

Value* transpose(GraphBuilder& g, Value* x, std::vector<int64_t> perm) {
  return g.op1("Transpose", {x}, {{"perm", std::move(perm)}});
}

// A (n, 3) matrix whose rows are not known at build time.
Shape sym_shape() { return std::vector<Dim>{Dim::named("n"), Dim::known(3)}; }

std::vector<int64_t> sizes(const Value* v) {
  EXPECT_TRUE(v->shape.has_value());
  return v->shape ? known_sizes(v->shape) : std::vector<int64_t>{};
}

TEST(MatMulKernelInference, GivesNumPysShapesWithTransposedOperands) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({10, 3}));
  Value* v = g.input("v", DType::Float64, shape_of_sizes({10}));
  Value* w = g.input("w", DType::Float64, shape_of_sizes({3}));
  Value* stack = g.input("s", DType::Float64, shape_of_sizes({4, 1, 3, 10}));
  EXPECT_EQ(sizes(matmul_kernel(g, x, v, {{"trans_a", int64_t{1}}})), (std::vector<int64_t>{3}));
  EXPECT_EQ(sizes(matmul_kernel(g, x, w)), (std::vector<int64_t>{10}));
  EXPECT_EQ(sizes(matmul_kernel(g, w, w)), (std::vector<int64_t>{}));
  EXPECT_EQ(sizes(matmul_kernel(g, x, x, {{"trans_a", int64_t{1}}})), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(sizes(matmul_kernel(g, x, x, {{"trans_b", int64_t{1}}})), (std::vector<int64_t>{10, 10}));
  EXPECT_EQ(sizes(matmul_kernel(g, stack, x)), (std::vector<int64_t>{4, 1, 3, 3}));
  EXPECT_EQ(matmul_kernel(g, x, w)->dtype, DType::Float64);
  // Static inner dims that differ are a build error, as for ONNX's MatMul.
  EXPECT_THROW(matmul_kernel(g, x, x), BuildError);
  EXPECT_THROW(matmul_kernel(g, x, v), BuildError);
}

TEST(FoldTransposesIntoKernels, AnOperandIsReadInPlaceWithItsFlagFlipped) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, sym_shape());
  Value* v = g.input("v", DType::Float64, std::vector<Dim>{Dim::named("n")});
  Value* y = g.input("y", DType::Float64, std::vector<Dim>{Dim::named("n"), Dim::known(4)});
  Value* xv = matmul_kernel(g, transpose(g, x, {1, 0}), v);
  // y read transposed already: reading y.T transposed is reading y as it is.
  Value* xy = matmul_kernel(g, transpose(g, x, {1, 0}), transpose(g, y, {1, 0}), {{"trans_b", int64_t{1}}});
  g.output(xv, "xv");
  g.output(xy, "xy");
  EXPECT_GT(optimize_graph(g.graph()), 0);
  EXPECT_EQ(count(g.graph(), "Transpose"), 0u);
  EXPECT_EQ(xv->producer->inputs[0], x);
  EXPECT_EQ(xv->producer->attrs.get_int("trans_a", 0), 1);
  EXPECT_EQ(xy->producer->inputs[0], x);
  EXPECT_EQ(xy->producer->inputs[1], y);
  EXPECT_EQ(xy->producer->attrs.get_int("trans_a", 0), 1);
  EXPECT_EQ(xy->producer->attrs.get_int("trans_b", -1), 0);
  EXPECT_EQ(sizes(xv), (std::vector<int64_t>{3}));
  EXPECT_EQ(sizes(xy), (std::vector<int64_t>{3, 4}));
}

TEST(FoldTransposesIntoKernels, AnInitializerIsReadItselfNotFoldedIntoATransposedCopy) {
  GraphBuilder g(18);
  const std::vector<double> data{1, 2, 3, 4, 5, 6};
  Value* x = g.constant(Tensor::from_values(DType::Float64, data, {3, 2}), "X");
  Value* v = g.input("v", DType::Float64, shape_of_sizes({3}));
  Value* out = matmul_kernel(g, transpose(g, x, {1, 0}), v);
  g.output(out, "y");
  optimize_graph(g.graph());
  EXPECT_EQ(out->producer->inputs[0], x);
  EXPECT_EQ(out->producer->attrs.get_int("trans_a", 0), 1);
  ASSERT_EQ(g.graph().initializers().size(), 1u);
  EXPECT_EQ(g.graph().initializers()[0]->constant->dims(), (std::vector<int64_t>{3, 2}));
}

TEST(FoldTransposesIntoKernels, StacksSwapTheirLastTwoDimsOnlyAndOtherReadersKeepTheTranspose) {
  GraphBuilder g(18);
  Value* s = g.input("s", DType::Float64, shape_of_sizes({2, 5, 3}));
  Value* m = g.input("m", DType::Float64, shape_of_sizes({5, 4}));
  Value* swapped = transpose(g, s, {0, 2, 1});   // (2, 3, 5): folds
  Value* other = transpose(g, s, {1, 0, 2});     // (5, 2, 3): not a matrix transpose
  Value* folded = matmul_kernel(g, swapped, m);
  Value* kept = matmul_kernel(g, other, g.input("n", DType::Float64, shape_of_sizes({3, 4})));
  g.output(folded, "a");
  g.output(kept, "b");
  g.output(g.op1("Exp", {swapped}), "c");  // another reader of the folded Transpose
  optimize_graph(g.graph());
  EXPECT_EQ(folded->producer->inputs[0], s);
  EXPECT_EQ(folded->producer->attrs.get_int("trans_a", 0), 1);
  EXPECT_EQ(sizes(folded), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(kept->producer->inputs[0], other);
  EXPECT_EQ(kept->producer->attrs.get_int("trans_a", 0), 0);
  EXPECT_EQ(count(g.graph(), "Transpose"), 2u);  // still read by Exp and by the other product
}

}  // namespace
}  // namespace pytensor_onnx
