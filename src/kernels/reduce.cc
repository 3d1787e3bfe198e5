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

// The rows of an array of `shape` (C-contiguous) along its innermost axis,
// in order, and where each lands in the reduction over `axes`: the output's
// size (`size`), and per row `visit(row, offset, inner_reduced)` with the
// row's first element index and the output offset of its kept dims (one
// running value at `offset` when the innermost axis is reduced, a run of
// values along it when it is kept).
struct RowWalk {
  int64_t size = 1;   // the output's elements
  int64_t total = 1;  // the input's
  std::vector<int64_t> shape, out_stride;
  bool inner_reduced = false;

  RowWalk(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& axes) : shape(in_shape) {
    const size_t rank = shape.size();
    std::vector<bool> reduced(rank, false);
    for (int64_t a : axes) reduced.at(static_cast<size_t>(a)) = true;
    // Where each input axis moves the output: 0 along reduced axes.
    out_stride.assign(rank, 0);
    for (size_t d = rank; d-- > 0;) {
      if (reduced[d]) continue;
      out_stride[d] = size;
      size *= shape[d];
    }
    for (int64_t d : shape) total *= d;
    inner_reduced = rank > 0 && reduced[rank - 1];
  }

  template <class Visit>
  void each_row(Visit visit) const {
    if (total == 0) return;
    const size_t rank = shape.size();
    const int64_t inner = rank > 0 ? shape[rank - 1] : 1;
    std::vector<int64_t> index(rank > 0 ? rank - 1 : 0, 0);
    int64_t offset = 0;
    for (int64_t row = 0; row < total / inner; ++row) {
      visit(row * inner, inner, offset);
      for (size_t d = index.size(); d-- > 0;) {
        offset += out_stride[d];
        if (++index[d] < shape[d]) break;
        offset -= out_stride[d] * shape[d];
        index[d] = 0;
      }
    }
  }
};

}  // namespace

template <class T>
void reduce_max_min(const T* x, const std::vector<int64_t>& shape, const std::vector<int64_t>& axes, bool max, T* out) {
  const RowWalk walk(shape, axes);
  const T identity = max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  std::fill(out, out + walk.size, identity);
  walk.each_row([&](int64_t first, int64_t n, int64_t offset) {
    const T* values = x + first;
    if (walk.inner_reduced) {
      T acc = out[offset];
      for (int64_t k = 0; k < n; ++k) acc = keep_or_take(acc, values[k], max);
      out[offset] = acc;
    } else {
      T* dst = out + offset;
      for (int64_t k = 0; k < n; ++k) dst[k] = keep_or_take(dst[k], values[k], max);
    }
  });
}

void reduce_sum(const double* x, const std::vector<int64_t>& shape, const std::vector<int64_t>& axes, double* out) {
  const RowWalk walk(shape, axes);
  // -0.0: the sum of one term is that term, its sign included; an empty set
  // sums to 0.
  std::fill(out, out + walk.size, walk.total == 0 ? 0.0 : -0.0);
  walk.each_row([&](int64_t first, int64_t n, int64_t offset) {
    const double* values = x + first;
    if (walk.inner_reduced) {
      out[offset] += numpy_sum(values, static_cast<size_t>(n));  // (pairwise, as NumPy adds a contiguous run)
    } else {
      double* dst = out + offset;
      for (int64_t k = 0; k < n; ++k) dst[k] += values[k];  // (row after row, as NumPy adds rows)
    }
  });
}

template void reduce_max_min<float>(const float*, const std::vector<int64_t>&, const std::vector<int64_t>&, bool,
                                    float*);
template void reduce_max_min<double>(const double*, const std::vector<int64_t>&, const std::vector<int64_t>&, bool,
                                     double*);

}  // namespace pytensor_onnx::kernels
