#include "runtime.h"

#include <string>

#include "errors.h"

namespace pymc_logp {

namespace {

void init_api() {
  // The API table of the version the headers describe. A runtime older than
  // that returns null (it cannot serve functions it does not have), which
  // the C++ API's automatic initialization would dereference.
  const OrtApiBase* base = OrtGetApiBase();
  const OrtApi* api = base->GetApi(ORT_API_VERSION);
  if (api == nullptr) {
    throw Error(std::string("the ONNX Runtime library loaded (") + base->GetVersionString() +
                ") is older than the headers this program was compiled with (API version " +
                std::to_string(ORT_API_VERSION) + "); use ONNX Runtime 1." + std::to_string(ORT_API_VERSION) +
                " or newer, or rebuild against the older headers");
  }
  Ort::InitApi(api);
}

}  // namespace

Ort::Env& ort_env() {
  static Ort::Env env = [] {
    init_api();
    // Warnings and errors come back as exceptions with their messages; the
    // runtime's own log would print them a second time.
    return Ort::Env(ORT_LOGGING_LEVEL_FATAL, "pymc_logp");
  }();
  return env;
}

}  // namespace pymc_logp
