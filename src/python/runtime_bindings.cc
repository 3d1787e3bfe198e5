// pytensor_onnx._core.NativeSession: runtime/session.h for Python, feeding
// NumPy arrays' memory to ONNX Runtime and handing its outputs back as
// NumPy arrays: small ones copied (the run's binding keeps their memory for
// the next run), large ones owning ONNX Runtime's memory (no copy). Built when ONNX Runtime's
// C API headers are found, as the kernel library is.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL pytensor_onnx_runtime_ARRAY_API
#include <numpy/arrayobject.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>

#include "runtime_bindings.h"
#include "session.h"

namespace nb = nanobind;
using pytensor_onnx::runtime::Initializer;
using pytensor_onnx::runtime::RunResult;
using pytensor_onnx::runtime::Session;
using pytensor_onnx::runtime::Value;

namespace {

// NumPy's C API, imported at the first session (not at import of _core).
void import_numpy() {
  static bool imported = [] {
    if (_import_array() < 0) throw nb::python_error();
    return true;
  }();
  (void)imported;
}

ONNXTensorElementDataType onnx_type(PyArrayObject* array) {
  const int size = static_cast<int>(PyArray_ITEMSIZE(array));
  switch (PyArray_DESCR(array)->kind) {
    case 'b':
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL;
    case 'f':
      if (size == 8) return ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE;
      if (size == 4) return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
      if (size == 2) return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
      break;
    case 'i':
      if (size == 8) return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
      if (size == 4) return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32;
      if (size == 2) return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16;
      if (size == 1) return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8;
      break;
    case 'u':
      if (size == 8) return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64;
      if (size == 4) return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32;
      if (size == 2) return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16;
      if (size == 1) return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8;
      break;
    default:
      break;
  }
  throw nb::type_error(("ONNX Runtime takes no arrays of NumPy dtype " +
                        nb::cast<std::string>(nb::str(nb::handle(reinterpret_cast<PyObject*>(PyArray_DESCR(array))))))
                           .c_str());
}

int numpy_type(ONNXTensorElementDataType type) {
  switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: return NPY_BOOL;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return NPY_FLOAT64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return NPY_FLOAT32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: return NPY_FLOAT16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return NPY_INT64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: return NPY_INT32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16: return NPY_INT16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8: return NPY_INT8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64: return NPY_UINT64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32: return NPY_UINT32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16: return NPY_UINT16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8: return NPY_UINT8;
    default:
      throw std::runtime_error("an output of ONNX element type " + std::to_string(static_cast<int>(type)) +
                               " has no NumPy dtype here");
  }
}

// `object` as a C-contiguous, aligned NumPy array in the machine's byte
// order (itself when it is one).
nb::object as_array(nb::handle object) {
  // (The usual input, checked without NumPy's conversion machinery: ~30 ns
  // an input; a PyMC log-density's whole call is ~3.5 us.)
  if (PyArray_CheckExact(object.ptr())) {
    auto* given = reinterpret_cast<PyArrayObject*>(object.ptr());
    if (PyArray_ISCARRAY_RO(given) && PyArray_ISNOTSWAPPED(given)) return nb::borrow(object);
  }
  PyObject* array = PyArray_FROM_OF(object.ptr(), NPY_ARRAY_IN_ARRAY | NPY_ARRAY_NOTSWAPPED);
  if (array == nullptr) throw nb::python_error();
  return nb::steal(array);
}

// An ONNX Runtime value over a NumPy array's memory.
// The caller's array as a run reads it. Its shape is appended to `dims`,
// which the caller keeps alive during the run and must have reserved room
// for (the array points into it).
pytensor_onnx::runtime::InputArray input_array(nb::handle array_object, std::vector<int64_t>& dims) {
  auto* array = reinterpret_cast<PyArrayObject*>(array_object.ptr());
  const int ndim = PyArray_NDIM(array);
  const npy_intp* shape = PyArray_DIMS(array);
  const size_t start = dims.size();
  if (dims.capacity() < start + static_cast<size_t>(ndim)) throw std::logic_error("input_array: dims has no room");
  dims.insert(dims.end(), shape, shape + ndim);
  return {PyArray_DATA(array), static_cast<size_t>(PyArray_NBYTES(array)), dims.data() + start,
          static_cast<size_t>(ndim), onnx_type(array)};
}

