#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "builder.h"
#include "errors.h"
#include "passes/check_links.h"
#include "passes/cse.h"
#include "passes/dead_nodes.h"
#include "passes/dedup_initializers.h"
#include "passes/fold_constants.h"
#include "passes/pack_small_arrays.h"
#include "passes/pass_manager.h"

namespace pytensor_onnx {
namespace {

size_t count(const Graph& g, const std::string& op) {
  size_t n = 0;
  for (const Node* node : g.nodes()) n += node->op_type == op;
  return n;
}

Shape sym(std::initializer_list<Dim> dims) { return std::vector<Dim>(dims); }

template <class F>
void expect_internal_error(const F& call, const std::string& words) {
  try {
    call();
    ADD_FAILURE() << "no error; expected one saying: " << words;
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(Passes, DeadNodesGoAndOutputsStay) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({2}));
  Value* unused = g.op1("Exp", {x});
  g.op1("Log", {unused});
  Value* used = g.op1("Sqrt", {x});
  g.output(used, "y");
  EXPECT_TRUE(eliminate_dead_nodes(g.graph()));
  EXPECT_EQ(g.graph().num_nodes(), 1u);
  EXPECT_EQ(count(g.graph(), "Sqrt"), 1u);
  EXPECT_FALSE(eliminate_dead_nodes(g.graph()));
}

TEST(Passes, IdenticalInitializersMerge) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Int64, shape_of_sizes({3}));
  Value* a = g.op1("Add", {x, g.int64s({1, 2, 3})});
  Value* b = g.op1("Mul", {a, g.int64s({1, 2, 3})});
  Value* c = g.op1("Mul", {b, g.int64s({1, 2, 4})});
  g.output(c, "y");
  EXPECT_EQ(g.graph().initializers().size(), 3u);
  EXPECT_TRUE(deduplicate_initializers(g.graph()));
  EXPECT_EQ(g.graph().initializers().size(), 2u);
  EXPECT_EQ(a->producer->inputs[1], b->producer->inputs[1]);
}

TEST(Passes, CommonSubexpressionsMerge) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({3}));
  Value* e1 = g.op1("Exp", {x});
  Value* e2 = g.op1("Exp", {x});
  Value* sum = g.op1("Add", {e1, e2});
  g.output(sum, "y");
  EXPECT_TRUE(eliminate_common_subexpressions(g.graph()));
  EXPECT_EQ(count(g.graph(), "Exp"), 1u);
  EXPECT_EQ(sum->producer->inputs[0], sum->producer->inputs[1]);
}

TEST(Passes, CseKeepsDistinctAttributes) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({2, 3}));
  Value* a = g.op1("ReduceSum", {x}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", int64_t{0}}});
  Value* b = g.op1("ReduceSum", {x}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", int64_t{1}}});
  g.output(a, "a");
  g.output(b, "b");
  eliminate_common_subexpressions(g.graph());
  EXPECT_EQ(count(g.graph(), "ReduceSum"), 2u);
}

TEST(Passes, ShapeOfStaticValueFoldsToConstant) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({2, 5}));
  Value* s = g.op1("Shape", {x});
  Value* r = g.op1("Reshape", {x, g.op1("Concat", {g.op1("Slice", {s, g.int64s({1}), g.int64s({2})}), g.int64s({-1})}, {{"axis", int64_t{0}}})});
  g.output(r, "y");
  optimize_graph(g.graph());
  EXPECT_EQ(count(g.graph(), "Shape"), 0u);
  EXPECT_EQ(count(g.graph(), "Concat"), 0u);
  ASSERT_EQ(g.graph().num_nodes(), 1u);
  const Value* target = r->producer->inputs[1];
  ASSERT_TRUE(target->constant);
  EXPECT_EQ(target->constant->to_int64s(), (std::vector<int64_t>{5, -1}));
}

TEST(Passes, KnownDimOfAPartlySymbolicShapeFolds) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, sym({Dim::named("n"), Dim::known(7)}));
  Value* s = g.op1("Shape", {x});
  Value* n = g.op1("Gather", {s, g.constant(Tensor::int64_scalar(0))}, {{"axis", int64_t{0}}});
  Value* seven = g.op1("Gather", {s, g.constant(Tensor::int64_scalar(-1))}, {{"axis", int64_t{0}}});
  Value* prod = g.op1("Mul", {n, seven});
  g.output(prod, "y");
  fold_constants(g.graph());
  // The static dim became a constant; the symbolic one still needs Shape at run time.
  ASSERT_TRUE(prod->producer->inputs[1]->constant);
  EXPECT_EQ(prod->producer->inputs[1]->constant->to_int64s(), std::vector<int64_t>{7});
  EXPECT_FALSE(prod->producer->inputs[0]->constant);
}

TEST(Passes, IntegerArithmeticOnConstantsFolds) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, sym({Dim::named("n")}));
  Value* size = g.op1("Sub", {g.op1("Mul", {g.int64s({3}), g.int64s({4})}), g.int64s({2})});
  Value* neg = g.op1("Neg", {size});
  Value* div = g.op1("Div", {g.int64s({-7}), g.int64s({2})});
  Value* y = g.op1("Reshape", {x, g.op1("Concat", {neg, div}, {{"axis", int64_t{0}}})});
  g.output(y, "y");
  optimize_graph(g.graph());
  ASSERT_EQ(g.graph().num_nodes(), 1u);
  // ONNX Div truncates toward zero: -7 / 2 = -3.
  EXPECT_EQ(y->producer->inputs[1]->constant->to_int64s(), (std::vector<int64_t>{-10, -3}));
}

TEST(Passes, ArithmeticOnTheEmptyShapeOfAScalarFoldsToEmpty) {
  // Shape of a scalar is an empty vector; Mul/Sub with a one-value constant
  // broadcasts it to an empty vector (the opset-13 unflatten of a scalar).
  // The fold read the empty operand's first value before.
  GraphBuilder g(13);
  Value* x = g.input("x", DType::Int64, shape_of_sizes({}));
  Value* s = g.op1("Shape", {x});
  Value* zeros = g.op1("Mul", {s, g.int64s({0})});
  Value* ones = g.op1("Sub", {g.int64s({1}), s});
  Value* both = g.op1("Add", {s, s});
  int i = 0;
  for (Value* v : {zeros, ones, both}) {
    g.output(g.op1("Concat", {g.int64s({7}), v}, {{"axis", int64_t{0}}}), "y" + std::to_string(i++));
  }
  optimize_graph(g.graph());
  EXPECT_EQ(count(g.graph(), "Mul") + count(g.graph(), "Sub") + count(g.graph(), "Add"), 0u);
  for (const Value* out : g.graph().outputs()) {
    const Value* folded = out->constant ? out : out->producer->inputs[1];
    ASSERT_TRUE(folded->constant);
    EXPECT_EQ(folded->constant->to_int64s(), out->constant ? std::vector<int64_t>{7} : std::vector<int64_t>{});
  }
}

TEST(Passes, DivisionByZeroIsLeftForTheRuntime) {
  GraphBuilder g(18);
  Value* d = g.op1("Div", {g.int64s({1}), g.int64s({0})});
  g.output(d, "y");
  fold_constants(g.graph());
  EXPECT_EQ(count(g.graph(), "Div"), 1u);
}

TEST(Passes, NoOpCastsAndIdentitiesGo) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({2}));
  Value* c = g.emit("Cast", {x}, {{"to", static_cast<int64_t>(DType::Float32)}}, 1)[0];
  Value* i = g.op1("Identity", {c});
  Value* y = g.op1("Exp", {i});
  g.output(y, "y");
  optimize_graph(g.graph());
  EXPECT_EQ(g.graph().num_nodes(), 1u);
  EXPECT_EQ(y->producer->inputs[0], x);
}

TEST(Passes, ValuesReadBySubgraphsAreKept) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({2}));
  Value* e = g.op1("Exp", {x});  // read only inside the branch
  GraphBuilder then_branch(g, "then");
  Value* inner = then_branch.op1("Log", {e});
  then_branch.output(inner, "then_out");
  GraphBuilder else_branch(g, "else");
  else_branch.output(else_branch.op1("Identity", {x}), "else_out");
  Value* cond = g.input("c", DType::Bool, shape_of_sizes({}));
  Value* y = g.op1("If", {cond}, {{"then_branch", then_branch.shared_graph()}, {"else_branch", else_branch.shared_graph()}});
  g.output(y, "y");
  eliminate_dead_nodes(g.graph());
  EXPECT_EQ(count(g.graph(), "Exp"), 1u);
}

TEST(Passes, DeadWorkInsideSubgraphsGoesAndFreesOuterValues) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({2}));
  Value* e = g.op1("Exp", {x});  // read only by dead work inside the branch
  GraphBuilder then_branch(g, "then");
  then_branch.op1("Log", {e});  // dead
  then_branch.output(then_branch.op1("Sqrt", {x}), "then_out");
  GraphBuilder else_branch(g, "else");
  else_branch.output(else_branch.op1("Neg", {x}), "else_out");
  Value* cond = g.input("c", DType::Bool, shape_of_sizes({}));
  Value* y = g.op1("If", {cond}, {{"then_branch", then_branch.shared_graph()}, {"else_branch", else_branch.shared_graph()}});
  g.output(y, "y");
  optimize_graph(g.graph());
  EXPECT_EQ(count(then_branch.graph(), "Log"), 0u);
  EXPECT_EQ(count(then_branch.graph(), "Sqrt"), 1u);
  EXPECT_EQ(count(g.graph(), "Exp"), 0u);
  EXPECT_EQ(count(g.graph(), "If"), 1u);
}

// A dead If's branches read outer values directly (they are in the values'
// users lists): removing the If takes those reads away with it, at any depth,
// or the lists keep nodes the branches free (a later pass reading the users
// crashed: pack_scalar_inputs_of_kernels in the fuzzer).
TEST(Passes, ADeadIfTakesItsBranchesReadsOfOuterValues) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({}));
  Value* cond = g.input("c", DType::Bool, shape_of_sizes({}));
  Value* kept_result = g.op1("Neg", {x});
  Value* unused = nullptr;
  {
    GraphBuilder then_branch(g, "then");
    GraphBuilder inner_then(then_branch, "inner_then");
    inner_then.output(inner_then.op1("Exp", {x}), "inner_then_out");
    GraphBuilder inner_else(then_branch, "inner_else");
    inner_else.output(inner_else.op1("Neg", {x}), "inner_else_out");
    then_branch.output(then_branch.op1("If", {cond}, {{"then_branch", inner_then.shared_graph()},
                                                      {"else_branch", inner_else.shared_graph()}}),
                       "then_out");
    GraphBuilder else_branch(g, "else");
    else_branch.output(else_branch.op1("Sqrt", {x}), "else_out");
    unused = g.op1("If", {cond}, {{"then_branch", then_branch.shared_graph()}, {"else_branch", else_branch.shared_graph()}});
  }  // (only the If holds its branches now, as when Python has let them go)
  ASSERT_EQ(x->users.size(), 4u);
  ASSERT_EQ(cond->users.size(), 2u);
  g.output(kept_result, "y");
  EXPECT_TRUE(eliminate_dead_nodes(g.graph()));
  EXPECT_EQ(count(g.graph(), "If"), 0u);
  EXPECT_EQ(x->users, (std::vector<Node*>{kept_result->producer}));
  EXPECT_TRUE(cond->users.empty());
  EXPECT_TRUE(unused->removed);
  EXPECT_NO_THROW(check_links(g.graph()));
  // Scalars only a kernel reads: the pass reads each input's users.
  EXPECT_TRUE(pack_small_inputs_of_kernels(g.graph(), {}).empty());
}

