// Points and results as JSON, the program's request and response format.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "layout.h"
#include "logp_model.h"

namespace pymc_logp {

// The flat vector of a point given either as the flat vector itself (a list
// of layout.size numbers) or by name ({"mu": 0.3, "theta_tilde": [...8
// numbers...], ...}: every value variable of the layout, each in its shape).
// Values of the wrong shape, missing or unknown names, or what is not a number
// throw Error; the flat vector's length is checked by LogpModel::evaluate.
std::vector<double> read_point(const nlohmann::json& point, const Layout& layout);

// {"logp": ..., "dlogp": [flat gradient], "dlogp_by_variable": {name: value in its shape}}
// ("dlogp" and "dlogp_by_variable" only when the model has a gradient).
nlohmann::json result_to_json(const Evaluation& result, const Layout& layout);

}  // namespace pymc_logp
