#include "dtype.h"

#include <array>
#include <stdexcept>
#include <utility>

namespace pytensor_onnx {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  size_t size;
};

constexpr std::array<DTypeInfo, 14> kDTypes{{
    {DType::Float32, "float32", 4},
    {DType::Float64, "float64", 8},
    {DType::Float16, "float16", 2},
    {DType::BFloat16, "bfloat16", 2},
    {DType::Int8, "int8", 1},
    {DType::Int16, "int16", 2},
    {DType::Int32, "int32", 4},
    {DType::Int64, "int64", 8},
    {DType::UInt8, "uint8", 1},
    {DType::UInt16, "uint16", 2},
    {DType::UInt32, "uint32", 4},
    {DType::UInt64, "uint64", 8},
    {DType::Bool, "bool", 1},
    {DType::String, "string", 0},
}};

const DTypeInfo* find(DType dtype) {
  for (const auto& info : kDTypes) {
    if (info.dtype == dtype) return &info;
  }
  return nullptr;
}

}  // namespace

DType dtype_from_name(std::string_view name) {
  for (const auto& info : kDTypes) {
    if (info.name == name) return info.dtype;
  }
  throw std::invalid_argument("dtype '" + std::string(name) +
                              "' has no ONNX tensor type; expected one of float16, float32, float64, "
                              "int8..int64, uint8..uint64, bool");
}

std::string dtype_name(DType dtype) {
  const DTypeInfo* info = find(dtype);
  return info ? std::string(info->name) : "undefined";
}

size_t dtype_size(DType dtype) {
  const DTypeInfo* info = find(dtype);
  return info ? info->size : 0;
}

bool is_float(DType dtype) {
  return dtype == DType::Float32 || dtype == DType::Float64 || dtype == DType::Float16 ||
         dtype == DType::BFloat16;
}

bool is_signed_integer(DType dtype) {
  return dtype == DType::Int8 || dtype == DType::Int16 || dtype == DType::Int32 || dtype == DType::Int64;
}

bool is_unsigned_integer(DType dtype) {
  return dtype == DType::UInt8 || dtype == DType::UInt16 || dtype == DType::UInt32 ||
         dtype == DType::UInt64;
}

}  // namespace pytensor_onnx
