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

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace pytensor_onnx::runtime {

// Sets the API every session uses (once per process; later calls with the
// same runtime are no-ops). Throws std::runtime_error if `base` serves no
// API version 21.
void set_api(const OrtApiBase* base);
bool has_api();
const OrtApi& api();

struct ValueDeleter {
  void operator()(OrtValue* value) const;
};
using Value = std::unique_ptr<OrtValue, ValueDeleter>;

struct SessionDeleter {
  void operator()(OrtSession* session) const;
};
struct OptionsDeleter {
  void operator()(OrtSessionOptions* options) const;
};
struct RunOptionsDeleter {
  void operator()(OrtRunOptions* options) const;
};
struct MemoryInfoDeleter {
  void operator()(OrtMemoryInfo* info) const;
};

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

class Session {
 public:
  // `config`: session config entries (key, value); `log_severity`: ONNX
  // Runtime's OrtLoggingLevel for the session; `kernel_library`: the
  // custom-op library to register, or empty. `initializers` must outlive the
  // session (the caller keeps their memory).
  Session(const std::string& model, const std::vector<std::string>& input_names,
          const std::vector<std::string>& output_names, const SessionConfig& config,
          const std::vector<Initializer>& initializers);

  // Runs the model on `inputs` (in the order of `input_names`); the outputs
  // in the order of `output_names`, allocated by ONNX Runtime. Thread-safe.
  std::vector<Value> run(const std::vector<OrtValue*>& inputs) const;

  const std::vector<std::string>& input_names() const { return input_names_; }
  const std::vector<std::string>& output_names() const { return output_names_; }

 private:
  std::vector<std::string> input_names_, output_names_;
  std::vector<const char*> input_ptrs_, output_ptrs_;
  std::unique_ptr<OrtSessionOptions, OptionsDeleter> options_;
  std::unique_ptr<OrtSession, SessionDeleter> session_;
  std::unique_ptr<OrtRunOptions, RunOptionsDeleter> run_options_;
};

}  // namespace pytensor_onnx::runtime
