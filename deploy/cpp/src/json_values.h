// Numbers and shaped arrays in JSON. Non-finite values are the strings
// "NaN", "Infinity" and "-Infinity" (JSON has no literal for them, and a
// log-density may be -inf), as the project's other deployment runners write them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pymc_logp {

nlohmann::json number_to_json(double x);

// A JSON number or one of the three strings; anything else throws Error
// naming `what`.
double json_to_number(const nlohmann::json& value, const std::string& what);

// Row-major `values` as nested lists of `shape` (a bare number for shape {}).
nlohmann::json shaped_to_json(const double* values, const std::vector<int64_t>& shape);

// Appends the numbers of `value`, nested lists of exactly `shape` (a bare
// number for shape {}), in row-major order; a value of another shape throws
// Error naming `what`.
void append_shaped(const nlohmann::json& value, const std::vector<int64_t>& shape, const std::string& what,
                   std::vector<double>& out);

// "[8]", "[2,3]", "[]": a shape for messages.
std::string shape_string(const std::vector<int64_t>& shape);

}  // namespace pymc_logp
