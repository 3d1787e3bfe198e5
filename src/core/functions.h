// Model-local ONNX functions: recipe bodies stored once per model.
//
// A recipe used many times (gammaln, erfc, a float64 sin, ...) is written
// once as a FunctionProto of the project's own domain and called by nodes of
// that domain, so exported graphs stay small and read like the math
// ("gammaln_float64", not forty anonymous nodes). ONNX Runtime inlines the
// bodies when it loads the model; a runtime without local-function support
// gets the same recipes built inline (GraphBuilder with functions off).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir.h"

namespace pytensor_onnx {

// The domain of function-call nodes and the version its opset import carries.
inline constexpr const char* kFunctionDomain = "pytensor_onnx";
constexpr int kFunctionDomainVersion = 1;

struct Function {
  std::string name;  // the op_type of the nodes that call it (unique in its library)
  std::string doc;
  // Inputs, nodes and outputs of the body. Its initializers are written as
  // Constant nodes (a FunctionProto has no initializers).
  std::shared_ptr<Graph> body;
  // Whether two calls on the same inputs give the same outputs (false when the
  // body, or a function it calls, draws random numbers).
  bool pure = true;
};

class FunctionLibrary {
 public:
  // The function built for `key` (a recipe, its input types and attributes),
  // or null.
  const Function* find(const std::string& key) const;
  // Whether `key` was tried and is built inline instead (too small, or its
  // recipe needs its callers' context).
  bool is_inline(const std::string& key) const { return inline_keys_.count(key) > 0; }
  void mark_inline(const std::string& key) { inline_keys_.insert(key); }

  // Guards against a recipe whose body would call itself with the same key.
  bool is_building(const std::string& key) const { return building_.count(key) > 0; }
  void begin_building(const std::string& key) { building_.insert(key); }
  void end_building(const std::string& key) { building_.erase(key); }

  // Stores a new function under `key`, named `name_hint` (with a suffix if
  // that name is taken), and returns it.
  const Function& add(const std::string& key, const std::string& name_hint, std::string doc,
                      std::shared_ptr<Graph> body);

  // The function called `name`, or null.
  const Function* by_name(const std::string& name) const;
  // All functions, in creation order: a function's callees come before it.
  std::vector<const Function*> all() const;
  // Whether a node of `graph` (or of its subgraphs) calls a function that is
  // not pure.
  bool calls_impure(const Graph& graph) const;
  bool is_call(const Node& node) const { return node.domain == kFunctionDomain && by_name(node.op_type); }

 private:
  std::vector<std::unique_ptr<Function>> functions_;
  std::unordered_map<std::string, Function*> by_key_;
  std::unordered_map<std::string, Function*> by_name_;
  std::unordered_set<std::string> inline_keys_;
  std::unordered_set<std::string> building_;
};

// The functions `graph` calls, directly, from its subgraphs, or through
// other functions, in an order where callees come first.
std::vector<const Function*> functions_called(const Graph& graph, const FunctionLibrary& library);

// Whether a node draws random numbers (its outputs differ between calls).
bool is_random_op(const Node& node);

}  // namespace pytensor_onnx
