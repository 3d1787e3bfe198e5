// pytensor_onnx._core.CellThunk (cell_thunk.cc): mode ONNX's thunk over a
// native session, the Python work of a call done in C.
#pragma once
#include <nanobind/nanobind.h>
void bind_cell_thunk(nanobind::module_& m);
