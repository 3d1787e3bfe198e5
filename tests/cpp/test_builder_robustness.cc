// Bad calls leave the graph as it was and fail with BuildError/UnsupportedError
// (found by tests/python/test_core_fuzz.py; `make sanitize` runs these under
// ASan and UBSan).
#include <gtest/gtest.h>

#include "builder.h"
#include "errors.h"
#include "kernel_ops.h"
#include "passes/pass_manager.h"

namespace pytensor_onnx {
namespace {

Shape dims(std::initializer_list<int64_t> sizes) { return shape_of_sizes(sizes); }

// A value's static sizes (-1 for an unknown dim).
std::vector<int64_t> sizes_of(const Value* v) {
  std::vector<int64_t> out;
  for (const Dim& d : v->shape.value()) out.push_back(d.is_known() ? d.size : -1);
  return out;
}

// The message of the BuildError `build` throws ("" when it throws none).
template <class Build>
std::string build_error(Build build) {
  try {
    build();
  } catch (const BuildError& e) {
    return e.what();
  }
  return "";
}

TEST(BuilderRobustness, RefusedOpLeavesNoNode) {
  GraphBuilder g(13);
  Value* x = g.input("x", DType::Float64, dims({2}));
  // 'to' as a string used to be refused only after the node was added, so
  // the model kept a Cast with a string attribute.
  EXPECT_THROW(g.op1("Cast", {x}, {{"to", std::string("float32")}}), BuildError);
  EXPECT_THROW(g.op1("ReduceSum", {x}, {{"axes", std::vector<int64_t>{5}}}), BuildError);
  EXPECT_EQ(g.graph().num_nodes(), 0u);
  EXPECT_TRUE(x->users.empty());
  // The graph still builds, and names stay free.
  Value* y = g.op1("Neg", {x});
  EXPECT_EQ(y->name, "neg");
  EXPECT_EQ(g.graph().num_nodes(), 1u);
}

TEST(BuilderRobustness, AttributeTypesAreChecked) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, dims({2, 3}));
  EXPECT_THROW(g.op1("Transpose", {x}, {{"perm", std::string("10")}}), BuildError);
  EXPECT_THROW(g.op1("Cast", {x}, {{"to", int64_t{255}}}), BuildError);  // no such ONNX dtype
  EXPECT_THROW(g.op1("Cast", {x}, {{"to", 1.0}}), BuildError);
  EXPECT_THROW(g.op1("Softmax", {x}, {{"axis", 1.5}}), BuildError);
  EXPECT_THROW(g.op1("Constant", {}, {}), BuildError);  // no value
  EXPECT_THROW(g.op1("Constant", {}, {{"value", 1.5}}), BuildError);
  EXPECT_THROW(g.op1("Constant", {x}, {{"value", Tensor::int64s({1})}}), BuildError);  // takes no inputs
  EXPECT_EQ(g.graph().num_nodes(), 0u);
  // Exact conversions: one int for a list of ints, an int for a float.
  Value* t = g.op1("Transpose", {g.op1("Unsqueeze", {x}, {{"axes", int64_t{0}}})}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
  EXPECT_EQ(t->rank(), 3u);
  Value* e = g.op1("Elu", {x}, {{"alpha", int64_t{2}}});
  EXPECT_TRUE(std::holds_alternative<double>(*e->producer->attrs.find("alpha")));
}

TEST(BuilderRobustness, ValuesOfAnotherBuilderAreRefused) {
  GraphBuilder a(18), b(18);
  Value* x = a.input("x", DType::Float32, dims({2}));
  Value* y = b.input("y", DType::Float32, dims({2}));
  EXPECT_THROW(a.op1("Add", {x, y}), BuildError);
  EXPECT_EQ(a.graph().num_nodes(), 0u);
  // A subgraph may read its parent's values, not the other way round.
  GraphBuilder body(a, "body");
  Value* inner = body.op1("Neg", {x});
  EXPECT_THROW(a.op1("Abs", {inner}), BuildError);
}

TEST(BuilderRobustness, LoopTakesATripCountWithoutCondition) {
  // Loop's M and cond are optional but positional: a counted loop leaves cond empty.
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, dims({}));
  GraphBuilder body(g, "loop_body");
  body.input("i", DType::Int64, dims({}));
  Value* cond = body.input("cond", DType::Bool, dims({}));
  Value* acc = body.input("acc", DType::Float64, dims({}));
  body.output(cond, "cond_out");
  body.output(body.op1("Add", {acc, acc}), "acc_out");
  Value* trips = g.constant(Tensor::int64_scalar(3));
  Value* y = g.op("Loop", {trips, nullptr, x}, {{"body", body.shared_graph()}})[0];
  EXPECT_EQ(y->dtype, DType::Float64);
  EXPECT_EQ(g.graph().num_nodes(), 1u);
  // Without any loop-carried value the node is still refused: Loop needs its two positions.
  EXPECT_THROW(g.op("Loop", {trips}, {{"body", body.shared_graph()}}), BuildError);
}