Value borrow(nb::handle array_object) {
  std::vector<int64_t> dims;
  dims.reserve(static_cast<size_t>(PyArray_NDIM(reinterpret_cast<PyArrayObject*>(array_object.ptr()))));
  const pytensor_onnx::runtime::InputArray array = input_array(array_object, dims);
  return pytensor_onnx::runtime::borrowed_tensor(array.data, array.nbytes, dims, array.type);
}

void release_capsule(PyObject* capsule) {
  Value(static_cast<OrtValue*>(PyCapsule_GetPointer(capsule, "pytensor_onnx.OrtValue")));
}

// Outputs up to kCopiedBytes are copied into new NumPy arrays, so that the
// run's binding keeps their memory for its next run (cheaper than ONNX
// Runtime allocating them again); larger ones are handed over, not copied.
// Output i of a run as a NumPy array of its own: a copy, or the ONNX Runtime
// value itself, owned by the array.
nb::object output_to_numpy(RunResult& result, size_t i) {
  const pytensor_onnx::runtime::ArrayView& view = result.output(i);
  if (view.shape.size() > NPY_MAXDIMS) {
    throw std::runtime_error("an output of " + std::to_string(view.shape.size()) + " dims; NumPy holds at most " +
                             std::to_string(NPY_MAXDIMS));
  }
  npy_intp shape[NPY_MAXDIMS];  // (on the stack: a vector was an allocation per output and call)
  std::copy(view.shape.begin(), view.shape.end(), shape);
  const int dtype = numpy_type(view.type);
  const int ndim = static_cast<int>(view.shape.size());
  if (view.nbytes <= pytensor_onnx::runtime::kCopiedBytes) {
    // (Also every empty tensor: ONNX Runtime may give it no memory.)
    PyObject* copy = PyArray_SimpleNew(ndim, shape, dtype);
    if (copy == nullptr) throw nb::python_error();
    if (view.nbytes > 0) std::memcpy(PyArray_DATA(reinterpret_cast<PyArrayObject*>(copy)), view.data, view.nbytes);
    return nb::steal(copy);
  }
  Value value = result.take_output(i);
  PyObject* array = PyArray_SimpleNewFromData(ndim, shape, dtype, view.data);
  if (array == nullptr) throw nb::python_error();
  nb::object owned = nb::steal(array);
  PyObject* capsule = PyCapsule_New(value.get(), "pytensor_onnx.OrtValue", release_capsule);
  if (capsule == nullptr) throw nb::python_error();
  value.release();  // the capsule owns it now
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(array), capsule) < 0) {
    throw nb::python_error();  // (SetBaseObject has released the capsule)
  }
  return owned;
}

// A session together with the arrays its initializers read.
// (Members in this order: the session goes first, then the values its
// initializers are, then the arrays they read.)
struct NativeSession {
  std::vector<nb::object> initializer_arrays;
  std::vector<Initializer> initializers;
  std::unique_ptr<Session> session;
  // Per result of a run: the session output it is, and the offset of its
  // values where that output packs small float64 arrays
  // (passes/pack_small_arrays.h), or -1, with their shape in
  // `result_shapes` (empty for a scalar). Empty: the results are the
  // session's outputs.
  std::vector<std::pair<size_t, int64_t>> result_outputs;
  std::vector<std::vector<int64_t>> result_shapes;
  // The arrays a run takes whose values are the elements of the session's
  // last input (passes/pack_small_arrays.h), in element order; empty: the
  // arrays are the session's inputs. `packed_names`: their names;
  // `packed_shapes` their shapes (empty for a scalar); `packed_length`: the
  // packed input's.
  std::vector<size_t> packed_inputs;
  std::vector<std::string> packed_names;
  std::vector<std::vector<int64_t>> packed_shapes;
  size_t packed_length = 0;
  std::vector<char> is_packed;  // (by array: one of packed_inputs)

