#include "reduce_kernel.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

#include "status.h"

namespace pytensor_onnx::kernels {

ReduceKernel::ReduceKernel(const OrtKernelInfo* info, DType dtype) : dtype_(dtype) {
  Ort::ConstKernelInfo kernel_info(info);
  const std::string reduction = kernel_info.GetAttribute<std::string>("reduction");
  if (reduction != "max" && reduction != "min" && !(reduction == "sum" && dtype == DType::Float64)) {
    throw std::invalid_argument("attribute 'reduction' is '" + reduction +
                                "'; it must be 'max' or 'min', or 'sum' of float64");
  }
  sum_ = reduction == "sum";
  max_ = reduction == "max";
  axes_ = kernel_info.GetAttributes<int64_t>("axes");
  if (!std::is_sorted(axes_.begin(), axes_.end()) || std::adjacent_find(axes_.begin(), axes_.end()) != axes_.end() ||
      (!axes_.empty() && axes_.front() < 0)) {
    throw std::invalid_argument("attribute 'axes' must be distinct non-negative axes in increasing order");
  }
  keepdims_ = kernel_info.GetAttribute<int64_t>("keepdims") != 0;
}

OrtStatusPtr ReduceKernel::ComputeV2(OrtKernelContext* context) {
  return as_status("Reduce", [&] {
    Ort::KernelContext ctx(context);
    Ort::ConstValue x = ctx.GetInput(0);
    const std::vector<int64_t> shape = x.GetTensorTypeAndShapeInfo().GetShape();
    if (!axes_.empty() && axes_.back() >= static_cast<int64_t>(shape.size())) {
      throw std::invalid_argument("axis " + std::to_string(axes_.back()) + " is out of range for an input of rank " +
                                  std::to_string(shape.size()));
    }
    std::vector<int64_t> out_shape;
    for (size_t d = 0; d < shape.size(); ++d) {
      const bool reduced = std::binary_search(axes_.begin(), axes_.end(), static_cast<int64_t>(d));
      if (!reduced) out_shape.push_back(shape[d]);
      else if (keepdims_) out_shape.push_back(1);
    }
    Ort::UnownedValue out = ctx.GetOutput(0, out_shape.data(), out_shape.size());
    if (sum_) {
      reduce_sum(x.GetTensorData<double>(), shape, axes_, out.GetTensorMutableData<double>());
    } else if (dtype_ == DType::Float64) {
      reduce_max_min(x.GetTensorData<double>(), shape, axes_, max_, out.GetTensorMutableData<double>());
    } else {
      reduce_max_min(x.GetTensorData<float>(), shape, axes_, max_, out.GetTensorMutableData<float>());
    }
  });
}

}  // namespace pytensor_onnx::kernels
