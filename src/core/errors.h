// Exceptions the core raises; the Python module maps them to Python types.
#pragma once

#include <stdexcept>
#include <string>

namespace pytensor_onnx {

// The graph asked for is malformed (wrong input count, dtype clash, bad attribute).
// Python: ValueError.
class BuildError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The graph is well formed but cannot be expressed at the target opset or on ONNX
// Runtime's kernels. Python: NotImplementedError.
class UnsupportedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace pytensor_onnx
