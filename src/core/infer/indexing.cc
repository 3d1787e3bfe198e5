// Inference of gathers, scatters and the selecting ops (Compress, NonZero,
// TopK, Unique).
#include <string>

#include "errors.h"
#include "infer/common.h"
#include "infer/rules.h"

namespace pytensor_onnx::infer {

void gather(Node& node) {
  const Shape in = keep_dtype(node);
  Value* y = node.outputs[0];
  const Shape& idx = node.input(1)->shape;
  if (!in || !idx) return;
  const int64_t axis = normalize_axis(node.attrs.get_int("axis", 0), in->size(), node);
  // Constant indices outside a static axis: ONNX Runtime would fail every run.
  const Dim& size = (*in)[static_cast<size_t>(axis)];
  if (size.is_known()) {
    if (const auto indices = const_ints(node.input(1))) {
      for (int64_t i : *indices) {
        if (i < -size.size || i >= size.size) {
          throw BuildError("index " + std::to_string(i) + " is out of range for axis " + std::to_string(axis) +
                           " of size " + std::to_string(size.size));
        }
      }
    }
  }
  std::vector<Dim> out(in->begin(), in->begin() + axis);
  out.insert(out.end(), idx->begin(), idx->end());
  out.insert(out.end(), in->begin() + axis + 1, in->end());
  y->shape = out;
}

namespace {

// GatherElements and ScatterElements: `axis` is an axis of the data, whose
// rank the indices share (ONNX's checker does not see either at build time;
// ONNX Runtime fails the run).
void require_elements_layout(const Node& node, const Shape& data, const Shape& indices) {
  if (!data) return;
  normalize_axis(node.attrs.get_int("axis", 0), data->size(), node);
  if (indices && indices->size() != data->size()) {
    throw BuildError(node.op_type + ": indices of rank " + std::to_string(indices->size()) + " for data of rank " +
                     std::to_string(data->size()) + " (they must be equal)");
  }
}

}  // namespace

void gather_elements(Node& node) {
  set_dtypes(node, first_dtype(node));
  require_elements_layout(node, node.input(0)->shape, node.input(1)->shape);
  Value* y = node.outputs[0];
  y->shape = node.input(1)->shape;
}

void gather_nd(Node& node) {
  const Shape in = keep_dtype(node);
  Value* y = node.outputs[0];
  const Shape& idx = node.input(1)->shape;
  if (!in || !idx || idx->empty() || node.attrs.get_int("batch_dims", 0) != 0) return;
  const Dim& k = idx->back();
  if (!k.is_known()) return;
  std::vector<Dim> out(idx->begin(), idx->end() - 1);
  if (static_cast<size_t>(k.size) > in->size()) throw BuildError("GatherND: index depth exceeds data rank");
  out.insert(out.end(), in->begin() + k.size, in->end());
  y->shape = out;
}

void scatter(Node& node) {
  const Shape in = keep_dtype(node);
  if (node.op_type == "ScatterElements") require_elements_layout(node, in, node.input(1)->shape);
  Value* y = node.outputs[0];
  y->shape = in;
}

void compress(Node& node) {
  const Shape in = keep_dtype(node);
  Value* y = node.outputs[0];
  if (!node.attrs.has("axis")) {
    y->shape = unknown_dims(1);
  } else if (in) {
    std::vector<Dim> out = *in;
    out[normalize_axis(node.attrs.get_int("axis", 0), in->size(), node)] = Dim::unknown();
    y->shape = out;
  }
}

void nonzero(Node& node) {
  set_dtypes(node, DType::Int64);
  const Shape in = first_shape(node);
  Value* y = node.outputs[0];
  // ONNX gives (rank, count); ONNX Runtime (1.21 to 1.32 at least) gives a
  // scalar one row, like a one-element vector: no known rows for rank 0.
  const bool rows_known = in && !in->empty();
  y->shape = std::vector<Dim>{rows_known ? Dim::known(static_cast<int64_t>(in->size())) : Dim::unknown(),
                              Dim::unknown()};
}

void topk(Node& node) {
  node.outputs[0]->dtype = first_dtype(node);
  if (node.outputs.size() > 1) node.outputs[1]->dtype = DType::Int64;
  const Shape in = first_shape(node);
  if (!in) return;
  const int64_t axis = normalize_axis(node.attrs.get_int("axis", -1), in->size(), node);
  std::vector<Dim> out = *in;
  auto k = const_ints(node.input(1));
  require_length(node, k, 1, "k");
  // K beyond an axis of static size fails every run (and ONNX Runtime's
  // inference at load, inside an If branch): refused here, as a Split that
  // cannot be (the core fuzzer's hostile `axis`, FUZZ_SEED=272662187).
  if (k && ((*k)[0] < 0 || ((*in)[axis].is_known() && (*k)[0] > (*in)[axis].size))) {
    throw BuildError("K = " + std::to_string((*k)[0]) + " is not in [0, " +
                     ((*in)[axis].is_known() ? std::to_string((*in)[axis].size) : std::string("n")) +
                     "], the size of axis " + std::to_string(axis));
  }
  out[axis] = k ? Dim::known((*k)[0]) : Dim::unknown();
  for (Value* o : node.outputs) o->shape = out;
}

// Only the dtypes: Unique's sizes are data. An axis out of the input's
// range (any axis of a 0-d input) fails ONNX's checker: refused here (the
// core fuzzer's hostile `axis`, FUZZ_SEED=272662187).
void unique(Node& node) {
  if (const Shape in = first_shape(node); in && node.attrs.has("axis")) {
    normalize_axis(node.attrs.get_int("axis", 0), in->size(), node);
  }
  node.outputs[0]->dtype = first_dtype(node);
  for (size_t i = 1; i < node.outputs.size(); ++i) node.outputs[i]->dtype = DType::Int64;
}

}  // namespace pytensor_onnx::infer
