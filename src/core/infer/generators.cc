// Inference of the ops that make values from attributes and sizes:
// Constant, ConstantOfShape, Range, EyeLike and the random generators.
#include <cmath>

#include "errors.h"
#include "infer/common.h"
#include "infer/rules.h"

namespace pytensor_onnx::infer {

void constant(Node& node) {
  const AttrValue* value = node.attrs.find("value");
  const Tensor* t = value ? std::get_if<Tensor>(value) : nullptr;
  if (!t) throw BuildError("Constant needs its value as a tensor attribute 'value' (a NumPy array)");
  set_dtypes(node, t->dtype());
  node.outputs[0]->shape = shape_of_sizes(t->dims());
}

void constant_of_shape(Node& node) {
  const AttrValue* value = node.attrs.find("value");
  const Tensor* t = value ? std::get_if<Tensor>(value) : nullptr;
  if (value && !t) throw BuildError("ConstantOfShape: attribute 'value' must be a one-element tensor");
  set_dtypes(node, t ? t->dtype() : DType::Float32);
  Value* y = node.outputs[0];
  Value* x = node.input(0);
  require_vector(node, x, "the shape");
  if (auto dims = const_ints(x)) y->shape = shape_of_sizes(*dims);
  else if (x->shape && (*x->shape)[0].is_known()) {
    y->shape = unknown_dims_checked((*x->shape)[0].size, "the shape's length");
  }
}

void range(Node& node) {
  set_dtypes(node, first_dtype(node));
  Value* y = node.outputs[0];
  Value* x = node.input(0);
  y->shape = unknown_dims(1);
  const char* names[] = {"start", "limit", "delta"};
  for (size_t i = 0; i < 3; ++i) {
    const Value* v = node.input(i);
    if (v->constant && v->constant->to_doubles().size() != 1) {
      throw BuildError(std::string("Range: ") + names[i] + " must be a scalar");
    }
  }
  if (x->constant && node.input(1)->constant && node.input(2)->constant) {
    const double start = x->constant->to_doubles()[0];
    const double limit = node.input(1)->constant->to_doubles()[0];
    const double delta = node.input(2)->constant->to_doubles()[0];
    if (delta != 0) {
      const double n = std::ceil((limit - start) / delta);
      (*y->shape)[0] = Dim::known(n > 0 ? static_cast<int64_t>(n) : 0);
    }
  }
}

void eye_like(Node& node) {
  const AttrValue* dtype = node.attrs.find("dtype");
  set_dtypes(node, dtype ? static_cast<DType>(node.attrs.get_int("dtype", 0)) : first_dtype(node));
  node.outputs[0]->shape = first_shape(node);
}

// dtype defaults to float32; the shape is the 'shape' attribute.
void random(Node& node) {
  set_dtypes(node, static_cast<DType>(node.attrs.get_int("dtype", static_cast<int64_t>(DType::Float32))));
  if (auto shape = node.attrs.get_ints("shape")) node.outputs[0]->shape = shape_of_sizes(*shape);
}

// The input's shape; its dtype unless 'dtype' says another.
void random_like(Node& node) {
  set_dtypes(node, static_cast<DType>(node.attrs.get_int("dtype", static_cast<int64_t>(first_dtype(node)))));
  if (node.input(0)) node.outputs[0]->shape = node.input(0)->shape;
}

}  // namespace pytensor_onnx::infer
