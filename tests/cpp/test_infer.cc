#include <gtest/gtest.h>

#include "builder.h"
#include "errors.h"
#include "infer.h"

namespace pytensor_onnx {
namespace {

Shape sym(std::initializer_list<Dim> dims) { return std::vector<Dim>(dims); }

TEST(Infer, BroadcastingKeepsSymbolsAndStaticDims) {
  Shape a = sym({Dim::named("n"), Dim::known(1), Dim::known(3)});
  Shape b = sym({Dim::known(4), Dim::known(3)});
  Shape c = broadcast_shapes(a, b);
  ASSERT_EQ(c->size(), 3u);
  EXPECT_EQ((*c)[0].symbol, "n");
  EXPECT_EQ((*c)[1].size, 4);
  EXPECT_EQ((*c)[2].size, 3);
  EXPECT_THROW(broadcast_shapes(sym({Dim::known(2)}), sym({Dim::known(3)})), BuildError);
  // Two different unknown dims broadcast to an unknown dim, not to either name.
  Shape d = broadcast_shapes(sym({Dim::named("a")}), sym({Dim::named("b")}));
  EXPECT_FALSE((*d)[0].is_known());
  EXPECT_FALSE((*d)[0].is_named());
}

TEST(Infer, ComparisonsGiveBoolAndArgMaxInt64) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, sym({Dim::named("n"), Dim::known(3)}));
  EXPECT_EQ(g.op1("Less", {x, x})->dtype, DType::Bool);
  Value* i = g.op1("ArgMax", {x}, {{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}});
  EXPECT_EQ(i->dtype, DType::Int64);
  EXPECT_EQ((*i->shape)[0].symbol, "n");
}

TEST(Infer, MatMulShapes) {
  GraphBuilder g(18);
  Value* m = g.input("m", DType::Float64, sym({Dim::named("b"), Dim::known(2), Dim::known(3)}));
  Value* v = g.input("v", DType::Float64, sym({Dim::known(3)}));
  Value* mv = g.op1("MatMul", {m, v});
  ASSERT_EQ(mv->shape->size(), 2u);
  EXPECT_EQ((*mv->shape)[0].symbol, "b");
  EXPECT_EQ((*mv->shape)[1].size, 2);
  Value* bad = g.input("bad", DType::Float64, sym({Dim::known(4)}));
  EXPECT_THROW(g.op("MatMul", {m, bad}), BuildError);
}

TEST(Infer, ReshapeWithMinusOneAndZero) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, sym({Dim::known(2), Dim::known(3), Dim::known(4)}));
  Value* r = g.op1("Reshape", {x, g.int64s({-1, 4})});
  EXPECT_EQ((*r->shape)[0].size, 6);
  Value* z = g.op1("Reshape", {x, g.int64s({0, -1})});
  EXPECT_EQ((*z->shape)[0].size, 2);
  EXPECT_EQ((*z->shape)[1].size, 12);
}

TEST(Infer, SliceWithNegativeStepsAndClamping) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, sym({Dim::known(10)}));
  auto slice = [&](int64_t s, int64_t e, int64_t step) {
    Value* y = g.op1("Slice", {x, g.int64s({s}), g.int64s({e}), g.int64s({0}), g.int64s({step})});
    return (*y->shape)[0].size;
  };
  EXPECT_EQ(slice(0, 100, 1), 10);
  EXPECT_EQ(slice(-3, 100, 1), 3);
  EXPECT_EQ(slice(9, INT64_MIN, -1), 10);
  EXPECT_EQ(slice(8, 1, -3), 3);  // 8, 5, 2
  EXPECT_EQ(slice(5, 2, 1), 0);
  EXPECT_EQ(slice(0, -1, 2), 5);  // 0, 2, 4, 6, 8
}

