// How many nodes of one op type a graph (a builder's main graph) holds (builders made
// with use_functions=false build recipes inline, so tests can look at a
// recipe's nodes).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include "builder.h"
#include "recipes/loops.h"

namespace pytensor_onnx::testing {

inline size_t count_nodes(const Graph& graph, const std::string& op) {
  const auto nodes = graph.nodes();
  return static_cast<size_t>(std::count_if(nodes.begin(), nodes.end(), [&](const Node* n) { return n->op_type == op; }));
}

inline size_t count_nodes(const GraphBuilder& g, const std::string& op) { return count_nodes(g.graph(), op); }

// How many Loops of iterations a graph holds: Loop nodes, leaving out the
// compacted-epoch Loop that follows each element-wise iteration
// (recipes/loops.h), so one element-wise iteration counts once.
inline size_t count_iteration_loops(const Graph& graph) {
  const std::string suffix = recipes::kCompactedSuffix;
  size_t count = 0;
  for (const Node* n : graph.nodes()) {
    if (n->op_type != "Loop") continue;
    const std::string& body = std::get<std::shared_ptr<Graph>>(*n->attrs.find("body"))->name();
    count += !(body.size() >= suffix.size() && body.compare(body.size() - suffix.size(), suffix.size(), suffix) == 0);
  }
  return count;
}

inline size_t count_iteration_loops(const GraphBuilder& g) { return count_iteration_loops(g.graph()); }

}  // namespace pytensor_onnx::testing