// The pass manager's last step: the links passes leave are checked, so a
// broken one is an error naming it rather than a pointer a later pass follows.
TEST(Passes, BrokenLinksAreRefusedAfterThePasses) {
  auto build = [](GraphBuilder& g) {
    Value* x = g.input("x", DType::Float64, shape_of_sizes({2}));
    Value* cond = g.input("c", DType::Bool, shape_of_sizes({}));
    GraphBuilder then_branch(g, "then");
    then_branch.output(then_branch.op1("Exp", {x}), "then_out");
    GraphBuilder else_branch(g, "else");
    else_branch.output(else_branch.op1("Neg", {x}), "else_out");
    Value* y = g.op1("If", {cond}, {{"then_branch", then_branch.shared_graph()}, {"else_branch", else_branch.shared_graph()}});
    g.output(g.op1("Add", {y, x}), "y");
    return x;
  };
  GraphBuilder good(18);
  build(good);
  EXPECT_NO_THROW(optimize_model(good.graph(), nullptr));
  EXPECT_NO_THROW(check_links(good.graph()));

  GraphBuilder stranger(18);
  Node* strangers_node = stranger.op1("Neg", {stranger.input("s", DType::Float64, shape_of_sizes({2}))})->producer;
  GraphBuilder foreign_user(18);
  build(foreign_user)->users.push_back(strangers_node);
  expect_internal_error([&] { check_links(foreign_user.graph()); }, "lists a user that is no node of the graph");

  GraphBuilder missing_read(18);
  Value* x = build(missing_read);
  x->users.erase(x->users.begin());  // (the branch's Exp, or the Add: a read its list lost)
  expect_internal_error([&] { check_links(missing_read.graph()); }, "is read 3 times and lists 2 users");

  GraphBuilder twice(18);
  Value* x2 = build(twice);
  x2->users.push_back(x2->users.back());
  expect_internal_error([&] { check_links(twice.graph()); }, "times, which reads it 1 times");
}

// A branch reads one of two identical outer values: CSE redirects the read
// to the kept twin and removes the other (found on an SVD gradient graph,
// where a name-based check took the redirected read for a live one).
TEST(Passes, CseRedirectsSubgraphReadsOfTheRemovedTwin) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({2}));
  Value* kept = g.op1("Exp", {x});
  Value* twin = g.op1("Exp", {x});  // read only inside the branch
  GraphBuilder then_branch(g, "then");
  then_branch.output(then_branch.op1("Log", {twin}), "then_out");
  GraphBuilder else_branch(g, "else");
  else_branch.output(else_branch.op1("Neg", {x}), "else_out");
  Value* cond = g.input("c", DType::Bool, shape_of_sizes({}));
  Value* y = g.op1("If", {cond}, {{"then_branch", then_branch.shared_graph()}, {"else_branch", else_branch.shared_graph()}});
  g.output(g.op1("Add", {y, kept}), "y");
  EXPECT_TRUE(eliminate_common_subexpressions(g.graph()));
  EXPECT_EQ(count(g.graph(), "Exp"), 1u);
  const Node* log = then_branch.graph().nodes()[0];
  EXPECT_EQ(log->inputs[0], kept);
}

TEST(Passes, NestedSubgraphReadsKeepTheirValues) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({2}));
  Value* cond = g.input("c", DType::Bool, shape_of_sizes({}));
  GraphBuilder outer_then(g, "outer_then");
  Value* mid = outer_then.op1("Exp", {x});  // read only by the nested branch
  GraphBuilder inner_then(outer_then, "inner_then");
  inner_then.output(inner_then.op1("Log", {mid}), "inner_then_out");
  GraphBuilder inner_else(outer_then, "inner_else");
  inner_else.output(inner_else.op1("Neg", {x}), "inner_else_out");
  Value* inner = outer_then.op1(
      "If", {cond}, {{"then_branch", inner_then.shared_graph()}, {"else_branch", inner_else.shared_graph()}});
  outer_then.output(inner, "outer_then_out");
  GraphBuilder outer_else(g, "outer_else");
  outer_else.output(x, "outer_else_out");  // an enclosing value: returned through an Identity
  Value* y = g.op1("If", {cond}, {{"then_branch", outer_then.shared_graph()}, {"else_branch", outer_else.shared_graph()}});
  g.output(y, "y");
  optimize_graph(g.graph());
  EXPECT_EQ(count(outer_then.graph(), "Exp"), 1u);
  EXPECT_EQ(count(inner_then.graph(), "Log"), 1u);
  ASSERT_EQ(outer_else.graph().outputs().size(), 1u);
  EXPECT_TRUE(outer_else.graph().owns(outer_else.graph().outputs()[0]));
  EXPECT_EQ(count(outer_else.graph(), "Identity"), 1u);
}

TEST(Passes, CommonSubexpressionsInsideALoopBodyMerge) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({2}));
  GraphBuilder body(g, "body");
  body.input("i", DType::Int64, shape_of_sizes({}));
  Value* keep_going = body.input("cond", DType::Bool, shape_of_sizes({}));
  Value* carried = body.input("acc", DType::Float32, shape_of_sizes({2}));
  Value* a = body.op1("Exp", {x});
  Value* b = body.op1("Exp", {x});
  body.output(keep_going, "cond_out");
  body.output(body.op1("Add", {carried, body.op1("Mul", {a, b})}), "acc_out");
  Value* trips = g.int64s({3});
  Value* start = g.constant(Tensor::scalar(DType::Bool, 1.0));
  Value* y = g.op("Loop", {g.op1("Squeeze", {trips}), start, x}, {{"body", body.shared_graph()}}, 1)[0];
  g.output(y, "y");
  optimize_graph(g.graph());
  EXPECT_EQ(count(body.graph(), "Exp"), 1u);
  EXPECT_EQ(body.graph().outputs().size(), 2u);
}

}  // namespace
}  // namespace pytensor_onnx

namespace pytensor_onnx {
namespace {

TEST(Passes, ViewsOfConstantsFoldWithoutCopying) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float32, shape_of_sizes({2, 3}));
  std::vector<float> bias{1.f, 2.f, 3.f};
  Value* b = g.constant(Tensor::from_values(DType::Float32, bias, {3}), "bias");
  Value* row = g.op1("Unsqueeze", {b}, {{"axes", std::vector<int64_t>{0}}});
  Value* y = g.op1("Add", {x, row});
  g.output(y, "y");
  optimize_graph(g.graph());
  ASSERT_EQ(g.graph().num_nodes(), 1u);
  const Value* folded = y->producer->inputs[1];
  ASSERT_TRUE(folded->constant);
  EXPECT_EQ(folded->constant->dims(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(g.graph().initializers().size(), 1u);  // the original bias went with its last use
}

}  // namespace
}  // namespace pytensor_onnx

#include "infer.h"
#include "kernel_ops.h"
#include "passes/fold_into_kernels.h"
#include "passes/merge_kernel_stages.h"
#include "passes/record_input_shapes.h"

