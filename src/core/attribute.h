// Node attributes: a small ordered name -> value map.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tensor.h"

namespace pytensor_onnx {

class Graph;

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>, Tensor, std::shared_ptr<Graph>>;

struct Attribute {
  std::string name;
  AttrValue value;
};

class Attributes {
 public:
  Attributes() = default;
  Attributes(std::initializer_list<Attribute> attrs) : items_(attrs) {}

  void set(const std::string& name, AttrValue value);
  bool has(const std::string& name) const { return find(name) != nullptr; }
  const AttrValue* find(const std::string& name) const;
  // Removes and returns the attribute if present.
  std::optional<AttrValue> take(const std::string& name);

  int64_t get_int(const std::string& name, int64_t fallback) const;
  std::optional<std::vector<int64_t>> get_ints(const std::string& name) const;
  std::optional<std::string> get_string(const std::string& name) const;

  const std::vector<Attribute>& items() const { return items_; }
  bool empty() const { return items_.empty(); }

 private:
  std::vector<Attribute> items_;
};

}  // namespace pytensor_onnx