// Inference reads the first dim of a shape-like input and indexes starts,
// repeats and k by position: inputs of the wrong rank or length were read
// past their end (found by comparing two inference tables on random nodes;
// ASan names the read under `make sanitize`). Each is refused instead.
TEST(BuilderRobustness, ElementwiseGathersAndScattersTakeAnAxisOfTheirData) {
  // Found by CI's fresh-seed core fuzzer (seed 1469835646): GatherElements
  // with axis 1 on a vector built, and ONNX Runtime failed the run.
  GraphBuilder g(13);
  Value* v = g.input("v", DType::Float64, dims({3}));
  Value* m = g.input("m", DType::Float64, dims({2, 3}));
  Value* u = g.input("u", DType::Float64, dims({1}));
  Value* idx = g.int64s({0});
  EXPECT_THROW(g.op1("GatherElements", {v, idx}, {{"axis", int64_t{1}}}), BuildError);
  EXPECT_THROW(g.op1("GatherElements", {m, idx}, {{"axis", int64_t{0}}}), BuildError);  // indices of rank 1
  EXPECT_THROW(g.op1("ScatterElements", {v, idx, u}, {{"axis", int64_t{-2}}}), BuildError);
  EXPECT_EQ(g.graph().num_nodes(), 0u);
  Value* ok = g.op1("GatherElements", {v, idx}, {{"axis", int64_t{-1}}});
  EXPECT_EQ(sizes_of(ok), (std::vector<int64_t>{1}));
  EXPECT_EQ(sizes_of(g.op1("ScatterElements", {v, idx, u}, {{"axis", int64_t{0}}})), (std::vector<int64_t>{3}));
}

TEST(BuilderRobustness, GatherRefusesConstantIndicesOutsideAStaticAxis) {
  // Found by CI's fresh-seed core fuzzer (FUZZ_SEED=267291531): a hostile
  // axis made a Gather read index 0 of an axis of size 0; ONNX Runtime failed
  // every run of the model the builder had accepted.
  GraphBuilder g(13);
  Value* x = g.input("x", DType::Float64, dims({1, 0}));
  Value* y = g.input("y", DType::Float64, dims({2, 3}));
  EXPECT_THROW(g.op1("Gather", {x, g.int64s({0})}, {{"axis", int64_t{1}}}), BuildError);
  EXPECT_THROW(g.op1("Gather", {y, g.int64s({1, 3})}, {{"axis", int64_t{1}}}), BuildError);
  EXPECT_THROW(g.op1("Gather", {y, g.int64s({-3})}, {{"axis", int64_t{0}}}), BuildError);
  EXPECT_EQ(g.graph().num_nodes(), 0u);
  // In range (negative indices count from the end), empty indices, or indices known only at run time.
  EXPECT_EQ(sizes_of(g.op1("Gather", {y, g.int64s({-3, 2})}, {{"axis", int64_t{1}}})), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(sizes_of(g.op1("Gather", {x, g.constant(Tensor::int64s({}))}, {{"axis", int64_t{1}}})),
            (std::vector<int64_t>{1, 0}));
  Value* i = g.input("i", DType::Int64, dims({1}));
  EXPECT_EQ(sizes_of(g.op1("Gather", {x, i}, {{"axis", int64_t{1}}})), (std::vector<int64_t>{1, 1}));
}

TEST(BuilderRobustness, ShapeLikeInputsOfTheWrongRankOrLengthAreRefused) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, dims({2, 3}));
  Value* scalar_shape = g.input("s", DType::Int64, dims({}));
  EXPECT_THROW(g.op1("ConstantOfShape", {scalar_shape}), BuildError);
  EXPECT_THROW(g.op1("Expand", {x, scalar_shape}), BuildError);
  EXPECT_THROW(g.op1("Reshape", {x, scalar_shape}), BuildError);
  EXPECT_THROW(g.op1("Tile", {x, g.constant(Tensor::int64s({2}))}), BuildError);  // one repeat for rank 2
  EXPECT_THROW(g.op1("Tile", {x, scalar_shape}), BuildError);
  EXPECT_THROW(g.op1("Slice", {x, g.constant(Tensor::int64s({0})), g.constant(Tensor::int64s({1})),
                               g.constant(Tensor::int64s({0, 1}))}),
               BuildError);  // two axes, one start and end
  EXPECT_THROW(g.op1("Slice", {x, g.constant(Tensor::int64s({0, 0})), g.constant(Tensor::int64s({1})),
                               g.constant(Tensor::int64s({0, 1}))}),
               BuildError);
  EXPECT_THROW(g.op1("Slice", {x, g.constant(Tensor::int64s({0})), g.constant(Tensor::int64s({1})),
                               g.constant(Tensor::int64s({0})), g.constant(Tensor::int64s({1, 1}))}),
               BuildError);  // two steps for one axis
  EXPECT_THROW(g.op("TopK", {x, g.constant(Tensor::int64s({}))}), BuildError);  // no k
  EXPECT_THROW(g.op1("Range", {g.constant(Tensor::int64s({})), g.constant(Tensor::int64_scalar(3)),
                               g.constant(Tensor::int64_scalar(1))}),
               BuildError);
  EXPECT_EQ(g.graph().num_nodes(), 0u);
  // The right forms still build.
  Value* tiled = g.op1("Tile", {x, g.constant(Tensor::int64s({2, 1}))});
  EXPECT_EQ(sizes_of(tiled), (std::vector<int64_t>{4, 3}));
  Value* sliced = g.op1("Slice", {x, g.constant(Tensor::int64s({1})), g.constant(Tensor::int64s({3})),
                                  g.constant(Tensor::int64s({1}))});
  EXPECT_EQ(sizes_of(sliced), (std::vector<int64_t>{2, 2}));
}

