#include "builder.h"

#include <algorithm>
#include <climits>

#include "adapt.h"
#include "attribute_types.h"
#include "type_constraints.h"
#include "errors.h"
#include "infer.h"
#include "kernels.h"
#include "ops.h"
#include "opset.h"
#include "recipes/registry.h"

namespace pytensor_onnx {
namespace {

std::string lower_hint(const std::string& op_type) {
  std::string hint;
  for (char c : op_type) hint += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return hint;
}

// A value a pass dropped (Graph::remove_unused_values) may still be held by
// a caller, a Python handle from before optimize(): refused by name, before
// any adaptation builds on it.
void refuse_removed(const std::string& what, const Value* value) {
  if (value && value->removed) {
    throw BuildError(what + ": value '" + value->name +
                     "' was removed from the graph by optimize(); build on values from after it");
  }
}

void refuse_removed(const std::string& what, const std::vector<Value*>& values) {
  for (const Value* v : values) refuse_removed(what, v);
}

}  // namespace

GraphBuilder::GraphBuilder(int opset, std::string graph_name, bool use_functions)
    : opset_(opset), graph_(std::make_shared<Graph>(std::move(graph_name))), context_(std::make_shared<ModelContext>()) {
  if (use_functions) context_->functions = std::make_shared<FunctionLibrary>();
  if (opset < kMinOpset) {
    throw UnsupportedError("opset " + std::to_string(opset) + " is older than the oldest supported opset " +
                           std::to_string(kMinOpset) + "; use opset_version >= " + std::to_string(kMinOpset));
  }
  if (opset > kMaxKnownOpset) {
    throw UnsupportedError("opset " + std::to_string(opset) + " is newer than the newest opset this library knows (" +
                           std::to_string(kMaxKnownOpset) + ")");
  }
}

GraphBuilder::GraphBuilder(GraphBuilder& parent, std::string graph_name)
    : opset_(parent.opset_),
      graph_(std::make_shared<Graph>(std::move(graph_name), &parent.graph())),
      context_(parent.context_),
      outer_substitute_(parent.outer_substitute_) {}

GraphBuilder::~GraphBuilder() {
  if (graph_ && graph_.use_count() == 1 && graph_->parent()) unlink_enclosing_reads(*graph_);
}

GraphBuilder::GraphBuilder(int opset, std::shared_ptr<Graph> graph, std::shared_ptr<ModelContext> context)
    : opset_(opset), graph_(std::move(graph)), context_(std::move(context)) {}

GraphBuilder GraphBuilder::function_body(const GraphBuilder& caller, std::string name) {
  GraphBuilder body(caller.opset_, std::make_shared<Graph>(std::move(name)), caller.context_);
  body.is_function_body_ = true;
  return body;
}

Value* GraphBuilder::input(const std::string& name, DType dtype, Shape shape) {
  return graph_->add_input(name, dtype, std::move(shape));
}

Value* GraphBuilder::constant(Tensor tensor, const std::string& name_hint) {
  return graph_->add_initializer(name_hint, std::move(tensor));
}

namespace {

// Ops the table does not have give one output (ONNX Runtime refuses a node with more).
void check_output_count(const std::string& op_type, size_t n_outputs) {
  const OpSchema* schema = find_op_schema(op_type);
  const Arity outputs = schema ? schema->outputs : Arity{1, 1};
  if (n_outputs < outputs.min || n_outputs > outputs.max) {
    throw BuildError(op_type + " cannot have " + std::to_string(n_outputs) + " outputs");
  }
}

}  // namespace

std::vector<Value*> GraphBuilder::emit(const std::string& op_type, std::vector<Value*> inputs, Attributes attrs,
                                       size_t n_outputs, const std::string& domain) {
  while (!inputs.empty() && inputs.back() == nullptr) inputs.pop_back();
  refuse_removed(op_type, inputs);
  // A node of a domain the model does not import would fail the checker and
  // every runtime's load: refused here, where the rule can be named.
  if (!domain.empty() && domain != kFunctionDomain &&
      std::none_of(context_->extra_domains.begin(), context_->extra_domains.end(),
                   [&domain](const auto& entry) { return entry.first == domain; })) {
    throw BuildError(op_type + ": domain '" + domain + "' has no opset import; call require_domain('" + domain +
                     "', version) before emitting its ops");
  }
  if (domain.empty()) {
    if (auto arity = op_input_arity(op_type, opset_)) {
      if (inputs.size() < arity->min || inputs.size() > arity->max) {
        const std::string expected =
            arity->min == arity->max
                ? std::to_string(arity->min)
                : std::to_string(arity->min) + ".." +
                      (arity->max == SIZE_MAX ? std::string("n") : std::to_string(arity->max));
        throw BuildError(op_type + " takes " + expected + " inputs at opset " + std::to_string(opset_) + ", got " +
                         std::to_string(inputs.size()));
      }
      // Loop's M (trip count) and cond are both optional, yet positional: the
      // node always has them, possibly empty.
      const size_t required = op_type == "Loop" ? 0 : arity->min;
      for (size_t i = 0; i < required; ++i) {
        if (!inputs[i]) throw BuildError(op_type + ": input " + std::to_string(i) + " is required");
      }
    }
  }
  if (outer_substitute_) {
    for (Value*& in : inputs) {
      if (in && !graph_->owns(in)) in = outer_substitute_(in);
    }
  }
  for (Value* in : inputs) {
    // A value of an unrelated builder would leave this graph pointing into
    // another graph's memory.
    if (in && !graph_->can_read(in)) {
      throw BuildError(op_type + ": input '" + in->name + "' belongs to another graph builder");
    }
  }
  if (domain.empty()) {
    check_attribute_types(op_type, attrs);
    check_output_count(op_type, n_outputs);
  }
  Node* node = graph_->add_node(op_type, domain, std::move(inputs), n_outputs, std::move(attrs),
                                lower_hint(op_type));
  // A refused node leaves the graph unchanged (it would be serialized otherwise).
  try {
    check_input_dtypes(*node, opset_);
    infer_node(*node);
  } catch (const BuildError& e) {
    graph_->discard_node(node);
    throw BuildError(op_type + ": " + e.what());
  } catch (const UnsupportedError&) {
    graph_->discard_node(node);
    throw;
  } catch (const std::exception& e) {
    graph_->discard_node(node);
    throw BuildError(op_type + ": " + e.what());
  }
  return node->outputs;
}

std::vector<Value*> GraphBuilder::op(const std::string& op_type, std::vector<Value*> inputs, Attributes attrs,
                                     size_t n_outputs, const std::string& domain) {
  refuse_removed(op_type, inputs);
  if (!domain.empty()) return emit(op_type, std::move(inputs), std::move(attrs), n_outputs, domain);
  const bool is_generator = op_type == "Constant" || op_type == "RandomNormal" || op_type == "RandomUniform";
  if (!is_generator && (inputs.empty() || inputs[0] == nullptr)) {
    throw BuildError(op_type + ": the first input is missing");
  }
  if (op_type == "Squeeze" && inputs.size() < 2) {
    // axes=[] squeezes nothing (an empty axes input would mean "every
    // size-1 axis" to ONNX Runtime, which is what omitting axes says).
    if (auto axes = attrs.get_ints("axes"); axes && axes->empty()) return emit("Identity", {inputs[0]}, {}, 1);
  }
  // (Before a recipe that stands in for the op, which builds the op's own
  // outputs: a TopK asked for one output gave two; core fuzzer,
  // FUZZ_SEED=2762448248.)
  if (op_since_version(op_type)) check_output_count(op_type, n_outputs);
  if (auto recipe = build_recipe(*this, op_type, inputs, attrs, n_outputs)) return *recipe;
  const auto since = op_since_version(op_type);
  if (!since) {
    throw UnsupportedError("'" + op_type + "' is not an ONNX operator this library knows; custom ops need a domain");
  }
  if (*since > opset_) {
    throw UnsupportedError("ONNX operator " + op_type + " first appears in opset " + std::to_string(*since) +
                           "; export with opset_version >= " + std::to_string(*since));
  }
  adapt_interface(*this, op_type, inputs, attrs, n_outputs);
  if (auto adapted = adapt_kernel_dtypes(*this, op_type, inputs, attrs, n_outputs)) return *adapted;
  return emit_on_kernel(*this, op_type, inputs, attrs, n_outputs);
}

std::vector<Value*> GraphBuilder::recipe(const std::string& name, const std::vector<Value*>& inputs,
                                         const Attributes& attrs) {
  refuse_removed("recipe '" + name + "'", inputs);
  return recipes::build_recipe_named(*this, name, inputs, attrs);
}

Value* GraphBuilder::cast(Value* value, DType dtype) {
  if (value->dtype == dtype) return value;
  return emit("Cast", {value}, {{"to", static_cast<int64_t>(dtype)}}, 1)[0];
}

void GraphBuilder::output(Value* value, const std::string& requested_name, const Shape& declared) {
  if (!value) throw BuildError("output '" + requested_name + "' has no value");
  refuse_removed("output '" + requested_name + "'", value);
  if (declared && value->shape && declared->size() != value->shape->size()) {
    throw BuildError("output '" + requested_name + "' has rank " + std::to_string(value->shape->size()) +
                     ", not the declared " + std::to_string(declared->size()));
  }
  // The ONNX checker requires a shape (a rank) for every main-graph output.
  if (!graph_->parent() && !is_function_body_ && !value->shape && !declared) {
    throw BuildError("output '" + requested_name + "' has a rank the builder cannot infer; declare its shape: "
                     "g.output(value, name, shape=[...])");
  }
  // A subgraph's outputs are internal (If/Loop match them by position):
  // their names only need to be unique in the tree.
  const std::string name = graph_->parent() && graph_->name_taken(requested_name) && value->name != requested_name
                               ? graph_->unique_name(requested_name)
                               : requested_name;
  // A subgraph may not return an enclosing graph's value directly (ONNX
  // Runtime rejects it): it returns an Identity of it.
  const bool needs_identity = value->is_graph_input || value->constant || value->producer == nullptr ||
                              graph_->is_output(value) || !graph_->owns(value);
  if (needs_identity) value = emit("Identity", {value}, {}, 1)[0];
  if (!value->shape) value->shape = declared;
  if (value->name != name) {
    if (Value* holder = graph_->find_value(name)) {
      if (holder->is_graph_input || graph_->is_output(holder)) {
        throw BuildError("output name '" + name + "' is already used by a graph input or output");
      }
      graph_->rename(holder, graph_->unique_name(name));
    }
    graph_->rename(value, name);
  }
  graph_->add_output(value);
}

void GraphBuilder::require_domain(const std::string& domain, int version) {
  for (auto& entry : context_->extra_domains) {
    if (entry.first == domain) {
      entry.second = std::max(entry.second, version);
      return;
    }
  }
  context_->extra_domains.emplace_back(domain, version);
}

}  // namespace pytensor_onnx
