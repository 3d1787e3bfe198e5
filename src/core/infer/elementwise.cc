// Inference of element-wise ops: unary ops keep their input's shape, n-ary
// ones broadcast their inputs (NumPy's rules, infer.h).
#include "errors.h"
#include "infer.h"
#include "infer/common.h"
#include "infer/rules.h"

namespace pytensor_onnx::infer {
namespace {

void broadcast_inputs(Node& node) {
  Shape s = first_shape(node);
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    if (node.inputs[i]) s = broadcast_shapes(s, node.inputs[i]->shape);
  }
  node.outputs[0]->shape = s;
}

}  // namespace

void same_as_input(Node& node) { node.outputs[0]->shape = keep_dtype(node); }

void cast(Node& node) {
  // (Without it the model names no dtype for the result: the ONNX checker
  // refuses it, and the builder could not type what reads it.)
  if (!node.attrs.has("to")) throw BuildError("Cast needs its attribute 'to', the dtype to cast to");
  set_dtypes(node, static_cast<DType>(node.attrs.get_int("to", 0)));
  node.outputs[0]->shape = first_shape(node);
}

void cast_like(Node& node) {
  set_dtypes(node, node.input(1)->dtype);
  node.outputs[0]->shape = first_shape(node);
}

void predicate(Node& node) {
  set_dtypes(node, DType::Bool);
  node.outputs[0]->shape = first_shape(node);
}

void broadcast(Node& node) {
  set_dtypes(node, first_dtype(node));
  broadcast_inputs(node);
}

void comparison(Node& node) {
  set_dtypes(node, DType::Bool);
  broadcast_inputs(node);
}

void where(Node& node) {
  set_dtypes(node, node.input(1)->dtype);
  broadcast_inputs(node);
}

}  // namespace pytensor_onnx::infer
