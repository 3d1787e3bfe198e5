#include "as_function.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "errors.h"
#include "infer.h"

namespace pytensor_onnx::recipes {
namespace {

std::string hex_bytes(const Tensor& t) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(2 * t.nbytes());
  for (size_t i = 0; i < t.nbytes(); ++i) {
    s += digits[t.data()[i] >> 4];
    s += digits[t.data()[i] & 15];
  }
  return s;
}

std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

// The attribute values, exactly; nullopt for a kind that cannot key a
// function (a subgraph).
std::optional<std::string> attribute_key(const Attributes& attrs) {
  std::ostringstream key;
  for (const auto& item : attrs.items()) {
    key << ';' << item.name << '=';
    bool keyable = true;
    std::visit(
        [&](const auto& value) {
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, int64_t>) key << value;
          else if constexpr (std::is_same_v<T, double>) key << exact(value);
          else if constexpr (std::is_same_v<T, std::string>) key << '"' << value << '"';
          else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            for (int64_t v : value) key << v << ',';
          } else if constexpr (std::is_same_v<T, std::vector<double>>) {
            for (double v : value) key << exact(v) << ',';
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            for (const auto& v : value) key << '"' << v << "\",";
          } else if constexpr (std::is_same_v<T, Tensor>) {
            key << static_cast<int>(value.dtype()) << '[';
            for (int64_t d : value.dims()) key << d << ',';
            key << ']' << hex_bytes(value);
          } else {
            keyable = false;
          }
        },
        item.value);
    if (!keyable) return std::nullopt;
  }
  return key.str();
}

bool baked(const Value* v, FunctionUse use) {
  return use == FunctionUse::kPerShape && v->constant && v->constant->numel() <= kMaxBakedConstantElements;
}

// What the body's input stands for: for element-wise recipes only the dtype;
// otherwise rank and static dims too (named dims are unknown in the body).
Shape body_shape(const Value* v, FunctionUse use) {
  if (use == FunctionUse::kElementwise || !v->shape) return std::nullopt;
  std::vector<Dim> dims;
  for (const Dim& d : *v->shape) dims.push_back(d.is_known() ? d : Dim::unknown());
  return dims;
}

std::string input_key(const Value* v, FunctionUse use) {
  std::ostringstream key;
  key << dtype_name(v->dtype);
  if (baked(v, use)) {
    key << "=[";
    for (int64_t d : v->constant->dims()) key << d << ',';
    key << ']' << hex_bytes(*v->constant);
    return key.str();
  }
  const Shape shape = body_shape(v, use);
  if (shape) {
    key << '(';
    for (const Dim& d : *shape) key << (d.is_known() ? std::to_string(d.size) : "?") << ',';
    key << ')';
  }
  return key.str();
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// "gammaln_float64", "bitwise_and_uint32": the recipe, short attribute values
// and the input dtypes (once each, unless the recipe's name already says it).
std::string function_name(const RecipeInfo& info, const std::vector<Value*>& inputs, const Attributes& attrs) {
  std::string name = info.name;
  for (const auto& item : attrs.items()) {
    if (const auto* s = std::get_if<std::string>(&item.value); s && s->size() <= 16) name += "_" + *s;
    if (const auto* i = std::get_if<int64_t>(&item.value)) name += "_" + std::to_string(*i);
  }
  std::vector<std::string> dtypes;
  for (const Value* v : inputs) {
    const std::string d = dtype_name(v->dtype);
    if (std::find(dtypes.begin(), dtypes.end(), d) == dtypes.end()) dtypes.push_back(d);
  }
  for (const auto& d : dtypes) {
    if (!ends_with(name, d)) name += "_" + d;
  }
  return name;
}

// Marks `key` as being built for as long as it lives.
class BuildingGuard {
 public:
  BuildingGuard(FunctionLibrary& library, std::string key) : library_(library), key_(std::move(key)) {
    library_.begin_building(key_);
  }
  ~BuildingGuard() { library_.end_building(key_); }
  BuildingGuard(const BuildingGuard&) = delete;
  BuildingGuard& operator=(const BuildingGuard&) = delete;

 private:
  FunctionLibrary& library_;
  std::string key_;
};

// Builds the body of a new function; null when the recipe is built inline.
const Function* build_function(GraphBuilder& g, FunctionLibrary& library, const std::string& key,
                               const RecipeInfo& info, const std::vector<Value*>& inputs, const Attributes& attrs) {
  const std::string name = function_name(info, inputs, attrs);
  GraphBuilder body = GraphBuilder::function_body(g, name);
  std::vector<Value*> body_inputs;
  try {
    BuildingGuard guard(library, key);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Value* v = inputs[i];
      body_inputs.push_back(baked(v, info.function) ? body.constant(*v->constant, "c" + std::to_string(i))
                                                    : body.input("x" + std::to_string(i), v->dtype,
                                                                 body_shape(v, info.function)));
    }
    std::vector<Value*> outs = info.build(body, body_inputs, attrs);
    for (size_t i = 0; i < outs.size(); ++i) body.output(outs[i], "y" + std::to_string(i));
  } catch (const BuildError&) {
    library.mark_inline(key);  // the inline build reports the error in the caller's terms
    return nullptr;
  } catch (const UnsupportedError&) {
    library.mark_inline(key);
    return nullptr;
  }
  if (body.graph().num_nodes() < kMinFunctionNodes) {
    library.mark_inline(key);
    return nullptr;
  }
  return &library.add(key, name, info.doc, body.shared_graph());
}

}  // namespace

std::optional<std::vector<Value*>> build_as_function_call(GraphBuilder& g, const RecipeInfo& info,
                                                          const std::vector<Value*>& inputs, const Attributes& attrs) {
  FunctionLibrary* library = g.functions();
  if (!library || info.function == FunctionUse::kNever) return std::nullopt;
  const auto attr_key = attribute_key(attrs);
  if (!attr_key) return std::nullopt;
  std::string key = info.name + "(";
  for (const Value* v : inputs) key += input_key(v, info.function) + ";";
  key += ")" + *attr_key;
  if (library->is_inline(key) || library->is_building(key)) return std::nullopt;

  const Function* function = library->find(key);
  if (!function) function = build_function(g, *library, key, info, inputs, attrs);
  if (!function) return std::nullopt;

  std::vector<Value*> call_inputs;
  for (Value* v : inputs) {
    if (!baked(v, info.function)) call_inputs.push_back(v);
  }
  const auto& body_outputs = function->body->outputs();
  std::vector<Value*> outs = g.emit(function->name, call_inputs, {}, body_outputs.size(), kFunctionDomain);
  Shape broadcast = std::vector<Dim>{};
  if (info.function == FunctionUse::kElementwise) {
    for (const Value* v : inputs) broadcast = broadcast_shapes(broadcast, v->shape);
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    outs[i]->dtype = body_outputs[i]->dtype;
    outs[i]->shape = info.function == FunctionUse::kElementwise ? broadcast : body_outputs[i]->shape;
  }
  return outs;
}

}  // namespace pytensor_onnx::recipes
