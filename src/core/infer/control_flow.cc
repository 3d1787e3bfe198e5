// Inference of If and Loop from their subgraphs' outputs.
#include <memory>
#include <string>

#include "errors.h"
#include "infer/rules.h"

namespace pytensor_onnx::infer {

// If: each output takes its branches' dtype; a dim is kept where both branches agree.
void if_(Node& node) {
  const AttrValue* then_attr = node.attrs.find("then_branch");
  const AttrValue* else_attr = node.attrs.find("else_branch");
  if (!then_attr || !else_attr) throw BuildError("If needs then_branch and else_branch graphs");
  const auto& then_outs = std::get<std::shared_ptr<Graph>>(*then_attr)->outputs();
  const auto& else_outs = std::get<std::shared_ptr<Graph>>(*else_attr)->outputs();
  if (then_outs.size() != node.outputs.size() || else_outs.size() != node.outputs.size()) {
    throw BuildError("If branches must each have as many outputs as the node");
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const Value* a = then_outs[i];
    const Value* b = else_outs[i];
    if (a->dtype != b->dtype) {
      throw BuildError("If branches give output " + std::to_string(i) + " the dtypes " + dtype_name(a->dtype) +
                       " and " + dtype_name(b->dtype));
    }
    node.outputs[i]->dtype = a->dtype;
    if (a->shape && b->shape && a->shape->size() == b->shape->size()) {
      std::vector<Dim> dims(a->shape->size());
      for (size_t d = 0; d < dims.size(); ++d) {
        if ((*a->shape)[d].same_as((*b->shape)[d])) dims[d] = (*a->shape)[d];
      }
      node.outputs[i]->shape = dims;
    }
  }
}

// Loop(M, cond, v_initial...) with body (iter, cond, v...) -> (cond, v..., scan...):
// loop-carried outputs take the body's types; scan outputs gain a leading dim.
void loop(Node& node) {
  const AttrValue* body_attr = node.attrs.find("body");
  if (!body_attr) throw BuildError("Loop needs a body graph");
  const auto& body_outs = std::get<std::shared_ptr<Graph>>(*body_attr)->outputs();
  const size_t n_carried = node.inputs.size() >= 2 ? node.inputs.size() - 2 : 0;
  if (body_outs.size() != 1 + node.outputs.size()) {
    throw BuildError("Loop body must output the condition plus one value per node output");
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const Value* b = body_outs[i + 1];
    node.outputs[i]->dtype = b->dtype;
    if (i < n_carried) {
      node.outputs[i]->shape = b->shape;
    } else if (b->shape) {
      std::vector<Dim> dims{Dim::unknown()};
      dims.insert(dims.end(), b->shape->begin(), b->shape->end());
      node.outputs[i]->shape = dims;
    }
  }
}

}  // namespace pytensor_onnx::infer
