#include "fold_transposes_into_kernels.h"

#include <algorithm>

#include "../kernel_ops.h"

namespace pytensor_onnx {
namespace {

bool is_matmul_kernel(const Node& node) {
  return node.domain == kKernelDomain && node.op_type.rfind("MatMul_", 0) == 0;
}

// Whether `node` is a standard Transpose that swaps the last two dims of an
// input of rank >= 2 and keeps the others in place.
bool swaps_last_two_dims(const Node* node) {
  if (!node || !node->domain.empty() || node->op_type != "Transpose") return false;
  const Value* in = node->input(0);
  if (!in || !in->rank() || *in->rank() < 2) return false;
  const size_t rank = *in->rank();
  // Without perm a Transpose reverses every dim: the same swap for a matrix.
  const auto perm = node->attrs.get_ints("perm");
  if (!perm) return rank == 2;
  if (perm->size() != rank) return false;
  for (size_t i = 0; i < rank; ++i) {
    const size_t want = i + 2 < rank ? i : (i == rank - 2 ? rank - 1 : rank - 2);
    if ((*perm)[i] != static_cast<int64_t>(want)) return false;
  }
  return true;
}

}  // namespace

bool fold_transposes_into_matmul_kernels(Graph& graph) {
  bool changed = false;
  for (Node* node : graph.nodes()) {
    if (!is_matmul_kernel(*node) || node->inputs.size() != 2) continue;
    for (size_t i = 0; i < 2; ++i) {
      Value* in = node->inputs[i];
      if (!in || !swaps_last_two_dims(in->producer)) continue;
      Value* source = in->producer->inputs[0];
      // A subgraph's node may read only what its graph can see.
      if (!graph.can_read(source)) continue;
      const char* attribute = i == 0 ? "trans_a" : "trans_b";
      node->replace_input(i, source);
      node->attrs.set(attribute, static_cast<int64_t>(node->attrs.get_int(attribute, 0) == 0 ? 1 : 0));
      changed = true;
    }
  }
  return changed;
}

}  // namespace pytensor_onnx
