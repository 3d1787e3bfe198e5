// Einsum on operands that may be empty. ONNX Runtime 1.21 crashes the
// process (SIGSEGV, or SIGFPE: it divides by a dim) running Einsum when an
// operand has an empty dim, e.g. "ij,jk->ik" on (0, 3) and (3, 3) (found by
// the core fuzzer; docs/testing.md). With an empty operand every output
// element is a sum over nothing, or there is none: the output is zeros of the
// output shape. Such operands take an If branch that builds those zeros.
// (The float64 products the builder itself writes as Einsum have their own
// guard, kernels.cc.)
#include <set>
#include <string>
#include <vector>

#include "build_helpers.h"
#include "recipes.h"

namespace pytensor_onnx::recipes {
namespace {

bool may_be_empty(const Value* v) {
  if (!v->shape) return true;
  for (const auto& d : *v->shape)
    if (!d.is_known() || d.size == 0) return true;
  return false;
}

// The operands' letters and the output's, for an equation with an explicit
// output and no "..." (nullopt otherwise: those keep the plain Einsum).
std::optional<std::pair<std::vector<std::string>, std::string>> parse(const std::string& equation, size_t n_inputs) {
  const auto arrow = equation.find("->");
  if (arrow == std::string::npos || equation.find('.') != std::string::npos) return std::nullopt;
  std::vector<std::string> operands(1);
  for (char c : equation.substr(0, arrow)) {
    if (c == ',') operands.emplace_back();
    else if (c != ' ') operands.back() += c;
  }
  std::string output;
  for (char c : equation.substr(arrow + 2))
    if (c != ' ') output += c;
  if (operands.size() != n_inputs) return std::nullopt;
  return std::make_pair(operands, output);
}

}  // namespace

std::optional<std::vector<Value*>> einsum_guarding_empty(GraphBuilder& g, const std::vector<Value*>& inputs,
                                                         const Attributes& attrs) {
  if (inputs.empty() || builds_for_nonempty_input(g)) return std::nullopt;
  for (const Value* v : inputs)
    if (!v) return std::nullopt;
  bool any_may_be_empty = false;
  for (const Value* v : inputs) any_may_be_empty = any_may_be_empty || may_be_empty(v);
  if (!any_may_be_empty) return std::nullopt;
  const auto equation = attrs.get_string("equation");
  if (!equation) return std::nullopt;
  const auto parsed = parse(*equation, inputs.size());
  if (!parsed) return std::nullopt;
  const auto& [operands, output] = *parsed;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]->rank() || *inputs[i]->rank() != operands[i].size()) return std::nullopt;  // reported later
  }
  // Each output letter's length, from the first operand that has it.
  std::vector<Value*> dims;
  for (char letter : output) {
    Value* dim = nullptr;
    for (size_t i = 0; i < inputs.size() && !dim; ++i) {
      const auto at = operands[i].find(letter);
      if (at != std::string::npos) dim = axis_length(g, inputs[i], static_cast<int64_t>(at));
    }
    if (!dim) return std::nullopt;  // a letter no operand has: the ordinary path reports it
    dims.push_back(dim);
  }

  GraphBuilder compute(g, kNonemptyBranch);  // not guarded again inside (builds_for_nonempty_input)
  compute.output(compute.op1("Einsum", inputs, attrs), "einsum");

  GraphBuilder zeros(g, "einsum_of_empty");
  Value* zero = zeros.scalar(inputs[0]->dtype, 0.0);
  Value* result = output.empty() ? zeros.op1("Identity", {zero})
                                 : zeros.op1("Expand", {zero, zeros.op1("Concat", dims, {{"axis", int64_t{0}}})});
  zeros.output(result, "einsum_zeros");

  Value* empty = nullptr;
  for (Value* v : inputs) {
    Value* this_empty = g.op1("Equal", {g.op1("Size", {v}), int64_scalar(g, 0)});
    empty = empty ? g.op1("Or", {empty, this_empty}) : this_empty;
  }
  return g.op("If", {empty}, {{"then_branch", zeros.shared_graph()}, {"else_branch", compute.shared_graph()}}, 1);
}

}  // namespace pytensor_onnx::recipes
