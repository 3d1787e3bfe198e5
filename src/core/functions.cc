#include "functions.h"


namespace pytensor_onnx {

const Function* FunctionLibrary::find(const std::string& key) const {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : it->second;
}

const Function* FunctionLibrary::by_name(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const Function& FunctionLibrary::add(const std::string& key, const std::string& name_hint, std::string doc,
                                     std::shared_ptr<Graph> body) {
  std::string name = name_hint;
  for (int n = 2; by_name_.count(name); ++n) name = name_hint + "_" + std::to_string(n);
  auto function = std::make_unique<Function>();
  function->name = name;
  function->doc = std::move(doc);
  function->body = std::move(body);
  function->pure = !calls_impure(*function->body);
  Function* f = function.get();
  functions_.push_back(std::move(function));
  by_key_[key] = f;
  by_name_[name] = f;
  return *f;
}

std::vector<const Function*> FunctionLibrary::all() const {
  std::vector<const Function*> result;
  for (const auto& f : functions_) result.push_back(f.get());
  return result;
}

bool is_random_op(const Node& node) {
  if (!node.domain.empty() && node.domain != "ai.onnx") return false;
  return node.op_type.rfind("Random", 0) == 0 || node.op_type == "Multinomial" || node.op_type == "Bernoulli";
}

bool FunctionLibrary::calls_impure(const Graph& graph) const {
  bool impure = false;
  for_each_node(graph, [&](const Graph&, const Node& node) {
    if (is_random_op(node)) impure = true;
    if (node.domain == kFunctionDomain) {
      const Function* f = by_name(node.op_type);
      if (f && !f->pure) impure = true;
    }
  });
  return impure;
}

std::vector<const Function*> functions_called(const Graph& graph, const FunctionLibrary& library) {
  std::unordered_set<const Function*> reached;
  std::vector<const Graph*> pending{&graph};
  while (!pending.empty()) {
    const Graph* g = pending.back();
    pending.pop_back();
    for_each_node(*g, [&](const Graph&, const Node& node) {
      if (node.domain != kFunctionDomain) return;
      const Function* f = library.by_name(node.op_type);
      if (f && reached.insert(f).second) pending.push_back(f->body.get());
    });
  }
  // Creation order puts callees first: a body is finished (and its callees
  // added) before its own function is added.
  std::vector<const Function*> ordered;
  for (const Function* f : library.all()) {
    if (reached.count(f)) ordered.push_back(f);
  }
  return ordered;
}

}  // namespace pytensor_onnx
