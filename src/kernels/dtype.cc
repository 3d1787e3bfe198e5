#include "dtype.h"

#include <stdexcept>

namespace pytensor_onnx::kernels {
namespace {

struct Entry {
  DType dtype;
  const char* name;
  int onnx;  // TensorProto.DataType
};

constexpr Entry kTable[kNumDTypes] = {
    {DType::Bool, "bool", 9},       {DType::Int8, "int8", 3},       {DType::Int16, "int16", 5},
    {DType::Int32, "int32", 6},     {DType::Int64, "int64", 7},     {DType::UInt8, "uint8", 2},
    {DType::UInt16, "uint16", 4},   {DType::UInt32, "uint32", 12},  {DType::UInt64, "uint64", 13},
    {DType::Float32, "float32", 1}, {DType::Float64, "float64", 11},
};

const Entry& entry(DType dtype) { return kTable[static_cast<int>(dtype)]; }

}  // namespace

DType dtype_from_name(const std::string& name) {
  for (const Entry& e : kTable) {
    if (name == e.name) return e.dtype;
  }
  throw std::invalid_argument("unknown dtype '" + name + "'");
}

const char* dtype_name(DType dtype) { return entry(dtype).name; }
int onnx_element_type(DType dtype) { return entry(dtype).onnx; }

DType dtype_from_onnx(int type) {
  for (const Entry& e : kTable) {
    if (type == e.onnx) return e.dtype;
  }
  throw std::invalid_argument("the kernels do not compute in ONNX element type " + std::to_string(type));
}

}  // namespace pytensor_onnx::kernels
