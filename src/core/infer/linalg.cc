// Inference of the linear-algebra ops: MatMul (NumPy's matmul broadcasting),
// Gemm, Einsum (from its equation) and Det.
#include <string>
#include <unordered_map>

#include "errors.h"
#include "infer.h"
#include "infer/common.h"
#include "infer/rules.h"

namespace pytensor_onnx::infer {
namespace {

Shape matmul_shape(const Shape& a, const Shape& b) {
  if (!a || !b) return std::nullopt;
  if (a->empty() || b->empty()) throw BuildError("MatMul inputs must have rank >= 1");
  std::vector<Dim> av = *a, bv = *b;
  const bool a_vec = av.size() == 1, b_vec = bv.size() == 1;
  if (a_vec) av.insert(av.begin(), Dim::known(1));
  if (b_vec) bv.push_back(Dim::known(1));
  const Dim& k1 = av.back();
  const Dim& k2 = bv[bv.size() - 2];
  if (k1.is_known() && k2.is_known() && k1.size != k2.size) {
    throw BuildError("MatMul: contraction dims " + std::to_string(k1.size) + " and " +
                     std::to_string(k2.size) + " differ");
  }
  Shape batch_a = std::vector<Dim>(av.begin(), av.end() - 2);
  Shape batch_b = std::vector<Dim>(bv.begin(), bv.end() - 2);
  std::vector<Dim> out = *broadcast_shapes(batch_a, batch_b);
  if (!a_vec) out.push_back(av[av.size() - 2]);
  if (!b_vec) out.push_back(bv.back());
  return out;
}

// Einsum: each letter takes its operand dim; the "..." dims of all operands
// broadcast (aligned right). Unknown when the equation has no "->" output.
Shape einsum_shape(const Node& node) {
  const auto equation = node.attrs.find("equation");
  if (!equation || !std::holds_alternative<std::string>(*equation)) return std::nullopt;
  std::string eq;
  for (char c : std::get<std::string>(*equation)) {
    if (c != ' ') eq += c;
  }
  const size_t arrow = eq.find("->");
  // (The operands are counted in the implicit form too, "ij,jk" or "":
  // ONNX Runtime refuses a model whose count differs.)
  const size_t lhs_end = arrow == std::string::npos ? eq.size() : arrow;
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = eq.find(',', start);
    terms.push_back(eq.substr(start, std::min(comma, lhs_end) - start));
    if (comma == std::string::npos || comma > lhs_end) break;
    start = comma + 1;
  }
  if (terms.size() != node.inputs.size()) {
    // The ONNX checker rejects the model; say so while it is being built.
    throw BuildError("the equation has " + std::to_string(terms.size()) + " operands, but " +
                     std::to_string(node.inputs.size()) + " inputs were given");
  }
  if (arrow == std::string::npos) return std::nullopt;
  std::unordered_map<char, Dim> letters;
  Shape ellipsis = std::vector<Dim>{};
  for (size_t i = 0; i < terms.size(); ++i) {
    const Value* v = node.inputs[i];
    if (!v || !v->shape) return std::nullopt;
    const std::string& term = terms[i];
    const size_t dots = term.find("...");
    const size_t n_letters = term.size() - (dots == std::string::npos ? 0 : 3);
    if (v->shape->size() < n_letters) return std::nullopt;
    const size_t n_ellipsis = v->shape->size() - n_letters;
    size_t dim = 0;
    for (size_t k = 0; k < term.size(); ++k) {
      if (k == dots) {
        ellipsis = broadcast_shapes(
            ellipsis, std::vector<Dim>(v->shape->begin() + dim, v->shape->begin() + dim + n_ellipsis));
        dim += n_ellipsis;
        k += 2;
        continue;
      }
      const Dim d = (*v->shape)[dim++];
      auto [it, inserted] = letters.emplace(term[k], d);
      if (!inserted) it->second = broadcast_dim(it->second, d);
    }
  }
  std::vector<Dim> out;
  const std::string rhs = eq.substr(arrow + 2);
  for (size_t k = 0; k < rhs.size(); ++k) {
    if (rhs.compare(k, 3, "...") == 0) {
      if (!ellipsis) return std::nullopt;
      out.insert(out.end(), ellipsis->begin(), ellipsis->end());
      k += 2;
      continue;
    }
    auto it = letters.find(rhs[k]);
    if (it == letters.end()) return std::nullopt;
    out.push_back(it->second);
  }
  return out;
}

}  // namespace

void matmul(Node& node) {
  set_dtypes(node, first_dtype(node));
  node.outputs[0]->shape = matmul_shape(first_shape(node), node.input(1)->shape);
}

// Gemm: op(A) (M, K) times op(B) (K, N), plus C broadcast one way to (M, N).
// What ONNX Runtime would refuse when the model runs is refused here where
// the dims are static (a C of shape (0, 0) against (0, 1) built and failed
// at run time: core fuzzer, FUZZ_SEED=2762448248).
void gemm(Node& node) {
  const Shape in = keep_dtype(node);
  const Shape& b = node.input(1)->shape;
  for (const Shape* operand : {&in, &b}) {
    if (*operand && (*operand)->size() != 2) throw BuildError("A and B must be matrices (rank 2)");
  }
  if (!in || !b) return;
  const bool trans_a = node.attrs.get_int("transA", 0) != 0, trans_b = node.attrs.get_int("transB", 0) != 0;
  const Dim m = trans_a ? (*in)[1] : (*in)[0];
  const Dim k_a = trans_a ? (*in)[0] : (*in)[1];
  const Dim k_b = trans_b ? (*b)[1] : (*b)[0];
  const Dim n = trans_b ? (*b)[0] : (*b)[1];
  if (k_a.is_known() && k_b.is_known() && k_a.size != k_b.size) {
    throw BuildError("contraction dims " + std::to_string(k_a.size) + " and " + std::to_string(k_b.size) +
                     " differ");
  }
  const std::vector<Dim> out{m, n};
  if (const Value* c = node.input(2); c && c->shape) {
    if (c->shape->size() > 2) throw BuildError("C must have rank <= 2");
    const size_t offset = 2 - c->shape->size();
    for (size_t d = 0; d < c->shape->size(); ++d) {
      const Dim& dim = (*c->shape)[d];
      const Dim& target = out[offset + d];
      if (dim.is_known() && dim.size != 1 && target.is_known() && dim.size != target.size) {
        throw BuildError("C's dim " + std::to_string(dim.size) + " does not broadcast to the product's " +
                         std::to_string(target.size));
      }
    }
  }
  node.outputs[0]->shape = out;
}

void einsum(Node& node) {
  set_dtypes(node, first_dtype(node));
  node.outputs[0]->shape = einsum_shape(node);
}

// The dtype only: the shape of Det (its batch dims) is not inferred.
void det(Node& node) { set_dtypes(node, first_dtype(node)); }

void trilu(Node& node) {
  require_matrices(node.op_type, node.input(0));
  same_as_input(node);
}

}  // namespace pytensor_onnx::infer
