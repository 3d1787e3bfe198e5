// Opset adaptation: moving op interfaces between attribute and input forms,
// and recipes for ops that an opset does not have.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "builder.h"

namespace pytensor_onnx {

// Rewrites `inputs`/`attrs` in place into the form `op_type` has at the builder's
// opset. Throws UnsupportedError when the request cannot be expressed there.
void adapt_interface(GraphBuilder& g, const std::string& op_type, std::vector<Value*>& inputs,
                     Attributes& attrs, size_t n_outputs);

// When the builder's opset lacks `op_type` but a recipe of standard ops exists,
// builds it and returns the outputs.
std::optional<std::vector<Value*>> build_recipe(GraphBuilder& g, const std::string& op_type,
                                                const std::vector<Value*>& inputs, const Attributes& attrs,
                                                size_t n_outputs);

}  // namespace pytensor_onnx
