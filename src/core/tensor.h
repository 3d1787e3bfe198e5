// Constant tensor data (initializers and tensor attributes).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "dtype.h"

namespace pytensor_onnx {

// Immutable after construction. The bytes are either owned or borrowed from an
// external owner (a NumPy array) that the shared_ptr keeps alive, so large
// weights are not copied until serialization.
class Tensor {
 public:
  Tensor() = default;
  // Owning: takes the little-endian bytes of `dims` elements of `dtype`.
  Tensor(DType dtype, std::vector<int64_t> dims, std::vector<uint8_t> bytes);
  // Borrowing: `data` stays valid as long as `owner` is alive.
  static Tensor borrowed(DType dtype, std::vector<int64_t> dims, const void* data, size_t nbytes,
                         std::shared_ptr<const void> owner);

  template <class T>
  static Tensor from_values(DType dtype, const std::vector<T>& values, std::vector<int64_t> dims) {
    std::vector<uint8_t> bytes(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return Tensor(dtype, std::move(dims), std::move(bytes));
  }
  static Tensor int64s(const std::vector<int64_t>& values) {
    return from_values(DType::Int64, values, {static_cast<int64_t>(values.size())});
  }
  static Tensor int64_scalar(int64_t value) { return from_values(DType::Int64, std::vector<int64_t>{value}, {}); }
  // A 0-d tensor of `dtype` holding `value` converted as C++ converts.
  static Tensor scalar(DType dtype, double value);

  // The same bytes viewed with other dims (same element count); no copy.
  Tensor with_dims(std::vector<int64_t> dims) const;

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t numel() const;
  const uint8_t* data() const { return data_.get(); }
  size_t nbytes() const { return nbytes_; }

  // Values of an integer or bool tensor widened to int64; throws for other dtypes.
  std::vector<int64_t> to_int64s() const;
  // Values of any real tensor as doubles (for folding and inference of small constants).
  std::vector<double> to_doubles() const;
  bool same_content(const Tensor& other) const;
  bool operator==(const Tensor& other) const { return same_content(other); }
  bool operator!=(const Tensor& other) const { return !same_content(other); }
  size_t content_hash() const;

 private:
  DType dtype_ = DType::Undefined;
  std::vector<int64_t> dims_;
  std::shared_ptr<const uint8_t> data_;
  size_t nbytes_ = 0;
};

}  // namespace pytensor_onnx
