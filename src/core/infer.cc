#include "infer.h"

#include <algorithm>

#include "infer/common.h"
#include "kernel_ops.h"
#include "ops.h"

namespace pytensor_onnx {

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  if (!a || !b) return std::nullopt;
  const size_t rank = std::max(a->size(), b->size());
  std::vector<Dim> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const bool has_a = i < a->size(), has_b = i < b->size();
    const Dim da = has_a ? (*a)[a->size() - 1 - i] : Dim::known(1);
    const Dim db = has_b ? (*b)[b->size() - 1 - i] : Dim::known(1);
    out[rank - 1 - i] = infer::broadcast_dim(da, db);
  }
  return out;
}

void infer_node(Node& node) {
  if (infer_kernel_node(node)) return;
  if (!node.domain.empty() || node.outputs.empty()) return;
  // The op's own function (ops.cc): ops without one keep unknown outputs.
  const OpSchema* schema = find_op_schema(node.op_type);
  if (schema && schema->infer) schema->infer(node);
}

}  // namespace pytensor_onnx
