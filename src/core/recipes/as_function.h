// Builds a registered recipe as a call of a model-local function.
//
// The first call of a recipe on given input dtypes (see FunctionUse in
// registry.h for what else tells functions apart) builds the body once, in
// a graph of its own whose inputs stand for the call's inputs; this and every
// later call of the same kind is one node of the pytensor_onnx domain.
// Which recipes are worth a function is decided from the body: one of fewer
// than kMinFunctionNodes nodes is built inline (a call would hide more than it
// saves), as is a recipe whose body cannot be built apart from its callers
// (it needs a caller's value or context: the build fails in isolation).
#pragma once

#include <optional>
#include <vector>

#include "registry.h"

namespace pytensor_onnx::recipes {

constexpr size_t kMinFunctionNodes = 4;
// Constant inputs up to this many elements are baked into per-shape bodies.
constexpr int64_t kMaxBakedConstantElements = 16;

// The outputs of recipe `info` on `inputs` as a call of its function in g's
// library (built on first use); nullopt when the recipe is built inline.
std::optional<std::vector<Value*>> build_as_function_call(GraphBuilder& g, const RecipeInfo& info,
                                                          const std::vector<Value*>& inputs, const Attributes& attrs);

}  // namespace pytensor_onnx::recipes
