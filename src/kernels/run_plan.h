// What evaluating a program decides from which of its inputs hold one
// element, made once per such set and kept with the program: a PyMC-sized
// kernel node is a few hundred ns of work, and deciding it again on every
// run (which registers hold one value, which instructions run per block,
// which compiled variant fits, over every register and instruction) cost
// as much as the work.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace pytensor_onnx::kernels {

struct RunPlan {
  std::vector<bool> scalar_inputs;  // the key: per input, whether it holds one element
  std::vector<bool> scalar;         // per register: one value per run (a scalar input, a constant, work on those)
  std::vector<int> constants;       // registers past the inputs that are constants
  std::vector<size_t> scalar_code;  // instructions on scalars alone: run once per run (interpreted)
  std::vector<size_t> block_code;   // the rest: run per block (interpreted)
  int compiled = -1;                // the variant of Program::compiled that runs, or -1: interpreted
  int64_t cost = 1;                 // work per element of the instructions left for the blocks
};

// The plans of one program. Concurrent runs of a session share the program:
// the plan last used is read without a lock, others are found or made under
// it. Plans are never freed before the program, so a run may keep a
// reference. A copy of a program starts with no plans (they refer to its
// compiled variants by position, which a copy may change).
class RunPlanCache {
 public:
  RunPlanCache() = default;
  RunPlanCache(const RunPlanCache&) {}
  RunPlanCache& operator=(const RunPlanCache& other) {
    if (this != &other) {
      std::lock_guard<std::mutex> lock(mutex_);
      last_.store(nullptr);
      plans_.clear();
    }
    return *this;
  }

  // The plan for `scalar_inputs`: the last one used, a kept one, or one
  // `make()` returns (kept while there are fewer than kMaxPlans).
  template <class Make>
  const RunPlan& find(const std::vector<bool>& scalar_inputs, Make&& make) const {
    const RunPlan* last = last_.load(std::memory_order_acquire);
    if (last != nullptr && last->scalar_inputs == scalar_inputs) return *last;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& plan : plans_) {
      if (plan->scalar_inputs == scalar_inputs) {
        last_.store(plan.get(), std::memory_order_release);
        return *plan;
      }
    }
    auto plan = std::make_unique<RunPlan>(make());
    if (plans_.size() >= kMaxPlans) {
      // (A node fed ever new sets of one-element inputs: the plan is the
      // calling thread's until its next run.)
      thread_local RunPlan unkept;
      unkept = std::move(*plan);
      return unkept;
    }
    plans_.push_back(std::move(plan));
    last_.store(plans_.back().get(), std::memory_order_release);
    return *plans_.back();
  }

 private:
  static constexpr size_t kMaxPlans = 32;
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<RunPlan>> plans_;
  mutable std::atomic<const RunPlan*> last_{nullptr};
};

}  // namespace pytensor_onnx::kernels
