#include "check_links.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace pytensor_onnx {

namespace {

[[noreturn]] void broken(const Graph& graph, const std::string& what) {
  throw std::logic_error("pytensor_onnx internal error: graph '" + graph.name() + "' after its passes: " + what +
                         " (a pass rewired it wrongly; please report the graph)");
}

}  // namespace

void check_links(const Graph& root) {
  // (Pointers are compared, never followed, until known to be live.)
  std::unordered_set<const Node*> live;
  for_each_node(root, [&](const Graph&, const Node& node) { live.insert(&node); });
  std::unordered_set<const Value*> checked;
  auto check_users = [&](const Graph& graph, const Value& value) {
    if (!checked.insert(&value).second) return;
    std::unordered_map<const Node*, int64_t> listed;
    for (const Node* user : value.users) {
      if (!live.count(user)) broken(graph, "value '" + value.name + "' lists a user that is no node of the graph");
      ++listed[user];
    }
    for (const auto& [user, times] : listed) {
      const auto reads = std::count(user->inputs.begin(), user->inputs.end(), &value);
      if (reads != times) {
        broken(graph, "value '" + value.name + "' lists node " + user->name + " " + std::to_string(times) +
                          " times, which reads it " + std::to_string(reads) + " times");
      }
    }
  };
  // (Every listed user reads the value as often as listed, and the value has
  // as many entries as reads: so no read is missing from the list.)
  std::unordered_map<const Value*, size_t> reads;
  for_each_node(root, [&](const Graph& graph, const Node& node) {
    for (const Value* in : node.inputs) {
      if (!in) continue;
      ++reads[in];
      check_users(graph, *in);
    }
    for (const Value* out : node.outputs) {
      if (out->producer != &node) broken(graph, "output '" + out->name + "' of node " + node.name + " names another producer");
      check_users(graph, *out);
    }
  });
  for (const auto& [value, times] : reads) {
    if (value->users.size() != times) {
      broken(root, "value '" + value->name + "' is read " + std::to_string(times) + " times and lists " +
                       std::to_string(value->users.size()) + " users");
    }
  }
  for (const Value* in : root.inputs()) check_users(root, *in);
  for (const Value* init : root.initializers()) check_users(root, *init);
}

}  // namespace pytensor_onnx
