// The element types the kernels compute in, named as NumPy names them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace pytensor_onnx::kernels {

enum class DType : uint8_t { Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Float32, Float64 };
constexpr int kNumDTypes = 11;

// "float64" -> DType; throws std::invalid_argument for any other name.
DType dtype_from_name(const std::string& name);
const char* dtype_name(DType dtype);
// Bytes per element. (Inline: the blocks of a run ask it per input and output.)
inline size_t dtype_size(DType dtype) {
  constexpr size_t kSizes[kNumDTypes] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8};  // (in the enum's order)
  return kSizes[static_cast<int>(dtype)];
}
// The ONNX TensorProto element type of `dtype` (its ONNXTensorElementDataType
// number), and back; throws for types the kernels do not compute in.
int onnx_element_type(DType dtype);
DType dtype_from_onnx(int type);

inline bool is_float(DType d) { return d == DType::Float32 || d == DType::Float64; }
inline bool is_unsigned(DType d) {
  return d == DType::UInt8 || d == DType::UInt16 || d == DType::UInt32 || d == DType::UInt64;
}
inline bool is_signed_int(DType d) {
  return d == DType::Int8 || d == DType::Int16 || d == DType::Int32 || d == DType::Int64;
}
inline bool is_integer(DType d) { return is_signed_int(d) || is_unsigned(d); }

// Calls f(T{}) with T the C++ type of `dtype`.
template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Bool: return f(bool{});
    case DType::Int8: return f(int8_t{});
    case DType::Int16: return f(int16_t{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    case DType::UInt8: return f(uint8_t{});
    case DType::UInt16: return f(uint16_t{});
    case DType::UInt32: return f(uint32_t{});
    case DType::UInt64: return f(uint64_t{});
    case DType::Float32: return f(float{});
    case DType::Float64: break;
  }
  return f(double{});
}

}  // namespace pytensor_onnx::kernels
