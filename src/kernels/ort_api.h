// ONNX Runtime's C++ API, initialised by hand: the library links against no
// ONNX Runtime library; the API table arrives through RegisterCustomOps.
#pragma once

#define ORT_API_MANUAL_INIT
#include <onnxruntime_cxx_api.h>
#undef ORT_API_MANUAL_INIT

// The API version the library is built for: the oldest runtime the project
// supports (1.21) serves it, and every newer runtime serves older versions.
#define PYTENSOR_ONNX_KERNELS_API_VERSION 21
static_assert(ORT_API_VERSION >= PYTENSOR_ONNX_KERNELS_API_VERSION,
              "the kernel library needs ONNX Runtime headers of API version 21 or newer");