// Concat's inputs must agree off the joined axis; the builder took (0, 0)
// and (0, 1) on axis 0 and ONNX's checker refused the model.
TEST(BuilderRobustness, ConcatOfDisagreeingSizesIsRefused) {
  GraphBuilder g(13);
  Value* a = g.input("a", DType::Float64, dims({0, 0}));
  Value* b = g.input("b", DType::Float64, dims({0, 1}));
  EXPECT_THROW(g.op1("Concat", {a, b}, {{"axis", int64_t{0}}}), BuildError);
  EXPECT_EQ(g.graph().num_nodes(), 0u);
  EXPECT_EQ(sizes_of(g.op1("Concat", {a, b}, {{"axis", int64_t{1}}})), (std::vector<int64_t>{0, 1}));
}

// ONNX's Trilu takes matrices (rank >= 2): a vector built, and the checker
// then refused the model (found by the fresh-seed fuzzer). Refused at build
// time at every opset, the recipe before opset 14 included.
TEST(BuilderRobustness, TriluOfLessThanAMatrixIsRefused) {
  for (int opset : {13, 14, 18}) {
    GraphBuilder g(opset);
    Value* v = g.input("v", DType::Float64, dims({3}));
    Value* s = g.input("s", DType::Float64, dims({}));
    EXPECT_THROW(g.op1("Trilu", {v}, {{"upper", int64_t{0}}}), BuildError) << "opset " << opset;
    EXPECT_THROW(g.op1("Trilu", {s}), BuildError) << "opset " << opset;
    EXPECT_EQ(g.graph().num_nodes(), 0u) << "opset " << opset;
    Value* m = g.input("m", DType::Float64, dims({2, 2}));
    EXPECT_EQ(sizes_of(g.op1("Trilu", {m})), (std::vector<int64_t>{2, 2})) << "opset " << opset;
  }
}