  nb::list run(nb::handle inputs) {
    if (!PyList_Check(inputs.ptr()) && !PyTuple_Check(inputs.ptr())) {
      throw nb::type_error("NativeSession.run takes a list or tuple of arrays");
    }
    return run_items(PySequence_Fast_ITEMS(inputs.ptr()), PySequence_Fast_GET_SIZE(inputs.ptr()), false);
  }

  // A PyTensor thunk's run: the inputs are the values of PyTensor's storage
  // cells (lists of one item), and the outputs go into cells too; the
  // outputs are returned as well. (In Python, the list of inputs and the
  // stores were ~0.2 us of a PyMC log-density's call.)
  nb::list run_cells(nb::handle input_cells, nb::handle output_cells) {
    if (!PyTuple_Check(input_cells.ptr()) || !PyTuple_Check(output_cells.ptr())) {
      throw nb::type_error("NativeSession.run_cells takes two tuples of storage cells");
    }
    nb::list results = run_items(PySequence_Fast_ITEMS(input_cells.ptr()), PyTuple_GET_SIZE(input_cells.ptr()), true);
    const Py_ssize_t n = PyTuple_GET_SIZE(output_cells.ptr());
    if (n != static_cast<Py_ssize_t>(nb::len(results))) {
      throw std::invalid_argument("the session gives " + std::to_string(nb::len(results)) + " outputs, for " +
                                  std::to_string(n) + " cells");
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* cell = cell_at(PyTuple_GET_ITEM(output_cells.ptr(), i));
      PyObject* value = PyList_GET_ITEM(results.ptr(), i);
      Py_INCREF(value);
      PyList_SetItem(cell, 0, value);  // (steals the reference)
    }
    return results;
  }

 private:
  static PyObject* cell_at(PyObject* cell) {
    if (!PyList_Check(cell) || PyList_GET_SIZE(cell) < 1) throw nb::type_error("a storage cell is a list of one item");
    return cell;
  }

