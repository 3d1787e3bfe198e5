// The native session's binding (runtime_bindings.cc), added to _core when
// ONNX Runtime's C API headers are found.
#pragma once
#include <nanobind/nanobind.h>
void bind_runtime(nanobind::module_& m);
