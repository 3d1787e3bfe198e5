// The linear-algebra recipes (linalg.cc, linalg_spectral.cc, linalg_schur.cc): each builds for
// float32 and float64 stacks of any batch rank keeping the dtype, gives the
// output kinds its docstring promises, rejects integer matrices, and does
// O(n) or O(log n) sequential work (one Loop per factorization, not one per
// column). Values are checked against SciPy/NumPy in tests/python/test_slinalg.py,
// test_nlinalg.py and test_linalg_spectral.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "builder.h"
#include "errors.h"

namespace pytensor_onnx {
namespace {

size_t count(const GraphBuilder& g, const std::string& op) {
  const auto nodes = g.graph().nodes();
  return static_cast<size_t>(std::count_if(nodes.begin(), nodes.end(), [&](const Node* n) { return n->op_type == op; }));
}

// Shapes (batch..., rows, cols) for batch ranks 0, 1 and 2; -1 is an unknown dim.
const std::vector<std::vector<int64_t>> kBatches = {{}, {2}, {-1, 3}};

std::vector<int64_t> stacked(const std::vector<int64_t>& batch, std::vector<int64_t> matrix) {
  std::vector<int64_t> shape = batch;
  shape.insert(shape.end(), matrix.begin(), matrix.end());
  return shape;
}

struct Case {
  std::string recipe;
  int inputs;  // 1: a square matrix; 2: a square matrix and a right-hand side (n, k); 3: lstsq's (a, b, rcond)
  Attributes attrs;
  std::vector<DType> output_dtypes_for_float;  // DType::Undefined: the input's float dtype
};

std::vector<Case> cases() {
  const DType same = DType::Undefined;
  return {
      {"cholesky", 1, {{"lower", int64_t{1}}}, {same}},
      {"cholesky", 1, {{"lower", int64_t{0}}}, {same}},
      {"solve_triangular", 2, {{"lower", int64_t{1}}, {"b_ndim", int64_t{2}}}, {same}},
      {"cholesky_solve", 2, {{"lower", int64_t{1}}, {"b_ndim", int64_t{2}}}, {same}},
      {"solve", 2, {{"assume_a", std::string("gen")}, {"b_ndim", int64_t{2}}}, {same}},
      {"solve", 2, {{"assume_a", std::string("pos")}, {"b_ndim", int64_t{2}}}, {same}},
      {"matrix_inverse", 1, {}, {same, DType::Bool}},
      {"det", 1, {}, {same}},
      {"slogdet", 1, {}, {same, same}},
      {"lu_factor", 1, {}, {same, DType::Int64, DType::Int64, DType::Bool}},
      {"eigh", 1, {{"lower", int64_t{1}}}, {same, same}},
      {"expm", 1, {}, {same}},
      {"qr", 1, {{"pivoting", int64_t{0}}}, {same, same, same, DType::Int64}},
      {"schur", 1, {}, {same, same}},
  };
}

Value* operand(GraphBuilder& g, const std::string& name, DType dtype, const std::vector<int64_t>& shape) {
  return g.input(name, dtype, shape_of_sizes(shape));
}

TEST(LinalgRecipes, BuildForBothFloatDtypesAndEveryBatchRank) {
  for (const Case& c : cases()) {
    for (DType dtype : {DType::Float64, DType::Float32}) {
      for (const auto& batch : kBatches) {
        GraphBuilder g(18, "main", /*use_functions=*/false);
        std::vector<Value*> in{operand(g, "a", dtype, stacked(batch, {4, 4}))};
        if (c.inputs == 2) in.push_back(operand(g, "b", dtype, stacked(batch, {4, 2})));
        std::vector<Value*> out = g.recipe(c.recipe, in, c.attrs);
        ASSERT_EQ(out.size(), c.output_dtypes_for_float.size()) << c.recipe;
        for (size_t i = 0; i < out.size(); ++i) {
          const DType want = c.output_dtypes_for_float[i] == DType::Undefined ? dtype : c.output_dtypes_for_float[i];
          EXPECT_EQ(out[i]->dtype, want) << c.recipe << " output " << i << " batch rank " << batch.size();
        }
      }
    }
  }
}

TEST(LinalgRecipes, FactorsKeepTheStackRank) {
  GraphBuilder g(18, "main", /*use_functions=*/false);
  Value* a = operand(g, "a", DType::Float64, {2, 3, 5, 5});
  for (const char* name : {"cholesky", "expm"}) {
    Value* out = g.recipe(name, {a}, {{"lower", int64_t{1}}})[0];
    ASSERT_TRUE(out->shape.has_value()) << name;
    ASSERT_EQ(out->shape->size(), 4u) << name;
    // The sizes come out of a Loop, so the builder leaves them unknown (the
    // rules set them from PyTensor's output type); the rank it knows.
  }
}

TEST(LinalgRecipes, RejectIntegerMatrices) {
  for (const Case& c : cases()) {
    GraphBuilder g(18, "main", /*use_functions=*/false);
    std::vector<Value*> in{operand(g, "a", DType::Int64, {3, 3})};
    if (c.inputs == 2) in.push_back(operand(g, "b", DType::Int64, {3, 1}));
    EXPECT_THROW(g.recipe(c.recipe, in, c.attrs), BuildError) << c.recipe;
  }
}

TEST(LinalgRecipes, RejectStaticNonSquareMatrices) {
  // det of a static (0, 1) matrix built a model the ONNX checker rejects (a
  // Concat of dims inference proves unequal); found by the core fuzzer,
  // FUZZ_SEED=1094003216. A square matrix of unknown order still builds.
  for (const Case& c : cases()) {
    if (c.recipe == "qr") continue;  // any m x n
    for (const std::vector<int64_t>& matrix : {std::vector<int64_t>{0, 1}, std::vector<int64_t>{2, 0, 1},
                                               std::vector<int64_t>{3, 2}}) {
      GraphBuilder g(13, "main", /*use_functions=*/false);
      std::vector<Value*> in{operand(g, "a", DType::Float64, matrix)};
      if (c.inputs == 2) in.push_back(operand(g, "b", DType::Float64, {matrix[matrix.size() - 2], 1}));
      EXPECT_THROW(g.recipe(c.recipe, in, c.attrs), BuildError) << c.recipe;
    }
    GraphBuilder g(13, "main", /*use_functions=*/false);
    std::vector<Value*> in{operand(g, "a", DType::Float64, {-1, 0})};
    if (c.inputs == 2) in.push_back(operand(g, "b", DType::Float64, {-1, 1}));
    EXPECT_NO_THROW(g.recipe(c.recipe, in, c.attrs)) << c.recipe;
  }
}

TEST(LinalgRecipes, FactorizationsAreOneLoopNotOnePerColumn) {
  // Cholesky and LU take one Loop over the columns; the triangular inverse
  // (recursive doubling) one more over log2(n) levels. A recipe unrolled per
  // column would show n Loops or none at all.
  for (const char* name : {"cholesky", "lu_factor"}) {
    GraphBuilder g(18, "main", /*use_functions=*/false);
    g.recipe(name, {operand(g, "a", DType::Float64, {-1, 16, 16})}, {{"lower", int64_t{1}}});
    EXPECT_EQ(count(g, "Loop"), 1u) << name;
  }
  GraphBuilder g(18, "main", /*use_functions=*/false);
  Value* a = operand(g, "a", DType::Float64, {16, 16});
  Value* b = operand(g, "b", DType::Float64, {16, 3});
  g.recipe("solve_triangular", {a, b}, {{"lower", int64_t{1}}, {"b_ndim", int64_t{2}}});
  EXPECT_EQ(count(g, "Loop"), 1u);
  EXPECT_GE(count(g, "MatMul") + count(g, "Gemm") + count(g, "Einsum"), 1u);
}

TEST(LinalgRecipes, SchurIsAHessenbergLoopThenALoopOfSweeps) {
  // linalg_schur.cc: one Loop reduces to Hessenberg form, one iterates the
  // Francis sweeps (each sweep a Loop of bulge-chasing steps in its body),
  // whatever n; unrolled sweeps or steps would show more Loops at the top.
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{-1, 16, 16}, std::vector<int64_t>{2, -1, -1}}) {
    GraphBuilder g(18, "main", /*use_functions=*/false);
    const auto out = g.recipe("schur", {operand(g, "a", DType::Float64, shape)}, {});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(count(g, "Loop"), 2u);
    EXPECT_EQ(out[0]->shape->size(), shape.size());
  }
}

TEST(LinalgRecipes, BuildAtEveryOpsetFrom13) {
  for (int opset : {13, 15, 17, 18, 21}) {
    GraphBuilder g(opset, "main", /*use_functions=*/false);
    Value* a = operand(g, "a", DType::Float64, {-1, 4, 4});
    Value* b = operand(g, "b", DType::Float64, {-1, 4, 1});
    EXPECT_EQ(g.recipe("cholesky", {a}, {{"lower", int64_t{1}}})[0]->dtype, DType::Float64) << opset;
    EXPECT_EQ(g.recipe("solve", {a, b}, {{"assume_a", std::string("gen")}, {"b_ndim", int64_t{2}}})[0]->dtype,
              DType::Float64)
        << opset;
    EXPECT_EQ(g.recipe("eigh", {a}, {{"lower", int64_t{1}}}).size(), 2u) << opset;
  }
}

}  // namespace
}  // namespace pytensor_onnx
