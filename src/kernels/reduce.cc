#include "reduce.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "evaluate.h"
#include "pairwise.h"

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
// values along it when it is kept). A reduction stage walks a few elements:
// its per-axis numbers live on the stack up to kInlineRank axes (four
// allocations per walk cost more than the walk).
class RowWalk {
 public:
  int64_t size = 1;   // the output's elements
  int64_t total = 1;  // the input's
  bool inner_reduced = false;

  RowWalk(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes) : shape_(shape) {
    const size_t rank = shape.size();
    int64_t* numbers = inline_;
    if (rank > kInlineRank) {
      heap_.resize(2 * rank);
      numbers = heap_.data();
    }
    out_stride_ = numbers;
    index_ = numbers + rank;
    // Where each input axis moves the output: 0 along reduced axes.
    for (size_t d = 0; d < rank; ++d) out_stride_[d] = 1;
    for (int64_t a : axes) {
      if (a < 0 || static_cast<size_t>(a) >= rank) throw std::out_of_range("a reduction's axis is out of range");
      out_stride_[static_cast<size_t>(a)] = 0;
    }
    inner_reduced = rank > 0 && out_stride_[rank - 1] == 0;
    for (size_t d = rank; d-- > 0;) {
      if (out_stride_[d] == 0) continue;
      out_stride_[d] = size;
      size *= shape[d];
    }
    for (int64_t d : shape) total *= d;
  }
  RowWalk(const RowWalk&) = delete;
  RowWalk& operator=(const RowWalk&) = delete;

  template <class Visit>
  void each_row(Visit visit) {
    if (total == 0) return;
    const size_t rank = shape_.size();
    const int64_t inner = rank > 0 ? shape_[rank - 1] : 1;
    const size_t outer = rank > 0 ? rank - 1 : 0;
    // The rows along the last outer axis in a counted loop, the axes before
    // it as an odometer: stepping the odometer (its position in memory) on
    // every row cost ~4 ns a row, where a model's rows are a few elements.
    const int64_t run = outer > 0 ? shape_[outer - 1] : 1;
    const int64_t run_stride = outer > 0 ? out_stride_[outer - 1] : 0;
    std::fill(index_, index_ + outer, 0);
    int64_t offset = 0;
    for (int64_t row = 0; row < total / inner; row += run) {
      for (int64_t j = 0; j < run; ++j) visit((row + j) * inner, inner, offset + j * run_stride);
      for (size_t d = outer > 0 ? outer - 1 : 0; d-- > 0;) {
        offset += out_stride_[d];
        if (++index_[d] < shape_[d]) break;
        offset -= out_stride_[d] * shape_[d];
        index_[d] = 0;
      }
    }
  }

 private:
  static constexpr size_t kInlineRank = 8;
  const std::vector<int64_t>& shape_;
  int64_t inline_[2 * kInlineRank];
  std::vector<int64_t> heap_;  // (ranks above kInlineRank)
  int64_t* out_stride_;
  int64_t* index_;  // a row's position along the outer axes
};

// `shape` and `axes` as NumPy's iterator walks them: it drops axes of size
// 1 and makes the trailing reduced axes of a C-contiguous array one axis,
// one run of its inner loop, which its add sums pairwise (a (70, 3) array
// over axes (0, 1) is one pairwise sum of 210 values, not 70 row sums added
// in turn; (2, 3, 4) over (1, 2) two sums of 12; (40, 1) over axis 0 one of
// 40). Returns whether that changed them: else the caller walks the given
// ones. (NumPy 2.0 adds a run of more than its buffer's 8,192 values in
// chunks: not known here, the run is added whole, as newer NumPy does.)
bool merge_axes_as_numpy(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes,
                         std::vector<int64_t>& merged_shape, std::vector<int64_t>& merged_axes) {
  // (`axes`: ascending, as the stages and kernels parse them; out of range,
  // RowWalk refuses them.)
  for (int64_t a : axes) {
    if (a < 0 || a >= static_cast<int64_t>(shape.size())) return false;
  }
  bool dropped = false;
  merged_shape.clear();
  merged_axes.clear();
  for (size_t d = 0, a = 0; d < shape.size(); ++d) {
    const bool reduced = a < axes.size() && axes[a] == static_cast<int64_t>(d);
    if (reduced) ++a;
    if (shape[d] == 1) {
      dropped = true;
      continue;
    }
    if (reduced) merged_axes.push_back(static_cast<int64_t>(merged_shape.size()));
    merged_shape.push_back(shape[d]);
  }
  size_t trailing = 0;
  while (trailing < merged_axes.size() &&
         merged_axes[merged_axes.size() - 1 - trailing] == static_cast<int64_t>(merged_shape.size() - 1 - trailing)) {
    ++trailing;
  }
  if (trailing >= 2) {
    const size_t first = merged_shape.size() - trailing;
    for (size_t d = first + 1; d < merged_shape.size(); ++d) merged_shape[first] *= merged_shape[d];
    merged_shape.resize(first + 1);
    merged_axes.resize(merged_axes.size() - trailing + 1);
  }
  return dropped || trailing >= 2;
}

