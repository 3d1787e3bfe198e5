#include "session.h"

#include <mutex>
#include <stdexcept>

namespace pytensor_onnx::runtime {
namespace {

const OrtApi* g_api = nullptr;
std::mutex g_api_mutex;

// The environment (set_api): ONNX Runtime keeps one per process, shared
// with its Python binding. Held for the life of the process: sessions, and
// arrays made from their outputs, may outlive any owner here.
OrtEnv* g_env = nullptr;

OrtEnv* environment() { return g_env; }

const OrtMemoryInfo* cpu_memory() {
  static std::unique_ptr<OrtMemoryInfo, MemoryInfoDeleter> info = [] {
    OrtMemoryInfo* made = nullptr;
    check(api().CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &made));
    return std::unique_ptr<OrtMemoryInfo, MemoryInfoDeleter>(made);
  }();
  return info.get();
}

}  // namespace

void set_api(const OrtApiBase* base) {
  std::lock_guard<std::mutex> lock(g_api_mutex);
  if (g_api != nullptr) return;
  const OrtApi* served = base == nullptr ? nullptr : base->GetApi(21);
  if (served == nullptr) throw std::runtime_error("the loaded ONNX Runtime serves no C API version 21 (1.21 or newer)");
  // The environment must be the Python binding's: ONNX Runtime 1.32 hands
  // it to CreateEnv; 1.21's binding keeps its own, and CreateEnv then fails
  // ("Only one instance of LoggingManager ..."). Found out here, once.
  OrtEnv* env = nullptr;
  if (OrtStatus* status = served->CreateEnv(ORT_LOGGING_LEVEL_FATAL, "pytensor_onnx", &env)) {
    std::string message = served->GetErrorMessage(status);
    served->ReleaseStatus(status);
    throw std::runtime_error("this ONNX Runtime gives its C API no access to the environment of its Python binding (" +
                             message + ")");
  }
  g_api = served;
  g_env = env;
}

bool has_api() {
  std::lock_guard<std::mutex> lock(g_api_mutex);
  return g_api != nullptr;
}

const OrtApi& api() {
  if (g_api == nullptr) throw std::logic_error("runtime::api() before set_api()");
  return *g_api;
}

void ValueDeleter::operator()(OrtValue* value) const { api().ReleaseValue(value); }
void SessionDeleter::operator()(OrtSession* session) const { api().ReleaseSession(session); }
void OptionsDeleter::operator()(OrtSessionOptions* options) const { api().ReleaseSessionOptions(options); }
void RunOptionsDeleter::operator()(OrtRunOptions* options) const { api().ReleaseRunOptions(options); }
void MemoryInfoDeleter::operator()(OrtMemoryInfo* info) const { api().ReleaseMemoryInfo(info); }

void check(OrtStatus* status) {
  if (status == nullptr) return;
  std::string message = api().GetErrorMessage(status);
  api().ReleaseStatus(status);
  throw std::runtime_error(message);
}

Value borrowed_tensor(void* data, size_t nbytes, const std::vector<int64_t>& shape,
                      ONNXTensorElementDataType type) {
  OrtValue* value = nullptr;
  check(api().CreateTensorWithDataAsOrtValue(cpu_memory(), data, nbytes, shape.data(), shape.size(), type, &value));
  return Value(value);
}

Session::Session(const std::string& model, const std::vector<std::string>& input_names,
                 const std::vector<std::string>& output_names, const SessionConfig& config,
                 const std::vector<Initializer>& initializers)
    : input_names_(input_names), output_names_(output_names) {
  for (const std::string& name : input_names_) input_ptrs_.push_back(name.c_str());
  for (const std::string& name : output_names_) output_ptrs_.push_back(name.c_str());
  const OrtApi& a = api();
  OrtSessionOptions* options = nullptr;
  check(a.CreateSessionOptions(&options));
  options_.reset(options);
  check(a.SetSessionLogSeverityLevel(options, config.log_severity));
  for (const auto& [key, value] : config.entries) check(a.AddSessionConfigEntry(options, key.c_str(), value.c_str()));
  if (!config.kernel_library.empty()) check(a.RegisterCustomOpsLibrary_V2(options, config.kernel_library.c_str()));
  if (!initializers.empty()) {
    // The placeholders of bake.h are external data: these values satisfy
    // them when the model loads, and AddInitializer makes the session read
    // the caller's memory instead of a copy.
    std::vector<const char*> names;
    std::vector<const OrtValue*> values;
    for (const Initializer& init : initializers) {
      names.push_back(init.name.c_str());
      values.push_back(init.value.get());
    }
    check(a.AddExternalInitializers(options, names.data(), values.data(), names.size()));
    for (const Initializer& init : initializers) check(a.AddInitializer(options, init.name.c_str(), init.value.get()));
  }
  OrtSession* session = nullptr;
  check(a.CreateSessionFromArray(environment(), model.data(), model.size(), options, &session));
  session_.reset(session);
  OrtRunOptions* run_options = nullptr;
  check(a.CreateRunOptions(&run_options));
  run_options_.reset(run_options);
}

std::vector<Value> Session::run(const std::vector<OrtValue*>& inputs) const {
  if (inputs.size() != input_ptrs_.size()) {
    throw std::invalid_argument("the session takes " + std::to_string(input_ptrs_.size()) + " inputs, got " +
                                std::to_string(inputs.size()));
  }
  std::vector<OrtValue*> outputs(output_ptrs_.size(), nullptr);
  OrtStatus* status = api().Run(session_.get(), run_options_.get(), input_ptrs_.data(),
                                const_cast<const OrtValue* const*>(inputs.data()), inputs.size(), output_ptrs_.data(),
                                output_ptrs_.size(), outputs.data());
  std::vector<Value> owned;
  for (OrtValue* value : outputs) owned.emplace_back(value);  // (released even when the run failed)
  check(status);
  return owned;
}

}  // namespace pytensor_onnx::runtime
