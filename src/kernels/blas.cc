#include "blas.h"

#include "routine_table.h"

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
  visit("trsm", r.trsm);
}

// The visitor of both precisions' tables, for routine_table.h.
const auto visit_routines = [](auto& table, auto&& visit) { for_each_routine(table, visit); };

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
  return routine_table::set_routine(name, fn, single_precision, double_precision, visit_routines);
}

std::string missing_routines() {
  return routine_table::missing_routines(single_precision, double_precision, visit_routines);
}

}  // namespace pytensor_onnx::kernels::blas
