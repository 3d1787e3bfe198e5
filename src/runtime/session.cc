#include "session.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "dtype.h"

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
  find_scalar_inputs();
}

void Session::find_scalar_inputs() {
  const OrtApi& a = api();
  OrtAllocator* allocator = nullptr;
  check(a.GetAllocatorWithDefaultOptions(&allocator));
  size_t count = 0;
  check(a.SessionGetInputCount(session_.get(), &count));
  scalar_inputs_.assign(input_names_.size(), 0);
  for (size_t m = 0; m < count; ++m) {
    char* name = nullptr;
    check(a.SessionGetInputName(session_.get(), m, allocator, &name));
    // (Freed by the allocator that made it, also when the copy throws.)
    const auto free_name = [allocator](char* made) { allocator->Free(allocator, made); };
    const std::unique_ptr<char, decltype(free_name)> owned_name(name, free_name);
    const std::string model_name = owned_name.get();
    const auto fed = std::find(input_names_.begin(), input_names_.end(), model_name);
    if (fed == input_names_.end()) continue;
    OrtTypeInfo* type = nullptr;
    check(a.SessionGetInputTypeInfo(session_.get(), m, &type));
    const OrtTensorTypeAndShapeInfo* tensor = nullptr;  // (owned by `type`; null for a non-tensor)
    size_t rank = 0;
    OrtStatus* status = a.CastTypeInfoToTensorInfo(type, &tensor);
    if (status == nullptr && tensor != nullptr) status = a.GetDimensionsCount(tensor, &rank);
    const bool scalar = status == nullptr && tensor != nullptr && rank == 0;
    a.ReleaseTypeInfo(type);
    check(status);
    scalar_inputs_[static_cast<size_t>(fed - input_names_.begin())] = scalar ? 1 : 0;
  }
}

void Session::bind_fresh_outputs(BindingState& state) const {
  for (size_t i = 0; i < output_ptrs_.size(); ++i) {
    check(api().BindOutputToDevice(state.binding.get(), output_ptrs_[i], cpu_memory()));
    state.outputs[i] = BoundArray{};
  }
}

BindingState Session::take_binding() const {
  {
    std::lock_guard<std::mutex> lock(bindings_mutex_);
    if (!idle_bindings_.empty()) {
      BindingState state = std::move(idle_bindings_.back());
      idle_bindings_.pop_back();
      state.reused = true;
      return state;
    }
  }
  OrtIoBinding* made = nullptr;
  check(api().CreateIoBinding(session_.get(), &made));
  BindingState state;
  state.binding.reset(made);
  state.inputs.resize(input_ptrs_.size());
  state.outputs.resize(output_ptrs_.size());
  bind_fresh_outputs(state);
  return state;
}

void Session::give_back(BindingState binding) const {
  std::lock_guard<std::mutex> lock(bindings_mutex_);
  idle_bindings_.push_back(std::move(binding));
}

namespace {

// Bytes per element (ONNX Runtime numbers element types as ONNX does, the
// core's DType); 0 for strings, which are never kept.
static_assert(static_cast<int>(DType::Float64) == ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE &&
              static_cast<int>(DType::Bool) == ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL &&
              static_cast<int>(DType::BFloat16) == ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16);
size_t element_size(ONNXTensorElementDataType type) { return dtype_size(static_cast<DType>(type)); }

bool holds(const BoundArray& bound, const InputArray& input) {
  return bound.owned && bound.view.type == input.type && bound.view.shape.size() == input.ndim &&
         std::equal(bound.view.shape.begin(), bound.view.shape.end(), input.shape);
}

// A tensor in memory of its own (ONNX Runtime's default allocator), bound
// to the binding's input or output `name`.
void bind_owned(OrtIoBinding* binding, const char* name, bool as_input, const std::vector<int64_t>& shape,
                ONNXTensorElementDataType type, BoundArray& bound) {
  const OrtApi& a = api();
  OrtAllocator* allocator = nullptr;
  check(a.GetAllocatorWithDefaultOptions(&allocator));
  OrtValue* made = nullptr;
  check(a.CreateTensorAsOrtValue(allocator, shape.data(), shape.size(), type, &made));
  Value value(made);
  void* data = nullptr;
  check(a.GetTensorMutableData(made, &data));
  check(as_input ? a.BindInput(binding, name, made) : a.BindOutput(binding, name, made));
  size_t count = 1;
  for (int64_t d : shape) count *= static_cast<size_t>(d);
  bound.value = std::move(value);
  bound.view = ArrayView{data, count * element_size(type), shape, type};
  bound.owned = true;
}

// What `value`, a tensor, is (asked of ONNX Runtime).
ArrayView view_of(OrtValue* value) {
  const OrtApi& a = api();
  OrtTensorTypeAndShapeInfo* info = nullptr;
  check(a.GetTensorTypeAndShape(value, &info));
  ArrayView view;
  size_t ndim = 0, count = 0;
  OrtStatus* status = a.GetTensorElementType(info, &view.type);
  if (status == nullptr) status = a.GetDimensionsCount(info, &ndim);
  view.shape.resize(ndim);
  if (status == nullptr && ndim > 0) status = a.GetDimensions(info, view.shape.data(), ndim);
  if (status == nullptr) status = a.GetTensorShapeElementCount(info, &count);
  a.ReleaseTensorTypeAndShapeInfo(info);
  check(status);
  view.nbytes = count * element_size(view.type);
  if (count > 0) check(a.GetTensorMutableData(value, &view.data));
  return view;
}

}  // namespace