// Calls `reduce(shape, axes)` on the axes NumPy walks (merge_axes_as_numpy).
template <class Reduce>
void with_merged_axes(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes, Reduce reduce) {
  thread_local std::vector<int64_t> merged_shape, merged_axes;
  if (merge_axes_as_numpy(shape, axes, merged_shape, merged_axes)) reduce(merged_shape, merged_axes);
  else reduce(shape, axes);
}

// Column `first` on, `Width` columns of an (rows, cols) C-contiguous array
// reduced over its rows: each column's running value `combine(acc, x)` from
// `identity`, row after row (the order NumPy takes them in), in registers.
template <int Width, class T, class Combine>
void reduce_columns(const T* x, int64_t rows, int64_t cols, int64_t first, T identity, Combine combine, T* out) {
  T acc[Width];
  for (int j = 0; j < Width; ++j) acc[j] = identity;
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = x + r * cols + first;
    for (int j = 0; j < Width; ++j) acc[j] = combine(acc[j], row[j]);
  }
  for (int j = 0; j < Width; ++j) out[first + j] = acc[j];
}

// An (rows, cols) array reduced over axis 0, PyMC's sums over observations
// of a (70, 3) array: the walk's rows added into the output in turn kept
// each running value in memory, a store and a load per element.
template <class T, class Combine>
void reduce_leading_axis(const T* x, int64_t rows, int64_t cols, T identity, Combine combine, T* out) {
  int64_t first = 0;
  for (; cols - first >= 8; first += 8) reduce_columns<8>(x, rows, cols, first, identity, combine, out);
  switch (cols - first) {
    case 7: return reduce_columns<7>(x, rows, cols, first, identity, combine, out);
    case 6: return reduce_columns<6>(x, rows, cols, first, identity, combine, out);
    case 5: return reduce_columns<5>(x, rows, cols, first, identity, combine, out);
    case 4: return reduce_columns<4>(x, rows, cols, first, identity, combine, out);
    case 3: return reduce_columns<3>(x, rows, cols, first, identity, combine, out);
    case 2: return reduce_columns<2>(x, rows, cols, first, identity, combine, out);
    case 1: return reduce_columns<1>(x, rows, cols, first, identity, combine, out);
    default: return;
  }
}

bool is_leading_axis_of_a_matrix(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes) {
  return shape.size() == 2 && axes.size() == 1 && axes[0] == 0;
}

template <class T>
void reduce_max_min_walk(const T* x, const std::vector<int64_t>& shape, const std::vector<int64_t>& axes, bool max, T* out) {
  const T identity = max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  if (is_leading_axis_of_a_matrix(shape, axes)) {
    return reduce_leading_axis(x, shape[0], shape[1], identity, [max](T acc, T v) { return keep_or_take(acc, v, max); },
                               out);
  }
  RowWalk walk(shape, axes);
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

void reduce_sum_walk(const double* x, const std::vector<int64_t>& shape, const std::vector<int64_t>& axes, double* out) {
  if (is_leading_axis_of_a_matrix(shape, axes)) {
    return reduce_leading_axis(x, shape[0], shape[1], 0.0, [](double acc, double v) { return acc + v; }, out);
  }
  RowWalk walk(shape, axes);
  // +0.0, the identity NumPy's add.reduce starts every sum from: a sum of
  // -0.0s is +0.0 (the py linker's, PyTensor's C and Numba backends').
  std::fill(out, out + walk.size, 0.0);
  walk.each_row([&](int64_t first, int64_t n, int64_t offset) {
    const double* values = x + first;
    if (walk.inner_reduced) {
      // (Pairwise, as NumPy adds a contiguous run: numpy_sum, with its leaf
      // inlined, as a model's rows of a few components are leaves.)
      const auto count = static_cast<size_t>(n);
      out[offset] += count <= kPairwiseLeaf ? leaf_sum(values, count) : numpy_sum(values, count);
    } else {
      double* dst = out + offset;
      for (int64_t k = 0; k < n; ++k) dst[k] += values[k];  // (row after row, as NumPy adds rows)
    }
  });
}

}  // namespace

template <class T>
void reduce_max_min(const T* x, const std::vector<int64_t>& given_shape, const std::vector<int64_t>& given_axes, bool max,
                    T* out) {
  with_merged_axes(given_shape, given_axes, [&](const std::vector<int64_t>& shape, const std::vector<int64_t>& axes) {
    reduce_max_min_walk(x, shape, axes, max, out);
  });
}

void reduce_sum(const double* x, const std::vector<int64_t>& given_shape, const std::vector<int64_t>& given_axes,
                double* out) {
  with_merged_axes(given_shape, given_axes, [&](const std::vector<int64_t>& shape, const std::vector<int64_t>& axes) {
    reduce_sum_walk(x, shape, axes, out);
  });
}

template void reduce_max_min<float>(const float*, const std::vector<int64_t>&, const std::vector<int64_t>&, bool,
                                    float*);
template void reduce_max_min<double>(const double*, const std::vector<int64_t>&, const std::vector<int64_t>&, bool,
                                     double*);

}  // namespace pytensor_onnx::kernels
