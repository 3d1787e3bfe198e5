// Values a kernel decides once per key and keeps for later runs: what a
// program's evaluation decides per set of one-element inputs (run_plan.h),
// what an Elemwise node's run finds per set of input shapes (node_record.h).
// A PyMC-sized node is a few hundred ns of work, and deciding such things
// again on every run cost as much as the work.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace pytensor_onnx::kernels {

// Kept values of type Value, each with a member `key` of type Key. Concurrent
// runs of a session share their kernel: the value last found is read without
// a lock, others are found or added under it. Values are never freed before
// the cache, so a run may keep a reference. A copy starts empty (a value may
// refer to parts of its owner by position or address).
template <class Key, class Value>
class KeyedCache {
 public:
  KeyedCache() = default;
  KeyedCache(const KeyedCache&) {}
  KeyedCache& operator=(const KeyedCache& other) {
    if (this != &other) {
      std::lock_guard<std::mutex> lock(mutex_);
      last_.store(nullptr);
      values_.clear();
    }
    return *this;
  }

  // The kept value of `key`, or nullptr.
  const Value* find(const Key& key) const {
    const Value* last = last_.load(std::memory_order_acquire);
    if (last != nullptr && last->key == key) return last;
    std::lock_guard<std::mutex> lock(mutex_);
    return find_locked(key);
  }

  // Keeps `value` (while fewer than kMaxValues are kept) unless a value of its
  // key is kept already (another thread's run made it too), and returns the
  // kept one; else `value` as the calling thread's until its next add.
  const Value& add(Value value) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (const Value* kept = find_locked(value.key)) return *kept;
    if (values_.size() >= kMaxValues) {
      // (Ever new keys, a node fed ever new shapes: none is kept.)
      thread_local Value unkept;
      unkept = std::move(value);
      return unkept;
    }
    values_.push_back(std::make_unique<Value>(std::move(value)));
    last_.store(values_.back().get(), std::memory_order_release);
    return *values_.back();
  }

  // Whether as many values are kept as may be: one added now would not be.
  bool full() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return values_.size() >= kMaxValues;
  }

  // The value of `key`: the kept one, or one `make()` returns, added.
  template <class Make>
  const Value& find(const Key& key, Make&& make) const {
    if (const Value* kept = find(key)) return *kept;
    return add(make());
  }

 private:
  static constexpr size_t kMaxValues = 32;

  const Value* find_locked(const Key& key) const {
    for (const auto& value : values_) {
      if (value->key == key) {
        last_.store(value.get(), std::memory_order_release);
        return value.get();
      }
    }
    return nullptr;
  }

  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<Value>> values_;
  mutable std::atomic<const Value*> last_{nullptr};
};

}  // namespace pytensor_onnx::kernels
