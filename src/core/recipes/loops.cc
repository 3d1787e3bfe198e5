#include "loops.h"

#include <unordered_map>

#include "build_helpers.h"
#include "errors.h"

namespace pytensor_onnx::recipes {
namespace {

// Below this many elements still iterating, a Loop keeps running over all
// of them rather than gathering the active ones (the gather and scatter cost
// a few nodes per carried value, which only pays when the arithmetic on the
// elements that have already converged costs more).
constexpr int64_t kCompactionMinElements = 1024;

// How many elements of a bool vector hold (an int64 scalar; 0 when empty).
Value* count(GraphBuilder& g, Value* flags) {
  return g.op1("ReduceSum", {g.cast(flags, DType::Int64)}, {{"keepdims", int64_t{0}}});
}

// Whether a Loop over `size` elements of which `active` still iterate should
// go on: some are active, and (when there are enough elements for
// compaction to pay) no more than half of them have converged. A null
// `size`: while some are active.
Value* keep_going(GraphBuilder& g, Value* active, Value* size) {
  Value* n_active = count(g, active);
  Value* any = g.op1("Greater", {n_active, int64_scalar(g, 0)});
  if (!size) return any;  // no compaction: until all have converged
  Value* large = g.op1("GreaterOrEqual", {size, int64_scalar(g, kCompactionMinElements)});
  Value* halved = g.op1("LessOrEqual", {g.op1("Mul", {n_active, int64_scalar(g, 2)}), size});
  return g.op1("And", {any, g.op1("Not", {g.op1("And", {large, halved})})});
}

// The body of one element-wise Loop: `state` and `active` are its carried
// values after (trip, cond, counter); `first_iteration` is the iteration
// number of its first step. Returns the body's outputs.
void build_step_body(GraphBuilder& body, const LoopStepFn& step, Value* first_iteration, Value* size,
                     size_t n_state, const std::vector<DType>& dtypes) {
  Value* iteration = body.input("iteration", DType::Int64, shape_of_sizes({}));
  body.input("condition", DType::Bool, shape_of_sizes({}));
  const Shape vector = std::vector<Dim>{Dim::unknown()};
  Value* counter = body.input("counter", DType::Int64, shape_of_sizes({}));
  Value* active = body.input("active", DType::Bool, vector);
  std::vector<Value*> state;
  for (size_t i = 0; i < n_state; ++i) state.push_back(body.input("state" + std::to_string(i), dtypes[i], vector));
  Value* global_iteration = first_iteration ? body.op1("Add", {first_iteration, iteration}) : iteration;
  LoopStep next = step(body, global_iteration, state);
  if (next.next.size() != state.size()) throw BuildError("elementwise_loop: the step must return every state value");
  Value* still_active = body.op1("And", {active, body.op1("Not", {next.converged})});
  body.output(keep_going(body, still_active, size), "more");
  body.output(body.op1("Add", {counter, int64_scalar(body, 1)}), "counter_out");
  body.output(still_active, "active_out");
  for (size_t i = 0; i < state.size(); ++i) {
    Value* kept = body.op1("Where", {active, body.cast(next.next[i], state[i]->dtype), state[i]});
    body.output(kept, "state_out" + std::to_string(i));
  }
}

// The per-element values of `base`'s graph (or its ancestors) that a
// compacted body reads: each is gathered once, in `epoch`, at the active
// indices. Constants and scalars are read as they are.
class CompactedReads {
 public:
  CompactedReads(GraphBuilder& base, GraphBuilder& epoch, Value* indices)
      : base_(base), epoch_(epoch), indices_(indices) {}

  Value* operator()(Value* value) {
    if (!base_.graph().can_read(value) || value->is_constant()) return value;
    const auto rank = value->rank();
    if (rank == 0u) return value;
    if (rank == 1u && (*value->shape)[0].size == 1) return value;  // broadcast
    if (rank != 1u) {
      throw BuildError("elementwise_loop: the step reads '" + value->name +
                       "', a value of the enclosing graph that is not a flat per-element vector or a scalar");
    }
    auto it = gathered_.find(value);
    if (it != gathered_.end()) return it->second;
    Value* compact = epoch_.op1("Gather", {value, indices_}, {{"axis", int64_t{0}}});
    gathered_.emplace(value, compact);
    return compact;
  }