namespace pytensor_onnx {
namespace {

// An Elemwise kernel node (the program does not matter to the pass).
Value* elemwise_kernel(GraphBuilder& g, std::vector<Value*> inputs) {
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  return g.op("Elemwise_float64", std::move(inputs), {}, 1, kKernelDomain)[0];
}

TEST(FoldIntoKernels, LeadingUnsqueezeAndSqueezeAreReadPast) {
  GraphBuilder g(18);
  Value* s = g.input("s", DType::Float64, shape_of_sizes({}));
  Value* v = g.input("v", DType::Float64, shape_of_sizes({1, 5}));
  Value* m = g.input("m", DType::Float64, sym({Dim::named("n"), Dim::known(5)}));
  Value* expanded = g.op1("Unsqueeze", {s, g.int64s({0, 1})});  // () -> (1, 1)
  Value* squeezed = g.op1("Squeeze", {v, g.int64s({0})});       // (1, 5) -> (5,)
  Value* out = elemwise_kernel(g, {expanded, squeezed, m});
  g.output(out, "y");
  EXPECT_TRUE(optimize_graph(g.graph()) > 0);
  const Node* kernel = out->producer;
  EXPECT_EQ(kernel->inputs[0], s);
  EXPECT_EQ(kernel->inputs[1], v);
  EXPECT_EQ(kernel->attrs.get_int("rank", -1), 2);
  EXPECT_EQ(count(g.graph(), "Unsqueeze") + count(g.graph(), "Squeeze"), 0u);
  // The output keeps its shape.
  ASSERT_TRUE(out->shape);
  EXPECT_EQ(out->shape->size(), 2u);
  EXPECT_EQ((*out->shape)[1].size, 5);
}

TEST(FoldIntoKernels, OtherReadersKeepTheirNodes) {
  GraphBuilder g(18);
  Value* v = g.input("v", DType::Float64, shape_of_sizes({5}));
  Value* leading = g.op1("Unsqueeze", {v, g.int64s({0})});
  Value* out = elemwise_kernel(g, {leading, leading});
  g.output(out, "y");
  g.output(g.op1("Floor", {leading}), "z");
  optimize_graph(g.graph());
  EXPECT_EQ(out->producer->inputs[0], v);
  EXPECT_EQ(out->producer->inputs[1], v);
  EXPECT_EQ(count(g.graph(), "Unsqueeze"), 1u);  // still read by the Floor
}

// The records of attribute input_axes, per input: nullopt where not a view.
std::vector<std::optional<std::vector<int64_t>>> views_of(const Node& node) {
  std::vector<std::optional<std::vector<int64_t>>> views;
  for (size_t i = 0; i < node.inputs.size(); ++i) views.push_back(input_axes_of(node, i));
  return views;
}

TEST(FoldIntoKernels, InnerAxesAndTransposesAreReadAsViews) {
  GraphBuilder g(18);
  Value* a = g.input("a", DType::Float64, sym({Dim::named("n"), Dim::known(5)}));
  Value* b = g.input("b", DType::Float64, shape_of_sizes({5, 4}));
  Value* c = g.input("c", DType::Float64, sym({Dim::named("n")}));
  Value* d = g.input("d", DType::Float64, sym({Dim::named("n"), Dim::known(1), Dim::known(5)}));
  Value* x = g.input("x", DType::Float64, shape_of_sizes({5}));
  Value* e = g.input("e", DType::Float64, sym({Dim::named("n"), Dim::known(3)}));
  Value* transposed = g.op1("Transpose", {b}, {{"perm", std::vector<int64_t>{1, 0}}});  // (4, 5)
  Value* column = g.op1("Unsqueeze", {c, g.int64s({1})});                              // (n, 1)
  Value* squeezed = g.op1("Squeeze", {d, g.int64s({-2})});                            // (n, 5)
  // A chain: x[None, :].T, (5, 1), then a leading axis added: (1, 5, 1),
  // read with e (n, 3) by a kernel of rank 3 (x's axis is the output's 1).
  Value* chain = g.op1("Unsqueeze", {g.op1("Transpose", {g.op1("Unsqueeze", {x, g.int64s({0})})}), g.int64s({0})});
  Value* out = elemwise_kernel(g, {a, transposed, column, squeezed});
  Value* out3 = elemwise_kernel(g, {chain, e});
  g.output(out, "y");
  g.output(out3, "y3");
  EXPECT_GT(optimize_graph(g.graph()), 0);
  EXPECT_EQ(count(g.graph(), "Transpose") + count(g.graph(), "Unsqueeze") + count(g.graph(), "Squeeze"), 0u);
  const Node* kernel = out->producer;
  EXPECT_EQ(kernel->inputs, (std::vector<Value*>{a, b, c, d}));
  using Axes = std::optional<std::vector<int64_t>>;
  EXPECT_EQ(views_of(*kernel), (std::vector<Axes>{std::nullopt, std::vector<int64_t>{1, 0}, std::vector<int64_t>{0},
                                                  std::vector<int64_t>{0, -1, 1}}));
  EXPECT_EQ(kernel->attrs.get_int("rank", -1), 2);
  EXPECT_EQ(out3->producer->inputs[0], x);
  EXPECT_EQ(views_of(*out3->producer)[0], (Axes{std::vector<int64_t>{1}}));
  EXPECT_EQ(out3->producer->attrs.get_int("rank", -1), 3);
  // The outputs keep their shapes, (4, 5) and (1, 5, 3).
  ASSERT_TRUE(out->shape && out->shape->size() == 2);
  EXPECT_EQ((*out->shape)[0].size, 4);  // (n broadcast with b's 4)
  EXPECT_EQ((*out->shape)[1].size, 5);
  ASSERT_TRUE(out3->shape && out3->shape->size() == 3);
  EXPECT_EQ((*out3->shape)[0].size, 1);
  EXPECT_EQ((*out3->shape)[1].size, 5);
  EXPECT_EQ((*out3->shape)[2].size, 3);
}

TEST(FoldIntoKernels, ASizeReadPastAnUnsqueezeIsNoView) {
  // x.shape[0][None, None].T read by a kernel (no leading-axes fold: a
  // Transpose): the view of the size, then the size read from x itself
  // (attribute dim_inputs), which must drop the view (FUZZ_SEED=2297328082:
  // the kernel refused a node that had both).
  GraphBuilder g(13);
  Value* x = g.input("x", DType::Float64, sym({Dim::named("n"), Dim::named("m")}));
  Value* v = g.input("v", DType::Int64, shape_of_sizes({5}));
  Value* size = g.op1("Gather", {g.op1("Shape", {x}), g.constant(Tensor::int64_scalar(0))}, {{"axis", int64_t{0}}});
  Value* as_vector = g.op1("Transpose", {g.op1("Unsqueeze", {size, g.constant(Tensor::int64s({0, 1}))})});
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Value* moved = g.op1("Transpose", {g.op1("Unsqueeze", {v, g.constant(Tensor::int64s({0}))})});  // (5, 1)
  Value* out = g.op("Elemwise_int64", {moved, as_vector}, {}, 1, kKernelDomain)[0];
  // Without another view the attribute goes.
  Value* alone = g.op("Elemwise_int64", {as_vector}, {}, 1, kKernelDomain)[0];
  g.output(out, "y");
  g.output(alone, "z");
  optimize_graph(g.graph());
  const Node* kernel = out->producer;
  EXPECT_EQ(kernel->inputs, (std::vector<Value*>{v, x}));
  EXPECT_TRUE(reads_a_dim(*kernel, 1));
  EXPECT_FALSE(input_axes_of(*kernel, 1));
  EXPECT_EQ(input_axes_of(*kernel, 0), (std::vector<int64_t>{0}));
  EXPECT_EQ(alone->producer->inputs[0], x);
  EXPECT_TRUE(reads_a_dim(*alone->producer, 0));
  EXPECT_FALSE(alone->producer->attrs.has("input_axes"));
}

TEST(FoldIntoKernels, TransposesThatCostMoreReadInPlaceKeepTheirNodes) {
  GraphBuilder g(18);
  // Of unknown size, the innermost axis moved: strided reads of a large
  // array cost more than ONNX Runtime's blocked Transpose.
  Value* big = g.input("big", DType::Float64, sym({Dim::named("n"), Dim::named("m")}));
  Value* large = elemwise_kernel(g, {g.op1("Transpose", {big}, {{"perm", std::vector<int64_t>{1, 0}}})});
  // Of unknown size, the innermost axis kept: read past.
  Value* stack = g.input("stack", DType::Float64, sym({Dim::named("n"), Dim::named("m"), Dim::known(3)}));
  Value* kept = elemwise_kernel(g, {g.op1("Transpose", {stack}, {{"perm", std::vector<int64_t>{1, 0, 2}}})});
  // A constant: ONNX Runtime's constant folding gives the kernel a
  // transposed constant to read in place.
  Value* constant = g.constant(Tensor::from_values(DType::Float64, std::vector<double>{1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3}));
  Value* folded = elemwise_kernel(g, {g.op1("Transpose", {constant}, {{"perm", std::vector<int64_t>{1, 0}}})});
  g.output(large, "large");
  g.output(kept, "kept");
  g.output(folded, "folded");
  optimize_graph(g.graph());
  EXPECT_EQ(large->producer->inputs[0]->producer->op_type, "Transpose");
  EXPECT_FALSE(input_axes_of(*large->producer, 0));
  EXPECT_EQ(kept->producer->inputs[0], stack);
  EXPECT_EQ(input_axes_of(*kept->producer, 0), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_FALSE(input_axes_of(*folded->producer, 0));
  EXPECT_EQ(folded->producer->inputs[0]->producer->op_type, "Transpose");
}

TEST(FoldIntoKernels, AScalarLoopsStepCountIsLeftAlone) {
  GraphBuilder g(18);
  Value* steps = g.input("steps", DType::Int64, shape_of_sizes({1}));
  Value* x = g.input("x", DType::Float64, shape_of_sizes({}));
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Value* n = g.op1("Squeeze", {steps, g.int64s({0})});
  Value* ux = g.op1("Unsqueeze", {x, g.int64s({0})});
  Value* out = g.op("ScalarLoop_float64", {n, ux}, {}, 1, kKernelDomain)[0];
  g.output(out, "y");
  optimize_graph(g.graph());
  EXPECT_EQ(out->producer->inputs[0], n);
  EXPECT_EQ(out->producer->inputs[1], x);
  EXPECT_EQ(out->producer->attrs.get_int("rank", -1), 1);
}

// x.shape[k] as the ONNX graph reads it: Gather(Shape(x), k), a 0-d int64.
Value* size_of(GraphBuilder& g, Value* x, int64_t k) {
  return g.op1("Gather", {g.op1("Shape", {x}), g.constant(Tensor::int64_scalar(k))}, {{"axis", int64_t{0}}});
}

TEST(FoldIntoKernels, TheSizeOfAnAxisIsReadByTheKernelItself) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, sym({Dim::named("n"), Dim::named("m")}));
  Value* s = g.input("s", DType::Float64, shape_of_sizes({}));
  // A kernel reading s and both sizes of x (the second as -1), and a size
  // read by another node too.
  Value* rows = size_of(g, x, 0);
  Value* out = elemwise_kernel(g, {s, rows, size_of(g, x, -1)});
  g.output(out, "y");
  g.output(g.op1("Neg", {rows}), "z");
  EXPECT_TRUE(optimize_graph(g.graph()) > 0);
  const Node* kernel = out->producer;
  EXPECT_EQ(kernel->inputs[1], x);
  EXPECT_EQ(kernel->inputs[2], x);
  EXPECT_EQ(kernel->attrs.get_ints("dim_inputs"), (std::optional<std::vector<int64_t>>{{1, 0, 2, 1}}));
  EXPECT_TRUE(reads_a_dim(*kernel, 1) && reads_a_dim(*kernel, 2) && !reads_a_dim(*kernel, 0));
  // Its output is 0-d: the inputs read for a size do not broadcast.
  ASSERT_TRUE(out->shape);
  EXPECT_EQ(out->shape->size(), 0u);
  EXPECT_EQ(count(g.graph(), "Shape"), 1u);  // still read by the Neg
}

TEST(FoldIntoKernels, OtherReadsOfAShapeStay) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, sym({Dim::named("n"), Dim::named("m")}));
  Value* k = g.input("k", DType::Int64, shape_of_sizes({}));
  Value* whole = g.op1("Shape", {x});
  // A run-time index; a 1-element index vector (a (1,) value); a slice of
  // the shape (Shape's start, opset 15).
  Value* by_k = g.op1("Gather", {whole, k}, {{"axis", int64_t{0}}});
  Value* as_vector = g.op1("Gather", {whole, g.int64s({0})}, {{"axis", int64_t{0}}});
  Value* sliced = g.op1("Gather", {g.op1("Shape", {x}, {{"start", int64_t{1}}}), g.constant(Tensor::int64_scalar(0))},
                        {{"axis", int64_t{0}}});
  Value* out = elemwise_kernel(g, {by_k, as_vector, sliced});
  g.output(out, "y");
  optimize_graph(g.graph());
  EXPECT_FALSE(out->producer->attrs.has("dim_inputs"));
  EXPECT_EQ(count(g.graph(), "Gather"), 3u);
}


// A value's static sizes (-1 for an unknown dim).
std::vector<int64_t> sizes_of(const Value* v) {
  std::vector<int64_t> out;
  for (const Dim& d : v->shape.value()) out.push_back(d.is_known() ? d.size : -1);
  return out;
}

// An Elemwise kernel node of one program: exp of its first input plus the
// others, one output of `dtype` (GT 0 for a bool node).
Value* program_node(GraphBuilder& g, std::vector<Value*> inputs, DType dtype = DType::Float64) {
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  std::string dtypes, program = "Exp float64 0";
  for (size_t i = 0; i < inputs.size(); ++i) dtypes += i ? " float64" : "float64";
  int64_t last = static_cast<int64_t>(inputs.size());
  for (size_t i = 1; i < inputs.size(); ++i) {
    program += ";Add float64 " + std::to_string(last) + " " + std::to_string(i);
    last = static_cast<int64_t>(inputs.size() + i);
  }
  if (dtype == DType::Bool) {
    program += ";Const float64 0.0;GT bool " + std::to_string(last) + " " + std::to_string(last + 1);
    last += 2;
  }
  const std::string op = dtype == DType::Bool ? "Elemwise_bool" : "Elemwise_float64";
  return g.op(op, std::move(inputs),
              {{"input_dtypes", dtypes}, {"program", program}, {"output_registers", std::vector<int64_t>{last}}}, 1,
              kKernelDomain)[0];
}

