#include "record_input_shapes.h"

#include "../kernel_ops.h"

namespace pytensor_onnx {

bool record_input_shapes_in_kernels(Graph& graph, bool scalar_ranks_checked) {
  bool changed = false;
  for (Node* node : graph.nodes()) {
    if (!is_elemwise_kernel(*node)) continue;
    std::vector<int64_t> records;
    const std::vector<int64_t> packed = node->attrs.get_ints("packed_inputs").value_or(std::vector<int64_t>{});
    for (size_t k = 0; k < node->inputs.size(); ++k) {
      const Value* in = node->inputs[k];
      if (k < packed.size() && packed[k] >= 0) continue;  // (read as a scalar: pack_small_arrays.h)
      // (Initializers are read once, when the kernel is made.)
      if (!in || !in->is_graph_input || in->is_constant() || !is_fully_known(in->shape)) continue;
      if (in->shape->empty() && !scalar_ranks_checked) continue;
      records.push_back(static_cast<int64_t>(k));
      records.push_back(static_cast<int64_t>(in->dtype));
      records.push_back(static_cast<int64_t>(in->shape->size()));
      for (const Dim& d : *in->shape) records.push_back(d.size);
    }
    if (records.empty() || node->attrs.get_ints("input_shapes") == records) continue;
    node->attrs.set("input_shapes", std::move(records));
    changed = true;
  }
  return changed;
}

}  // namespace pytensor_onnx
