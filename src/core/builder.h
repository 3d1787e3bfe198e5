// GraphBuilder: the one way rules create ONNX nodes.
//
// Rules write each op in one form; the builder emits what the target opset and
// ONNX Runtime's CPU kernels accept: it moves attributes to inputs (or back)
// where the opset changed the interface, expands ops the opset lacks into
// recipes of standard ops, and casts around dtypes that have no kernel when an
// exact cast exists. Every node it emits gets inferred dtypes and shapes.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "functions.h"
#include "ir.h"

namespace pytensor_onnx {

// What every graph of one model shares (its main graph, If/Loop bodies and
// function bodies): the model-local functions and the extra opset imports.
struct ModelContext {
  std::shared_ptr<FunctionLibrary> functions;  // null: recipes are built inline
  std::vector<std::pair<std::string, int>> extra_domains;
};

class GraphBuilder {
 public:
  // With `use_functions`, recipes built through recipe() become model-local
  // functions (src/core/recipes/as_function.h); without, they are built inline.
  explicit GraphBuilder(int opset, std::string graph_name = "main", bool use_functions = true);
  // A builder for a subgraph (If/Loop body) that may read values of `parent`.
  GraphBuilder(GraphBuilder& parent, std::string graph_name);
  // A builder for the body of a model-local function of `caller`'s model: a
  // graph of its own (it reads only its inputs) at the same opset.
  static GraphBuilder function_body(const GraphBuilder& caller, std::string name);
  GraphBuilder(const GraphBuilder&) = default;
  GraphBuilder(GraphBuilder&&) = default;
  GraphBuilder& operator=(const GraphBuilder&) = default;
  GraphBuilder& operator=(GraphBuilder&&) = default;
  // The last builder of a body that no node took (an exception left the
  // recipe building it) takes its nodes out of the enclosing values' users.
  ~GraphBuilder();

  int opset() const { return opset_; }
  Graph& graph() { return *graph_; }
  const Graph& graph() const { return *graph_; }
  std::shared_ptr<Graph> shared_graph() const { return graph_; }

  Value* input(const std::string& name, DType dtype, Shape shape);
  Value* constant(Tensor tensor, const std::string& name_hint = "const");
  Value* int64s(const std::vector<int64_t>& values) { return constant(Tensor::int64s(values), "ints"); }
  Value* scalar(DType dtype, double value) { return constant(Tensor::scalar(dtype, value), "scalar"); }

  // Emits `op_type` (adapted as described above) and returns its outputs.
  std::vector<Value*> op(const std::string& op_type, std::vector<Value*> inputs, Attributes attrs = {},
                         size_t n_outputs = 1, const std::string& domain = "");
  Value* op1(const std::string& op_type, std::vector<Value*> inputs, Attributes attrs = {}) {
    return op(op_type, std::move(inputs), std::move(attrs), 1)[0];
  }
  // Builds the named recipe (src/core/recipes/registry.h) on `inputs`.
  std::vector<Value*> recipe(const std::string& name, const std::vector<Value*>& inputs, const Attributes& attrs = {});

  // Cast to `dtype`; returns `value` itself when it already has that dtype.
  Value* cast(Value* value, DType dtype);

  // Emits exactly the node asked for: no adaptation. Used by adaptations
  // themselves and by passes.
  std::vector<Value*> emit(const std::string& op_type, std::vector<Value*> inputs, Attributes attrs,
                           size_t n_outputs, const std::string& domain = "");

  // Marks `value` as graph output `name` (inserting an Identity when the value
  // is an input, a constant, or already an output under another name).
  // `declared` gives the shape where inference could not (PyTensor knows the
  // rank of every variable); a main-graph output needs a rank.
  void output(Value* value, const std::string& name, const Shape& declared = std::nullopt);

  // Extra opset imports (custom domains), e.g. {"com.microsoft", 1}; shared
  // by all graphs of the model.
  void require_domain(const std::string& domain, int version);
  const std::vector<std::pair<std::string, int>>& extra_domains() const { return context_->extra_domains; }

  // The model's function library; null when recipes are built inline.
  FunctionLibrary* functions() const { return context_->functions.get(); }

  // Reads of enclosing-graph values by nodes of this builder, and of the
  // subgraph builders made from it, go through `substitute`, which returns
  // the value to read instead (or the value itself). Element-wise Loops use
  // it to give a body the compacted (still active) elements of the
  // per-element values it reads from outside (recipes/loops.cc).
  using OuterSubstitute = std::function<Value*(Value*)>;
  void substitute_outer_reads(OuterSubstitute substitute) { outer_substitute_ = std::move(substitute); }

 private:
  GraphBuilder(int opset, std::shared_ptr<Graph> graph, std::shared_ptr<ModelContext> context);

  int opset_;
  std::shared_ptr<Graph> graph_;
  std::shared_ptr<ModelContext> context_;
  // A model-local function's body: its outputs may have unknown ranks (the
  // checker's rank requirement is for the main graph's outputs only).
  bool is_function_body_ = false;
  OuterSubstitute outer_substitute_;
};

}  // namespace pytensor_onnx
