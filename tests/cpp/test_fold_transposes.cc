// The MatMul kernel node's inference and the pass that lets it read a
// transposed operand in place (passes/fold_transposes_into_kernels.h).
#include <gtest/gtest.h>

#include <tuple>
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

Value* unsqueeze(GraphBuilder& g, Value* x, int64_t axis) {
  return g.op1("Unsqueeze", {x, g.constant(Tensor::int64s({axis}))});
}

Value* squeeze(GraphBuilder& g, Value* x, int64_t axis) {
  return g.op1("Squeeze", {x, g.constant(Tensor::int64s({axis}))});
}

TEST(FoldVectorAxesIntoKernels, AProductWithAVectorMadeAMatrixTakesTheVector) {
  GraphBuilder g(18);
  Value* a = g.input("a", DType::Float64, sym_shape());           // (n, 3)
  Value* w = g.input("w", DType::Float64, shape_of_sizes({3}));
  Value* v = g.input("v", DType::Float64, std::vector<Dim>{Dim::named("n")});
  // a @ w[:, None] then [:, 0]; v[None, :] @ a then [0, :] (axes counted from the end too).
  // (Read by Floor, which is no kernel stage: float64 arithmetic such as Exp
  // would take the products in as stages of one node, merge_kernel_stages.h.)
  Value* right = g.op1("Floor", {squeeze(g, matmul_kernel(g, a, unsqueeze(g, w, -1)), -1)});
  Value* left = g.op1("Floor", {squeeze(g, matmul_kernel(g, unsqueeze(g, v, 0), a), 0)});
  // The matrix read transposed: w[None, :] @ a.T then [0, :] is w @ a.T.
  Value* by_rows = g.op1("Floor", {squeeze(g, matmul_kernel(g, unsqueeze(g, w, 0), a, {{"trans_b", int64_t{1}}}), 0)});
  g.output(right, "right");
  g.output(left, "left");
  g.output(by_rows, "by_rows");
  EXPECT_GT(optimize_graph(g.graph()), 0);
  EXPECT_EQ(count(g.graph(), "Unsqueeze"), 0u);
  EXPECT_EQ(count(g.graph(), "Squeeze"), 0u);
  const Node* product = right->producer->inputs[0]->producer;
  EXPECT_EQ(product->inputs[0], a);
  EXPECT_EQ(product->inputs[1], w);
  const Shape& shape = right->producer->inputs[0]->shape;
  ASSERT_TRUE(shape && shape->size() == 1);
  EXPECT_TRUE((*shape)[0].same_as((*a->shape)[0]));
  product = left->producer->inputs[0]->producer;
  EXPECT_EQ(product->inputs[0], v);
  EXPECT_EQ(product->inputs[1], a);
  EXPECT_EQ(sizes(left->producer->inputs[0]), (std::vector<int64_t>{3}));
  product = by_rows->producer->inputs[0]->producer;
  EXPECT_EQ(product->inputs[0], w);
  EXPECT_EQ(product->attrs.get_int("trans_b", 0), 1);
  ASSERT_TRUE(by_rows->shape && by_rows->shape->size() == 1);
}

TEST(FoldVectorAxesIntoKernels, OtherShapesAndReadersKeepTheirNodes) {
  GraphBuilder g(18);
  Value* a = g.input("a", DType::Float64, shape_of_sizes({4, 3}));
  Value* w = g.input("w", DType::Float64, shape_of_sizes({3}));
  Value* row = g.input("row", DType::Float64, shape_of_sizes({1, 3}));
  Value* stack = g.input("s", DType::Float64, shape_of_sizes({2, 3, 5}));
  // The product read by another node too; the vector's operand read
  // transposed (a column read as a row); the
  // Squeeze of another axis; the Squeeze's result a graph output; a stack
  // on the right of a row vector.
  Value* shared = matmul_kernel(g, a, unsqueeze(g, w, 1));
  g.output(g.op1("Floor", {squeeze(g, shared, 1)}), "shared");
  g.output(shared, "product");
  g.output(g.op1("Floor", {squeeze(g, matmul_kernel(g, unsqueeze(g, w, 1), a, {{"trans_a", int64_t{1}}, {"trans_b", int64_t{1}}}),
                                  0)}),
           "transposed");
  g.output(g.op1("Floor", {squeeze(g, matmul_kernel(g, row, unsqueeze(g, w, 1)), 0)}), "other_axis");
  Value* w2 = g.input("w2", DType::Float64, shape_of_sizes({3}));
  g.output(squeeze(g, matmul_kernel(g, a, unsqueeze(g, w2, 1)), 1), "named");
  g.output(g.op1("Floor", {squeeze(g, matmul_kernel(g, unsqueeze(g, w, 0), stack), 1)}), "stack");
  optimize_graph(g.graph());
  EXPECT_EQ(count(g.graph(), "Squeeze"), 5u);
  EXPECT_EQ(count(g.graph(), "MatMul_float64"), 5u);
}

