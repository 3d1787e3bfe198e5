// Tables of function pointers set by name at run time: the BLAS and LAPACK
// routines the kernels call (blas.h, lapack.h), which pytensor_onnx hands
// over from SciPy's capsules ("dgemm", "spotrf", ...: BLAS's and LAPACK's
// precision prefix, then the routine's name). Each table says which
// routines it has with a `for_each(table, visit)` that calls
// `visit(name, slot)` for every slot.
#pragma once

#include <string>
#include <type_traits>

namespace pytensor_onnx::kernels::routine_table {

// Sets the slot called `base` of `table` to `fn`; false when it has none.
template <class Table, class ForEach>
bool set_in(Table& table, const std::string& base, void* fn, ForEach&& for_each) {
  bool found = false;
  for_each(table, [&](const char* name, auto& slot) {
    if (base == name) {
      // A function pointer from a data pointer: how dlsym and SciPy's
      // capsules hand them out.
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(fn);
      found = true;
    }
  });
  return found;
}

// Appends `prefix` + the name of every slot of `table` not set yet.
template <class Table, class ForEach>
void append_missing(Table& table, char prefix, std::string& out, ForEach&& for_each) {
  for_each(table, [&](const char* name, const auto& slot) {
    if (slot == nullptr) out += (out.empty() ? "" : " ") + std::string(1, prefix) + name;
  });
}

// Sets routine `name` ("s..." in `single`, "d..." in `double_`) to `fn`;
// false for a name the tables do not have or a null `fn`.
template <class Single, class Double, class ForEach>
bool set_routine(const std::string& name, void* fn, Single& single, Double& double_, ForEach&& for_each) {
  if (name.size() < 2 || fn == nullptr) return false;
  const std::string base = name.substr(1);
  if (name[0] == 's') return set_in(single, base, fn, for_each);
  if (name[0] == 'd') return set_in(double_, base, fn, for_each);
  return false;
}

// The routines not set yet, space-separated ("" when complete).
template <class Single, class Double, class ForEach>
std::string missing_routines(Single& single, Double& double_, ForEach&& for_each) {
  std::string out;
  append_missing(single, 's', out, for_each);
  append_missing(double_, 'd', out, for_each);
  return out;
}

}  // namespace pytensor_onnx::kernels::routine_table
