// ONNX Runtime's process-wide state: the API table and the environment.
#pragma once

#include <onnxruntime_cxx_api.h>

namespace pymc_logp {

// The environment every session of the process shares (made on first use).
// Throws Error when the loaded runtime is older than the headers the program
// was compiled with.
Ort::Env& ort_env();

}  // namespace pymc_logp
