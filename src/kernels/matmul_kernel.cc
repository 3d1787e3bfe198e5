#include "matmul_kernel.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "matmul.h"
#include "status.h"

namespace pytensor_onnx::kernels {
namespace {

// A 0/1 attribute of the node, 0 when it has none.
bool flag_attribute(const Ort::ConstKernelInfo& info, const char* name) {
  int64_t value = 0;
  try {
    value = info.GetAttribute<int64_t>(name);
  } catch (const Ort::Exception&) {
    return false;
  }
  if (value != 0 && value != 1) throw std::invalid_argument(std::string(name) + " must be 0 or 1");
  return value == 1;
}

}  // namespace

MatMulKernel::MatMulKernel(const OrtKernelInfo* info, DType) {
  Ort::ConstKernelInfo kernel_info(info);
  trans_a_ = flag_attribute(kernel_info, "trans_a");
  trans_b_ = flag_attribute(kernel_info, "trans_b");
}

OrtStatusPtr MatMulKernel::ComputeV2(OrtKernelContext* context) {
  return as_status("MatMul", [&] {
    Ort::KernelContext ctx(context);
    const auto type = ctx.GetInput(0).GetTensorTypeAndShapeInfo().GetElementType();
    if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE) {
      compute<double>(ctx);
    } else if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) {
      compute<float>(ctx);
    } else {
      throw std::invalid_argument("takes float32 or float64 operands");
    }
  });
}

template <class T>
void MatMulKernel::compute(Ort::KernelContext& ctx) {
  const Ort::ConstValue a = ctx.GetInput(0), b = ctx.GetInput(1);
  const matmul::Plan plan = matmul::plan(a.GetTensorTypeAndShapeInfo().GetShape(),
                                         b.GetTensorTypeAndShapeInfo().GetShape(), trans_a_, trans_b_);
  T* out = ctx.GetOutput(0, plan.out_shape).GetTensorMutableData<T>();
  matmul::multiply(a.GetTensorData<T>(), b.GetTensorData<T>(), out, plan);
}

}  // namespace pytensor_onnx::kernels