TEST(Infer, SliceOfOneAxisTwiceIsRefused) {
  // ONNX's checker refuses it; the builder says so when the node is built
  // (found by the core fuzzer, FUZZ_SEED=668176363: axes [1, 1]).
  GraphBuilder g(13);
  Value* x = g.input("x", DType::Float64, sym({Dim::known(0), Dim::known(3)}));
  EXPECT_THROW(g.op1("Slice", {x, g.int64s({0, 0}), g.int64s({0, 1}), g.int64s({1, 1})}), BuildError);
  EXPECT_THROW(g.op1("Slice", {x, g.int64s({0, 0}), g.int64s({0, 1}), g.int64s({1, -1})}), BuildError);
  Value* y = g.op1("Slice", {x, g.int64s({0, 0}), g.int64s({0, 1}), g.int64s({0, 1})});
  EXPECT_EQ((*y->shape)[1].size, 1);
}

TEST(Infer, ConcatGatherUnsqueezeSqueeze) {
  GraphBuilder g(18);
  Value* a = g.input("a", DType::Int64, sym({Dim::known(2), Dim::named("n")}));
  Value* b = g.input("b", DType::Int64, sym({Dim::known(3), Dim::named("n")}));
  Value* c = g.op1("Concat", {a, b}, {{"axis", int64_t{0}}});
  EXPECT_EQ((*c->shape)[0].size, 5);
  EXPECT_EQ((*c->shape)[1].symbol, "n");
  Value* idx = g.input("i", DType::Int64, sym({Dim::known(4), Dim::known(1)}));
  Value* gathered = g.op1("Gather", {c, idx}, {{"axis", int64_t{1}}});
  EXPECT_EQ(gathered->shape->size(), 3u);
  EXPECT_EQ((*gathered->shape)[1].size, 4);
  Value* u = g.op1("Unsqueeze", {a}, {{"axes", std::vector<int64_t>{0, -1}}});
  EXPECT_EQ(u->shape->size(), 4u);
  EXPECT_EQ((*u->shape)[3].size, 1);
  Value* s = g.op1("Squeeze", {u}, {{"axes", std::vector<int64_t>{0}}});
  EXPECT_EQ(s->shape->size(), 3u);
  EXPECT_THROW(g.op("Squeeze", {a}, {{"axes", std::vector<int64_t>{0}}}), BuildError);
}

TEST(Infer, UnsqueezeAtRunTimeAxesKeepsTheRankWhereTheirCountIsStatic) {
  // A run-time check's data dependency (dispatch/broadcast.py
  // checked_outputs): Unsqueeze at axes computed in the graph, Squeeze back.
  // The rank is known, not where the 1s go; an If branch's result lost its
  // rank so (fuzz case-35fa1e78653a).
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, sym({Dim::named("n"), Dim::known(3)}));
  Value* axes = g.input("axes", DType::Int64, sym({Dim::known(1)}));
  Value* u = g.op1("Unsqueeze", {x, axes});
  ASSERT_TRUE(u->shape.has_value());
  ASSERT_EQ(u->shape->size(), 3u);
  for (const Dim& d : *u->shape) EXPECT_FALSE(d.is_known());
  Value* s = g.op1("Squeeze", {u}, {{"axes", std::vector<int64_t>{0}}});
  ASSERT_TRUE(s->shape.has_value());
  EXPECT_EQ(s->shape->size(), 2u);
  // A hostile static count is refused, not allocated.
  Value* huge = g.input("huge", DType::Int64, sym({Dim::known(int64_t{1} << 40)}));
  EXPECT_THROW(g.op1("Unsqueeze", {x, huge}), BuildError);
  // Axes of a run-time count: the rank is not known.
  Value* some = g.input("some", DType::Int64, sym({Dim::named("k")}));
  EXPECT_FALSE(g.op1("Unsqueeze", {x, some})->shape.has_value());
}

TEST(Infer, CastAndWhereDtypes) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Int8, sym({Dim::known(2)}));
  EXPECT_EQ(g.cast(x, DType::Float64)->dtype, DType::Float64);
  Value* c = g.input("c", DType::Bool, sym({Dim::known(2)}));
  Value* f = g.input("f", DType::Float32, sym({Dim::known(1)}));
  Value* w = g.op1("Where", {c, f, f});
  EXPECT_EQ(w->dtype, DType::Float32);
  EXPECT_EQ((*w->shape)[0].size, 2);
}

}  // namespace
}  // namespace pytensor_onnx
