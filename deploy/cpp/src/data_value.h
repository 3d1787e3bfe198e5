// The value of a pm.Data input, given as JSON nested lists, held in the
// input's element type so each evaluation can hand it to ONNX Runtime without a copy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <onnxruntime_cxx_api.h>

#include "layout.h"

namespace pymc_logp {

class DataValue {
 public:
  // `value`: nested lists of input.ndim dimensions, any sizes (a bare number
  // for 0 dimensions); integer inputs take integers. Anything else throws Error.
  DataValue(const DataInput& input, const nlohmann::json& value);

  // A tensor over the held values (valid while this object lives).
  Ort::Value tensor(const Ort::MemoryInfo& memory);

 private:
  std::string dtype_;
  std::vector<int64_t> dims_;
  std::vector<double> float64_;
  std::vector<float> float32_;
  std::vector<int64_t> int64_;
  std::vector<int32_t> int32_;
};

}  // namespace pymc_logp
