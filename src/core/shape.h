// Tensor shapes whose dims are static sizes, named symbols, or unknown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pytensor_onnx {

struct Dim {
  int64_t size = -1;   // >= 0 when the size is known
  std::string symbol;  // ONNX dim_param when the size is unknown but named

  static Dim known(int64_t n) { return Dim{n, {}}; }
  static Dim named(std::string name) { return Dim{-1, std::move(name)}; }
  static Dim unknown() { return Dim{}; }
  bool is_known() const { return size >= 0; }
  bool is_named() const { return size < 0 && !symbol.empty(); }
  // Two dims are provably equal only if both are the same size or the same symbol.
  bool same_as(const Dim& other) const {
    if (is_known() || other.is_known()) return size == other.size;
    return is_named() && symbol == other.symbol;
  }
};

// std::nullopt: the rank itself is unknown.
using Shape = std::optional<std::vector<Dim>>;

inline Shape shape_of_sizes(const std::vector<int64_t>& sizes) {
  std::vector<Dim> dims;
  dims.reserve(sizes.size());
  for (int64_t s : sizes) dims.push_back(s >= 0 ? Dim::known(s) : Dim::unknown());
  return dims;
}

inline Shape unknown_dims(size_t rank) { return std::vector<Dim>(rank); }

inline bool is_fully_known(const Shape& shape) {
  if (!shape) return false;
  for (const auto& d : *shape)
    if (!d.is_known()) return false;
  return true;
}

// The number of elements of an array of these sizes (all known).
inline int64_t element_count(const std::vector<int64_t>& sizes) {
  int64_t count = 1;
  for (int64_t d : sizes) count *= d;
  return count;
}

inline std::vector<int64_t> known_sizes(const Shape& shape) {
  std::vector<int64_t> sizes;
  for (const auto& d : *shape) sizes.push_back(d.size);
  return sizes;
}

}  // namespace pytensor_onnx