  // The run on items[0..n): arrays, or with `cells` storage cells holding them.
  nb::list run_items(PyObject* const* items, Py_ssize_t n, bool cells) {
    std::vector<nb::object> arrays;
    arrays.reserve(static_cast<size_t>(n));
    size_t total_ndim = 0;
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* item = cells ? PyList_GET_ITEM(cell_at(items[i]), 0) : items[i];
      arrays.push_back(as_array(item));
      total_ndim += static_cast<size_t>(PyArray_NDIM(reinterpret_cast<PyArrayObject*>(arrays.back().ptr())));
    }
    std::vector<int64_t> dims;  // every input's shape, one after the other
    dims.reserve(total_ndim + 1);
    std::vector<pytensor_onnx::runtime::InputArray> described;
    described.reserve(static_cast<size_t>(n));
    if (packed_inputs.empty()) {
      for (const nb::object& array : arrays) described.push_back(input_array(array, dims));
    } else {
      describe_packed(arrays, dims, described);
    }
    std::optional<RunResult> result;
    {
      nb::gil_scoped_release released;
      result.emplace(session->run(described));
    }
    const size_t count = result_outputs.empty() ? result->size() : result_outputs.size();
    nb::list list = nb::steal<nb::list>(PyList_New(static_cast<Py_ssize_t>(count)));
    if (!list.is_valid()) throw nb::python_error();
    for (size_t i = 0; i < count; ++i) {
      const auto [output, element] = result_outputs.empty() ? std::pair<size_t, int64_t>(i, -1) : result_outputs[i];
      nb::object array = element < 0 ? output_to_numpy(*result, output)
                                     : packed_element(result->output(output), element, result_shapes[i]);
      PyList_SET_ITEM(list.ptr(), static_cast<Py_ssize_t>(i), array.release().ptr());
    }
    return list;
  }

  // The session's inputs: `arrays` but the packed ones, then those gathered
  // into one vector (memory of this thread's, which the run copies or
  // reads before the next run on this thread).
  void describe_packed(const std::vector<nb::object>& arrays, std::vector<int64_t>& dims,
                       std::vector<pytensor_onnx::runtime::InputArray>& described) const {
    thread_local std::vector<double> gathered;
    gathered.resize(packed_length);
    size_t at = 0;
    for (size_t e = 0; e < packed_inputs.size(); ++e) {
      auto* array = reinterpret_cast<PyArrayObject*>(arrays.at(packed_inputs[e]).ptr());
      const std::vector<int64_t>& shape = packed_shapes[e];
      // (ONNX Runtime's words for an input of another rank, shape or dtype than declared.)
      if (PyArray_NDIM(array) != static_cast<int>(shape.size())) {
        throw std::runtime_error("Invalid rank for input: " + packed_names[e] + " Got: " +
                                 std::to_string(PyArray_NDIM(array)) + " Expected: " + std::to_string(shape.size()) +
                                 " Please fix either the inputs/outputs or the model.");
      }
      for (size_t d = 0; d < shape.size(); ++d) {
        if (PyArray_DIM(array, static_cast<int>(d)) != shape[d]) {
          throw std::runtime_error("Got invalid dimensions for input: " + packed_names[e] +
                                   " for the following indices\n index: " + std::to_string(d) + " Got: " +
                                   std::to_string(PyArray_DIM(array, static_cast<int>(d))) + " Expected: " +
                                   std::to_string(shape[d]) + "\n Please fix either the inputs/outputs or the model.");
        }
      }
      if (PyArray_TYPE(array) != NPY_FLOAT64) {
        throw std::runtime_error("Unexpected input data type for input: " + packed_names[e] +
                                 ", expected: (tensor(double))");
      }
      // (as_array made every array C-contiguous.)
      const auto count = static_cast<size_t>(PyArray_SIZE(array));
      if (count > 0) std::memcpy(gathered.data() + at, PyArray_DATA(array), count * sizeof(double));
      at += count;
    }
    for (size_t i = 0; i < arrays.size(); ++i) {
      if (i >= is_packed.size() || !is_packed[i]) described.push_back(input_array(arrays[i], dims));
    }
    dims.push_back(static_cast<int64_t>(gathered.size()));
    described.push_back({gathered.data(), gathered.size() * sizeof(double), &dims.back(), 1,
                         ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE});
  }

  // The float64 array of `shape` at `offset` of a packed output (`view`), a copy.
  static nb::object packed_element(const pytensor_onnx::runtime::ArrayView& view, int64_t offset,
                                   const std::vector<int64_t>& shape) {
    size_t count = 1;
    for (int64_t d : shape) count *= static_cast<size_t>(d);
    if (view.type != ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE || view.shape.size() != 1 ||
        static_cast<size_t>(offset) + count > view.nbytes / sizeof(double) || shape.size() > NPY_MAXDIMS) {
      throw std::runtime_error("a packed output of shape " + std::to_string(view.shape.size()) +
                               "-d holds no float64 array of " + std::to_string(count) + " elements at " +
                               std::to_string(offset));
    }
    npy_intp dims[NPY_MAXDIMS];
    std::copy(shape.begin(), shape.end(), dims);
    PyObject* array = PyArray_SimpleNew(static_cast<int>(shape.size()), dims, NPY_FLOAT64);
    if (array == nullptr) throw nb::python_error();
    if (count > 0) {
      std::memcpy(PyArray_DATA(reinterpret_cast<PyArrayObject*>(array)), static_cast<const double*>(view.data) + offset,
                  count * sizeof(double));
    }
    return nb::steal(array);
  }
};

}  // namespace

