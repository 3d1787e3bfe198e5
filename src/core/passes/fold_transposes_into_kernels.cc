#include "fold_transposes_into_kernels.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "../infer/common.h"
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

// Whether `node` is a standard Unsqueeze (want_unsqueeze) or Squeeze of
// exactly the one axis `axis` (negative counts from the end of the larger
// rank), between ranks `small` and small + 1.
bool changes_one_axis(const Node* node, bool want_unsqueeze, int64_t axis, size_t small) {
  if (!node || !node->domain.empty() || node->op_type != (want_unsqueeze ? "Unsqueeze" : "Squeeze")) return false;
  const Value* in = node->input(0);
  const Value* out = node->outputs.empty() ? nullptr : node->outputs[0];
  if (!in || !out || !in->rank() || !out->rank()) return false;
  if (*(want_unsqueeze ? in : out)->rank() != small || *(want_unsqueeze ? out : in)->rank() != small + 1) return false;
  const std::optional<std::vector<int64_t>> axes = infer::axes_of(*node);
  if (!axes || axes->size() != 1) return false;
  const auto large = static_cast<int64_t>(small + 1);
  return ((*axes)[0] + large) % large == (axis + large) % large;
}

// The node that alone reads `value` (once), or null.
Node* only_reader(const Graph& graph, const Value* value) {
  if (value->users.size() != 1 || graph.is_output(value)) return nullptr;
  return value->users[0];
}

}  // namespace

bool fold_vector_axes_into_matmul_kernels(Graph& graph) {
  bool changed = false;
  const std::unordered_set<std::string> subgraph_reads = graph.names_read_by_own_subgraphs();
  for (Node* node : graph.nodes()) {
    if (!is_matmul_kernel(*node) || node->inputs.size() != 2 || node->outputs.size() != 1) continue;
    Value* out = node->outputs[0];
    if (!out->rank() || *out->rank() < 2 || subgraph_reads.count(out->name) > 0) continue;
    const size_t out_rank = *out->rank();
    Node* squeeze = only_reader(graph, out);
    // A @ v[:, None] then [:, 0] (the vector the right operand), or
    // v[None, :] @ B then [0, :] (the left, B a matrix): the product with v.
    for (size_t i = 0; i < 2 && squeeze; ++i) {
      Value* in = node->inputs[i];
      Value* other = node->inputs[1 - i];
      if (!in || !other || !other->rank()) continue;
      if (node->attrs.get_int(i == 0 ? "trans_a" : "trans_b", 0) != 0) continue;
      if (i == 0 && *other->rank() != 2) continue;
      const int64_t axis = i == 0 ? 0 : 1;
      if (!changes_one_axis(in->producer, true, axis, 1)) continue;
      if (!changes_one_axis(squeeze, false, i == 0 ? 0 : static_cast<int64_t>(out_rank) - 1, out_rank - 1)) continue;
      Value* vector = in->producer->inputs[0];
      // A subgraph's node may read only what its graph can see.
      if (!graph.can_read(vector)) continue;
      Value* result = squeeze->outputs[0];
      // (Graph outputs and subgraphs' reads go by the Squeeze's name.)
      if (graph.is_output(result) || subgraph_reads.count(result->name) > 0) continue;
      node->replace_input(i, vector);
      out->shape = result->shape;
      graph.replace_all_uses(result, out);
      graph.remove_node(squeeze, &subgraph_reads);
      changed = true;
      break;
    }
  }
  return changed;
}

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

bool fold_transposes_into_solve_kernels(Graph& graph) {
  bool changed = false;
  auto flip = [](Node& node, const char* attribute) {
    node.attrs.set(attribute, static_cast<int64_t>(node.attrs.get_int(attribute, 0) == 0 ? 1 : 0));
  };
  for (Node* node : graph.nodes()) {
    if (node->domain != kKernelDomain || node->op_type.rfind("SolveTriangular_", 0) != 0 || node->inputs.size() != 2) {
      continue;
    }
    Value* a = node->inputs[0];
    // A subgraph's node may read only what its graph can see.
    if (a && swaps_last_two_dims(a->producer) && graph.can_read(a->producer->inputs[0])) {
      node->replace_input(0, a->producer->inputs[0]);
      // (A^T's triangle is A's other one; trans 2, the conjugate, is 1 for real dtypes.)
      flip(*node, "lower");
      flip(*node, "trans");
      changed = true;
    }
    Value* b = node->inputs[1];
    if (!b || !b->producer || !graph.can_read(b->producer->input(0))) continue;
    if (node->attrs.get_int("b_ndim", 1) == 2 && swaps_last_two_dims(b->producer)) {
      node->replace_input(1, b->producer->inputs[0]);
      flip(*node, "transpose_b");
      changed = true;
    } else if (b->producer->domain.empty() && b->producer->op_type == "Neg" && b->producer->inputs.size() == 1) {
      node->replace_input(1, b->producer->inputs[0]);
      flip(*node, "negate_b");
      changed = true;
    }
  }
  return changed;
}

}  // namespace pytensor_onnx
