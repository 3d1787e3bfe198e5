// The in-memory graph: values, nodes, initializers, subgraphs.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "attribute.h"
#include "dtype.h"
#include "shape.h"
#include "tensor.h"

namespace pytensor_onnx {

class Node;

struct Value {
  std::string name;
  DType dtype = DType::Undefined;
  Shape shape;
  Node* producer = nullptr;       // null for graph inputs, initializers and outer-scope values
  std::vector<Node*> users;       // one entry per input slot that reads this value
  std::optional<Tensor> constant; // set for initializers
  bool is_graph_input = false;
  // Dropped from its graph by Graph::remove_unused_values (a pass); the
  // object stays allocated for callers that still hold it (Graph::retired_).
  bool removed = false;

  bool is_constant() const { return constant.has_value(); }
  std::optional<size_t> rank() const {
    return shape ? std::optional<size_t>(shape->size()) : std::nullopt;
  }
};

class Node {
 public:
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain
  std::string name;
  std::vector<Value*> inputs;  // nullptr marks an omitted optional input
  std::vector<Value*> outputs;
  Attributes attrs;

  Value* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  // Reads `value` in input slot `i` instead, keeping both values' users
  // lists right (a pass that rewires a node past another).
  void replace_input(size_t i, Value* value);
};

// A graph owns its values and nodes. Nodes are kept in topological order:
// the builder appends nodes after their inputs exist, and passes preserve it.
class Graph {
 public:
  explicit Graph(std::string name = "main", Graph* parent = nullptr);
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return name_; }
  Graph* parent() const { return parent_; }

  Value* add_input(const std::string& name, DType dtype, Shape shape);
  Value* add_initializer(const std::string& name_hint, Tensor tensor);
  // Appends a node; its outputs are new values named after `name_hint`.
  Node* add_node(const std::string& op_type, const std::string& domain, std::vector<Value*> inputs,
                 size_t n_outputs, Attributes attrs, const std::string& name_hint);
  void add_output(Value* value);
  // Appends a new output value, named after `name_hint`, to `node` (a node
  // of this graph): a pass that gives a node's results another form.
  Value* add_node_output(Node* node, const std::string& name_hint);
  // Makes graph input `value`, which nothing reads any more, a value of no
  // use (remove_unused_values drops it).
  void remove_input(Value* value);
  // A value defined in an enclosing graph, referenced by name from this subgraph.
  Value* add_outer_scope_value(Value* outer);

  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  std::vector<Value*>& mutable_outputs() { return outputs_; }
  std::vector<Value*> initializers() const;
  std::vector<Node*> nodes() const;
  size_t num_nodes() const { return nodes_.size(); }

  // Every read of `old_value` (node inputs and graph outputs) now reads `new_value`.
  void replace_all_uses(Value* old_value, Value* new_value);
  // Unlinks and destroys a node whose outputs are no longer used.
  // `subgraph_reads`: names_read_by_own_subgraphs(), when the caller has it.
  void remove_node(Node* node, const std::unordered_set<std::string>* subgraph_reads = nullptr);
  // Undoes add_node for a node that failed validation: the node and its
  // output values go (nothing outside the builder has seen them yet), so a
  // refused op leaves the graph as it was.
  void discard_node(Node* node);
  // Drops initializers and values nothing refers to. Dropped values are
  // emptied and marked `removed`, not freed, until the graph goes.
  void remove_unused_values();
  bool is_output(const Value* value) const;
  // Users include graph outputs and reads by name from subgraphs (If/Loop bodies).
  bool has_users(const Value* value) const;
  // The same, given names_read_by_own_subgraphs(): passes that ask for many
  // values compute it once (each subgraph scan is as large as the subgraph).
  bool has_users(const Value* value, const std::unordered_set<std::string>& subgraph_reads) const {
    return !value->users.empty() || is_output(value) || subgraph_reads.count(value->name) > 0;
  }
  // The names that the subgraphs of this graph's nodes (at any depth) read
  // from this graph or its ancestors by name (see names_read_by_subgraphs).
  std::unordered_set<std::string> names_read_by_own_subgraphs() const;
  // For a subgraph: the names of enclosing-graph values it (or a subgraph of
  // it, at any depth) reads by name rather than through their users lists
  // (graph outputs and add_outer_scope_value placeholders).
  std::unordered_set<std::string> names_read_by_subgraphs() const;

  // A node name not yet given to a node of this graph by this function:
  // "<hint>", then "<hint> #<n>" (ONNX Runtime rejects repeated node names).
  std::string unique_node_name(const std::string& hint);
  // A name not yet used in this graph or its ancestors: "<hint>" or "<hint>_<n>".
  std::string unique_name(const std::string& hint);
  bool name_taken(const std::string& name) const;
  // The value of this graph with that name, or null.
  Value* find_value(const std::string& name) const;
  // Whether `value` is one of this graph's own (not an enclosing graph's).
  bool owns(const Value* value) const;
  // Whether nodes of this graph may read `value`: its own or an enclosing graph's.
  bool can_read(const Value* value) const { return owns(value) || (parent_ && parent_->can_read(value)); }
  void rename(Value* value, const std::string& new_name);

 private:
  Value* new_value(const std::string& name);
  Value* add_input_named(const std::string& name, DType dtype, Shape shape);
  void retire(std::unique_ptr<Value> value);

  std::string name_;
  Graph* parent_;
  std::vector<std::unique_ptr<Value>> values_;
  // Values remove_unused_values dropped. Python's Value handles keep the
  // builder (this graph) alive, not the value, and nanobind hands an existing
  // handle to a new object at the same address; a freed value made later
  // g.op calls read freed memory (core fuzzer, FUZZ_SEED=1094003210: a
  // std::bad_alloc from copying a garbage name). So they live as long as the
  // graph does, without their data.
  std::vector<std::unique_ptr<Value>> retired_;
  std::list<std::unique_ptr<Node>> nodes_;
  std::unordered_map<const Node*, std::list<std::unique_ptr<Node>>::iterator> node_positions_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::unordered_map<std::string, int64_t> name_counters_;
  std::unordered_map<std::string, Value*> names_;
  // Every value name used in this graph's tree (root and all subgraphs,
  // shared): ONNX needs names unique across a graph and its subgraphs, and a
  // subgraph's reads of outer values go by name, so no two may collide.
  std::shared_ptr<std::unordered_set<std::string>> tree_names_;
  std::unordered_map<std::string, int64_t> node_name_counters_;
  std::unordered_map<std::string, int64_t> named_node_counters_;  // unique_node_name
  size_t nodes_with_subgraphs_ = 0;  // lets has_users skip the subgraph scan
};

// Takes the nodes of `body` (an If/Loop body, and its own bodies) out of
// the users lists of the enclosing values they read. For a body no node
// holds, when it goes: a recipe's body builder that an exception leaves
// (the refused op inside it) would otherwise leave those lists naming
// nodes it frees.
void unlink_enclosing_reads(const Graph& body);

// Calls `visit(graph, node)` on every node of `graph` and of its If/Loop
// bodies at any depth, each with the graph that holds it.
template <class Visit>
void for_each_node(const Graph& graph, const Visit& visit) {
  for (const Node* node : graph.nodes()) {
    visit(graph, *node);
    for (const auto& attr : node->attrs.items()) {
      if (const auto* sub = std::get_if<std::shared_ptr<Graph>>(&attr.value)) for_each_node(**sub, visit);
    }
  }
}

}  // namespace pytensor_onnx