// solve_triangular(L.T, b, lower=False), the second solve of a Cholesky
// system: the SolveTriangular kernel reads L with `lower` and `trans`
// flipped (the same system), for a matrix and a stack alike; a Transpose
// another node reads too stays for it, and a Transpose of other axes stays.
TEST(FoldTransposesIntoKernels, ATriangularSolveReadsTheMatrixItTransposes) {
  GraphBuilder g(18);
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Value* l = g.input("l", DType::Float64, shape_of_sizes({4, 4}));
  Value* stack = g.input("s", DType::Float64, shape_of_sizes({2, 4, 4}));
  Value* b = g.input("b", DType::Float64, shape_of_sizes({4, 3}));
  auto solve = [&](Value* a, int64_t lower, int64_t trans) {
    return g.op("SolveTriangular_float64", {a, b},
                {{"lower", lower}, {"trans", trans}, {"unit_diagonal", int64_t{0}}, {"b_ndim", int64_t{2}}}, 1,
                kKernelDomain)[0];
  };
  Value* upper = transpose(g, l, {1, 0});
  Value* x = solve(upper, 0, 0);
  Value* y = solve(upper, 1, 1);
  Value* z = solve(transpose(g, stack, {0, 2, 1}), 0, 0);
  Value* kept = transpose(g, stack, {1, 0, 2});
  Value* w = solve(kept, 0, 0);
  g.output(x, "x");
  g.output(y, "y");
  g.output(z, "z");
  g.output(w, "w");
  Value* stacked = transpose(g, stack, {0, 2, 1});
  g.output(solve(stacked, 1, 0), "read_elsewhere");
  g.output(stacked, "transposed");
  optimize_graph(g.graph());
  for (auto [out, lower, trans] : {std::tuple{x, 1, 1}, std::tuple{y, 0, 0}, std::tuple{z, 1, 1}}) {
    EXPECT_EQ(out->producer->inputs[0], out == z ? stack : l);
    EXPECT_EQ(out->producer->attrs.get_int("lower", -1), lower);
    EXPECT_EQ(out->producer->attrs.get_int("trans", -1), trans);
  }
  EXPECT_EQ(w->producer->inputs[0], kept);
  EXPECT_EQ(count(g.graph(), "Transpose"), 2u);  // (the other axes', and the one an output is)
}


// Its right-hand side too: a matrix (b_ndim 2) made by a Transpose of the
// last two dims, or a Neg (of a vector or a matrix), is read before them
// (attributes transpose_b, negate_b), and the solution keeps its shape. A
// vector right-hand side's stack transposed (b_ndim 1) is no matrix: kept.
TEST(FoldTransposesIntoKernels, ATriangularSolveReadsItsRightHandSideNegatedOrTransposed) {
  GraphBuilder g(18);
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Value* l = g.input("l", DType::Float64, shape_of_sizes({4, 4}));
  Value* m = g.input("m", DType::Float64, shape_of_sizes({3, 4}));
  Value* v = g.input("v", DType::Float64, shape_of_sizes({4}));
  Value* vs = g.input("vs", DType::Float64, shape_of_sizes({4, 2}));
  auto solve = [&](Value* b, int64_t b_ndim) {
    return g.op("SolveTriangular_float64", {l, b},
                {{"lower", int64_t{1}}, {"trans", int64_t{0}}, {"unit_diagonal", int64_t{0}}, {"b_ndim", b_ndim}}, 1,
                kKernelDomain)[0];
  };
  Value* transposed = solve(transpose(g, m, {1, 0}), 2);                  // (4, 3)
  Value* negated = solve(g.op1("Neg", {v}), 1);                            // (4)
  Value* both = solve(g.op1("Neg", {transpose(g, m, {1, 0})}), 2);        // (4, 3)
  Value* stack = solve(transpose(g, vs, {1, 0}), 1);                       // a stack of 2 vectors: (2, 4)
  for (auto [out, name] : {std::pair{transposed, "t"}, {negated, "n"}, {both, "b"}, {stack, "s"}}) g.output(out, name);
  optimize_graph(g.graph());
  for (auto [out, source, transpose_b, negate_b] :
       {std::tuple{transposed, m, 1, 0}, std::tuple{negated, v, 0, 1}, std::tuple{both, m, 1, 1}}) {
    const Node* node = out->producer;
    EXPECT_EQ(node->inputs[1], source);
    EXPECT_EQ(node->attrs.get_int("transpose_b", 0), transpose_b);
    EXPECT_EQ(node->attrs.get_int("negate_b", 0), negate_b);
    ASSERT_TRUE(out->shape);
    Node copy = *node;
    out->shape = std::nullopt;
    EXPECT_TRUE(infer_kernel_node(copy));
    ASSERT_TRUE(out->shape);
    EXPECT_EQ(out->shape->size(), out == negated ? 1u : 2u);
    EXPECT_EQ((*out->shape)[0].size, 4);
    if (out != negated) {
      EXPECT_EQ((*out->shape)[1].size, 3);
    }
  }
  EXPECT_EQ(stack->producer->attrs.get_int("transpose_b", 0), 0);
  EXPECT_EQ(count(g.graph(), "Transpose"), 1u);  // (the stack's)
  EXPECT_EQ(count(g.graph(), "Neg"), 0u);
}

}  // namespace
}  // namespace pytensor_onnx
