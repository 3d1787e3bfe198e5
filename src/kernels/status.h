// A kernel's work as ONNX Runtime wants it reported: what it throws becomes
// the status of the session run, never an exception across the C API.
#pragma once

#include <exception>
#include <string>

#include "ort_api.h"

namespace pytensor_onnx::kernels {

template <class F>
OrtStatusPtr as_status(const char* kernel, F&& compute) {
  try {
    compute();
    return nullptr;
  } catch (const Ort::Exception& e) {
    return Ort::GetApi().CreateStatus(e.GetOrtErrorCode(), e.what());
  } catch (const std::exception& e) {
    return Ort::GetApi().CreateStatus(ORT_INVALID_ARGUMENT, (std::string(kernel) + ": " + e.what()).c_str());
  }
}

// A kernel made by `make()` handed to ONNX Runtime, which owns it from then
// on (its KernelDestroy deletes it); what the constructor throws becomes the
// status of the session's creation, named after the op.
template <class Make>
OrtStatusPtr create_kernel(const OrtApi& api, const std::string& op_name, void** kernel, Make&& make) {
  try {
    *kernel = make().release();
    return nullptr;
  } catch (const Ort::Exception& e) {
    return api.CreateStatus(e.GetOrtErrorCode(), (op_name + ": " + e.what()).c_str());
  } catch (const std::exception& e) {
    return api.CreateStatus(ORT_INVALID_GRAPH, (op_name + ": " + e.what()).c_str());
  }
}

}  // namespace pytensor_onnx::kernels
