#include "ir.h"

#include <algorithm>

#include "errors.h"

namespace pytensor_onnx {

Graph::Graph(std::string name, Graph* parent)
    : name_(std::move(name)),
      parent_(parent),
      tree_names_(parent ? parent->tree_names_ : std::make_shared<std::unordered_set<std::string>>()) {}

namespace {

bool holds_subgraph(const Node& node) {
  for (const auto& attr : node.attrs.items()) {
    if (std::holds_alternative<std::shared_ptr<Graph>>(attr.value)) return true;
  }
  return false;
}

void erase_user(Value* value, const Node* user) {
  auto it = std::find(value->users.begin(), value->users.end(), user);
  if (it != value->users.end()) value->users.erase(it);
}

// A subgraph's nodes read enclosing values directly, so they are in those
// values' users lists: a node going with its If/Loop must leave them too, or
// the lists keep a node its subgraph frees (a pass that then reads the users,
// pack_scalar_inputs_of_kernels, crashed when Python had let the subgraph go).
void unlink_subgraph_reads(const Node& node) {
  for (const auto& attr : node.attrs.items()) {
    if (const auto* sub = std::get_if<std::shared_ptr<Graph>>(&attr.value)) unlink_enclosing_reads(**sub);
  }
}

}  // namespace

void unlink_enclosing_reads(const Graph& body) {
  for_each_node(body, [](const Graph& graph, const Node& inner) {
    for (Value* in : inner.inputs) {
      if (in && !graph.owns(in)) erase_user(in, &inner);
    }
  });
}

namespace {

void unlink_from_inputs(const Node& node) {
  for (Value* in : node.inputs) {
    if (in) erase_user(in, &node);
  }
  unlink_subgraph_reads(node);
}

}  // namespace

bool Graph::owns(const Value* value) const {
  auto it = names_.find(value->name);
  return it != names_.end() && it->second == value;
}

Value* Graph::new_value(const std::string& name) {
  values_.push_back(std::make_unique<Value>());
  Value* v = values_.back().get();
  v->name = name;
  names_[name] = v;
  tree_names_->insert(name);
  return v;
}

bool Graph::name_taken(const std::string& name) const { return tree_names_->count(name) > 0; }

Value* Graph::find_value(const std::string& name) const {
  auto it = names_.find(name);
  return it == names_.end() ? nullptr : it->second;
}

std::string Graph::unique_name(const std::string& hint) {
  const std::string base = hint.empty() ? "v" : hint;
  if (!name_taken(base)) return base;
  int64_t& counter = name_counters_[base];
  std::string candidate;
  do {
    candidate = base + "_" + std::to_string(++counter);
  } while (name_taken(candidate));
  return candidate;
}

void Graph::rename(Value* value, const std::string& new_name) {
  if (value->name == new_name) return;
  if (name_taken(new_name)) throw BuildError("the name '" + new_name + "' is already used in the graph");
  names_.erase(value->name);
  tree_names_->erase(value->name);  // names are unique in the tree: the old one is free now
  value->name = new_name;
  names_[new_name] = value;
  tree_names_->insert(new_name);
}

Value* Graph::add_input(const std::string& name, DType dtype, Shape shape) {
  if (name.empty()) throw BuildError("graph inputs need a name");
  // A subgraph's inputs are internal: their names only need to be unique.
  if (parent_) return add_input_named(unique_name(name), dtype, std::move(shape));
  if (name_taken(name)) {
    throw BuildError("two graph inputs are both named '" + name + "'; input names must be unique");
  }
  return add_input_named(name, dtype, std::move(shape));
}

Value* Graph::add_input_named(const std::string& name, DType dtype, Shape shape) {
  Value* v = new_value(name);
  v->dtype = dtype;
  v->shape = std::move(shape);
  v->is_graph_input = true;
  inputs_.push_back(v);
  return v;
}

std::string Graph::unique_node_name(const std::string& hint) {
  const int64_t n = named_node_counters_[hint]++;
  return n == 0 ? hint : hint + " #" + std::to_string(n);
}

Value* Graph::add_initializer(const std::string& name_hint, Tensor tensor) {
  Value* v = new_value(unique_name(name_hint));
  v->dtype = tensor.dtype();
  v->shape = shape_of_sizes(tensor.dims());
  v->constant = std::move(tensor);
  return v;
}

Value* Graph::add_outer_scope_value(Value* outer) {
  // The value keeps its outer name; subgraphs read it by that name.
  values_.push_back(std::make_unique<Value>());
  Value* v = values_.back().get();
  v->name = outer->name;
  v->dtype = outer->dtype;
  v->shape = outer->shape;
  return v;
}

Node* Graph::add_node(const std::string& op_type, const std::string& domain, std::vector<Value*> inputs,
                      size_t n_outputs, Attributes attrs, const std::string& name_hint) {
  auto node = std::make_unique<Node>();
  Node* n = node.get();
  n->op_type = op_type;
  n->domain = domain;
  // Node names live in their own namespace; a per-graph counter keeps them unique.
  n->name = op_type + "_" + std::to_string(node_name_counters_[op_type]++);
  n->inputs = std::move(inputs);
  n->attrs = std::move(attrs);
  for (Value* in : n->inputs) {
    if (in) in->users.push_back(n);
  }
  if (holds_subgraph(*n)) ++nodes_with_subgraphs_;
  for (size_t i = 0; i < n_outputs; ++i) {
    Value* out = new_value(unique_name(name_hint));
    out->producer = n;
    n->outputs.push_back(out);
  }
  nodes_.push_back(std::move(node));
  node_positions_[n] = std::prev(nodes_.end());
  return n;
}

void Graph::add_output(Value* value) {
  if (!value) throw BuildError("graph output is null");
  outputs_.push_back(value);
}

Value* Graph::add_node_output(Node* node, const std::string& name_hint) {
  if (!node || node_positions_.count(node) == 0) throw BuildError("add_node_output: the node is not this graph's");
  Value* out = new_value(unique_name(name_hint));
  out->producer = node;
  node->outputs.push_back(out);
  return out;
}

void Graph::remove_input(Value* value) {
  const auto at = std::find(inputs_.begin(), inputs_.end(), value);
  if (at == inputs_.end()) throw BuildError("remove_input: not an input of this graph");
  if (has_users(value)) throw BuildError("remove_input: '" + value->name + "' is still read");
  inputs_.erase(at);
  value->is_graph_input = false;
}

std::vector<Value*> Graph::initializers() const {
  std::vector<Value*> result;
  for (const auto& v : values_) {
    if (v->constant) result.push_back(v.get());
  }
  return result;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> result;
  result.reserve(nodes_.size());
  for (const auto& n : nodes_) result.push_back(n.get());
  return result;
}

bool Graph::is_output(const Value* value) const {
  return std::find(outputs_.begin(), outputs_.end(), value) != outputs_.end();
}

bool Graph::has_users(const Value* value) const {
  if (!value->users.empty() || is_output(value)) return true;
  if (nodes_with_subgraphs_ == 0) return false;
  return names_read_by_own_subgraphs().count(value->name) > 0;
}

std::unordered_set<std::string> Graph::names_read_by_own_subgraphs() const {
  std::unordered_set<std::string> names;
  if (nodes_with_subgraphs_ == 0) return names;
  for (const auto& node : nodes_) {
    for (const auto& attr : node->attrs.items()) {
      if (const auto* sub = std::get_if<std::shared_ptr<Graph>>(&attr.value)) names.merge((*sub)->names_read_by_subgraphs());
    }
  }
  return names;
}

std::unordered_set<std::string> Graph::names_read_by_subgraphs() const {
  std::unordered_set<std::string> names;
  for (const auto& node : nodes_) {
    // A node input that is an enclosing graph's value is in that value's
    // users already (replace_all_uses redirects it); only a placeholder made
    // by add_outer_scope_value reads by name alone.
    for (const Value* in : node->inputs) {
      if (in && !can_read(in)) names.insert(in->name);
    }
    for (const auto& attr : node->attrs.items()) {
      if (const auto* sub = std::get_if<std::shared_ptr<Graph>>(&attr.value)) {
        // What a nested subgraph reads from this graph is not read from ours.
        for (const std::string& name : (*sub)->names_read_by_subgraphs()) {
          if (!find_value(name)) names.insert(name);
        }
      }
    }
  }
  for (const Value* out : outputs_) {
    if (!owns(out)) names.insert(out->name);
  }
  return names;
}

void Graph::replace_all_uses(Value* old_value, Value* new_value) {
  if (old_value == new_value) return;
  for (Node* user : old_value->users) {
    for (Value*& in : user->inputs) {
      if (in == old_value) {
        in = new_value;
        new_value->users.push_back(user);
      }
    }
  }
  old_value->users.clear();
  for (Value*& out : outputs_) {
    if (out == old_value) out = new_value;
  }
}

void Graph::remove_node(Node* node, const std::unordered_set<std::string>* subgraph_reads) {
  for (Value* out : node->outputs) {
    if (subgraph_reads ? has_users(out, *subgraph_reads) : has_users(out)) {
      throw BuildError("cannot remove node " + node->name + ": its output " + out->name + " is still used");
    }
  }
  unlink_from_inputs(*node);
  if (holds_subgraph(*node)) --nodes_with_subgraphs_;
  for (Value* out : node->outputs) out->producer = nullptr;
  auto pos = node_positions_.find(node);
  if (pos != node_positions_.end()) {
    nodes_.erase(pos->second);
    node_positions_.erase(pos);
  }
}

void Graph::discard_node(Node* node) {
  unlink_from_inputs(*node);
  if (holds_subgraph(*node)) --nodes_with_subgraphs_;
  for (Value* out : node->outputs) {
    names_.erase(out->name);
    tree_names_->erase(out->name);
    values_.erase(std::remove_if(values_.begin(), values_.end(), [out](const auto& v) { return v.get() == out; }),
                  values_.end());
  }
  auto pos = node_positions_.find(node);
  if (pos != node_positions_.end()) {
    nodes_.erase(pos->second);
    node_positions_.erase(pos);
  }
}

void Graph::remove_unused_values() {
  const std::unordered_set<std::string> subgraph_reads = names_read_by_own_subgraphs();
  auto has_users = [&](const Value* v) { return this->has_users(v, subgraph_reads); };
  std::vector<std::unique_ptr<Value>> kept;
  kept.reserve(values_.size());
  for (auto& v : values_) {
    const bool orphan_output = v->producer == nullptr && !v->is_graph_input && !v->constant;
    const bool unused_constant = v->constant && !has_users(v.get());
    // Orphaned node outputs and unused initializers go; an outer-scope reference
    // (no producer, not an input, no constant) is kept only while it has users.
    if ((orphan_output && !has_users(v.get())) || unused_constant) {
      auto named = names_.find(v->name);
      if (named != names_.end() && named->second == v.get()) names_.erase(named);
      retire(std::move(v));
      continue;
    }
    kept.push_back(std::move(v));
  }
  values_ = std::move(kept);
}

void Graph::retire(std::unique_ptr<Value> value) {
  // Its name stays taken (tree_names_), so no later value is mistaken for it.
  // The data goes: a dropped initializer may be a large weight.
  value->removed = true;
  value->constant.reset();
  value->producer = nullptr;
  value->users.clear();
  retired_.push_back(std::move(value));
}

void Node::replace_input(size_t i, Value* value) {
  Value* old = inputs.at(i);
  if (old) {
    auto it = std::find(old->users.begin(), old->users.end(), this);
    if (it != old->users.end()) old->users.erase(it);
  }
  inputs[i] = value;
  if (value) value->users.push_back(this);
}

}  // namespace pytensor_onnx
