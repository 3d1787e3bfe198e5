#include "scipy_special.h"

#include <type_traits>

namespace pytensor_onnx::kernels::scipy_special {
namespace {

using Fn1 = double (*)(double, int);
using Fn2 = double (*)(double, double, int);

struct Functions {
  Fn1 erfcx = nullptr;
  Fn1 psi = nullptr;
  Fn2 gammainc = nullptr;
};

Functions table;

// Calls `visit(cython_special name, kernel op name, slot)` for every function:
// the one list of what the kernels take from SciPy.
template <class Visit>
void for_each_function(Visit&& visit) {
  visit("erfcx", "Erfcx", table.erfcx);
  visit("psi", "Psi", table.psi);
  visit("gammainc", "GammaInc", table.gammainc);
}

}  // namespace

bool set_function(const std::string& name, void* fn) {
  bool found = false;
  for_each_function([&](const char* scipy_name, const char*, auto& slot) {
    if (name == scipy_name && fn != nullptr) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(fn);
      found = true;
    }
  });
  return found;
}

std::string missing_functions() {
  std::string out;
  for_each_function([&](const char* scipy_name, const char*, const auto& slot) {
    if (slot == nullptr) out += (out.empty() ? "" : " ") + std::string(scipy_name);
  });
  return out;
}

bool available(const std::string& op) {
  bool set = false;
  for_each_function([&](const char*, const char* op_name, const auto& slot) {
    if (op == op_name) set = slot != nullptr;
  });
  return set;
}

// Only reached through kernels whose loops were selected, which requires the
// function to be set (ops.cc).
double erfcx(double x) { return table.erfcx(x, 0); }

bool psi(double x, double* value) {
  if (table.psi == nullptr) return false;
  *value = table.psi(x, 0);
  return true;
}

bool gammainc(double a, double x, double* value) {
  if (table.gammainc == nullptr) return false;
  *value = table.gammainc(a, x, 0);
  return true;
}

}  // namespace pytensor_onnx::kernels::scipy_special
