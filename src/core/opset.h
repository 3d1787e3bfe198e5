// The range of opsets the exporter targets, and the IR version each needs.
// (Which ops exist at which opset is in the op table, ops.h.)
#pragma once

namespace pytensor_onnx {

// The oldest opset the exporter targets.
constexpr int kMinOpset = 13;
// The newest opset whose interface changes this library knows about.
constexpr int kMaxKnownOpset = 26;

// The lowest IR version that can carry a model of `opset`, so older runtimes
// can still load what we write (torch.onnx does the same).
int ir_version_for_opset(int opset);

}  // namespace pytensor_onnx