TEST(MergeKernelStages, AProducerRunsAsAnEarlierStageOfItsReader) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, sym({Dim::named("n")}));
  Value* y = g.input("y", DType::Float64, shape_of_sizes({}));
  Value* a = program_node(g, {x});
  Value* out = program_node(g, {y, a});  // 0-d y against the vector a
  g.output(out, "out");
  optimize_graph(g.graph());
  ASSERT_EQ(g.graph().num_nodes(), 1u);
  const Node* node = out->producer;
  EXPECT_EQ(node->inputs, (std::vector<Value*>{x, y}));
  EXPECT_EQ(node->outputs, (std::vector<Value*>{out}));
  EXPECT_EQ(node->attrs.get_int("stages", 0), 2);
  EXPECT_EQ(*node->attrs.get_ints("stage_inputs"), (std::vector<int64_t>{0, 1, -1}));
  EXPECT_EQ(*node->attrs.get_ints("stage_outputs"), (std::vector<int64_t>{-1, 0}));
  EXPECT_EQ(node->attrs.get_string("program_s1"), std::optional<std::string>("Exp float64 0;Add float64 2 1"));
  ASSERT_TRUE(out->shape);
  EXPECT_TRUE((*out->shape)[0].same_as(Dim::named("n")));
  // The merged node's shapes, inferred again from its stages, are the same.
  Node copy = *node;
  copy.outputs = {g.graph().find_value("out")};
  out->shape = std::nullopt;
  EXPECT_TRUE(infer_kernel_node(copy));
  ASSERT_TRUE(out->shape);
  EXPECT_EQ(out->shape->size(), 1u);
}

// What mode ONNX compiles (compiled_kernels.compile_graph_programs): each
// program stage of the final graph once, flagged where an input holds one
// element whatever the run (a static size-1 input, an earlier stage's 0-d
// output), in If/Loop bodies too.
TEST(MergeKernelStages, StageProgramsAreListedWithTheirInputsOfOneElement) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, sym({Dim::named("n")}));
  Value* y = g.input("y", DType::Float64, shape_of_sizes({}));
  Value* row = g.input("row", DType::Float64, shape_of_sizes({1, 1}));
  Value* a = program_node(g, {x});
  Value* out = program_node(g, {y, a});  // merged: stage 1 reads y (0-d) and stage 0's vector
  Value* same = program_node(g, {row, x});  // stage 0's program again, other inputs: a second entry
  g.output(out, "out");
  g.output(same, "same");
  Value* cond = g.input("c", DType::Bool, shape_of_sizes({}));
  GraphBuilder then_branch(g, "then");
  then_branch.output(program_node(then_branch, {x, y}), "then_out");  // (the 2-input program, again: once)
  GraphBuilder else_branch(g, "else");
  else_branch.output(program_node(else_branch, {x, x, x}), "else_out");
  g.output(g.op1("If", {cond}, {{"then_branch", then_branch.shared_graph()}, {"else_branch", else_branch.shared_graph()}}),
           "branch");
  optimize_graph(g.graph());
  std::vector<std::tuple<std::string, std::string, std::vector<bool>>> listed;
  for (const StageProgram& p : stage_programs(g.graph())) {
    EXPECT_EQ(p.output_registers.size(), 1u);
    listed.emplace_back(p.input_dtypes, p.program, p.scalar_inputs);
  }
  const std::string two = "Exp float64 0;Add float64 2 1";
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, (std::vector<std::tuple<std::string, std::string, std::vector<bool>>>{
                        {"float64", "Exp float64 0", {false}},
                        {"float64 float64", two, {false, true}},  // (the branch's x and 0-d y)
                        {"float64 float64", two, {true, false}},  // (stage 1's 0-d y and vector; row and x: once)
                        {"float64 float64 float64", "Exp float64 0;Add float64 3 1;Add float64 4 2",
                         {false, false, false}}}));
}

TEST(MergeKernelStages, OutputsOthersReadStayOutputsOfTheMergedNode) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({3}));
  Value* a = program_node(g, {x});
  Value* b = program_node(g, {a, x});
  g.output(a, "a");
  g.output(b, "b");
  optimize_graph(g.graph());
  ASSERT_EQ(g.graph().num_nodes(), 1u);
  EXPECT_EQ(a->producer, b->producer);
  EXPECT_EQ(*b->producer->attrs.get_ints("stage_outputs"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(*b->producer->attrs.get_ints("stage_inputs"), (std::vector<int64_t>{0, -1, 0}));
}

TEST(MergeKernelStages, SiblingsReadingOneValueMerge) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({3}));
  Value* y = g.input("y", DType::Float64, shape_of_sizes({3}));
  Value* a = program_node(g, {x});
  Value* b = program_node(g, {y, x});
  g.output(a, "a");
  g.output(b, "b");
  optimize_graph(g.graph());
  ASSERT_EQ(g.graph().num_nodes(), 1u);
  EXPECT_EQ(a->producer->inputs, (std::vector<Value*>{x, y}));
  EXPECT_EQ(*a->producer->attrs.get_ints("stage_inputs"), (std::vector<int64_t>{0, 1, 0}));
}

TEST(MergeKernelStages, TheGraphsOrderAndTheOutputsDtypeAreKept) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({3}));
  // A reader of a between the two nodes: merged, a would come after it.
  Value* a = program_node(g, {x});
  Value* between = g.op1("Neg", {a});
  Value* b = program_node(g, {a, between});
  g.output(b, "b");
  // A bool value read elsewhere cannot be an output of a float64 node; one
  // only the float64 node reads is kept inside it.
  Value* y = g.input("y", DType::Float64, shape_of_sizes({3}));
  Value* flag = program_node(g, {y}, DType::Bool);
  Value* kept = program_node(g, {x, x}, DType::Bool);  // (not flag's program: CSE would merge them)
  g.output(flag, "flag");
  Value* c = g.op("Elemwise_float64", {flag, kept, x},
                  {{"input_dtypes", std::string("bool bool float64")},
                   {"program", std::string("AND bool 0 1;Switch float64 3 2 2")},
                   {"output_registers", std::vector<int64_t>{4}}},
                  1, kKernelDomain)[0];
  g.output(c, "c");
  optimize_graph(g.graph());
  EXPECT_NE(a->producer, b->producer);
  EXPECT_NE(flag->producer, c->producer);
  EXPECT_FALSE(kept->producer);  // inside c's node now
  EXPECT_EQ(count(g.graph(), "Elemwise_bool"), 1u);
}

// A Loop body's kernel node reads an enclosing value that kernel nodes of
// the outer graph read too (its users list names them): nodes of two graphs
// are never merged, and the body's own nodes are.
TEST(MergeKernelStages, NodesOfASubgraphMergeOnlyWithEachOther) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({2}));
  Value* outer = program_node(g, {x});
  GraphBuilder body(g, "body");
  body.input("i", DType::Int64, shape_of_sizes({}));
  Value* keep_going = body.input("cond", DType::Bool, shape_of_sizes({}));
  Value* carried = body.input("acc", DType::Float64, shape_of_sizes({2}));
  Value* inner = program_node(body, {x, carried});
  Value* next = program_node(body, {inner, x});
  body.output(keep_going, "cond_out");
  body.output(next, "acc_out");
  Value* trips = g.int64s({3});
  Value* start = g.constant(Tensor::scalar(DType::Bool, 1.0));
  Value* y = g.op("Loop", {g.op1("Squeeze", {trips}), start, outer}, {{"body", body.shared_graph()}}, 1)[0];
  Value* after = program_node(g, {x, y});
  g.output(outer, "outer");
  g.output(after, "after");
  optimize_graph(g.graph());
  EXPECT_EQ(count(body.graph(), "Elemwise_float64"), 1u);
  EXPECT_EQ(next->producer->attrs.get_int("stages", 0), 2);
  EXPECT_EQ(count(g.graph(), "Elemwise_float64"), 2u);  // the Loop reads outer, before after
  EXPECT_NE(outer->producer, after->producer);
}

// A later node whose other inputs exist before the earlier one runs in the
// earlier one's place, where a reader of the earlier one's output lies
// between them (the shape check of an empty max in PyTensor's graphs).
TEST(MergeKernelStages, ALaterNodeRunsInTheEarlierOnesPlaceWhenItsInputsAllow) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, sym({Dim::named("n")}));
  Value* y = g.input("y", DType::Float64, sym({Dim::named("n")}));
  Value* a = program_node(g, {x});
  Value* size = g.op1("Shape", {a});
  Value* b = program_node(g, {a, y});
  g.output(size, "size");
  g.output(b, "b");
  optimize_graph(g.graph());
  ASSERT_EQ(count(g.graph(), "Elemwise_float64"), 1u);
  const Node* node = b->producer;
  EXPECT_EQ(a->producer, node);  // read by the Shape: an output of the merged node
  EXPECT_EQ(g.graph().nodes().front(), node);  // in a's place, before the Shape
  EXPECT_EQ(*node->attrs.get_ints("stage_outputs"), (std::vector<int64_t>{0, 1}));
}

