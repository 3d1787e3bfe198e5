// Baking graph inputs into a serialized model as initializers: what mode
// ONNX does with the shared variables a function reads but never updates,
// so ONNX Runtime treats them as the constants they are (pre-packing,
// folding) as it does for an exported model.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tensor.h"

namespace pytensor_onnx {

struct BakedModel {
  std::string bytes;               // the ModelProto
  std::vector<std::string> baked;  // the inputs that became initializers, in the order asked
};

// Removes the main-graph inputs called `names` from the ModelProto
// `model_bytes` and makes each one the graph reads (a node of it or of a
// subgraph, or a graph output) an initializer of the tensor `value_of(i)`
// gives for names[i] (asked for only those). With an empty
// `external_location` the initializer holds the tensor's bytes; otherwise it
// is a placeholder whose data is external at that location, for a runtime
// given the data separately (ONNX Runtime's add_external_initializers).
// An input the graph does not read is removed and not added: ONNX Runtime
// drops unused initializers at load and would then fail to bind its value.
// BuildError when the bytes are not a ModelProto.
BakedModel bake_inputs(const std::string& model_bytes, const std::vector<std::string>& names,
                       const std::function<Tensor(size_t)>& value_of, const std::string& external_location);

}  // namespace pytensor_onnx
