#include "point.h"

#include "errors.h"
#include "json_values.h"

namespace pymc_logp {

using nlohmann::json;

namespace {

// (The length is checked where every point is: LogpModel::evaluate.)
std::vector<double> read_flat(const json& point) {
  std::vector<double> flat;
  flat.reserve(point.size());
  for (size_t i = 0; i < point.size(); ++i) flat.push_back(json_to_number(point[i], "point[" + std::to_string(i) + "]"));
  return flat;
}

std::vector<double> read_named(const json& point, const Layout& layout) {
  for (const auto& item : point.items()) {
    bool known = false;
    for (const Variable& v : layout.variables) known = known || v.name == item.key();
    if (!known) {
      throw Error("the point names \"" + item.key() + "\", which is not a value variable of the model; those are: " +
                  describe_variables(layout));
    }
  }
  std::vector<double> flat;
  flat.reserve(static_cast<size_t>(layout.size));
  std::string missing;
  for (const Variable& v : layout.variables) {
    auto it = point.find(v.name);
    if (it == point.end()) {
      missing += (missing.empty() ? "" : ", ") + v.name;
      continue;
    }
    append_shaped(*it, v.shape, "the value of " + v.name, flat);
  }
  if (!missing.empty()) throw Error("the point has no value for " + missing + " (the model's variables: " +
                                    describe_variables(layout) + ")");
  return flat;
}

}  // namespace

std::vector<double> read_point(const json& point, const Layout& layout) {
  if (point.is_array()) return read_flat(point);
  if (point.is_object()) return read_named(point, layout);
  throw Error("a point is a JSON list of " + std::to_string(layout.size) +
              " numbers or an object of values by variable name, not " + std::string(point.type_name()));
}

json result_to_json(const Evaluation& result, const Layout& layout) {
  json out = json::object();
  out["logp"] = number_to_json(result.logp);
  if (layout.gradient_output) {
    json flat = json::array();
    for (double g : result.gradient) flat.push_back(number_to_json(g));
    json named = json::object();
    for (const Variable& v : layout.variables) {
      named[v.name] = shaped_to_json(result.gradient.data() + v.offset, v.shape);
    }
    out["dlogp"] = std::move(flat);
    out["dlogp_by_variable"] = std::move(named);
  }
  return out;
}

}  // namespace pymc_logp
