// What a session's IoBinding holds between runs (session.h): small inputs
// and outputs in memory of its own, so that a run of the same dtypes and
// shapes as the one before binds nothing and asks ONNX Runtime nothing about
// them. On a PyMC log-density of 2-5 inputs and outputs each, wrapping and
// binding every input and asking for every output's type and shape was
// ~0.2 us an array on every run.
#pragma once

#include <onnxruntime_c_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "handles.h"

namespace pytensor_onnx::runtime {

// Inputs of at most this many bytes are copied into memory a binding keeps
// bound between runs; larger ones are read where they are. Outputs of at
// most as many bytes are copied out of the binding's memory, larger ones
// handed over: an output that is an input passed through is then a copy,
// never the binding's memory, which the next run overwrites.
inline constexpr size_t kCopiedBytes = 16 * 1024;

// An input of a run as the caller holds it: C-contiguous memory of `type`
// and shape [shape, shape + ndim), alive during the run.
struct InputArray {
  void* data;
  size_t nbytes;
  const int64_t* shape;
  size_t ndim;
  ONNXTensorElementDataType type;
};

// An array's memory and what it is (an output of a run: the binding's
// memory, or that of a value the run's result holds).
struct ArrayView {
  void* data = nullptr;
  size_t nbytes = 0;
  std::vector<int64_t> shape;
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
};

// An input or output as a binding holds it between runs: in a value of its
// own (`owned`), which the next run of the same dtype and shape reuses
// without binding again, or not (an input over the caller's memory, bound
// anew on every run; an output ONNX Runtime allocates).
struct BoundArray {
  Value value;
  ArrayView view;
  bool owned = false;
};

// An IoBinding with what it has bound.
struct BindingState {
  Binding binding;
  std::vector<BoundArray> inputs, outputs;
  bool reused = false;  // it has run before
};

}  // namespace pytensor_onnx::runtime
