#include "attribute.h"

#include "errors.h"

namespace pytensor_onnx {

void Attributes::set(const std::string& name, AttrValue value) {
  for (auto& item : items_) {
    if (item.name == name) {
      item.value = std::move(value);
      return;
    }
  }
  items_.push_back({name, std::move(value)});
}

const AttrValue* Attributes::find(const std::string& name) const {
  for (const auto& item : items_) {
    if (item.name == name) return &item.value;
  }
  return nullptr;
}

std::optional<AttrValue> Attributes::take(const std::string& name) {
  for (auto it = items_.begin(); it != items_.end(); ++it) {
    if (it->name == name) {
      AttrValue value = std::move(it->value);
      items_.erase(it);
      return value;
    }
  }
  return std::nullopt;
}

int64_t Attributes::get_int(const std::string& name, int64_t fallback) const {
  const AttrValue* v = find(name);
  if (!v) return fallback;
  if (const auto* i = std::get_if<int64_t>(v)) return *i;
  throw BuildError("attribute '" + name + "' must be an int");
}

std::optional<std::vector<int64_t>> Attributes::get_ints(const std::string& name) const {
  const AttrValue* v = find(name);
  if (!v) return std::nullopt;
  if (const auto* ints = std::get_if<std::vector<int64_t>>(v)) return *ints;
  if (const auto* i = std::get_if<int64_t>(v)) return std::vector<int64_t>{*i};
  throw BuildError("attribute '" + name + "' must be a list of ints");
}

std::optional<std::string> Attributes::get_string(const std::string& name) const {
  const AttrValue* v = find(name);
  if (!v) return std::nullopt;
  if (const auto* s = std::get_if<std::string>(v)) return *s;
  throw BuildError("attribute '" + name + "' must be a string");
}

}  // namespace pytensor_onnx