// ONNX's ReduceSum of float64 over constant axes, and the Reduce kernel, are
// reduction stages (attributes reduce, axes, keepdims); a ReduceSum that
// takes earlier stages becomes an Elemwise node.
TEST(MergeKernelStages, ReductionsAreStages) {
  GraphBuilder g(18);
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Value* x = g.input("x", DType::Float64, sym({Dim::named("n"), Dim::known(3)}));
  Value* a = program_node(g, {x});
  Value* sum = g.op1("ReduceSum", {a, g.int64s({-2})}, {{"keepdims", int64_t{0}}});
  Value* max = g.op("Reduce_float64", {a}, {{"reduction", std::string("max")}, {"axes", std::vector<int64_t>{1}},
                                             {"keepdims", int64_t{1}}}, 1, kKernelDomain)[0];
  Value* everything = g.op1("ReduceSum", {a});  // no axes: all of them
  g.output(sum, "sum");
  g.output(max, "max");
  g.output(everything, "everything");
  optimize_graph(g.graph());
  ASSERT_EQ(g.graph().num_nodes(), 1u);
  const Node* node = sum->producer;
  EXPECT_EQ(node->op_type, "Elemwise_float64");
  EXPECT_EQ(node->domain, kKernelDomain);
  EXPECT_EQ(node->attrs.get_int("stages", 0), 4);
  EXPECT_EQ(node->attrs.get_string("reduce_s1"), std::optional<std::string>("sum"));
  EXPECT_EQ(*node->attrs.get_ints("axes_s1"), (std::vector<int64_t>{0}));
  EXPECT_EQ(node->attrs.get_int("keepdims_s1", -1), 0);
  EXPECT_EQ(node->attrs.get_string("reduce_s2"), std::optional<std::string>("max"));
  EXPECT_EQ(*node->attrs.get_ints("axes_s3"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(*node->attrs.get_ints("stage_inputs"), (std::vector<int64_t>{0, -1, -1, -1}));
  // The shapes, inferred again from the stages.
  for (Value* out : node->outputs) out->shape = std::nullopt;
  Node copy = *node;
  EXPECT_TRUE(infer_kernel_node(copy));
  EXPECT_EQ(sizes_of(sum), (std::vector<int64_t>{3}));
  EXPECT_EQ(sizes_of(max), (std::vector<int64_t>{-1, 1}));
  EXPECT_EQ(sizes_of(everything), (std::vector<int64_t>{1, 1}));  // (keepdims is 1 unless given)
}

// Reductions the kernel cannot take stay ONNX's: axes known only at run
// time, an empty axes list with noop_with_empty_axes, a float32 sum; and two
// ReduceSums alone (no kernel node) are not merged.
TEST(MergeKernelStages, OtherReductionsStayNodes) {
  GraphBuilder g(18);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({2, 3}));
  Value* f = g.input("f", DType::Float32, shape_of_sizes({2, 3}));
  Value* z = g.input("z", DType::Float64, shape_of_sizes({2, 3}));
  Value* axes = g.input("axes", DType::Int64, shape_of_sizes({1}));
  Value* a = program_node(g, {x});
  g.output(g.op1("ReduceSum", {a, axes}), "run_time_axes");
  g.output(g.op1("ReduceSum", {a}, {{"noop_with_empty_axes", int64_t{1}}}), "noop");
  g.output(g.op1("ReduceSum", {z, g.int64s({0})}), "alone_0");
  g.output(g.op1("ReduceSum", {z, g.int64s({1})}), "alone_1");
  g.output(g.op1("ReduceSum", {f, g.int64s({1})}), "float32");
  optimize_graph(g.graph());
  EXPECT_EQ(count(g.graph(), "ReduceSum"), 5u);
  EXPECT_EQ(count(g.graph(), "Elemwise_float64"), 1u);
}

// PyTensor's gradient of gammaincc, as its rules build it: an int32 program
// gives a loop's step count, cast to int64; a float64 program its state; the
// loop's until flag (0 or 1 in the state's dtype) is cast to bool, and a last
// program reads the loop's state and flag. All of it is one node: the loop a
// stage (its attributes as the node's), the exact casts one-instruction
// programs; a cast that rounds stays ONNX's.
TEST(MergeKernelStages, LoopsAndExactCastsAreStages) {
  GraphBuilder g(18);
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Value* x = g.input("x", DType::Float64, sym({Dim::named("n")}));
  Value* steps32 = g.op("Elemwise_int32", {x},
                        {{"input_dtypes", std::string("float64")}, {"program", std::string("Const int32 7")},
                         {"output_registers", std::vector<int64_t>{1}}},
                        1, kKernelDomain)[0];
  Value* steps = g.op1("Cast", {steps32}, {{"to", int64_t{7}}});
  Value* state = program_node(g, {x});
  // state <- state * 0.5 until state < 1e-3 (registers: state 0, x 1).
  const Attributes loop_attrs = {{"input_dtypes", std::string("float64 float64")},
                                 {"program", std::string("Const float64 0.5;Mul float64 0 2;Const float64 0.001;"
                                                         "LT bool 3 4")},
                                 {"num_state", int64_t{1}},
                                 {"next_state", std::vector<int64_t>{3}},
                                 {"until", int64_t{5}}};
  std::vector<Value*> loop = g.op("ScalarLoop_float64", {steps, state, x}, loop_attrs, 2, kKernelDomain);
  Value* flag = g.op1("Cast", {loop[1]}, {{"to", int64_t{9}}});
  Value* out = g.op("Elemwise_float64", {flag, loop[0]},
                    {{"input_dtypes", std::string("bool float64")}, {"program", std::string("Switch float64 0 1 1")},
                     {"output_registers", std::vector<int64_t>{2}}},
                    1, kKernelDomain)[0];
  Value* rounded = g.op1("Cast", {out}, {{"to", int64_t{6}}});  // float64 -> int32: ONNX's
  g.output(out, "out");
  g.output(rounded, "rounded");
  optimize_graph(g.graph());
  ASSERT_EQ(count(g.graph(), "Elemwise_float64"), 1u);
  EXPECT_EQ(count(g.graph(), "ScalarLoop_float64"), 0u);
  EXPECT_EQ(count(g.graph(), "Elemwise_int32"), 0u);
  EXPECT_EQ(count(g.graph(), "Cast"), 1u);
  EXPECT_EQ(rounded->producer->op_type, "Cast");
  const Node* node = out->producer;
  EXPECT_EQ(node->inputs, (std::vector<Value*>{x}));
  ASSERT_EQ(node->attrs.get_int("stages", 0), 6);
  // The stages in the graph's order, the loop's attributes kept as they were.
  size_t loop_stage = 0, casts = 0;
  for (size_t s = 0; s < 6; ++s) {
    if (is_loop_stage(*node, s)) loop_stage = s;
    const std::string program = node->attrs.get_string(stage_attribute("program", s)).value_or("");
    if (program.rfind("Cast ", 0) == 0) ++casts;
  }
  EXPECT_EQ(casts, 2u);
  ASSERT_GT(loop_stage, 0u);
  for (const Attribute& attr : loop_attrs.items()) {
    const AttrValue* merged = node->attrs.find(stage_attribute(attr.name, loop_stage));
    ASSERT_NE(merged, nullptr) << attr.name;
    EXPECT_EQ(*merged, attr.value) << attr.name;
  }
  EXPECT_EQ(stage_input_count(*node, loop_stage), 3u);   // the step count, the state, x
  EXPECT_EQ(stage_output_count(*node, loop_stage), 2u);  // the state, the flag
  // The shape, inferred again from the stages.
  out->shape = std::nullopt;
  Node copy = *node;
  EXPECT_TRUE(infer_kernel_node(copy));
  ASSERT_TRUE(out->shape);
  EXPECT_TRUE((*out->shape)[0].same_as(Dim::named("n")));
}

TEST(MergeKernelStages, OnlyCastsThatKeepEveryValueAreStages) {
  // (to / from bool, and widenings every value survives; not what rounds or overflows.)
  const std::vector<std::pair<DType, DType>> exact = {
      {DType::Float64, DType::Bool}, {DType::Bool, DType::Float32}, {DType::Int32, DType::Int64},
      {DType::UInt32, DType::Int64}, {DType::UInt8, DType::UInt16}, {DType::Int32, DType::Float64},
      {DType::Float32, DType::Float64}};
  const std::vector<std::pair<DType, DType>> rounding = {
      {DType::Float64, DType::Int64}, {DType::Int64, DType::Float64}, {DType::Float64, DType::Float32},
      {DType::Int64, DType::Int32},   {DType::Int8, DType::UInt16},   {DType::Float16, DType::Float64}};
  // Whether the Cast merges into the kernel node that reads it.
  auto merged = [](DType from, DType to) {
    GraphBuilder g(18);
    g.require_domain(kKernelDomain, kKernelDomainVersion);
    Value* x = g.input("x", from, shape_of_sizes({3}));
    Value* cast = g.op1("Cast", {x}, {{"to", static_cast<int64_t>(to)}});
    Value* out = g.op("Elemwise_float64", {cast},
                      {{"input_dtypes", dtype_name(to)}, {"program", std::string("Cast float64 0")},
                       {"output_registers", std::vector<int64_t>{1}}},
                      1, kKernelDomain)[0];
    g.output(out, "out");
    optimize_graph(g.graph());
    return count(g.graph(), "Cast") == 0u;
  };
  for (auto [from, to] : exact) EXPECT_TRUE(merged(from, to)) << dtype_name(from) << " -> " << dtype_name(to);
  for (auto [from, to] : rounding) EXPECT_FALSE(merged(from, to)) << dtype_name(from) << " -> " << dtype_name(to);
}

// A hierarchical model's shape: a[idx] per observation (ONNX's Gather), a
// kernel node of the observations' terms, and the gradient of a[idx] added
// back at idx (ScatterND, reduction add): one node, the Gather and the
// ScatterND its stages (attributes gather and scatter), the indices its inputs.
TEST(MergeKernelStages, GathersAndScattersAreStages) {
  GraphBuilder g(18);
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Value* a = g.input("a", DType::Float64, sym({Dim::named("groups")}));
  Value* idx = g.constant(Tensor::from_values(DType::Int64, std::vector<int64_t>{0, 2, 1, 2}, {4}));
  Value* per_observation = g.op1("Gather", {a, idx}, {{"axis", int64_t{0}}});
  Value* terms = program_node(g, {per_observation});
  Value* base = program_node(g, {a});
  Value* tuples = g.constant(Tensor::from_values(DType::Int64, std::vector<int64_t>{0, 2, 1, 2}, {4, 1}));
  Value* grad = g.op1("ScatterND", {base, tuples, terms}, {{"reduction", std::string("add")}});
  g.output(terms, "terms");
  g.output(grad, "grad");
  optimize_graph(g.graph());
  ASSERT_EQ(g.graph().num_nodes(), 1u);
  const Node* node = grad->producer;
  EXPECT_EQ(node->op_type, "Elemwise_float64");
  std::vector<std::string> kinds;
  for (int64_t s = 0; s < node->attrs.get_int("stages", 0); ++s) {
    if (node->attrs.has(stage_attribute("gather", s))) kinds.push_back("gather");
    if (const auto scatter = node->attrs.get_string(stage_attribute("scatter", s))) kinds.push_back("scatter " + *scatter);
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"gather", "scatter add"}));
  EXPECT_EQ(std::count(node->inputs.begin(), node->inputs.end(), idx), 1);
  EXPECT_EQ(std::count(node->inputs.begin(), node->inputs.end(), tuples), 1);
  // The shapes, inferred again from the stages.
  for (Value* out : node->outputs) out->shape = std::nullopt;
  Node copy = *node;
  EXPECT_TRUE(infer_kernel_node(copy));
  EXPECT_EQ(sizes_of(terms), (std::vector<int64_t>{4}));
  ASSERT_TRUE(grad->shape);
  EXPECT_TRUE((*grad->shape)[0].same_as(Dim::named("groups")));
}

// What a stage cannot do stays ONNX's: a Gather along another axis or of
// int32 indices, a ScatterND that multiplies, or of index tuples of unknown
// length.
TEST(MergeKernelStages, OtherGathersAndScattersStayNodes) {
  GraphBuilder g(18);
  Value* m = g.input("m", DType::Float64, shape_of_sizes({3, 4}));
  Value* a = program_node(g, {m});
  Value* idx32 = g.input("idx32", DType::Int32, shape_of_sizes({2}));
  Value* tuples = g.input("tuples", DType::Int64, sym({Dim::named("n"), Dim::named("k")}));
  Value* one = g.constant(Tensor::from_values(DType::Int64, std::vector<int64_t>{1}, {1, 1}));
  Value* rows = g.input("rows", DType::Float64, shape_of_sizes({1, 4}));
  g.output(program_node(g, {g.op1("Gather", {a, g.int64s({0, 1})}, {{"axis", int64_t{1}}})}), "columns");
  g.output(program_node(g, {g.op1("Gather", {a, idx32}, {{"axis", int64_t{0}}})}), "int32");
  g.output(g.op1("ScatterND", {a, one, rows}, {{"reduction", std::string("mul")}}), "mul");
  g.output(g.op1("ScatterND", {a, tuples, rows}), "unknown_tuples");
  optimize_graph(g.graph());
  EXPECT_EQ(count(g.graph(), "Gather"), 2u);
  EXPECT_EQ(count(g.graph(), "ScatterND"), 2u);
}