// optimize() freed the values it dropped while Python still held handles to
// them; nanobind then gave such a handle to a new value at the same address,
// which did not keep that value's builder alive, and g.op read freed memory
// (core fuzzer, FUZZ_SEED=1094003210: MemoryError std::bad_alloc from g.op,
// a garbage name; flaky, as it depends on the allocator reusing an
// address). Dropped values now stay allocated with their graph, and building
// on one is refused.
TEST(BuilderRobustness, ValuesDroppedByOptimizeStayReadableAndAreRefused) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, dims({2}));
  Value* dead = g.op1("Exp", {x});
  Value* unused = g.constant(Tensor::int64s({1, 2, 3}), "unused");
  g.output(g.op1("Neg", {x}), "y");
  optimize_graph(g.graph());
  ASSERT_EQ(g.graph().num_nodes(), 1u);
  // Under `make sanitize` these reads were heap-use-after-free.
  EXPECT_EQ(dead->name, "exp");
  EXPECT_EQ(dead->dtype, DType::Float32);
  EXPECT_EQ(unused->name, "unused");
  EXPECT_EQ(dead->producer, nullptr);
  EXPECT_NE(build_error([&] { g.op1("Abs", {dead}); }).find("'exp' was removed from the graph by optimize()"),
            std::string::npos);
  EXPECT_NE(build_error([&] { g.op1("Add", {x, dead}); }).find("was removed"), std::string::npos);
  EXPECT_NE(build_error([&] { g.op1("Reshape", {x, unused}); }).find("'unused' was removed"), std::string::npos);
  EXPECT_NE(build_error([&] { g.output(dead, "z"); }).find("was removed"), std::string::npos);
  EXPECT_EQ(g.graph().num_nodes(), 1u);
  EXPECT_EQ(g.graph().outputs().size(), 1u);
}

// Inference gave an output as many unknown dims as a shape-like input's
// static length: a declared length of 2**40 allocated 2**40 dims (a
// std::bad_alloc, or gigabytes for lengths in the hundreds of millions), as
// did the `rank` attribute of the element-wise kernels.
TEST(BuilderRobustness, ShapeLengthsBeyondAnyRankAreRefused) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, dims({2, 3}));
  Value* huge = g.input("huge", DType::Int64, dims({int64_t{1} << 40}));
  const std::string limit = "the target shape's length gives 1099511627776 dims; at most 1024 are supported";
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  EXPECT_NE(build_error([&] { g.op1("Reshape", {x, huge}); }).find(limit), std::string::npos);
  EXPECT_NE(build_error([&] { g.op1("Expand", {x, huge}); }).find(limit), std::string::npos);
  EXPECT_NE(build_error([&] { g.op1("ConstantOfShape", {huge}); }).find("at most 1024"), std::string::npos);
  EXPECT_NE(build_error([&] { g.op("Elemwise_float64", {x}, {{"rank", int64_t{1} << 40}}, 1, kKernelDomain); })
                .find("attribute 'rank' is 1099511627776; at most 1024 dims are supported"),
            std::string::npos);
  EXPECT_EQ(g.graph().num_nodes(), 0u);
  // Lengths a shape can have still give the rank.
  Value* four = g.input("four", DType::Int64, dims({4}));
  EXPECT_EQ(g.op1("Reshape", {x, four})->rank(), 4u);
  EXPECT_EQ(g.op1("Expand", {x, four})->rank(), 4u);
  EXPECT_EQ(g.op1("ConstantOfShape", {four})->rank(), 4u);
  EXPECT_EQ(g.op("Elemwise_float64", {x}, {{"rank", int64_t{3}}}, 1, kKernelDomain)[0]->rank(), 3u);
}

// A Cast without its attribute 'to' names no dtype: refused when built
// (FUZZ_SEED=1745063155, the core fuzzer's hostile attributes; the model
// failed ONNX's checker).
TEST(BuilderRobustness, ACastNeedsItsTargetDtype) {
  GraphBuilder g(13);
  Value* x = g.input("x", DType::Float64, dims({}));
  EXPECT_NE(build_error([&] { g.op1("Cast", {x}); }).find("Cast needs its attribute 'to'"), std::string::npos);
  EXPECT_EQ(g.graph().num_nodes(), 0u);
  EXPECT_EQ(g.op1("Cast", {x}, {{"to", static_cast<int64_t>(DType::Int32)}})->dtype, DType::Int32);
  // Nor to STRING, which no PyTensor dtype is (FUZZ_SEED=4129979009: the
  // string value that came out could not be typed for a caller to feed).
  EXPECT_NE(build_error([&] { g.op1("Cast", {x}, {{"to", static_cast<int64_t>(DType::String)}}); }).find("not STRING"),
            std::string::npos);
  EXPECT_EQ(g.graph().num_nodes(), 1u);
}

