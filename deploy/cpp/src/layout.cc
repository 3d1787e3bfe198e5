#include "layout.h"

#include <nlohmann/json.hpp>

#include "errors.h"

namespace pymc_logp {

namespace {

using nlohmann::json;

// The layout's format and the newest version of it this program reads.
constexpr const char* kFormat = "pytensor-onnx.pymc.logp";
constexpr int kNewestVersion = 1;

const json& field(const json& object, const char* key, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end()) {
    throw Error("the layout has no \"" + std::string(key) + "\"" + where);
  }
  return *it;
}

std::string string_field(const json& object, const char* key, const std::string& where) {
  const json& value = field(object, key, where);
  if (!value.is_string()) throw Error("the layout's \"" + std::string(key) + "\"" + where + " is not a string");
  return value.get<std::string>();
}

int64_t count_field(const json& object, const char* key, const std::string& where) {
  const json& value = field(object, key, where);
  if (!value.is_number_integer() || value.get<int64_t>() < 0) {
    throw Error("the layout's \"" + std::string(key) + "\"" + where + " is not a count (" + value.dump() + ")");
  }
  return value.get<int64_t>();
}

Variable parse_variable(const json& entry, size_t index) {
  const std::string where = " in variable " + std::to_string(index);
  if (!entry.is_object()) throw Error("the layout's variable " + std::to_string(index) + " is not an object");
  Variable v;
  v.name = string_field(entry, "name", where);
  const std::string named = " of variable " + v.name;
  if (auto rv = entry.find("rv"); rv != entry.end() && rv->is_string()) v.rv = rv->get<std::string>();
  if (auto tr = entry.find("transform"); tr != entry.end() && tr->is_string()) v.transform = tr->get<std::string>();
  const json& shape = field(entry, "shape", named);
  if (!shape.is_array()) throw Error("the layout's shape" + named + " is not a list");
  int64_t size = 1;
  for (const json& dim : shape) {
    if (!dim.is_number_integer() || dim.get<int64_t>() < 0) {
      throw Error("the layout's shape" + named + " is not a list of sizes (" + shape.dump() + ")");
    }
    v.shape.push_back(dim.get<int64_t>());
    size *= v.shape.back();
  }
  v.size = count_field(entry, "size", named);
  if (v.size != size) {
    throw Error("the layout gives variable " + v.name + " size " + std::to_string(v.size) + " but shape " +
                shape.dump());
  }
  v.offset = count_field(entry, "offset", named);
  return v;
}

DataInput parse_data_input(const json& entry, size_t index) {
  const std::string where = " in data input " + std::to_string(index);
  if (!entry.is_object()) throw Error("the layout's data input " + std::to_string(index) + " is not an object");
  DataInput d;
  d.name = string_field(entry, "name", where);
  d.dtype = string_field(entry, "dtype", " of data input " + d.name);
  if (d.dtype != "float64" && d.dtype != "float32" && d.dtype != "int64" && d.dtype != "int32") {
    throw Error("the model's pm.Data input " + d.name + " is " + d.dtype +
                "; this program feeds float64, float32, int64 and int32 data (bake it into the model: export "
                "without it in data_inputs)");
  }
  const json& shape = field(entry, "shape", " of data input " + d.name);
  if (!shape.is_array()) throw Error("the layout's shape of data input " + d.name + " is not a list");
  d.ndim = shape.size();
  return d;
}

}  // namespace

Layout parse_layout(const std::string& text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    throw Error(std::string("the model's \"") + kLayoutKey + "\" metadata is not a JSON object");
  }
  const std::string format = string_field(doc, "format", "");
  if (format != kFormat) {
    throw Error("the layout is of format \"" + format + "\", not \"" + kFormat +
                "\": this program evaluates models exported with pytensor_onnx.pymc.export_logp");
  }
  const int64_t version = count_field(doc, "version", "");
  if (version > kNewestVersion) {
    throw Error("the layout is of version " + std::to_string(version) + "; this program reads versions up to " +
                std::to_string(kNewestVersion) + " (update it)");
  }
  if (string_field(doc, "input", "") != "flat") {
    throw Error("the model takes one input per variable; this program needs one flat input vector: "
                "export it with export_logp(model, flat=True)");
  }
  Layout layout;
  layout.size = count_field(doc, "size", "");
  const std::string dtype = string_field(doc, "dtype", "");
  if (dtype == "float64") {
    layout.dtype = Dtype::kFloat64;
  } else if (dtype == "float32") {
    layout.dtype = Dtype::kFloat32;
  } else {
    throw Error("the layout's dtype is \"" + dtype + "\"; this program reads float64 and float32 models");
  }
  layout.input = string_field(doc, "flat_input", "");
  const json& outputs = field(doc, "outputs", "");
  if (!outputs.is_object()) throw Error("the layout's \"outputs\" is not an object");
  layout.logp_output = string_field(outputs, "logp", " in \"outputs\"");
  if (auto g = outputs.find("gradient"); g != outputs.end() && g->is_string()) layout.gradient_output = g->get<std::string>();

  if (auto data = doc.find("data"); data != doc.end() && !data->is_null()) {
    if (!data->is_array()) throw Error("the layout's \"data\" is not a list");
    for (size_t i = 0; i < data->size(); ++i) layout.data.push_back(parse_data_input((*data)[i], i));
  }

  const json& variables = field(doc, "variables", "");
  if (!variables.is_array()) throw Error("the layout's \"variables\" is not a list");
  int64_t next = 0;
  for (size_t i = 0; i < variables.size(); ++i) {
    Variable v = parse_variable(variables[i], i);
    if (v.offset != next) {
      throw Error("the layout puts variable " + v.name + " at offset " + std::to_string(v.offset) + ", expected " +
                  std::to_string(next) + " (the variables must fill the flat vector in order)");
    }
    next += v.size;
    layout.variables.push_back(std::move(v));
  }
  if (next != layout.size) {
    throw Error("the layout's variables hold " + std::to_string(next) + " values, but its size is " +
                std::to_string(layout.size));
  }
  return layout;
}

std::string describe_variables(const Layout& layout) {
  std::string out;
  for (const Variable& v : layout.variables) {
    if (!out.empty()) out += ", ";
    out += v.name;
    if (!v.shape.empty()) {
      out += "[";
      for (size_t i = 0; i < v.shape.size(); ++i) out += (i ? "," : "") + std::to_string(v.shape[i]);
      out += "]";
    }
    if (!v.transform.empty()) out += " (" + v.transform + "-transformed " + v.rv + ")";
  }
  return out;
}

}  // namespace pymc_logp
