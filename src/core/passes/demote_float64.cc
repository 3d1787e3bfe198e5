#include "demote_float64.h"

#include <memory>
#include <unordered_set>
#include <vector>

namespace pytensor_onnx {
namespace {

// Nodes whose output dtype is an attribute (ONNX operator specs): Cast's `to`,
// the `dtype` of the generators.
bool has_output_dtype_attribute(const Node& node, std::string& attribute) {
  if (!node.domain.empty()) return false;
  if (node.op_type == "Cast") {
    attribute = "to";
    return true;
  }
  static const std::unordered_set<std::string> generators = {
      "EyeLike", "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli"};
  if (generators.count(node.op_type)) {
    attribute = "dtype";
    return true;
  }
  return false;
}

Tensor demote(const Tensor& t) {
  const std::vector<double> values = t.to_doubles();
  std::vector<float> narrowed(values.begin(), values.end());
  return Tensor::from_values(DType::Float32, narrowed, t.dims());
}

class Demoter {
 public:
  bool run(Graph& graph) {
    for (Value* v : graph.inputs()) demote_value(v);
    for (Value* v : graph.initializers()) demote_value(v);
    for (Node* node : graph.nodes()) {
      for (Value* v : node->inputs) demote_value(v);
      for (Value* v : node->outputs) demote_value(v);
      demote_attributes(*node);
    }
    for (Value* v : graph.outputs()) demote_value(v);
    return changed_;
  }

 private:
  void demote_value(Value* v) {
    if (!v || !seen_.insert(v).second) return;
    if (v->dtype == DType::Float64) {
      v->dtype = DType::Float32;
      changed_ = true;
    }
    if (v->constant && v->constant->dtype() == DType::Float64) {
      v->constant = demote(*v->constant);
      changed_ = true;
    }
  }

  void demote_attributes(Node& node) {
    std::vector<Attribute> replaced;
    std::string dtype_attribute;
    const bool typed = has_output_dtype_attribute(node, dtype_attribute);
    for (const Attribute& attr : node.attrs.items()) {
      if (const auto* i = std::get_if<int64_t>(&attr.value)) {
        if (typed && attr.name == dtype_attribute && *i == static_cast<int64_t>(DType::Float64)) {
          replaced.push_back({attr.name, static_cast<int64_t>(DType::Float32)});
        }
      } else if (const auto* t = std::get_if<Tensor>(&attr.value)) {
        if (t->dtype() == DType::Float64) replaced.push_back({attr.name, demote(*t)});
      } else if (const auto* g = std::get_if<std::shared_ptr<Graph>>(&attr.value)) {
        if (*g) changed_ |= Demoter().run(**g);
      }
    }
    for (Attribute& attr : replaced) node.attrs.set(attr.name, std::move(attr.value));
    changed_ |= !replaced.empty();
  }

  std::unordered_set<const Value*> seen_;
  bool changed_ = false;
};

}  // namespace

bool demote_float64_to_float32(Graph& graph) { return Demoter().run(graph); }

}  // namespace pytensor_onnx