// A regression's log-density and gradient: X @ beta (a MatMul kernel node)
// feeds a kernel node of the residuals, whose X.T @ r (read transposed)
// feeds another: one node, the products its stages (attribute `matmul`:
// trans_a, trans_b), X read by both; beta @ beta, which reads beta as the
// last node does, too.
TEST(MergeKernelStages, MatMulKernelNodesAreStages) {
  GraphBuilder g(18);
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Value* X = g.input("X", DType::Float64, sym({Dim::named("n"), Dim::known(3)}));
  Value* beta = g.input("beta", DType::Float64, shape_of_sizes({3}));
  Value* eta = g.op("MatMul_float64", {X, beta}, {}, 1, kKernelDomain)[0];
  Value* residuals = program_node(g, {eta});
  Value* grad = g.op("MatMul_float64", {X, residuals}, {{"trans_a", int64_t{1}}}, 1, kKernelDomain)[0];
  Value* out = program_node(g, {grad, beta});
  g.output(out, "out");
  g.output(g.op("MatMul_float64", {beta, beta}, {}, 1, kKernelDomain)[0], "dot");
  optimize_graph(g.graph());
  ASSERT_EQ(g.graph().num_nodes(), 1u);
  const Node* node = out->producer;
  std::vector<std::vector<int64_t>> products;
  for (int64_t s = 0; s < node->attrs.get_int("stages", 0); ++s) {
    if (const auto flags = node->attrs.get_ints(stage_attribute("matmul", s))) products.push_back(*flags);
  }
  EXPECT_EQ(products, (std::vector<std::vector<int64_t>>{{0, 0}, {1, 0}, {0, 0}}));
  EXPECT_EQ(std::count(node->inputs.begin(), node->inputs.end(), X), 1);
  // The shapes, inferred again from the stages.
  Value* dot = g.graph().find_value("dot");
  out->shape = dot->shape = std::nullopt;
  Node copy = *node;
  EXPECT_TRUE(infer_kernel_node(copy));
  EXPECT_EQ(sizes_of(out), (std::vector<int64_t>{3}));
  EXPECT_EQ(sizes_of(dot), (std::vector<int64_t>{}));
}

// The factor and solve kernel nodes between Elemwise ones (a Gaussian
// process's Cholesky of its kernel matrix, the solves by it) are stages
// (attribute `linalg`: the kernel, beside its attributes); the shapes
// inferred from the stages are the nodes': a batch broadcast, b read
// transposed. Other linear-algebra kernels (LUFactor: four outputs) stay nodes.
TEST(MergeKernelStages, FactorAndSolveKernelNodesAreStages) {
  GraphBuilder g(18);
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Value* a = g.input("a", DType::Float64, sym({Dim::known(2), Dim::named("n"), Dim::named("n")}));
  Value* b = g.input("b", DType::Float64, sym({Dim::known(3), Dim::named("n")}));
  Value* factor = g.op("Cholesky_float64", {program_node(g, {a})}, {{"lower", int64_t{1}}}, 1, kKernelDomain)[0];
  Value* x = g.op("SolveTriangular_float64", {factor, program_node(g, {b})},
                  {{"lower", int64_t{1}}, {"trans", int64_t{1}}, {"b_ndim", int64_t{2}}, {"transpose_b", int64_t{1}}},
                  1, kKernelDomain)[0];
  Value* y = g.op("Solve_float64", {factor, x}, {{"assume_a", std::string("gen")}, {"b_ndim", int64_t{2}}}, 1,
                  kKernelDomain)[0];
  Value* out = program_node(g, {y});
  g.output(out, "out");
  g.output(factor, "factor");
  const std::vector<Value*> lu = g.op("LUFactor_float64", {program_node(g, {a})}, {}, 4, kKernelDomain);
  g.output(lu[0], "lu");
  optimize_graph(g.graph());
  const Node* node = out->producer;
  ASSERT_TRUE(node->attrs.has("stages"));
  std::vector<std::string> kernels;
  for (int64_t s = 0; s < node->attrs.get_int("stages", 0); ++s) {
    if (const auto kernel = node->attrs.get_string(stage_attribute("linalg", s))) kernels.push_back(*kernel);
  }
  EXPECT_EQ(kernels, (std::vector<std::string>{"Cholesky", "SolveTriangular", "Solve"}));
  EXPECT_EQ(factor->producer, node);
  EXPECT_EQ(count(g.graph(), "Cholesky_float64") + count(g.graph(), "SolveTriangular_float64") +
                count(g.graph(), "Solve_float64"),
            0u);
  EXPECT_EQ(count(g.graph(), "LUFactor_float64"), 1u);
  // The shapes, inferred again from the stages: (2, n, n) and (2, n, 3).
  out->shape = factor->shape = std::nullopt;
  Node copy = *node;
  EXPECT_TRUE(infer_kernel_node(copy));
  ASSERT_TRUE(out->shape && out->shape->size() == 3 && factor->shape && factor->shape->size() == 3);
  EXPECT_EQ((*out->shape)[0].size, 2);
  EXPECT_TRUE((*out->shape)[1].same_as(Dim::named("n")));
  EXPECT_EQ((*out->shape)[2].size, 3);
  EXPECT_TRUE((*factor->shape)[2].same_as(Dim::named("n")));
}

