// pytensor_onnx._core.CellThunk: the thunk PyTensor calls for a mode-ONNX
// function run by a native session (linker.py, _SessionRunner).
//
// A call checks that every baked shared variable's storage cell still holds
// the value baked into the session and that its container has counted no
// new value set, then runs the session on the input cells. In Python those
// were two frames and a loop, ~0.2 us of a 3.6 us PyMC log-density call;
// here they cost a few pointer compares. The slow paths stay in Python: a
// stale value calls `on_stale`, which rebuilds the session and gives this
// thunk its new state (`reset`); a failed run calls `on_error` with the
// exception, which raises the one PyTensor users get.
//
// The callbacks are weak references (weakref.WeakMethod) to the runner that
// owns this thunk: a strong one would make a cycle through members the
// garbage collector cannot see.
#include "cell_thunk.h"

#include <nanobind/nanobind.h>

namespace nb = nanobind;

namespace {

class CellThunk {
 public:
  CellThunk(nb::object run, nb::tuple fed, nb::tuple out, nb::tuple checks, nb::object on_stale,
            nb::object on_error)
      : on_stale_(std::move(on_stale)), on_error_(std::move(on_error)) {
    reset(std::move(run), std::move(fed), std::move(out), std::move(checks));
  }

  // The state of a (re)bound session: `run(fed, out)` runs it on the input
  // cells `fed` into the output cells `out`; `checks` are (cell, value,
  // container or None, version) per baked shared variable.
  void reset(nb::object run, nb::tuple fed, nb::tuple out, nb::tuple checks) {
    for (nb::handle check : checks) {
      if (!PyTuple_Check(check.ptr()) || PyTuple_GET_SIZE(check.ptr()) != 4 ||
          !PyList_Check(PyTuple_GET_ITEM(check.ptr(), 0)) || PyList_GET_SIZE(PyTuple_GET_ITEM(check.ptr(), 0)) < 1) {
        throw nb::type_error("CellThunk: a check is a (cell, value, container, version) tuple, the cell a list");
      }
    }
    run_ = std::move(run);
    fed_ = std::move(fed);
    out_ = std::move(out);
    checks_ = std::move(checks);
  }

  nb::object call() {
    if (stale()) callback(on_stale_)();  // (rebinds: reset() gives the new state)
    // Held for the run: it releases the GIL, and another thread's call may
    // rebind (reset) meanwhile.
    const nb::object run = run_;
    const nb::tuple fed = fed_, out = out_;
    PyObject* args[2] = {fed.ptr(), out.ptr()};
    PyObject* results = PyObject_Vectorcall(run.ptr(), args, 2, nullptr);
    if (results != nullptr) return nb::steal(results);
    nb::python_error error;
    callback(on_error_)(error.value());  // (raises)
    throw error;
  }

 private:
  bool stale() const {
    static PyObject* const version_name = PyUnicode_InternFromString("onnx_value_version");
    const nb::tuple checks = checks_;  // (held: a lookup may run Python code, another thread's rebind)
    for (nb::handle check : checks) {
      PyObject* const* item = &PyTuple_GET_ITEM(check.ptr(), 0);
      if (PyList_GET_ITEM(item[0], 0) != item[1]) return true;
      if (item[2] == Py_None) continue;
      nb::object version = nb::steal(PyObject_GetAttr(item[2], version_name));
      if (!version.is_valid()) throw nb::python_error();
      const int differs = PyObject_RichCompareBool(version.ptr(), item[3], Py_NE);
      if (differs < 0) throw nb::python_error();
      if (differs) return true;
    }
    return false;
  }

  // The method a weak reference points to.
  static nb::object callback(const nb::object& weak) {
    nb::object method = weak();
    if (method.is_none()) throw std::runtime_error("CellThunk: the function's runner is gone");
    return method;
  }

  nb::object run_, on_stale_, on_error_;
  nb::tuple fed_, out_, checks_;
};

// The type's call slot. (A `__call__` bound by nanobind is reached through
// Python's slot wrapper, which made a bound method and an argument tuple on
// every call: ~0.15 us, most of what this thunk saves.)
PyObject* call_slot(PyObject* self, PyObject* args, PyObject* kwargs) {
  if (PyTuple_GET_SIZE(args) != 0 || (kwargs != nullptr && PyDict_GET_SIZE(kwargs) != 0)) {
    PyErr_SetString(PyExc_TypeError, "a CellThunk is called without arguments");
    return nullptr;
  }
  try {
    return nb::inst_ptr<CellThunk>(self)->call().release().ptr();
  } catch (nb::python_error& error) {
    error.restore();
  } catch (const std::exception& error) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
  }
  return nullptr;
}

PyType_Slot call_slots[] = {{Py_tp_call, reinterpret_cast<void*>(call_slot)}, {0, nullptr}};

}  // namespace

void bind_cell_thunk(nb::module_& m) {
  // (dynamic_attr: PyTensor's JITLinker sets attributes on its thunk.)
  nb::class_<CellThunk>(m, "CellThunk", nb::dynamic_attr(), nb::is_weak_referenceable(), nb::type_slots(call_slots),
                        "Mode ONNX's thunk over a native session: checks the baked shared values, runs, and "
                        "leaves stale values and failures to Python callbacks (cell_thunk.cc).")
      .def(nb::init<nb::object, nb::tuple, nb::tuple, nb::tuple, nb::object, nb::object>(), nb::arg("run"),
           nb::arg("fed"), nb::arg("out"), nb::arg("checks"), nb::arg("on_stale"), nb::arg("on_error"))
      .def("reset", &CellThunk::reset, nb::arg("run"), nb::arg("fed"), nb::arg("out"), nb::arg("checks"));
}
