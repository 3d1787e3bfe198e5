#include "tensor.h"

#include <functional>
#include <string>
#include <string_view>

#include "errors.h"

namespace pytensor_onnx {
namespace {

int64_t count_elements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) throw BuildError("tensor dims must be non-negative");
    n *= d;
  }
  return n;
}

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class Out>
std::vector<Out> widen(const Tensor& t) {
  const int64_t n = t.numel();
  std::vector<Out> out;
  out.reserve(static_cast<size_t>(n));
  const size_t step = dtype_size(t.dtype());
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* p = t.data() + i * step;
    switch (t.dtype()) {
      case DType::Bool:
      case DType::UInt8: out.push_back(static_cast<Out>(load<uint8_t>(p))); break;
      case DType::Int8: out.push_back(static_cast<Out>(load<int8_t>(p))); break;
      case DType::Int16: out.push_back(static_cast<Out>(load<int16_t>(p))); break;
      case DType::UInt16: out.push_back(static_cast<Out>(load<uint16_t>(p))); break;
      case DType::Int32: out.push_back(static_cast<Out>(load<int32_t>(p))); break;
      case DType::UInt32: out.push_back(static_cast<Out>(load<uint32_t>(p))); break;
      case DType::Int64: out.push_back(static_cast<Out>(load<int64_t>(p))); break;
      case DType::UInt64: out.push_back(static_cast<Out>(load<uint64_t>(p))); break;
      case DType::Float32: out.push_back(static_cast<Out>(load<float>(p))); break;
      case DType::Float64: out.push_back(static_cast<Out>(load<double>(p))); break;
      default: throw BuildError("cannot read values of a " + dtype_name(t.dtype()) + " tensor");
    }
  }
  return out;
}

template <class T>
std::vector<uint8_t> bytes_of(T value) {
  std::vector<uint8_t> bytes(sizeof(T));
  std::memcpy(bytes.data(), &value, sizeof(T));
  return bytes;
}

}  // namespace

Tensor::Tensor(DType dtype, std::vector<int64_t> dims, std::vector<uint8_t> bytes)
    : dtype_(dtype), dims_(std::move(dims)) {
  const size_t expected = static_cast<size_t>(count_elements(dims_)) * dtype_size(dtype_);
  if (bytes.size() != expected) {
    throw BuildError("tensor of " + dtype_name(dtype_) + " needs " + std::to_string(expected) +
                     " bytes, got " + std::to_string(bytes.size()));
  }
  auto storage = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  nbytes_ = storage->size();
  data_ = std::shared_ptr<const uint8_t>(storage, storage->data());
}

Tensor Tensor::borrowed(DType dtype, std::vector<int64_t> dims, const void* data, size_t nbytes,
                        std::shared_ptr<const void> owner) {
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  const size_t expected = static_cast<size_t>(count_elements(t.dims_)) * dtype_size(dtype);
  if (nbytes != expected) {
    throw BuildError("borrowed tensor of " + dtype_name(dtype) + " needs " + std::to_string(expected) +
                     " bytes, got " + std::to_string(nbytes));
  }
  t.nbytes_ = nbytes;
  t.data_ = std::shared_ptr<const uint8_t>(std::move(owner), static_cast<const uint8_t*>(data));
  return t;
}

Tensor Tensor::scalar(DType dtype, double value) {
  switch (dtype) {
    case DType::Float32: return Tensor(dtype, {}, bytes_of(static_cast<float>(value)));
    case DType::Float64: return Tensor(dtype, {}, bytes_of(value));
    case DType::Int8: return Tensor(dtype, {}, bytes_of(static_cast<int8_t>(value)));
    case DType::Int16: return Tensor(dtype, {}, bytes_of(static_cast<int16_t>(value)));
    case DType::Int32: return Tensor(dtype, {}, bytes_of(static_cast<int32_t>(value)));
    case DType::Int64: return Tensor(dtype, {}, bytes_of(static_cast<int64_t>(value)));
    case DType::UInt8: return Tensor(dtype, {}, bytes_of(static_cast<uint8_t>(value)));
    case DType::UInt16: return Tensor(dtype, {}, bytes_of(static_cast<uint16_t>(value)));
    case DType::UInt32: return Tensor(dtype, {}, bytes_of(static_cast<uint32_t>(value)));
    case DType::UInt64: return Tensor(dtype, {}, bytes_of(static_cast<uint64_t>(value)));
    case DType::Bool: return Tensor(dtype, {}, bytes_of(static_cast<uint8_t>(value != 0.0)));
    default: throw BuildError("cannot make a scalar of dtype " + dtype_name(dtype));
  }
}

Tensor Tensor::with_dims(std::vector<int64_t> dims) const {
  Tensor t = *this;
  if (count_elements(dims) != numel()) throw BuildError("with_dims: element count differs");
  t.dims_ = std::move(dims);
  return t;
}

int64_t Tensor::numel() const { return count_elements(dims_); }

std::vector<int64_t> Tensor::to_int64s() const {
  if (!is_integer(dtype_) && dtype_ != DType::Bool) {
    throw BuildError("expected an integer tensor, got " + dtype_name(dtype_));
  }
  return widen<int64_t>(*this);
}

std::vector<double> Tensor::to_doubles() const { return widen<double>(*this); }

bool Tensor::same_content(const Tensor& other) const {
  return dtype_ == other.dtype_ && dims_ == other.dims_ && nbytes_ == other.nbytes_ &&
         (nbytes_ == 0 || std::memcmp(data(), other.data(), nbytes_) == 0);
}

size_t Tensor::content_hash() const {
  size_t h = std::hash<int32_t>()(static_cast<int32_t>(dtype_));
  for (int64_t d : dims_) h = h * 31 + std::hash<int64_t>()(d);
  h ^= std::hash<std::string_view>()(
      std::string_view(reinterpret_cast<const char*>(data()), nbytes_));
  return h;
}

}  // namespace pytensor_onnx
