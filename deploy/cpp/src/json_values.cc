#include "json_values.h"

#include <cmath>
#include <limits>

#include "errors.h"

namespace pymc_logp {

using nlohmann::json;

json number_to_json(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  return x;  // nlohmann writes the shortest text that reads back to the same double
}

double json_to_number(const json& value, const std::string& what) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  throw Error(what + " is not a number: " + text);
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  return out + "]";
}

namespace {

json shaped_from(const double*& values, const std::vector<int64_t>& shape, size_t axis) {
  if (axis == shape.size()) return number_to_json(*values++);
  json list = json::array();
  for (int64_t i = 0; i < shape[axis]; ++i) list.push_back(shaped_from(values, shape, axis + 1));
  return list;
}

void append_from(const json& value, const std::vector<int64_t>& shape, size_t axis, const std::string& what,
                 std::vector<double>& out) {
  if (axis == shape.size()) {
    out.push_back(json_to_number(value, what));
    return;
  }
  if (!value.is_array() || static_cast<int64_t>(value.size()) != shape[axis]) {
    std::string text = value.dump();
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    throw Error(what + " must have shape " + shape_string(shape) + " (nested lists), but " +
                (axis == 0 ? std::string("it is ") : "along axis " + std::to_string(axis) + " it has ") + text);
  }
  for (const json& item : value) append_from(item, shape, axis + 1, what, out);
}

}  // namespace

json shaped_to_json(const double* values, const std::vector<int64_t>& shape) {
  return shaped_from(values, shape, 0);
}

void append_shaped(const json& value, const std::vector<int64_t>& shape, const std::string& what,
                   std::vector<double>& out) {
  append_from(value, shape, 0, what, out);
}

}  // namespace pymc_logp
