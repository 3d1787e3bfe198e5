// Element-wise iterations (series, continued fractions, Newton steps) as
// ONNX Loops over whole tensors.
//
// Each element iterates until it has converged, up to a cap on the number
// of steps. Converged elements keep their state (the step's result is
// discarded for them), so every element gets exactly the value its own
// iteration count gives.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "builder.h"

namespace pytensor_onnx::recipes {

inline constexpr const char* kCompactedSuffix = "_compacted";

struct LoopStep {
  std::vector<Value*> next;  // the new state, one value per state value
  // Per element: whether it has converged with this step. NaN-tolerant tests
  // (Not(Greater(error, tolerance))) make NaN elements stop at once.
  Value* converged;
};

// Builds the step in the Loop body: `body` builds inside the body graph,
// which may read the enclosing graph's values directly; `iteration` is the
// 0-based step number (int64 scalar); `state` the current state.
using LoopStepFn = std::function<LoopStep(GraphBuilder& body, Value* iteration, const std::vector<Value*>& state)>;

struct LoopResult {
  std::vector<Value*> state;
  Value* converged;  // per element: whether it converged within the cap
};

// Iterates from `initial` (values broadcast to one shape: the result of
// element-wise ops on all of them) at most `max_iterations` times.
//
// Built as two Loops: one over all elements while more than half of them
// iterate, then one of epochs over the compacted active elements (its body
// graph named "<name>" + kCompactedSuffix), so the cost follows the
// elements' own iteration counts. The step is built twice, once per Loop;
// in the second, its reads of per-element values of the enclosing graph
// (flat vectors) give the active elements' values. It may read scalars and
// constants of the enclosing graph too, nothing else. Inside another
// Loop's or If's body (nested iterations) it is one Loop over all elements.
LoopResult elementwise_loop(GraphBuilder& g, const std::vector<Value*>& initial, int64_t max_iterations,
                            const LoopStepFn& step, const std::string& name = "iteration");

}  // namespace pytensor_onnx::recipes