// The kernel library's Reduce node (max/min over axes): its input's shape
// without the reduced axes, or with 1 there; axes that are not the input's,
// or not in increasing order, are refused when built.
TEST(BuilderRobustness, TheReduceKernelsShapeAndItsAxes) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, dims({2, -1, 5}));
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  auto reduce = [&](std::vector<int64_t> axes, int64_t keepdims) {
    return g.op("Reduce_float64", {x}, {{"reduction", std::string("max")}, {"axes", axes}, {"keepdims", keepdims}}, 1,
                kKernelDomain)[0];
  };
  EXPECT_EQ(sizes_of(reduce({1}, 0)), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(sizes_of(reduce({0, 2}, 0)), (std::vector<int64_t>{-1}));
  EXPECT_EQ(sizes_of(reduce({0, 2}, 1)), (std::vector<int64_t>{1, -1, 1}));
  EXPECT_EQ(reduce({0, 1, 2}, 0)->rank(), 0u);
  EXPECT_EQ(reduce({1}, 0)->dtype, DType::Float64);
  const size_t built = g.graph().num_nodes();
  for (const std::vector<int64_t>& bad : {std::vector<int64_t>{3}, {-1}, {1, 0}, {1, 1}}) {
    EXPECT_NE(build_error([&] { reduce(bad, 0); }).find("the Reduce kernel's axes"), std::string::npos);
  }
  EXPECT_EQ(g.graph().num_nodes(), built);
}

// Static sizes computed past int64 wrapped (signed overflow): Tile of a 2**40
// dim by 2**40 inferred a dim of 0, a wrong shape. They are unknown now.
TEST(BuilderRobustness, StaticSizesThatOverflowAreUnknown) {
  GraphBuilder g(18);
  const int64_t big = int64_t{1} << 62;
  Value* v = g.input("v", DType::Float32, dims({big}));
  EXPECT_EQ(sizes_of(g.op1("Tile", {v, g.constant(Tensor::int64s({int64_t{1} << 40}))})), (std::vector<int64_t>{-1}));
  EXPECT_EQ(sizes_of(g.op1("Tile", {v, g.constant(Tensor::int64s({1}))})), (std::vector<int64_t>{big}));
  EXPECT_EQ(sizes_of(g.op1("Pad", {v, g.constant(Tensor::int64s({big, big}))})), (std::vector<int64_t>{-1}));
  EXPECT_EQ(sizes_of(g.op1("Pad", {v, g.constant(Tensor::int64s({1, -2}))})), (std::vector<int64_t>{big - 1}));
  EXPECT_EQ(sizes_of(g.op1("Concat", {v, v}, {{"axis", int64_t{0}}})), (std::vector<int64_t>{-1}));
  Value* w = g.input("w", DType::Float32, dims({3}));
  EXPECT_EQ(sizes_of(g.op1("Concat", {w, w, w}, {{"axis", int64_t{0}}})), (std::vector<int64_t>{9}));
}

// A node of a domain the model does not import fails ONNX's checker and
// every runtime's load: refused when built (the core fuzzer's hostile
// attribute `domain`, FUZZ_SEED=4128263634).
TEST(BuilderRobustness, ADomainWithoutAnOpsetImportIsRefused) {
  GraphBuilder g(13);
  Value* x = g.input("x", DType::Float64, dims({}));
  EXPECT_NE(build_error([&] { g.op("Unsqueeze", {x}, {{"axes", std::vector<int64_t>{0}}}, 1, "nonsense"); })
                .find("Unsqueeze: domain 'nonsense' has no opset import; call require_domain('nonsense', version)"),
            std::string::npos);
  EXPECT_EQ(g.graph().num_nodes(), 0u);
  g.require_domain("nonsense", 1);
  EXPECT_EQ(g.op("Unsqueeze", {x}, {{"axes", std::vector<int64_t>{0}}}, 1, "nonsense").size(), 1u);
}