 private:
  GraphBuilder& base_;
  GraphBuilder& epoch_;
  Value* indices_;
  std::unordered_map<Value*, Value*> gathered_;
};

// The result from a Loop's outputs (the active flags, then the state),
// each reshaped from the flat vector it carried to `shape`.
LoopResult loop_result(GraphBuilder& g, std::vector<Value*>::const_iterator active,
                       std::vector<Value*>::const_iterator end, Value* shape, const Shape& broadcast_shape) {
  LoopResult result;
  result.converged = unflatten(g, g.op1("Not", {*active}), shape);
  result.converged->shape = broadcast_shape;
  for (auto it = active + 1; it != end; ++it) {
    Value* v = unflatten(g, *it, shape);
    v->shape = broadcast_shape;
    result.state.push_back(v);
  }
  return result;
}

}  // namespace

// Two stages. The first Loop iterates over every element, as long as more
// than half are still active (or all of them while there are fewer than
// kCompactionMinElements). The second runs epochs: each gathers the active
// elements (and the per-element values the step reads from outside), runs
// the same steps on them until half of those have converged, and scatters
// them back. The Loop's cost is then about the sum of the elements' own
// iteration counts rather than the slowest element's count times all
// elements. Each element sees exactly the steps it would see alone: the
// step is element-wise, and converged elements keep their state.
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
  std::vector<DType> dtypes;
  for (Value* v : initial) {
    carried.push_back(g.op1("Reshape", {g.op1("Expand", {v, shape}), flat}));
    dtypes.push_back(v->dtype);
  }
  Value* size = g.op1("ReduceProd", {shape}, {{"keepdims", int64_t{0}}});
  Value* active = g.op1("Expand", {g.constant(Tensor::from_values(DType::Bool, std::vector<uint8_t>{1}, {}), "true"),
                                   g.op1("Shape", {carried[0]})});
  Value* max_trips = int64_scalar(g, max_iterations);
  Value* zero = int64_scalar(g, 0);

  // Inside another Loop's (or If's) body, one Loop over all elements: the
  // enclosing iteration is compacted already, if it is element-wise, and
  // a second copy of the step in every nested body would double the model
  // at each level of nesting.
  const bool compact = g.graph().parent() == nullptr;

  // Stage 1: all elements.
  GraphBuilder body(g, name);
  build_step_body(body, step, nullptr, compact ? size : nullptr, carried.size(), dtypes);
  std::vector<Value*> inputs{max_trips, g.op1("Greater", {size, zero}), zero, active};
  inputs.insert(inputs.end(), carried.begin(), carried.end());
  std::vector<Value*> outs = g.op("Loop", inputs, {{"body", body.shared_graph()}}, inputs.size() - 2);
  if (!compact) return loop_result(g, outs.begin() + 1, outs.end(), shape, broadcast_shape);

  // Stage 2: epochs over the active elements. Carried: the iterations done,
  // the active flags, the state (all full-length).
  GraphBuilder epoch(g, name + kCompactedSuffix);
  epoch.input("epoch", DType::Int64, shape_of_sizes({}));
  epoch.input("condition", DType::Bool, shape_of_sizes({}));
  const Shape vector = std::vector<Dim>{Dim::unknown()};
  Value* done = epoch.input("done", DType::Int64, shape_of_sizes({}));
  Value* full_active = epoch.input("active", DType::Bool, vector);
  std::vector<Value*> full_state;
  for (size_t i = 0; i < carried.size(); ++i) {
    full_state.push_back(epoch.input("state" + std::to_string(i), dtypes[i], vector));
  }
  Value* indices = epoch.op1("Reshape", {epoch.op1("NonZero", {full_active}), flat});
  Value* n_active = epoch.op1("Squeeze", {epoch.op1("Shape", {indices})}, {{"axes", std::vector<int64_t>{0}}});
  GraphBuilder compacted(epoch, name);
  compacted.substitute_outer_reads(CompactedReads(g, epoch, indices));
  build_step_body(compacted, step, done, n_active, carried.size(), dtypes);
  std::vector<Value*> compact_inputs{epoch.op1("Sub", {max_trips, done}), epoch.op1("Greater", {n_active, zero}), done,
                                     epoch.op1("Gather", {full_active, indices}, {{"axis", int64_t{0}}})};
  for (Value* v : full_state) compact_inputs.push_back(epoch.op1("Gather", {v, indices}, {{"axis", int64_t{0}}}));
  std::vector<Value*> compact_outs =
      epoch.op("Loop", compact_inputs, {{"body", compacted.shared_graph()}}, compact_inputs.size() - 2);
  auto scatter = [&](Value* full, Value* part) {
    return epoch.op1("ScatterElements", {full, indices, part}, {{"axis", int64_t{0}}});
  };
  Value* next_active = scatter(full_active, compact_outs[1]);
  Value* next_done = compact_outs[0];
  Value* more = epoch.op1("And", {epoch.op1("Greater", {count(epoch, next_active), zero}),
                                  epoch.op1("Less", {next_done, max_trips})});
  epoch.output(more, "more");
  epoch.output(next_done, "done_out");
  epoch.output(next_active, "active_out");
  for (size_t i = 0; i < full_state.size(); ++i) {
    epoch.output(scatter(full_state[i], compact_outs[2 + i]), "state_out" + std::to_string(i));
  }
  Value* stage1_done = outs[0];
  Value* stage1_active = outs[1];
  std::vector<Value*> epoch_inputs{
      max_trips,  // (an epoch runs at least one step)
      g.op1("And", {g.op1("Greater", {count(g, stage1_active), zero}), g.op1("Less", {stage1_done, max_trips})}),
      stage1_done, stage1_active};
  epoch_inputs.insert(epoch_inputs.end(), outs.begin() + 2, outs.end());
  std::vector<Value*> final_outs =
      g.op("Loop", epoch_inputs, {{"body", epoch.shared_graph()}}, epoch_inputs.size() - 2);

  return loop_result(g, final_outs.begin() + 1, final_outs.end(), shape, broadcast_shape);
}

}  // namespace pytensor_onnx::recipes