// A Transpose between two kernel nodes that feeds ONNX's arithmetic (a
// stage only once merged: a Gaussian process's gradient) kept them apart in
// the merge; read past as a view after it (fold_axis_views_into_merged_kernels),
// the merge runs again and they are one node.
TEST(MergeKernelStages, MergesAgainAfterViewsFold) {
  GraphBuilder g(18);
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({3, 4}));
  Value* a = program_node(g, {x});
  Value* t = g.op1("Transpose", {a}, {{"perm", std::vector<int64_t>{1, 0}}});
  Value* squared = g.op1("Mul", {t, t});
  Value* out = program_node(g, {squared, g.op1("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0}}})});
  g.output(out, "out");
  g.output(a, "a");
  optimize_graph(g.graph());
  EXPECT_EQ(count(g.graph(), "Transpose"), 0u);
  ASSERT_EQ(g.graph().num_nodes(), 1u);
  EXPECT_EQ(out->producer, a->producer);
  out->shape = a->shape = std::nullopt;
  Node copy = *out->producer;
  EXPECT_TRUE(infer_kernel_node(copy));
  EXPECT_EQ(sizes_of(out), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(sizes_of(a), (std::vector<int64_t>{3, 4}));
}

// A kernel node's output squeezed, unsqueezed and viewed flat, then
// gathered (a factorization's diagonal is read so) for a kernel node: one
// node whose stages are the Squeeze, Unsqueeze and Reshape (attribute
// `reshape`: per output axis a size, -1, or -2 - k for input axis k;
// `reshape_ones`: axes a Squeeze drops). A Reshape of a run-time target
// stays ONNX's.
TEST(MergeKernelStages, ReshapesAreStages) {
  GraphBuilder g(18);
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Value* m = g.input("m", DType::Float64, sym({Dim::named("n"), Dim::known(1), Dim::known(3)}));
  Value* rows = g.op1("Squeeze", {program_node(g, {m}), g.int64s({1})});  // (n, 3)
  Value* flat = g.op1("Reshape", {g.op1("Unsqueeze", {rows, g.int64s({0})}), g.int64s({-1})});  // (1, n, 3), (3n)
  Value* picked = g.op1("Gather", {flat, g.input("positions", DType::Int64, sym({Dim::named("k")}))},
                        {{"axis", int64_t{0}}});
  Value* out = program_node(g, {picked});
  g.output(out, "out");
  Value* target = g.input("target", DType::Int64, shape_of_sizes({2}));
  g.output(program_node(g, {g.op1("Reshape", {out, target})}), "run_time_target");
  optimize_graph(g.graph());
  EXPECT_EQ(count(g.graph(), "Reshape"), 1u);
  EXPECT_EQ(count(g.graph(), "Gather") + count(g.graph(), "Unsqueeze") + count(g.graph(), "Squeeze"), 0u);
  const Node* node = out->producer;
  std::vector<std::vector<int64_t>> maps, ones;
  for (int64_t s = 0; s < node->attrs.get_int("stages", 0); ++s) {
    if (auto map = node->attrs.get_ints(stage_attribute("reshape", s))) maps.push_back(*map);
    if (auto axes = node->attrs.get_ints(stage_attribute("reshape_ones", s))) ones.push_back(*axes);
  }
  EXPECT_EQ(maps, (std::vector<std::vector<int64_t>>{{-2, -4}, {1, -2, -3}, {-1}}));
  EXPECT_EQ(ones, (std::vector<std::vector<int64_t>>{{1}}));
  // The shapes, inferred again from the stages.
  out->shape = std::nullopt;
  Node copy = *node;
  EXPECT_TRUE(infer_kernel_node(copy));
  ASSERT_TRUE(out->shape);
  ASSERT_EQ(out->shape->size(), 1u);
  EXPECT_TRUE((*out->shape)[0].same_as(Dim::named("k")));
}

// ONNX's float64 arithmetic between kernel nodes (a log-softmax's Sub, Exp
// and Log; a solve's scaling) runs as one-instruction stages: the program
// of the op, its inputs broadcast to the larger rank. Other dtypes stay
// ONNX's (ONNX's Div of integers truncates; the kernels' TrueDiv is of
// floats), and so do ops without a program here (Pow).
TEST(MergeKernelStages, Float64ArithmeticIsAStage) {
  GraphBuilder g(18);
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Value* m = g.input("m", DType::Float64, sym({Dim::named("n"), Dim::known(3)}));
  Value* row = g.input("row", DType::Float64, shape_of_sizes({3}));
  Value* a = program_node(g, {m});
  Value* shifted = g.op1("Sub", {a, row});                       // (n, 3) - (3,)
  Value* logged = g.op1("Log", {g.op1("Exp", {shifted})});
  Value* out = program_node(g, {g.op1("Div", {logged, row})});
  g.output(out, "out");
  Value* k = g.input("k", DType::Int64, shape_of_sizes({3}));
  Value* f = g.input("f", DType::Float32, shape_of_sizes({3}));
  // A kernel node of `dtype` that negates `x`.
  auto negated = [&g](Value* x, DType dtype) {
    const std::string name = dtype_name(dtype);
    return g.op("Elemwise_" + name, {x},
                {{"input_dtypes", name}, {"program", "Neg " + name + " 0"}, {"output_registers", std::vector<int64_t>{1}}},
                1, kKernelDomain)[0];
  };
  g.output(negated(g.op1("Div", {k, k}), DType::Int64), "int_div");
  g.output(negated(g.op1("Add", {f, f}), DType::Float32), "float32_add");
  g.output(program_node(g, {g.op1("Pow", {a, row})}), "pow");
  optimize_graph(g.graph());
  EXPECT_EQ(count(g.graph(), "Sub") + count(g.graph(), "Exp") + count(g.graph(), "Log"), 0u);
  EXPECT_EQ(count(g.graph(), "Div"), 1u);
  EXPECT_EQ(count(g.graph(), "Add"), 1u);
  EXPECT_EQ(count(g.graph(), "Pow"), 1u);
  const Node* node = out->producer;
  ASSERT_EQ(node->attrs.get_int("stages", 0), 6);
  std::vector<std::string> programs;
  for (int64_t s = 1; s < 5; ++s) programs.push_back(node->attrs.get_string(stage_attribute("program", s)).value_or(""));
  EXPECT_EQ(programs, (std::vector<std::string>{"Sub float64 0 1", "Exp float64 0", "Log float64 0",
                                                "TrueDiv float64 0 1"}));
  EXPECT_EQ(node->attrs.get_int(stage_attribute("rank", 1), -1), 2);
  EXPECT_EQ(node->attrs.get_int(stage_attribute("rank", 4), -1), 2);
}


// A log-softmax as ONNX writes it after a ReduceMax (Sub, Exp, ReduceSum,
// Log, Sub): in a graph of kernel nodes (mode ONNX) the chain is one
// Elemwise node of five stages, though no kernel node is next to it; in a
// graph without them (a portable export) it stays ONNX's.
TEST(MergeKernelStages, ArithmeticChainsAreOneNodeOnlyInGraphsOfKernels) {
  auto build = [](bool with_kernels) {
    auto g = std::make_unique<GraphBuilder>(18);
    Value* x = g->input("x", DType::Float64, sym({Dim::named("n"), Dim::known(3)}));
    Value* top = g->op1("ReduceMax", {x, g->int64s({1})});
    Value* shifted = g->op1("Sub", {x, top});
    Value* total = g->op1("ReduceSum", {g->op1("Exp", {shifted}), g->int64s({1})});
    g->output(g->op1("Sub", {shifted, g->op1("Log", {total})}), "log_softmax");
    if (with_kernels) g->output(program_node(*g, {g->input("y", DType::Float64, shape_of_sizes({2}))}), "elsewhere");
    optimize_graph(g->graph());
    return g;
  };
  const auto kernels = build(true);
  EXPECT_EQ(count(kernels->graph(), "Elemwise_float64"), 2u);
  EXPECT_EQ(count(kernels->graph(), "ReduceMax"), 1u);
  EXPECT_EQ(kernels->graph().nodes().size(), 3u);
  const Node* chain = kernels->graph().outputs()[0]->producer;
  EXPECT_EQ(chain->attrs.get_int("stages", 0), 5);
  const auto portable = build(false);
  for (const char* op : {"Sub", "Exp", "ReduceSum", "Log"}) EXPECT_GE(count(portable->graph(), op), 1u) << op;
  EXPECT_EQ(count(portable->graph(), "Elemwise_float64"), 0u);
}


// ONNX's arithmetic becomes a stage only in the merge, which runs after the
// views of one-stage nodes were folded: a Transpose that such a stage reads
// is then read past by the merged node (stage input_axes), and the shapes
// inferred again from the stages are the same. A Transpose that a reduction
// stage reads (contiguous) keeps its node.
TEST(MergeKernelStages, ATransposeThatMergedArithmeticReadsIsAView) {
  GraphBuilder g(18);
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({4, 5}));
  Value* m = g.input("m", DType::Float64, shape_of_sizes({5, 4}));
  Value* transposed = g.op1("Transpose", {m}, {{"perm", std::vector<int64_t>{1, 0}}});  // (4, 5)
  Value* out = g.op1("Mul", {program_node(g, {x}), transposed});
  g.output(out, "out");
  Value* m2 = g.input("m2", DType::Float64, shape_of_sizes({5, 4}));
  Value* summed = g.op1("ReduceSum", {g.op1("Transpose", {m2}, {{"perm", std::vector<int64_t>{1, 0}}}), g.int64s({1})});
  g.output(program_node(g, {summed}), "summed");
  optimize_graph(g.graph());
  EXPECT_EQ(count(g.graph(), "Transpose"), 1u);  // (the reduction's)
  const Node* node = out->producer;
  ASSERT_EQ(node->attrs.get_int("stages", 0), 2);
  EXPECT_EQ(node->inputs, (std::vector<Value*>{x, m}));
  EXPECT_EQ(node->attrs.get_string("program_s1"), std::optional<std::string>("Mul float64 0 1"));
  EXPECT_EQ(input_axes_of(*node, 0, 1), std::nullopt);
  EXPECT_EQ(input_axes_of(*node, 1, 1), (std::optional<std::vector<int64_t>>{std::vector<int64_t>{1, 0}}));
  out->shape = std::nullopt;
  Node copy = *node;
  EXPECT_TRUE(infer_kernel_node(copy));
  ASSERT_TRUE(out->shape && out->shape->size() == 2);
  EXPECT_EQ((*out->shape)[0].size, 4);
  EXPECT_EQ((*out->shape)[1].size, 5);
}

// Program stages that run one program over the same values (PyTensor's
// fused programs repeated for other outputs) become one stage whose outputs
// are both's; a later stage reads them there, and a node output stays one.
TEST(MergeKernelStages, StagesOfOneProgramOverTheSameValuesAreOne) {
  GraphBuilder g(18);
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({5}));
  auto run = [&](int64_t output) {
    return g.op("Elemwise_float64", {x},
                {{"input_dtypes", std::string("float64")}, {"program", std::string("Exp float64 0;Neg float64 1")},
                 {"output_registers", std::vector<int64_t>{output}}},
                1, kKernelDomain)[0];
  };
  Value* e = run(1);   // exp(x)
  Value* n = run(2);   // -exp(x)
  Value* n2 = run(2);  // the same again (an output of the graph too)
  Value* out = program_node(g, {e, n, n2});
  g.output(out, "out");
  g.output(n2, "n2");
  optimize_graph(g.graph());
  ASSERT_EQ(g.graph().num_nodes(), 1u);
  const Node* node = out->producer;
  ASSERT_EQ(node->attrs.get_int("stages", 0), 2);
  EXPECT_EQ(*node->attrs.get_ints("output_registers"), (std::vector<int64_t>{1, 2}));
  // The last stage reads exp(x) and -exp(x) (twice) from the first; -exp(x) is also node output n2.
  EXPECT_EQ(*node->attrs.get_ints("stage_inputs"), (std::vector<int64_t>{0, -1, -2, -2}));
  EXPECT_EQ(node->outputs.size(), 2u);
  Node copy = *node;
  for (Value* v : node->outputs) v->shape = std::nullopt;
  EXPECT_TRUE(infer_kernel_node(copy));
  ASSERT_TRUE(out->shape && n2->shape);
  EXPECT_EQ((*out->shape)[0].size, 5);
  EXPECT_EQ((*n2->shape)[0].size, 5);
}

// A simplex transform's shapes: a Concat of a kernel node's output and
// another value, and a Split of constant sizes that kernel nodes read, are
// stages (attributes `concat`, and `split` with `split_sizes`: the axis made
// non-negative), their shapes inferred. A Split into equal pieces (sizes
// known at run time) stays ONNX's.
TEST(MergeKernelStages, SplitsAndConcatsAreStages) {
  GraphBuilder g(18);
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Value* w = g.input("w", DType::Float64, sym({Dim::named("n"), Dim::known(2)}));
  Value* last = g.input("last", DType::Float64, sym({Dim::named("n"), Dim::known(1)}));
  Value* joined = g.op1("Concat", {program_node(g, {w}), last}, {{"axis", int64_t{-1}}});  // (n, 3)
  std::vector<Value*> pieces = g.op("Split", {program_node(g, {joined}), g.int64s({1, 2})}, {{"axis", int64_t{1}}}, 2);
  Value* out = program_node(g, {pieces[0], pieces[1]});  // (n, 1) + (n, 2)
  g.output(out, "out");
  std::vector<Value*> halves = g.op("Split", {program_node(g, {w})}, {{"axis", int64_t{1}}, {"num_outputs", int64_t{2}}}, 2);
  g.output(program_node(g, {halves[0], halves[1]}), "halves");
  optimize_graph(g.graph());
  EXPECT_EQ(count(g.graph(), "Concat"), 0u);
  EXPECT_EQ(count(g.graph(), "Split"), 1u);
  const Node* node = out->producer;
  int64_t concat = -1, split = -1;
  std::vector<int64_t> sizes;
  for (int64_t s = 0; s < node->attrs.get_int("stages", 0); ++s) {
    concat = node->attrs.get_int(stage_attribute("concat", s), concat);
    split = node->attrs.get_int(stage_attribute("split", s), split);
    if (auto given = node->attrs.get_ints(stage_attribute("split_sizes", s))) sizes = *given;
  }
  EXPECT_EQ(concat, 1);
  EXPECT_EQ(split, 1);
  EXPECT_EQ(sizes, (std::vector<int64_t>{1, 2}));
  // The shape, inferred again from the stages: (n, 2) from the pieces' (n, 1) and (n, 2).
  out->shape = std::nullopt;
  Node copy = *node;
  EXPECT_TRUE(infer_kernel_node(copy));
  ASSERT_TRUE(out->shape && out->shape->size() == 2);
  EXPECT_TRUE((*out->shape)[0].same_as(Dim::named("n")));
  EXPECT_EQ((*out->shape)[1].size, 2);
}


// ONNX's Expand of a constant shape between kernel nodes is an Identity
// stage whose output is broadcast to that shape too (attribute `expand`),
// its shape inferred; an Expand to a shape known at run time stays ONNX's.
TEST(MergeKernelStages, ExpandsOfConstantShapesAreStages) {
  GraphBuilder g(18);
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({3}));
  Value* out = program_node(g, {g.op1("Expand", {program_node(g, {x}), g.int64s({2, 1})})});  // (2, 3)
  g.output(out, "out");
  Value* target = g.input("target", DType::Int64, shape_of_sizes({2}));
  g.output(program_node(g, {g.op1("Expand", {program_node(g, {x}), target})}), "run_time_shape");
  optimize_graph(g.graph());
  EXPECT_EQ(count(g.graph(), "Expand"), 1u);
  const Node* node = out->producer;
  std::vector<int64_t> expand;
  for (int64_t s = 0; s < node->attrs.get_int("stages", 0); ++s) {
    if (auto given = node->attrs.get_ints(stage_attribute("expand", s))) {
      expand = *given;
      EXPECT_EQ(node->attrs.get_string(stage_attribute("program", s)), std::optional<std::string>("Identity float64 0"));
    }
  }
  EXPECT_EQ(expand, (std::vector<int64_t>{2, 1}));
  out->shape = std::nullopt;
  Node copy = *node;
  EXPECT_TRUE(infer_kernel_node(copy));
  EXPECT_EQ(sizes_of(out), (std::vector<int64_t>{2, 3}));
}


// A node merged in the earlier node's place (a reader of that node's output
// lies between them) takes, from there, a Reshape before that place: the
// walk goes on from the merged node.
TEST(MergeKernelStages, AMergeInTheEarlierPlaceGoesOnFromThere) {
  GraphBuilder g(18);
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Value* m = g.input("m", DType::Float64, shape_of_sizes({3, 3}));
  Value* flat = g.op1("Reshape", {g.op1("Sin", {m}), g.int64s({-1})});
  Value* picked = g.op1("Gather", {flat, g.int64s({0, 4, 8})}, {{"axis", int64_t{0}}});
  Value* between = g.op1("Sin", {picked});  // (reads the Gather's output before the kernel node)
  Value* out = program_node(g, {picked});
  g.output(between, "between");
  g.output(out, "out");
  optimize_graph(g.graph());
  EXPECT_EQ(count(g.graph(), "Reshape") + count(g.graph(), "Gather"), 0u);
  EXPECT_EQ(picked->producer, out->producer);
}