void bind_runtime(nb::module_& m) {
  // Sessions are cached module-wide (linker.get_session) and held by
  // compiled functions in users' globals: many are alive when the
  // interpreter exits, and nanobind would list each as a leak.
  nb::set_leak_warnings(false);
  m.def(
      "native_runtime_init",
      [](uintptr_t api_base) {
        pytensor_onnx::runtime::set_api(reinterpret_cast<const OrtApiBase*>(api_base));
      },
      nb::arg("api_base"),
      "Give the native sessions the C API of the ONNX Runtime the Python package loaded (the address of its "
      "OrtApiBase, as the kernel library received it).");
  m.def("native_runtime_ready", &pytensor_onnx::runtime::has_api);
  nb::class_<NativeSession>(m, "NativeSession")
      .def(
          "__init__",
          [](NativeSession* self, nb::bytes model, std::vector<std::string> input_names,
             std::vector<std::string> output_names, std::vector<std::pair<std::string, std::string>> config_entries,
             int log_severity, std::string kernel_library, std::vector<std::string> initializer_names,
             std::vector<nb::object> initializer_values, std::vector<std::pair<size_t, int64_t>> results,
             std::vector<std::vector<int64_t>> result_shapes, std::vector<size_t> packed_inputs,
             std::vector<std::string> packed_names, std::vector<std::vector<int64_t>> packed_shapes) {
            import_numpy();
            if (initializer_names.size() != initializer_values.size()) {
              throw std::invalid_argument("one array per initializer name");
            }
            for (const auto& [output, element] : results) {
              if (output >= output_names.size() || element < -1) {
                throw std::invalid_argument("results: output " + std::to_string(output) + ", element " +
                                            std::to_string(element) + " of a session of " +
                                            std::to_string(output_names.size()) + " outputs");
              }
            }
            if (result_shapes.size() != results.size()) throw std::invalid_argument("one shape per result");
            if (packed_names.size() != packed_inputs.size() || packed_shapes.size() != packed_inputs.size()) {
              throw std::invalid_argument("one name and one shape per packed input");
            }
            size_t packed_length = 0;
            for (const std::vector<int64_t>& shape : packed_shapes) {
              size_t count = 1;
              for (int64_t d : shape) {
                if (d < 0) throw std::invalid_argument("a packed input's shape has a negative size");
                count *= static_cast<size_t>(d);
              }
              packed_length += count;
            }
            new (self) NativeSession();
            self->result_outputs = std::move(results);
            self->result_shapes = std::move(result_shapes);
            self->packed_length = packed_length;
            self->packed_shapes = std::move(packed_shapes);
            for (size_t i : packed_inputs) {
              if (i >= self->is_packed.size()) self->is_packed.resize(i + 1, 0);
              self->is_packed[i] = 1;
            }
            self->packed_inputs = std::move(packed_inputs);
            self->packed_names = std::move(packed_names);
            for (size_t i = 0; i < initializer_names.size(); ++i) {
              self->initializer_arrays.push_back(as_array(initializer_values[i]));
              self->initializers.push_back({initializer_names[i], borrow(self->initializer_arrays.back())});
            }
            std::string bytes(static_cast<const char*>(model.data()), model.size());
            nb::gil_scoped_release released;
            pytensor_onnx::runtime::SessionConfig config{std::move(config_entries), log_severity,
                                                         std::move(kernel_library)};
            self->session = std::make_unique<Session>(bytes, input_names, output_names, config, self->initializers);
          },
          nb::arg("model"), nb::arg("input_names"), nb::arg("output_names"), nb::arg("config_entries"),
          nb::arg("log_severity"), nb::arg("kernel_library"), nb::arg("initializer_names"),
          nb::arg("initializer_values"), nb::arg("results") = std::vector<std::pair<size_t, int64_t>>{},
          nb::arg("result_shapes") = std::vector<std::vector<int64_t>>{},
          nb::arg("packed_inputs") = std::vector<size_t>{}, nb::arg("packed_names") = std::vector<std::string>{},
          nb::arg("packed_shapes") = std::vector<std::vector<int64_t>>{},
          "`results`: per result of a run, (session output, offset of its values in that packed float64 output "
          "or -1), and `result_shapes` their shapes; empty: the outputs as they are. `packed_inputs`: the arrays "
          "of a run (by position) that are the elements of the session's last input, in order, `packed_names` "
          "their names and `packed_shapes` their shapes; empty: the arrays are the session's inputs.")
      .def("run", &NativeSession::run, nb::arg("inputs"),
           "Run on `inputs` (a list or tuple of arrays, in the order of input_names); the outputs as NumPy arrays.")
      .def("run_cells", &NativeSession::run_cells, nb::arg("input_cells"), nb::arg("output_cells"),
           "Run on the values of `input_cells` (a tuple of PyTensor storage cells: lists of one item, in the order "
           "of input_names), store the outputs into `output_cells` (a tuple of cells) and return them.")
      .def_prop_ro("input_names", [](const NativeSession& s) { return s.session->input_names(); })
      .def_prop_ro("output_names", [](const NativeSession& s) { return s.session->output_names(); });
}
