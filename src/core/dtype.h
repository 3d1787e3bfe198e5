// Element types of ONNX tensors and their NumPy names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace pytensor_onnx {

// The numeric codes are ONNX's TensorProto.DataType values, so a DType
// serializes without a lookup table.
enum class DType : int32_t {
  Undefined = 0,
  Float32 = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Float64 = 11,
  UInt32 = 12,
  UInt64 = 13,
  BFloat16 = 16,
};

// NumPy spelling ("float32", "int64", "bool", ...). Throws std::invalid_argument
// for a name that has no ONNX tensor type.
DType dtype_from_name(std::string_view name);
std::string dtype_name(DType dtype);
// Bytes per element in ONNX raw_data (bool is one byte, as in NumPy).
size_t dtype_size(DType dtype);

bool is_float(DType dtype);
bool is_signed_integer(DType dtype);
bool is_unsigned_integer(DType dtype);
inline bool is_integer(DType dtype) { return is_signed_integer(dtype) || is_unsigned_integer(dtype); }

}  // namespace pytensor_onnx
