// What the builder knows about each default-domain ONNX op, in one entry per
// op (ops.cc): the opset that introduced it, its input and output counts,
// its attributes, its inputs' dtypes and the function that infers its
// outputs. What ONNX Runtime's CPU kernels lack is another matter, kept
// apart in kernels.cc; how interfaces changed between opsets is in adapt.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir.h"
#include "type_constraints.h"

namespace pytensor_onnx {

// How many inputs (or outputs) a node of an op may have.
struct Arity {
  size_t min;
  size_t max;  // SIZE_MAX: variadic
};

struct OpSchema {
  // The first opset of the default domain that defines the op; nullopt for
  // the few ops listed only for their output counts, which the builder
  // does not emit (GraphBuilder::op refuses them as unknown).
  std::optional<int> since;
  std::optional<Arity> inputs;                          // nullopt: not checked
  std::optional<Arity> (*inputs_at)(int opset) = nullptr;  // when the count changed with the opset
  Arity outputs{1, 1};
  // The attributes the op has at some opset: it takes no other (ONNX
  // Runtime refuses the model otherwise). nullopt: not checked.
  std::optional<std::vector<std::string>> attributes;
  // String attributes that name one of a few choices.
  std::vector<std::pair<std::string, std::vector<std::string>>> choices;
  // ONNX's type constraints on the inputs (onnx/defs) ...
  std::vector<Constraint> input_types;
  // ... adjusted at `opset` where they changed (or refusing the node).
  void (*types_at)(const Node& node, int opset, std::vector<Constraint>& constraints) = nullptr;
  // A check of the node's attributes against its input dtypes, after them.
  void (*validate)(const Node& node) = nullptr;
  // Sets the outputs' dtypes and shapes (infer/rules.h); null: left unknown.
  void (*infer)(Node& node) = nullptr;
};

// The entry of `op_type`, or null for an op the table does not have.
const OpSchema* find_op_schema(const std::string& op_type);

// First opset of the default domain that defines `op_type`; nullopt if unknown.
std::optional<int> op_since_version(const std::string& op_type);

// Input counts `op_type` accepts at `opset` (after interface adaptation);
// nullopt for ops whose count is not checked.
std::optional<Arity> op_input_arity(const std::string& op_type, int opset);

}  // namespace pytensor_onnx
