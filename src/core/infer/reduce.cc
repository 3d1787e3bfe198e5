// Inference of reductions: Reduce* (axes as an attribute before the opset
// that made them an input) and ArgMax/ArgMin.
#include "infer/common.h"
#include "infer/rules.h"

namespace pytensor_onnx::infer {

void reduce(Node& node) {
  set_dtypes(node, first_dtype(node));
  std::optional<std::vector<int64_t>> axes = node.attrs.get_ints("axes");
  if (!axes) {
    if (node.input(1)) axes = const_ints(node.input(1));
    else axes = std::vector<int64_t>{};
  }
  node.outputs[0]->shape = reduce_shape(first_shape(node), axes, node.attrs.get_int("keepdims", 1) != 0,
                                        node.attrs.get_int("noop_with_empty_axes", 0) != 0, node);
}

void arg_reduce(Node& node) {
  set_dtypes(node, DType::Int64);
  node.outputs[0]->shape = reduce_shape(first_shape(node), std::vector<int64_t>{node.attrs.get_int("axis", 0)},
                                        node.attrs.get_int("keepdims", 1) != 0, false, node);
}

}  // namespace pytensor_onnx::infer
