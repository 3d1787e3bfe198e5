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
void IoBindingDeleter::operator()(OrtIoBinding* binding) const { api().ReleaseIoBinding(binding); }

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

void Session::bind_fresh_outputs(OrtIoBinding* binding) const {
  for (const char* name : output_ptrs_) check(api().BindOutputToDevice(binding, name, cpu_memory()));
}

Session::PooledBinding Session::take_binding() const {
  {
    std::lock_guard<std::mutex> lock(bindings_mutex_);
    if (!idle_bindings_.empty()) {
      Binding binding = std::move(idle_bindings_.back());
      idle_bindings_.pop_back();
      return {std::move(binding), true};
    }
  }
  OrtIoBinding* made = nullptr;
  check(api().CreateIoBinding(session_.get(), &made));
  Binding binding(made);
  bind_fresh_outputs(made);
  return {std::move(binding), false};
}

void Session::give_back(Binding binding) const {
  std::lock_guard<std::mutex> lock(bindings_mutex_);
  idle_bindings_.push_back(std::move(binding));
}

RunResult Session::run(const std::vector<OrtValue*>& inputs) const {
  if (inputs.size() != input_ptrs_.size()) {
    throw std::invalid_argument("the session takes " + std::to_string(input_ptrs_.size()) + " inputs, got " +
                                std::to_string(inputs.size()));
  }
  const OrtApi& a = api();
  PooledBinding pooled = take_binding();
  OrtIoBinding* binding = pooled.binding.get();
  // Every input is bound again: the caller's memory is new on each call.
  for (size_t i = 0; i < inputs.size(); ++i) check(a.BindInput(binding, input_ptrs_[i], inputs[i]));
  const bool reuse_outputs = pooled.reused && !fresh_outputs_.load(std::memory_order_relaxed);
  if (pooled.reused && !reuse_outputs) bind_fresh_outputs(binding);
  OrtStatus* status = a.RunWithBinding(session_.get(), run_options_.get(), binding);
  if (status != nullptr && reuse_outputs) {
    // ONNX Runtime fails a run whose outputs do not have the shapes of the
    // memory bound for them (shapes that follow the inputs' values, or their
    // shapes): run again with every output allocated, and so from now on.
    // (A run that fails for any other reason fails again, as it should.)
    a.ReleaseStatus(status);
    bind_fresh_outputs(binding);
    status = a.RunWithBinding(session_.get(), run_options_.get(), binding);
    if (status == nullptr) fresh_outputs_.store(true, std::memory_order_relaxed);
  }
  check(status);  // (a binding whose run failed is dropped, not reused)
  OrtAllocator* allocator = nullptr;
  check(a.GetAllocatorWithDefaultOptions(&allocator));
  OrtValue** values = nullptr;
  size_t count = 0;
  check(a.GetBoundOutputValues(binding, allocator, &values, &count));
  std::vector<Value> outputs;
  for (size_t i = 0; i < count; ++i) outputs.emplace_back(values[i]);
  if (values != nullptr) allocator->Free(allocator, values);
  if (outputs.size() != output_ptrs_.size()) {
    throw std::runtime_error("ONNX Runtime gave " + std::to_string(outputs.size()) + " outputs, not " +
                             std::to_string(output_ptrs_.size()));
  }
  return RunResult(*this, std::move(pooled.binding), std::move(outputs));
}

RunResult::RunResult(const Session& session, Binding binding, std::vector<Value> outputs)
    : session_(&session), binding_(std::move(binding)), outputs_(std::move(outputs)) {}

RunResult::~RunResult() {
  if (!binding_) return;  // (moved from)
  try {
    session_->give_back(std::move(binding_));
  } catch (...) {
    // Only a failing lock: the binding is then released instead of reused.
  }
}

Value RunResult::take_output(size_t i) {
  Value& value = outputs_.at(i);
  if (!value) throw std::logic_error("RunResult::take_output: output " + std::to_string(i) + " was taken already");
  check(api().BindOutputToDevice(binding_.get(), session_->output_ptrs_.at(i), cpu_memory()));
  return std::move(value);
}

}  // namespace pytensor_onnx::runtime
