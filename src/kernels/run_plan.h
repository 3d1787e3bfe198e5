// What evaluating a program decides from which of its inputs hold one
// element, made once per such set and kept with the program: a PyMC-sized
// kernel node is a few hundred ns of work, and deciding it again on every
// run (which registers hold one value, which instructions run per block,
// which compiled variant fits, over every register and instruction) cost
// as much as the work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "keyed_cache.h"

namespace pytensor_onnx::kernels {

struct RunPlan {
  std::vector<bool> key;            // per input, whether it holds one element (the plan's key)
  std::vector<bool> scalar;         // per register: one value per run (a scalar input, a constant, work on those)
  std::vector<int> constants;       // registers past the inputs that are constants
  std::vector<size_t> scalar_code;  // instructions on scalars alone: run once per run (interpreted)
  std::vector<size_t> block_code;   // the rest: run per block (interpreted)
  int compiled = -1;                // the variant of Program::compiled that runs, or -1: interpreted
  int64_t cost = 1;                 // work per element of the instructions left for the blocks
};

// The plans of one program, by their keys (keyed_cache.h). A copy of a
// program starts with no plans: they refer to its compiled variants by
// position, which a copy may change.
using RunPlanCache = KeyedCache<std::vector<bool>, RunPlan>;

}  // namespace pytensor_onnx::kernels