TEST(MergeKernelStages, MalformedWiringIsRefusedWhenBuilt) {
  GraphBuilder g(18);
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Value* x = g.input("x", DType::Float64, shape_of_sizes({3}));
  auto staged = [&](std::vector<int64_t> sources, std::vector<int64_t> destinations) {
    g.op("Elemwise_float64", {x},
         {{"input_dtypes", std::string("float64")}, {"program", std::string("Exp float64 0")},
          {"output_registers", std::vector<int64_t>{1}}, {"input_dtypes_s1", std::string("float64")},
          {"program_s1", std::string("Exp float64 0")}, {"output_registers_s1", std::vector<int64_t>{1}},
          {"stages", int64_t{2}}, {"stage_inputs", sources}, {"stage_outputs", destinations}},
         1, kKernelDomain);
  };
  EXPECT_NO_THROW(staged({0, -1}, {-1, 0}));
  EXPECT_THROW(staged({0, -2}, {-1, 0}), BuildError);  // an output not yet written
  EXPECT_THROW(staged({0, 1}, {-1, 0}), BuildError);   // an input the node lacks
  EXPECT_THROW(staged({0}, {-1, 0}), BuildError);      // too few entries
  EXPECT_THROW(staged({0, -1}, {-1, 1}), BuildError);  // an output the node lacks
}

TEST(RecordInputShapes, KernelNodesGetTheStaticShapesOfGraphInputs) {
  GraphBuilder g(18);
  Value* v = g.input("v", DType::Float64, shape_of_sizes({3}));
  Value* s = g.input("s", DType::Float64, shape_of_sizes({}));
  Value* n = g.input("n", DType::Float64, sym({Dim::named("n")}));
  Value* w = g.op1("Exp", {v});  // (not a graph input)
  Value* out = elemwise_kernel(g, {v, s, n, g.int64s({1, 2, 3}), w, v});
  g.output(out, "y");
  g.output(g.op1("Floor", {v}), "z");  // (not a kernel node)
  const Node* kernel = out->producer;
  const auto f64 = static_cast<int64_t>(DType::Float64);
  // Without checked scalar ranks: the vector alone (each time it is read).
  EXPECT_TRUE(record_input_shapes_in_kernels(g.graph(), false));
  EXPECT_EQ(kernel->attrs.get_ints("input_shapes"), (std::vector<int64_t>{0, f64, 1, 3, 5, f64, 1, 3}));
  EXPECT_FALSE(record_input_shapes_in_kernels(g.graph(), false));
  // With them, the scalar too; never the symbolic dim, the initializer or a node's output.
  EXPECT_TRUE(record_input_shapes_in_kernels(g.graph(), true));
  EXPECT_EQ(kernel->attrs.get_ints("input_shapes"), (std::vector<int64_t>{0, f64, 1, 3, 1, f64, 0, 5, f64, 1, 3}));
  for (const Node* node : g.graph().nodes()) {
    if (node == kernel) continue;
    EXPECT_FALSE(node->attrs.get_ints("input_shapes")) << node->op_type;
  }
}

// An Elemwise kernel node over v (3,): sum(exp(v)) `count` times, then exp(v).
Node* sums_and_exp(GraphBuilder& g, Value* v, size_t count) {
  g.require_domain(kKernelDomain, kKernelDomainVersion);
  Attributes attrs;
  attrs.set("input_dtypes", std::string("float64"));
  attrs.set("program", std::string("Exp float64 0"));
  attrs.set("output_registers", std::vector<int64_t>(count + 1, 1));
  std::vector<int64_t> reductions(count, 1);
  reductions.push_back(0);
  attrs.set("output_reductions", reductions);
  return g.op("Elemwise_float64", {v}, std::move(attrs), count + 1, kKernelDomain)[0]->producer;
}

TEST(PackSmallOutputs, SmallArraysOnlyTheCallerReadsBecomeOneOutput) {
  GraphBuilder g(18);
  Value* v = g.input("v", DType::Float64, shape_of_sizes({3}));
  Node* node = sums_and_exp(g, v, 4);
  std::vector<Value*> outs = node->outputs;
  ASSERT_TRUE(outs[0]->shape && outs[0]->shape->empty());
  g.output(outs[3], "a");  // (read by another node too: stays)
  g.output(g.op1("Floor", {outs[3]}), "b");
  g.output(outs[1], "c");
  g.output(outs[4], "d");  // (a vector of static shape: packed too)
  g.output(outs[0], "e");
  // outs[2] is read by nothing: it stays an output of the node.
  const std::vector<PackedArrays> packed = pack_small_outputs_of_kernels(g.graph());
  ASSERT_EQ(packed.size(), 1u);
  EXPECT_EQ(packed[0].elements, (std::vector<std::string>{"e", "c", "d"}));  // (in the node's order)
  EXPECT_EQ(packed[0].shapes, (std::vector<std::vector<int64_t>>{{}, {}, {3}}));
  ASSERT_EQ(node->outputs.size(), 3u);
  EXPECT_EQ(node->outputs[0], outs[2]);
  EXPECT_EQ(node->outputs[1], outs[3]);
  Value* vector = node->outputs[2];
  EXPECT_EQ(vector->name, packed[0].name);
  EXPECT_EQ(node->attrs.get_ints("packed_outputs"), (std::vector<int64_t>{0, 1, -1, -1, 2}));
  EXPECT_EQ(node->attrs.get_ints("packed_output_shapes"), (std::vector<int64_t>{2, 1, 3}));
  // The graph's outputs: the packed one where the node's first element was.
  std::vector<std::string> names;
  for (const Value* out : g.graph().outputs()) names.push_back(out->name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", packed[0].name}));
  // Inference reads the attributes: the same shapes again, the packed
  // output as long as its elements (1 + 1 + 3).
  infer_node(*node);
  EXPECT_EQ(vector->dtype, DType::Float64);
  EXPECT_EQ(known_sizes(vector->shape), (std::vector<int64_t>{5}));
  EXPECT_TRUE(outs[3]->shape && outs[3]->shape->empty());
  // Once is all: a packed node is left as it is.
  EXPECT_TRUE(pack_small_outputs_of_kernels(g.graph()).empty());
}

TEST(PackSmallOutputs, ArraysOfSymbolicOrLargeShapesStay) {
  for (const Shape& shape : {sym({Dim::named("n")}), shape_of_sizes({kMaxPackedArrayElements + 1})}) {
    GraphBuilder g(18);
    Node* node = sums_and_exp(g, g.input("v", DType::Float64, shape), 1);
    g.output(node->outputs[0], "s");
    g.output(node->outputs[1], "x");  // (exp(v): v's shape)
    EXPECT_TRUE(pack_small_outputs_of_kernels(g.graph()).empty());
    EXPECT_FALSE(node->attrs.get_ints("packed_outputs"));
  }
  EXPECT_TRUE(packable(DType::Float64, shape_of_sizes({kMaxPackedArrayElements})));
  EXPECT_TRUE(packable(DType::Float64, shape_of_sizes({2, 0})));
  EXPECT_FALSE(packable(DType::Float32, shape_of_sizes({})));
  EXPECT_FALSE(packable(DType::Float64, std::nullopt));
}

TEST(PackSmallOutputs, OneScalarStaysAndMalformedAttributesAreRefused) {
  GraphBuilder g(18);
  Value* v = g.input("v", DType::Float64, sym({Dim::named("n")}));  // (x: not packable)
  Node* node = sums_and_exp(g, v, 1);
  g.output(node->outputs[0], "s");
  g.output(node->outputs[1], "x");
  EXPECT_TRUE(pack_small_outputs_of_kernels(g.graph()).empty());
  EXPECT_FALSE(node->attrs.get_ints("packed_outputs"));
  for (const std::vector<int64_t>& wrong : std::vector<std::vector<int64_t>>{
           {-1, -1},     // (nothing packed)
           {0, 0},       // (both packed: the node would have one output)
           {1, -1},      // (element 1 of one)
           {0, 1},       // (a vector packed, and no 'packed_output_shapes' says so)
           {0, -1, -1},  // (more entries than the stages' outputs)
           {0, 0, -1},   // (an element twice)
       }) {
    node->attrs.set("packed_outputs", wrong);
    EXPECT_THROW(infer_node(*node), BuildError) << wrong[0] << " " << wrong[1];
  }
}

TEST(PackSmallInputs, SmallArraysOnlyKernelNodesReadBecomeOneInput) {
  GraphBuilder g(18);
  Value* a = g.input("a", DType::Float64, shape_of_sizes({}));
  Value* b = g.input("b", DType::Float64, shape_of_sizes({}));
  Value* c = g.input("c", DType::Float64, shape_of_sizes({}));  // (also read by a Floor)
  Value* d = g.input("d", DType::Float64, shape_of_sizes({}));  // (kept: a value the caller bakes)
  Value* f = g.input("f", DType::Float32, shape_of_sizes({}));
  Value* v = g.input("v", DType::Float64, shape_of_sizes({3}));
  Value* n = g.input("n", DType::Float64, sym({Dim::named("n")}));  // (symbolic: stays)
  Value* out = elemwise_kernel(g, {b, v, a, b, c, d});
  Value* other = elemwise_kernel(g, {a, f, n});
  g.output(out, "y");
  g.output(other, "z");
  g.output(g.op1("Floor", {c}), "w");
  const std::vector<PackedArrays> packed = pack_small_inputs_of_kernels(g.graph(), {"d"});
  ASSERT_EQ(packed.size(), 1u);
  EXPECT_EQ(packed[0].elements, (std::vector<std::string>{"a", "b", "v"}));  // (in the graph's order)
  EXPECT_EQ(packed[0].shapes, (std::vector<std::vector<int64_t>>{{}, {}, {3}}));
  std::vector<std::string> inputs;
  for (const Value* in : g.graph().inputs()) inputs.push_back(in->name);
  EXPECT_EQ(inputs, (std::vector<std::string>{"c", "d", "f", "n", packed[0].name}));
  Value* vector = g.graph().inputs().back();
  EXPECT_EQ(known_sizes(vector->shape), (std::vector<int64_t>{5}));  // (a, b, then v's 3)
  const Node* node = out->producer;
  EXPECT_EQ(node->inputs, (std::vector<Value*>{vector, vector, vector, vector, c, d}));
  EXPECT_EQ(node->attrs.get_ints("packed_inputs"), (std::vector<int64_t>{1, 2, 0, 1, -1, -1}));
  EXPECT_EQ(node->attrs.get_ints("packed_input_shapes"), (std::vector<int64_t>{1, 1, 3}));
  EXPECT_EQ(other->producer->attrs.get_ints("packed_inputs"), (std::vector<int64_t>{0, -1, -1}));
  EXPECT_FALSE(other->producer->attrs.get_ints("packed_input_shapes"));
  EXPECT_TRUE(a->removed && b->removed && v->removed);
  // Inference reads the attributes: the node's output is v's (3,), not (5,).
  infer_node(*out->producer);
  EXPECT_EQ(known_sizes(out->shape), (std::vector<int64_t>{3}));
  // A record for an input that is not packed, or past the node's inputs, is refused.
  Node* reader = out->producer;
  for (const std::vector<int64_t>& wrong : std::vector<std::vector<int64_t>>{{4, 1, 3}, {6, 1, 3}, {1, 2, 3}}) {
    const std::vector<int64_t> right = *reader->attrs.get_ints("packed_input_shapes");
    reader->attrs.set("packed_input_shapes", wrong);
    EXPECT_THROW(infer_node(*reader), BuildError) << wrong[0];
    reader->attrs.set("packed_input_shapes", right);
  }
  // Once is all; with one array left, nothing is packed.
  EXPECT_TRUE(pack_small_inputs_of_kernels(g.graph(), {}).empty());
}

}  // namespace
}  // namespace pytensor_onnx
