// The layout pytensor_onnx.pymc.export_logp(flat=True) writes into a model's
// metadata (key "pytensor_onnx.pymc.layout", JSON; docs/pymc.md): where
// each value variable sits in the flat input vector, and the names of the
// model's input and outputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pymc_logp {

// The metadata key of the layout.
inline constexpr const char* kLayoutKey = "pytensor_onnx.pymc.layout";

enum class Dtype { kFloat64, kFloat32 };

struct Variable {
  std::string name;       // the value variable (e.g. "sigma_log__")
  std::string rv;         // the random variable it belongs to (e.g. "sigma")
  std::string transform;  // empty when untransformed
  std::vector<int64_t> shape;
  int64_t size = 0;
  int64_t offset = 0;     // where its raveled values start in the flat vector
};

// A pm.Data container the model takes as an input (export_logp(data_inputs=...)):
// its values are fed with the point, of any sizes.
struct DataInput {
  std::string name;
  std::string dtype;  // float64, float32, int64 or int32
  size_t ndim = 0;
};

struct Layout {
  int64_t size = 0;  // length of the flat vector
  Dtype dtype = Dtype::kFloat64;
  std::vector<Variable> variables;  // in flat-vector order
  std::string input;                // the flat input's name
  std::string logp_output;
  std::optional<std::string> gradient_output;  // absent: exported with gradient=False
  std::vector<DataInput> data;
};

// Parses and checks the layout JSON (a malformed or inconsistent layout, or
// one of another export than export_logp(flat=True), throws Error).
Layout parse_layout(const std::string& text);

// "mu, tau_log__ (log-transformed tau), theta_tilde[8]": the variables, for messages.
std::string describe_variables(const Layout& layout);

}  // namespace pymc_logp
