// Which ONNX ops exist at which opset, and the IR version each opset needs.
#pragma once

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

}  // namespace pytensor_onnx
