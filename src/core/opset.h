// Which ONNX ops exist at which opset, and the IR version each opset needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace pytensor_onnx {

// The oldest opset the exporter targets.
constexpr int kMinOpset = 13;
// The newest opset whose interface changes this library knows about.
constexpr int kMaxKnownOpset = 26;

// The lowest IR version that can carry a model of `opset`, so older runtimes
// can still load what we write (torch.onnx does the same).
int ir_version_for_opset(int opset);

// First opset of the default domain that defines `op_type`; nullopt if unknown.
std::optional<int> op_since_version(const std::string& op_type);

struct Arity {
  size_t min_inputs;
  size_t max_inputs;  // SIZE_MAX: variadic
};
// Input counts `op_type` accepts at `opset` (after interface adaptation);
// nullopt for ops this table does not cover.
std::optional<Arity> op_input_arity(const std::string& op_type, int opset);

}  // namespace pytensor_onnx
