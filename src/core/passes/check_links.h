// Checks the links between a graph's values and nodes after passes rewrote
// them: every read of a value is in the value's users list, every user is a
// node of the graph's tree (the graph and its If/Loop bodies, at any depth),
// every node output names its node as producer. A pass that breaks one
// leaves a pointer to a freed node that a later pass follows (the If bodies'
// reads that outlived a dead If, ir.cc): this turns that into an error.
#pragma once
#include "../ir.h"
namespace pytensor_onnx {
// Throws std::logic_error naming the first broken link.
void check_links(const Graph& root);
}  // namespace pytensor_onnx
