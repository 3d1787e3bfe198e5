// How many nodes of one op type a builder's main graph holds (builders made
// with use_functions=false build recipes inline, so tests can look at a
// recipe's nodes).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include "builder.h"

namespace pytensor_onnx::testing {

inline size_t count_nodes(const GraphBuilder& g, const std::string& op) {
  const auto nodes = g.graph().nodes();
  return static_cast<size_t>(std::count_if(nodes.begin(), nodes.end(), [&](const Node* n) { return n->op_type == op; }));
}

}  // namespace pytensor_onnx::testing
