#include "data_value.h"

#include <cmath>
#include <limits>
#include <string>

#include "errors.h"
#include "json_values.h"

namespace pymc_logp {

namespace {

// The sizes of nested lists, read along their first elements (append_shaped
// then checks that every list has them).
std::vector<int64_t> nested_dims(const nlohmann::json& value, size_t ndim, const std::string& what) {
  std::vector<int64_t> dims;
  const nlohmann::json* level = &value;
  while (level->is_array()) {
    dims.push_back(static_cast<int64_t>(level->size()));
    if (level->empty()) break;
    level = &(*level)[0];
  }
  if (dims.size() != ndim) {
    throw Error(what + " must be nested lists of " + std::to_string(ndim) + " dimension" + (ndim == 1 ? "" : "s") +
                ", but it has " + std::to_string(dims.size()) + " (shape " + shape_string(dims) + ")");
  }
  return dims;
}

template <typename Int>
std::vector<Int> as_integers(const std::vector<double>& values, const std::string& what) {
  std::vector<Int> out;
  out.reserve(values.size());
  for (double x : values) {
    if (!(std::trunc(x) == x && x >= static_cast<double>(std::numeric_limits<Int>::min()) &&
          x <= static_cast<double>(std::numeric_limits<Int>::max()))) {
      throw Error(what + " holds " + std::to_string(x) + ", which is not an integer of its dtype");
    }
    out.push_back(static_cast<Int>(x));
  }
  return out;
}

template <typename T>
Ort::Value make_tensor(const Ort::MemoryInfo& memory, std::vector<T>& values, const std::vector<int64_t>& dims) {
  return Ort::Value::CreateTensor<T>(memory, values.data(), values.size(), dims.data(), dims.size());
}

}  // namespace

DataValue::DataValue(const DataInput& input, const nlohmann::json& value) : dtype_(input.dtype) {
  const std::string what = "pm.Data " + input.name;
  dims_ = nested_dims(value, input.ndim, what);
  std::vector<double> values;
  append_shaped(value, dims_, what, values);
  if (dtype_ == "float64") {
    float64_ = std::move(values);
  } else if (dtype_ == "float32") {
    float32_.assign(values.begin(), values.end());
  } else if (dtype_ == "int64") {
    int64_ = as_integers<int64_t>(values, what);
  } else {
    int32_ = as_integers<int32_t>(values, what);
  }
}

Ort::Value DataValue::tensor(const Ort::MemoryInfo& memory) {
  if (dtype_ == "float64") return make_tensor(memory, float64_, dims_);
  if (dtype_ == "float32") return make_tensor(memory, float32_, dims_);
  if (dtype_ == "int64") return make_tensor(memory, int64_, dims_);
  return make_tensor(memory, int32_, dims_);
}

}  // namespace pymc_logp
