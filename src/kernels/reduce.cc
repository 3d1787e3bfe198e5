#include "reduce.h"

#include <algorithm>
#include <limits>

#include "evaluate.h"

namespace pytensor_onnx::kernels {
namespace {

// NumPy's maximum (and minimum; not fmax) as its reductions take it:
// the running value stays unless it is neither >= (<=) the next one nor NaN,
// so a NaN anywhere in the set is the result.
template <class T>
inline T keep_or_take(T acc, T v, bool max) {
  const bool keep = max ? acc >= v : acc <= v;
  return keep || acc != acc ? acc : v;
}

}  // namespace

template <class T>
void reduce_max_min(const T* x, const std::vector<int64_t>& shape, const std::vector<int64_t>& axes, bool max, T* out) {
  const size_t rank = shape.size();
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) reduced.at(static_cast<size_t>(a)) = true;
  // Where each input axis moves the output: 0 along reduced axes.
  std::vector<int64_t> out_stride(rank, 0);
  int64_t out_size = 1;
  for (size_t d = rank; d-- > 0;) {
    if (reduced[d]) continue;
    out_stride[d] = out_size;
    out_size *= shape[d];
  }
  const T identity = max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  std::fill(out, out + out_size, identity);
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  if (total == 0) return;
  // Row by row along the innermost axis: one running value when that axis
  // is reduced, a running value per element of the row when it is kept.
  const int64_t inner = rank > 0 ? shape[rank - 1] : 1;
  const bool inner_reduced = rank > 0 && reduced[rank - 1];
  std::vector<int64_t> index(rank > 0 ? rank - 1 : 0, 0);
  int64_t offset = 0;
  for (int64_t row = 0; row < total / inner; ++row) {
    const T* values = x + row * inner;
    if (inner_reduced) {
      T acc = out[offset];
      for (int64_t k = 0; k < inner; ++k) acc = keep_or_take(acc, values[k], max);
      out[offset] = acc;
    } else {
      T* dst = out + offset;
      for (int64_t k = 0; k < inner; ++k) dst[k] = keep_or_take(dst[k], values[k], max);
    }
    for (size_t d = index.size(); d-- > 0;) {
      offset += out_stride[d];
      if (++index[d] < shape[d]) break;
      offset -= out_stride[d] * shape[d];
      index[d] = 0;
    }
  }
}

void reduce_sum(const double* x, const std::vector<int64_t>& shape, const std::vector<int64_t>& axes, double* out) {
  const size_t rank = shape.size();
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) reduced.at(static_cast<size_t>(a)) = true;
  std::vector<int64_t> out_stride(rank, 0);
  int64_t out_size = 1;
  for (size_t d = rank; d-- > 0;) {
    if (reduced[d]) continue;
    out_stride[d] = out_size;
    out_size *= shape[d];
  }
  // -0.0: the sum of one term is that term, its sign included.
  std::fill(out, out + out_size, -0.0);
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  if (total == 0) {
    std::fill(out, out + out_size, 0.0);
    return;
  }
  const int64_t inner = rank > 0 ? shape[rank - 1] : 1;
  const bool inner_reduced = rank > 0 && reduced[rank - 1];
  std::vector<int64_t> index(rank > 0 ? rank - 1 : 0, 0);
  int64_t offset = 0;
  for (int64_t row = 0; row < total / inner; ++row) {
    const double* values = x + row * inner;
    if (inner_reduced) {
      out[offset] += numpy_sum(values, static_cast<size_t>(inner));
    } else {
      double* dst = out + offset;
      for (int64_t k = 0; k < inner; ++k) dst[k] += values[k];
    }
    for (size_t d = index.size(); d-- > 0;) {
      offset += out_stride[d];
      if (++index[d] < shape[d]) break;
      offset -= out_stride[d] * shape[d];
      index[d] = 0;
    }
  }
}

template void reduce_max_min<float>(const float*, const std::vector<int64_t>&, const std::vector<int64_t>&, bool,
                                    float*);
template void reduce_max_min<double>(const double*, const std::vector<int64_t>&, const std::vector<int64_t>&, bool,
                                     double*);

}  // namespace pytensor_onnx::kernels