void Session::bind_inputs(BindingState& state, const std::vector<InputArray>& inputs) const {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputArray& input = inputs[i];
    BoundArray& bound = state.inputs[i];
    if (input.nbytes > kCopiedBytes || element_size(input.type) == 0) {
      // (Over the caller's memory: bound again on every run.)
      std::vector<int64_t> shape(input.shape, input.shape + input.ndim);
      bound.value = borrowed_tensor(input.data, input.nbytes, shape, input.type);
      bound.owned = false;
      check(api().BindInput(state.binding.get(), input_ptrs_[i], bound.value.get()));
      continue;
    }
    if (!holds(bound, input)) {
      bind_owned(state.binding.get(), input_ptrs_[i], true, std::vector<int64_t>(input.shape, input.shape + input.ndim),
                 input.type, bound);
    }
    if (input.nbytes > 0) std::memcpy(bound.view.data, input.data, input.nbytes);
  }
}

std::vector<ArrayView> Session::read_outputs(BindingState& state, std::vector<Value>& allocated) const {
  const OrtApi& a = api();
  const size_t n = output_ptrs_.size();
  const bool all_owned = std::all_of(state.outputs.begin(), state.outputs.end(), [](const BoundArray& b) {
    return b.owned;
  });
  // (The usual run: every output is in the binding's memory, whose views
  // the result reads there; nothing to ask, copy or allocate.)
  if (all_owned) return {};
  std::vector<ArrayView> views(n);
  allocated.resize(n);
  OrtAllocator* allocator = nullptr;
  check(a.GetAllocatorWithDefaultOptions(&allocator));
  OrtValue** values = nullptr;
  size_t count = 0;
  check(a.GetBoundOutputValues(state.binding.get(), allocator, &values, &count));
  std::vector<Value> bound_values;
  for (size_t i = 0; i < count; ++i) bound_values.emplace_back(values[i]);
  if (values != nullptr) allocator->Free(allocator, values);
  if (bound_values.size() != n) {
    throw std::runtime_error("ONNX Runtime gave " + std::to_string(bound_values.size()) + " outputs, not " +
                             std::to_string(n));
  }
  const bool keep = !fresh_outputs_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < n; ++i) {
    BoundArray& bound = state.outputs[i];
    if (bound.owned) {
      views[i] = bound.view;
      continue;
    }
    views[i] = view_of(bound_values[i].get());
    allocated[i] = std::move(bound_values[i]);
    // The next run of these shapes writes this output into memory of the
    // binding's own, which a run's result copies out (kCopiedBytes).
    if (keep && views[i].nbytes <= kCopiedBytes && element_size(views[i].type) != 0) {
      bind_owned(state.binding.get(), output_ptrs_[i], false, views[i].shape, views[i].type, bound);
    }
  }
  return views;
}

RunResult Session::run(const std::vector<InputArray>& inputs) const {
  if (inputs.size() != input_ptrs_.size()) {
    throw std::invalid_argument("the session takes " + std::to_string(input_ptrs_.size()) + " inputs, got " +
                                std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (scalar_inputs_[i] && inputs[i].ndim != 0) {
      // (ONNX Runtime's words for an input of another rank than declared.)
      throw std::runtime_error("Invalid rank for input: " + input_names_[i] + " Got: " +
                               std::to_string(inputs[i].ndim) + " Expected: 0 Please fix either the inputs/outputs or the model.");
    }
  }
  const OrtApi& a = api();
  BindingState state = take_binding();
  bind_inputs(state, inputs);
  const bool reuse_outputs = state.reused && !fresh_outputs_.load(std::memory_order_relaxed);
  if (state.reused && !reuse_outputs) bind_fresh_outputs(state);
  OrtStatus* status = a.RunWithBinding(session_.get(), run_options_.get(), state.binding.get());
  if (status != nullptr && reuse_outputs) {
    // ONNX Runtime fails a run whose outputs do not have the shapes of the
    // memory bound for them (shapes that follow the inputs' values, or their
    // shapes): run again with every output allocated, and so from now on.
    // (A run that fails for any other reason fails again, as it should.)
    a.ReleaseStatus(status);
    bind_fresh_outputs(state);
    status = a.RunWithBinding(session_.get(), run_options_.get(), state.binding.get());
    if (status == nullptr) fresh_outputs_.store(true, std::memory_order_relaxed);
  }
  check(status);  // (a binding whose run failed is dropped, not reused)
  std::vector<Value> allocated;
  std::vector<ArrayView> views = read_outputs(state, allocated);
  return RunResult(*this, std::move(state), std::move(allocated), std::move(views));
}

RunResult::RunResult(const Session& session, BindingState binding, std::vector<Value> outputs,
                     std::vector<ArrayView> views)
    : session_(&session), binding_(std::move(binding)), outputs_(std::move(outputs)), views_(std::move(views)) {}

RunResult::~RunResult() {
  if (!binding_.binding) return;  // (moved from)
  try {
    session_->give_back(std::move(binding_));
  } catch (...) {
    // Only a failing lock: the binding is then released instead of reused.
  }
}

const ArrayView& RunResult::output(size_t i) const {
  return views_.empty() ? binding_.outputs.at(i).view : views_.at(i);
}

Value RunResult::take_output(size_t i) {
  if (i >= outputs_.size() || !outputs_[i]) {
    throw std::logic_error("RunResult::take_output: output " + std::to_string(i) +
                           " is the binding's memory or was taken already");
  }
  Value& value = outputs_[i];
  if (!binding_.outputs.at(i).owned) {
    check(api().BindOutputToDevice(binding_.binding.get(), session_->output_ptrs_.at(i), cpu_memory()));
  }
  return std::move(value);
}

}  // namespace pytensor_onnx::runtime
