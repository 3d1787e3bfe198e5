// A session of ONNX Runtime driven through its C API from the extension
// (mode ONNX's default sessions). The Python binding of ONNX Runtime turns
// each call's feed dict, every input and every output into Python objects of
// its own: on a PyMC log-density of 4 inputs and 4 outputs that was ~3.4 us
// of a 10.4 us run, against 7 us for the same run from C++.
//
// The API is the one of the ONNX Runtime the Python package loaded: the
// kernel library receives it when that runtime registers it
// (RegisterCustomOps), so the process holds one ONNX Runtime, not two.
#pragma once

#include <onnxruntime_c_api.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "bound_arrays.h"

namespace pytensor_onnx::runtime {

// Sets the API every session uses (once per process; later calls with the
// same runtime are no-ops). Throws std::runtime_error if `base` serves no
// API version 21.
void set_api(const OrtApiBase* base);
bool has_api();
const OrtApi& api();

// Throws std::runtime_error carrying the status's message (and releases it).
void check(OrtStatus* status);

// A CPU tensor over memory the caller keeps alive while the value is used.
Value borrowed_tensor(void* data, size_t nbytes, const std::vector<int64_t>& shape,
                      ONNXTensorElementDataType type);

// An initializer the session reads from the caller's memory (a baked shared
// value): its name and the value over that memory.
struct Initializer {
  std::string name;
  Value value;
};

// What a session is built with besides its model.
struct SessionConfig {
  std::vector<std::pair<std::string, std::string>> entries;  // AddSessionConfigEntry
  int log_severity = ORT_LOGGING_LEVEL_WARNING;
  std::string kernel_library;  // a custom-op library to register, or empty
};

class Session;

// The outputs of one run, in the order of the session's output names.
// Their memory is ONNX Runtime's binding's, which its next run writes
// into: copy an output, or take it (take_output), before the result goes,
// which hands the binding back to the session for reuse.
class RunResult {
 public:
  RunResult(const Session& session, BindingState binding, std::vector<Value> outputs, std::vector<ArrayView> views);
  RunResult(RunResult&&) = default;
  RunResult& operator=(RunResult&&) = delete;
  ~RunResult();

  size_t size() const { return binding_.outputs.size(); }
  const ArrayView& output(size_t i) const;
  // Output i for the caller to keep (one larger than kCopiedBytes): the
  // binding lets go of it (its next run allocates that output anew).
  Value take_output(size_t i);

 private:
  const Session* session_;
  BindingState binding_;
  std::vector<Value> outputs_;  // per output, the value ONNX Runtime allocated, if it did
  // Per output, what it is; empty when every output is in the binding's own
  // memory (binding_.outputs' views).
  std::vector<ArrayView> views_;
};

class Session {
 public:
  // `config`: session config entries (key, value); `log_severity`: ONNX
  // Runtime's OrtLoggingLevel for the session; `kernel_library`: the
  // custom-op library to register, or empty. `initializers` must outlive the
  // session (the caller keeps their memory).
  Session(const std::string& model, const std::vector<std::string>& input_names,
          const std::vector<std::string>& output_names, const SessionConfig& config,
          const std::vector<Initializer>& initializers);

  // Runs the model on `inputs` (in the order of `input_names`). Thread-safe:
  // each concurrent run has a binding of its own.
  RunResult run(const std::vector<InputArray>& inputs) const;

  const std::vector<std::string>& input_names() const { return input_names_; }
  const std::vector<std::string>& output_names() const { return output_names_; }

 private:
  std::vector<std::string> input_names_, output_names_;
  std::vector<const char*> input_ptrs_, output_ptrs_;
  // Per input (of input_names): whether the model declares it a scalar.
  // ONNX Runtime takes any shape for a rank-0 input; a run checks it here,
  // so the kernels may take the declared shape (passes/record_input_shapes.h).
  std::vector<char> scalar_inputs_;
  std::unique_ptr<OrtSessionOptions, OptionsDeleter> options_;
  std::unique_ptr<OrtSession, SessionDeleter> session_;
  std::unique_ptr<OrtRunOptions, RunOptionsDeleter> run_options_;

  // Runs go through IoBindings, which keep their outputs' memory for the
  // next run: ONNX Runtime's Run allocates every output and resolves every
  // name on each call (~1 us of the eight schools' 7 us run). They keep
  // small inputs and outputs in memory of their own (bound_arrays.h). Idle
  // bindings wait here (declared after the session: released before it).
  friend class RunResult;
  void find_scalar_inputs();
  BindingState take_binding() const;
  void give_back(BindingState binding) const;
  void bind_fresh_outputs(BindingState& state) const;
  void bind_inputs(BindingState& state, const std::vector<InputArray>& inputs) const;
  // The outputs of the run that just ended: empty when all are in the
  // binding's memory; else every output's view, with the values ONNX
  // Runtime allocated in `allocated` (small ones are then bound to memory
  // of the binding's own for the next run).
  std::vector<ArrayView> read_outputs(BindingState& state, std::vector<Value>& allocated) const;
  mutable std::mutex bindings_mutex_;
  mutable std::vector<BindingState> idle_bindings_;
  // Set once a run's outputs changed shape: from then on every run
  // allocates its outputs.
  mutable std::atomic<bool> fresh_outputs_{false};
};

}  // namespace pytensor_onnx::runtime
