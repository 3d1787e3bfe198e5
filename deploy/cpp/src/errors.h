// The one exception type of pymc_logp: a message for the user, naming what
// was wrong (the model file, its layout, a point) and how to fix it.
#pragma once

#include <stdexcept>
#include <string>

namespace pymc_logp {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace pymc_logp
