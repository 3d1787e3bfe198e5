#include "loops.h"

#include "errors.h"

namespace pytensor_onnx::recipes {
namespace {

// Whether any element of a bool tensor holds (false for an empty tensor):
// ReduceSum, since ReduceMax fails on empty tensors in ONNX Runtime.
Value* any(GraphBuilder& g, Value* flags) {
  Value* count = g.op1("ReduceSum", {g.cast(flags, DType::Float32)}, {{"keepdims", int64_t{0}}});
  return g.op1("Greater", {count, g.scalar(DType::Float32, 0.0)});
}

}  // namespace

LoopResult elementwise_loop(GraphBuilder& g, const std::vector<Value*>& initial, int64_t max_iterations,
                            const LoopStepFn& step, const std::string& name) {
  if (initial.empty()) throw BuildError("elementwise_loop: no state");
  // One shape for every carried value: the broadcast of all of them.
  Value* shape_source = initial[0];
  for (size_t i = 1; i < initial.size(); ++i) {
    Value* zero = g.op1("Mul", {initial[i], g.scalar(initial[i]->dtype, 0.0)});
    shape_source = g.op1("Add", {shape_source, g.cast(zero, shape_source->dtype)});
  }
  Shape broadcast_shape = shape_source->shape;
  // The Loop carries flat vectors: its body's inputs then have a known rank,
  // which ONNX's checker requires inside model-local functions.
  Value* shape = g.op1("Shape", {shape_source});
  Value* flat = g.int64s({-1});
  std::vector<Value*> carried;
  for (Value* v : initial) carried.push_back(g.op1("Reshape", {g.op1("Expand", {v, shape}), flat}));
  Value* active = g.op1("Expand", {g.constant(Tensor::from_values(DType::Bool, std::vector<uint8_t>{1}, {}), "true"),
                                   g.op1("Shape", {carried[0]})});

  GraphBuilder body(g, name);
  Value* iteration = body.input("iteration", DType::Int64, shape_of_sizes({}));
  body.input("condition", DType::Bool, shape_of_sizes({}));
  const Shape vector = std::vector<Dim>{Dim::unknown()};
  Value* body_active = body.input("active", DType::Bool, vector);
  std::vector<Value*> state;
  for (size_t i = 0; i < carried.size(); ++i) {
    state.push_back(body.input("state" + std::to_string(i), carried[i]->dtype, vector));
  }
  LoopStep next = step(body, iteration, state);
  if (next.next.size() != state.size()) throw BuildError("elementwise_loop: the step must return every state value");
  Value* still_active = body.op1("And", {body_active, body.op1("Not", {next.converged})});
  body.output(any(body, still_active), "more");
  body.output(still_active, "active_out");
  for (size_t i = 0; i < state.size(); ++i) {
    Value* kept = body.op1("Where", {body_active, body.cast(next.next[i], state[i]->dtype), state[i]});
    body.output(kept, "state_out" + std::to_string(i));
  }

  std::vector<Value*> inputs{g.constant(Tensor::int64_scalar(max_iterations), "max_iterations"), any(g, active),
                             active};
  inputs.insert(inputs.end(), carried.begin(), carried.end());
  std::vector<Value*> outs = g.op("Loop", inputs, {{"body", body.shared_graph()}}, inputs.size() - 2);
  LoopResult result;
  result.converged = g.op1("Reshape", {g.op1("Not", {outs[0]}), shape});
  for (size_t i = 1; i < outs.size(); ++i) {
    Value* v = g.op1("Reshape", {outs[i], shape});
    v->shape = broadcast_shape;
    result.state.push_back(v);
  }
  result.converged->shape = broadcast_shape;
  return result;
}

}  // namespace pytensor_onnx::recipes