// TopK's K beyond an axis of static size fails every run, and ONNX
// Runtime's load when the TopK sits in an If branch (the builder routes some
// inputs around it): refused when built (the core fuzzer's hostile `axis`,
// FUZZ_SEED=272662187). Where the size is known only at run time the run
// fails, as it should.
TEST(BuilderRobustness, TopKBeyondAStaticAxisIsRefused) {
  GraphBuilder g(13);
  Value* x = g.input("x", DType::Float64, dims({1, -1, 2}));
  auto topk = [&](int64_t k, int64_t axis) {
    return g.op("TopK", {x, g.constant(Tensor::int64s({k}))}, {{"axis", axis}}, 2);
  };
  EXPECT_NE(build_error([&] { topk(2, 0); }).find("K = 2 is not in [0, 1], the size of axis 0"), std::string::npos);
  EXPECT_NE(build_error([&] { topk(-1, 2); }).find("K = -1 is not in [0, 2]"), std::string::npos);
  EXPECT_EQ(topk(2, 2)[0]->shape->at(2).size, 2);
  EXPECT_EQ(topk(0, 0)[0]->shape->at(0).size, 0);
  EXPECT_EQ(topk(7, 1)[0]->shape->at(1).size, 7);  // (the run checks the size it meets)
  // Unique's axis out of range, any axis of a 0-d input (the same seed).
  Value* s = g.input("s", DType::Float64, dims({}));
  EXPECT_NE(build_error([&] { g.op("Unique", {s}, {{"axis", int64_t{0}}}, 4); }).find("axis 0 is out of range for rank 0"),
            std::string::npos);
  EXPECT_NE(build_error([&] { g.op("Unique", {x}, {{"axis", int64_t{-4}}}, 4); }).find("axis -4 is out of range for rank 3"),
            std::string::npos);
  EXPECT_EQ(g.op("Unique", {x}, {{"axis", int64_t{-1}}}, 4).size(), 4u);
}

TEST(BuilderRobustness, AnOpsOutputCountIsCheckedWhereARecipeStandsInForIt) {
  // The TopK of an input whose other axes may be empty is a recipe (an If
  // around the TopK) that builds TopK's two outputs: asked for one, it gave
  // two (core fuzzer, FUZZ_SEED=2762448248). Refused as the plain op is.
  GraphBuilder g(13);
  Value* x = g.input("x", DType::Float64, dims({-1, 4}));
  Value* k = g.constant(Tensor::int64s({2}));
  const size_t before = g.graph().nodes().size();
  EXPECT_NE(build_error([&] { g.op("TopK", {x, k}, {{"axis", int64_t{1}}}, 1); }).find("TopK cannot have 1 outputs"),
            std::string::npos);
  EXPECT_EQ(g.graph().nodes().size(), before);
  EXPECT_EQ(g.op("TopK", {x, k}, {{"axis", int64_t{1}}}, 2).size(), 2u);
}

TEST(BuilderRobustness, GemmOperandsThatCannotMeetAreRefused) {
  // A C of shape (0, 0) against a (0, 1) product built, and ONNX Runtime
  // refused it when the model ran (core fuzzer, FUZZ_SEED=2762448248).
  GraphBuilder g(13);
  Value* a = g.input("a", DType::Float64, dims({0, 0}));
  Value* b = g.input("b", DType::Float64, dims({0, 1}));
  auto gemm = [&](Value* c) { return g.op1("Gemm", {a, b, c}, {{"alpha", 2.0}}); };
  int next = 0;
  auto bias = [&](std::initializer_list<int64_t> sizes) {
    return g.input("c" + std::to_string(next++), DType::Float64, dims(sizes));
  };
  for (std::initializer_list<int64_t> c : {std::initializer_list<int64_t>{0, 0}, {1, 0}, {2}, {0}, {3, 1}}) {
    EXPECT_NE(build_error([&] { gemm(bias(c)); }).find("does not broadcast"),
              std::string::npos);
  }
  for (std::initializer_list<int64_t> c : {std::initializer_list<int64_t>{0, 1}, {1, 1}, {1}, {}, {-1, 1}}) {
    EXPECT_EQ(sizes_of(gemm(bias(c))), (std::vector<int64_t>{0, 1}));
  }
  Value* v = g.input("v", DType::Float64, dims({3}));
  EXPECT_NE(build_error([&] { g.op1("Gemm", {v, b}); }).find("must be matrices"), std::string::npos);
  Value* wide = g.input("w", DType::Float64, dims({2, 3}));
  EXPECT_NE(build_error([&] { g.op1("Gemm", {wide, b}); }).find("contraction dims 3 and 0 differ"), std::string::npos);
  EXPECT_EQ(sizes_of(g.op1("Gemm", {wide, g.input("bt", DType::Float64, dims({5, 3}))}, {{"transB", int64_t{1}}})),
            (std::vector<int64_t>{2, 5}));
}

}  // namespace
}  // namespace pytensor_onnx
