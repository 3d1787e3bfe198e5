#include "blas.h"

#include <type_traits>

namespace pytensor_onnx::kernels::blas {
namespace {

Routines<float> single_precision;
Routines<double> double_precision;

// Calls `visit(name, slot)` for every routine of `r`: the one list of what
// the kernels call.
template <class T, class Visit>
void for_each_routine(Routines<T>& r, Visit&& visit) {
  visit("gemm", r.gemm);
  visit("gemv", r.gemv);
  visit("dot", r.dot);
}

template <class T>
bool set_in(Routines<T>& r, const std::string& base, void* fn) {
  bool found = false;
  for_each_routine(r, [&](const char* name, auto& slot) {
    if (base == name) {
      // A function pointer from a data pointer: how SciPy's capsules hand them out.
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(fn);
      found = true;
    }
  });
  return found;
}

template <class T>
void append_missing(Routines<T>& r, char prefix, std::string& out) {
  for_each_routine(r, [&](const char* name, const auto& slot) {
    if (slot == nullptr) out += (out.empty() ? "" : " ") + std::string(1, prefix) + name;
  });
}

}  // namespace

template <>
const Routines<float>& routines<float>() {
  return single_precision;
}

template <>
const Routines<double>& routines<double>() {
  return double_precision;
}

bool set_routine(const std::string& name, void* fn) {
  if (name.size() < 2 || fn == nullptr) return false;
  const std::string base = name.substr(1);
  if (name[0] == 's') return set_in(single_precision, base, fn);
  if (name[0] == 'd') return set_in(double_precision, base, fn);
  return false;
}

std::string missing_routines() {
  std::string out;
  append_missing(single_precision, 's', out);
  append_missing(double_precision, 'd', out);
  return out;
}

}  // namespace pytensor_onnx::kernels::blas
