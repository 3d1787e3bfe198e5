// Owning handles of ONNX Runtime's C API objects (released through the API
// the process's sessions use, session.h).
#pragma once

#include <onnxruntime_c_api.h>

#include <memory>

namespace pytensor_onnx::runtime {

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
struct IoBindingDeleter {
  void operator()(OrtIoBinding* binding) const;
};
using Binding = std::unique_ptr<OrtIoBinding, IoBindingDeleter>;

}  // namespace pytensor_onnx::runtime
