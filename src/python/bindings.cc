// pytensor_onnx._core: the C++ graph builder, exposed to the Python rules.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include "bake.h"
#include "builder.h"
#include "cell_thunk.h"
#include "errors.h"
#include "kernel_ops.h"
#include "kernels.h"
#include "ops.h"
#include "opset.h"
#include "passes/demote_float64.h"
#include "passes/pack_small_arrays.h"
#include "passes/pass_manager.h"
#include "passes/record_input_shapes.h"
#include "recipes/registry.h"
#include "serialize.h"

#ifdef PYTENSOR_ONNX_NATIVE_RUNTIME
#include "runtime_bindings.h"
#endif

namespace nb = nanobind;
using namespace pytensor_onnx;

namespace {

using ReadOnlyArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

// Keeps a NumPy array alive for a borrowed Tensor; releases it under the GIL,
// since the last reference may drop on any thread.
struct PyKeepAlive {
  nb::object object;
  explicit PyKeepAlive(nb::object o) : object(std::move(o)) {}
  ~PyKeepAlive() {
    nb::gil_scoped_acquire gil;
    object.reset();
  }
};

DType dtype_of(const ReadOnlyArray& array) {
  const nb::dlpack::dtype t = array.dtype();
  const auto code = static_cast<nb::dlpack::dtype_code>(t.code);
  if (t.lanes == 1) {
    if (code == nb::dlpack::dtype_code::Float) {
      if (t.bits == 16) return DType::Float16;
      if (t.bits == 32) return DType::Float32;
      if (t.bits == 64) return DType::Float64;
    } else if (code == nb::dlpack::dtype_code::Int) {
      if (t.bits == 8) return DType::Int8;
      if (t.bits == 16) return DType::Int16;
      if (t.bits == 32) return DType::Int32;
      if (t.bits == 64) return DType::Int64;
    } else if (code == nb::dlpack::dtype_code::UInt) {
      if (t.bits == 8) return DType::UInt8;
      if (t.bits == 16) return DType::UInt16;
      if (t.bits == 32) return DType::UInt32;
      if (t.bits == 64) return DType::UInt64;
    } else if (code == nb::dlpack::dtype_code::Bool) {
      return DType::Bool;
    }
  }
  throw nb::value_error("array dtype has no ONNX tensor type; use float16/32/64, (u)int8..64 or bool");
}

Tensor tensor_from_array(nb::handle obj) {
  ReadOnlyArray array;
  if (!nb::try_cast<ReadOnlyArray>(obj, array)) {
    throw nb::type_error("expected a C-contiguous NumPy array of a numeric or bool dtype (np.ascontiguousarray)");
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < array.ndim(); ++i) dims.push_back(static_cast<int64_t>(array.shape(i)));
  const DType dtype = dtype_of(array);
  auto owner = std::make_shared<PyKeepAlive>(nb::borrow(obj));
  return Tensor::borrowed(dtype, std::move(dims), array.data(), array.nbytes(), std::move(owner));
}

// A Python int as int64; OverflowError (not a bare C++ cast error) when it
// does not fit.
int64_t int64_from_python(nb::handle h, const std::string& what) {
  nb::int_ as_int(h);
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(as_int.ptr(), &overflow);
  if (overflow != 0) {
    PyErr_SetString(PyExc_OverflowError, (what + ": " + nb::cast<std::string>(nb::str(h)) + " does not fit in int64").c_str());
    throw nb::python_error();
  }
  if (value == -1 && PyErr_Occurred()) throw nb::python_error();
  return static_cast<int64_t>(value);
}

bool is_int_like(nb::handle h) {
  return PyLong_Check(h.ptr()) || (PyIndex_Check(h.ptr()) && !PyFloat_Check(h.ptr()));
}

bool is_nd_array(nb::handle h) {
  // NumPy arrays of rank >= 1 also pass the index and float checks when they
  // hold one element: they are tensors, never scalars.
  if (!nb::hasattr(h, "__array_interface__") || !nb::hasattr(h, "ndim")) return false;
  return nb::cast<int64_t>(h.attr("ndim")) > 0;
}

AttrValue attribute_from_python(const std::string& name, nb::handle h) {
  if (is_nd_array(h)) return tensor_from_array(h);
  if (PyBool_Check(h.ptr()) || is_int_like(h)) return int64_from_python(h, "attribute '" + name + "'");
  if (PyFloat_Check(h.ptr()) || nb::hasattr(h, "__float__")) {
    if (!nb::isinstance<nb::str>(h) && !nb::hasattr(h, "shape")) return PyFloat_AsDouble(h.ptr());
  }
  if (nb::isinstance<nb::str>(h)) return nb::cast<std::string>(h);
  if (nb::isinstance<GraphBuilder>(h)) return nb::cast<GraphBuilder&>(h).shared_graph();
  if (nb::hasattr(h, "__array_interface__") || nb::hasattr(h, "__dlpack__")) return tensor_from_array(h);
  if (nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h)) {
    nb::sequence seq = nb::borrow<nb::sequence>(h);
    bool all_int = true, all_str = true;
    for (nb::handle item : seq) {
      all_int &= PyBool_Check(item.ptr()) || is_int_like(item);
      all_str &= nb::isinstance<nb::str>(item);
    }
    if (all_int) {
      std::vector<int64_t> v;
      for (nb::handle item : seq) v.push_back(int64_from_python(item, "attribute '" + name + "'"));
      return v;
    }
    if (all_str) {
      std::vector<std::string> v;
      for (nb::handle item : seq) v.push_back(nb::cast<std::string>(item));
      return v;
    }
    std::vector<double> v;
    for (nb::handle item : seq) v.push_back(PyFloat_AsDouble(item.ptr()));
    if (PyErr_Occurred()) throw nb::python_error();
    return v;
  }
  throw nb::type_error(("attribute '" + name + "' has a type that maps to no ONNX attribute type").c_str());
}

Shape shape_from_python(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  std::vector<Dim> dims;
  for (nb::handle d : nb::borrow<nb::sequence>(h)) {
    if (d.is_none()) dims.push_back(Dim::unknown());
    else if (nb::isinstance<nb::str>(d)) dims.push_back(Dim::named(nb::cast<std::string>(d)));
    else {
      const int64_t n = int64_from_python(d, "shape dim");
      if (n < 0) throw nb::value_error("shape dims must be non-negative ints, str names or None");
      dims.push_back(Dim::known(n));
    }
  }
  return dims;
}

nb::object shape_to_python(const Shape& shape) {
  if (!shape) return nb::none();
  nb::list dims;
  for (const Dim& d : *shape) {
    if (d.is_known()) dims.append(nb::int_(d.size));
    else if (d.is_named()) dims.append(nb::str(d.symbol.c_str()));
    else dims.append(nb::none());
  }
  return nb::tuple(dims);
}

nb::object constant_to_numpy(const Value& v) {
  if (!v.constant) return nb::none();
  const Tensor& t = *v.constant;
  nb::module_ np = nb::module_::import_("numpy");
  nb::bytes raw(reinterpret_cast<const char*>(t.data()), t.nbytes());
  nb::object flat = np.attr("frombuffer")(raw, nb::arg("dtype") = dtype_name(t.dtype()));
  nb::list dims;
  for (int64_t d : t.dims()) dims.append(d);
  return flat.attr("reshape")(nb::tuple(dims)).attr("copy")();
}

// The inputs and keyword arguments of g.op / g.recipe.
struct Call {
  std::vector<Value*> inputs;
  Attributes attrs;
  std::string domain;
  size_t n_outputs = 1;
  std::vector<std::string> output_dtypes;
  std::string node_name;  // names the node producing the first output (shown in runtime errors)
};

Call parse_call(const std::string& what, nb::args args, nb::kwargs kwargs) {
  Call call;
  size_t position = 0;
  for (nb::handle a : args) {
    if (a.is_none()) call.inputs.push_back(nullptr);
    else if (nb::isinstance<Value>(a)) call.inputs.push_back(nb::cast<Value*>(a));
    else {
      throw nb::type_error((what + ": input " + std::to_string(position) +
                            " must be a Value (use g.const(array) for constants) or None")
                               .c_str());
    }
    ++position;
  }
  for (auto [key, value] : kwargs) {
    const std::string name = nb::cast<std::string>(key);
    if (name == "domain") {
      if (!nb::isinstance<nb::str>(value)) throw nb::type_error((what + ": domain must be a string").c_str());
      call.domain = nb::cast<std::string>(value);
    } else if (name == "outputs") {
      // ONNX ops have a handful of outputs; a bound keeps a typo from
      // allocating millions of values.
      constexpr int64_t kMaxOutputs = 1 << 16;
      const int64_t n = PyBool_Check(value.ptr()) || !is_int_like(value) ? -1 : int64_from_python(value, "outputs");
      if (n < 1 || n > kMaxOutputs) {
        throw nb::value_error((what + ": outputs must be an int from 1 to " + std::to_string(kMaxOutputs)).c_str());
      }
      call.n_outputs = static_cast<size_t>(n);
    } else if (name == "output_dtypes") {
      if (!nb::isinstance<nb::list>(value) && !nb::isinstance<nb::tuple>(value)) {
        throw nb::type_error((what + ": output_dtypes must be a list of dtype names").c_str());
      }
      for (nb::handle item : nb::borrow<nb::sequence>(value)) {
        if (!nb::isinstance<nb::str>(item)) throw nb::type_error((what + ": output_dtypes must be dtype names").c_str());
        dtype_from_name(nb::cast<std::string>(item));  // throws ValueError for a name ONNX lacks
        call.output_dtypes.push_back(nb::cast<std::string>(item));
      }
    } else if (name == "node_name") {
      if (!nb::isinstance<nb::str>(value)) throw nb::type_error((what + ": node_name must be a string").c_str());
      call.node_name = nb::cast<std::string>(value);
    } else if (!value.is_none()) {
      call.attrs.set(name, attribute_from_python(name, value));
    }
  }
  if (!call.output_dtypes.empty() && call.output_dtypes.size() != call.n_outputs) {
    throw nb::value_error("output_dtypes needs one dtype per output");
  }
  return call;
}

void declare_dtypes(const std::string& op_type, std::vector<Value*>& outs, const std::vector<std::string>& dtypes) {
  for (size_t i = 0; i < dtypes.size(); ++i) {
    const DType declared = dtype_from_name(dtypes[i]);
    if (outs[i]->dtype != DType::Undefined && outs[i]->dtype != declared) {
      throw nb::value_error((op_type + ": output " + std::to_string(i) + " has dtype " + dtype_name(outs[i]->dtype) +
                             ", not the declared " + dtypes[i])
                                .c_str());
    }
    outs[i]->dtype = declared;
  }
}

nb::object wrap_outputs(GraphBuilder& g, const std::vector<Value*>& outs, size_t n_outputs) {
  nb::handle self = nb::find(g);
  auto wrap = [&](Value* v) { return nb::cast(v, nb::rv_policy::reference_internal, self); };
  if (n_outputs == 1 && outs.size() == 1) return wrap(outs[0]);
  nb::list result;
  for (Value* v : outs) result.append(wrap(v));
  return nb::tuple(result);
}

// Packed inputs or outputs (passes/pack_small_arrays.h) as Python sees
// them: (name, element names, element shapes).
using PackedTuple = std::tuple<std::string, std::vector<std::string>, std::vector<std::vector<int64_t>>>;
std::vector<PackedTuple> packed_tuples(std::vector<PackedArrays> made) {
  std::vector<PackedTuple> tuples;
  for (PackedArrays& packed : made) {
    tuples.emplace_back(std::move(packed.name), std::move(packed.elements), std::move(packed.shapes));
  }
  return tuples;
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "C++ core of pytensor-onnx: IR, builder with opset adaptation, passes, serialization";

  nb::exception<BuildError>(m, "OnnxBuildError", PyExc_ValueError);
  nb::exception<UnsupportedError>(m, "OnnxUnsupportedError", PyExc_NotImplementedError);
#ifdef PYTENSOR_ONNX_NATIVE_RUNTIME
  bind_runtime(m);
#endif
  bind_cell_thunk(m);

  m.attr("MIN_OPSET") = kMinOpset;
  m.attr("MAX_KNOWN_OPSET") = kMaxKnownOpset;
  m.def("ir_version_for_opset", &ir_version_for_opset, nb::arg("opset"));
  m.def(
      "recipes",
      [] {
        std::vector<std::pair<std::string, std::string>> list;
        for (const auto& info : recipes::all_recipes()) list.emplace_back(info.name, info.doc);
        return list;
      },
      "(name, description) of every recipe g.recipe can build.");
  m.def("op_since_version", &op_since_version, nb::arg("op_type"),
        "First opset of the default domain that has `op_type`, or None.");
  m.def(
      "bake_inputs",
      [](nb::bytes model, const std::vector<std::string>& names, const std::vector<nb::handle>& arrays,
         const std::string& external_location) {
        if (arrays.size() != names.size()) throw nb::value_error("bake_inputs: one array per name");
        BakedModel baked = bake_inputs(std::string(model.c_str(), model.size()), names,
                                       [&arrays](size_t i) { return tensor_from_array(arrays[i]); }, external_location);
        return std::make_pair(nb::bytes(baked.bytes.data(), baked.bytes.size()), std::move(baked.baked));
      },
      nb::arg("model"), nb::arg("names"), nb::arg("arrays"), nb::arg("external_location") = "",
      "The model with the graph inputs `names` replaced by initializers of `arrays` (C-contiguous), and the names "
      "baked: those the graph reads (ONNX Runtime drops unread initializers, then fails to bind them). With an "
      "`external_location` the initializers are placeholders with external data there, for ONNX Runtime's "
      "add_external_initializers.");
  m.def(
      "ort_kernel_dtypes",
      [](const std::string& op, int opset) -> std::optional<std::vector<std::string>> {
        auto types = ort_kernel_dtypes(op, opset);
        if (!types) return std::nullopt;
        std::vector<std::string> names;
        for (DType t : *types) names.push_back(dtype_name(t));
        return names;
      },
      nb::arg("op_type"), nb::arg("opset"),
      "Dtypes ONNX Runtime's CPU kernels run for `op_type` at `opset` (None: no known gap).");

  nb::class_<Value>(m, "Value", "A tensor value in the graph being built.")
      .def_prop_ro("name", [](const Value& v) { return v.name; })
      .def_prop_ro("dtype", [](const Value& v) { return dtype_name(v.dtype); })
      .def_prop_ro("shape", [](const Value& v) { return shape_to_python(v.shape); },
                   "Tuple of int (static), str (named) or None (unknown) per dim; None if the rank is unknown.")
      .def_prop_ro("rank", [](const Value& v) { return v.rank(); })
      .def_prop_ro("is_constant", [](const Value& v) { return v.is_constant(); })
      .def_prop_ro("constant_value", &constant_to_numpy,
                   "A NumPy copy of the value if it is a constant (initializer), else None.")
      .def("__repr__", [](const Value& v) {
        return "<Value " + v.name + ": " + dtype_name(v.dtype) + ">";
      });

  nb::class_<GraphBuilder>(m, "GraphBuilder", "Builds one ONNX graph at a fixed opset.")
      .def(
          "__init__",
          [](GraphBuilder* self, int opset, const std::string& name, bool inline_functions) {
            new (self) GraphBuilder(opset, name, !inline_functions);
          },
          nb::arg("opset"), nb::arg("name") = "main", nb::arg("inline_functions") = false,
          "A builder of one model. Recipes become model-local functions (domain 'pytensor_onnx') unless "
          "inline_functions is true, which builds every recipe inline.")
      .def(
          "subgraph", [](GraphBuilder& self, const std::string& name) { return std::make_unique<GraphBuilder>(self, name); },
          nb::arg("name"), nb::keep_alive<0, 1>(), "A builder for an If/Loop body that may read this graph's values.")
      .def_prop_ro("opset", &GraphBuilder::opset)
      .def_prop_ro("num_nodes", [](const GraphBuilder& g) { return g.graph().num_nodes(); })
      .def(
          "input",
          [](GraphBuilder& g, const std::string& name, const std::string& dtype, nb::handle shape) {
            return g.input(name, dtype_from_name(dtype), shape_from_python(shape));
          },
          nb::arg("name"), nb::arg("dtype"), nb::arg("shape").none(), nb::rv_policy::reference_internal)
      .def(
          "const", [](GraphBuilder& g, nb::handle array, const std::string& name) { return g.constant(tensor_from_array(array), name); },
          nb::arg("array"), nb::arg("name") = "const", nb::rv_policy::reference_internal,
          "An initializer holding `array` (a C-contiguous NumPy array; not copied until serialization).")
      .def(
          "op",
          [](GraphBuilder& g, const std::string& op_type, nb::args args, nb::kwargs kwargs) -> nb::object {
            Call call = parse_call(op_type, args, kwargs);
            std::vector<Value*> outs = g.op(op_type, std::move(call.inputs), std::move(call.attrs), call.n_outputs,
                                            call.domain);
            // Ops of custom domains have no inference here: the rule states their dtypes.
            declare_dtypes(op_type, outs, call.output_dtypes);
            // ONNX Runtime names the failing node in its errors: a rule can make
            // a run-time check recognisable by naming the node that performs it.
            if (!call.node_name.empty() && !outs.empty() && outs[0]->producer && g.graph().owns(outs[0])) {
              outs[0]->producer->name = g.graph().unique_node_name(call.node_name);
            }
            return wrap_outputs(g, outs, call.n_outputs);
          },
          nb::arg("op_type"), nb::arg("args"), nb::arg("kwargs"),
          "Emit an ONNX op: g.op(type, *inputs, domain='', outputs=1, output_dtypes=None, node_name=None, "
          "**attributes). "
          "Attributes may be given in any form the op has at any opset (e.g. axes=[...]); the builder writes "
          "the target opset's form. output_dtypes declares the dtypes of a custom-domain op's outputs.")
      .def(
          "recipe",
          [](GraphBuilder& g, const std::string& name, nb::args args, nb::kwargs kwargs) -> nb::object {
            Call call = parse_call(name, args, kwargs);
            std::vector<Value*> outs = g.recipe(name, call.inputs, call.attrs);
            return wrap_outputs(g, outs, outs.size());
          },
          nb::arg("name"), nb::arg("args"), nb::arg("kwargs"),
          "Build a named recipe of the C++ library (pytensor_onnx._core.recipes() lists them): "
          "g.recipe(name, *inputs, **attributes); returns a Value, or a tuple for several outputs.")
      .def(
          "cast", [](GraphBuilder& g, Value* v, const std::string& dtype) { return g.cast(v, dtype_from_name(dtype)); },
          nb::arg("value"), nb::arg("dtype"), nb::rv_policy::reference_internal)
      .def(
          "output",
          [](GraphBuilder& g, Value* value, const std::string& name, nb::handle shape) {
            g.output(value, name, shape_from_python(shape));
          },
          nb::arg("value"), nb::arg("name"), nb::arg("shape").none() = nb::none(),
          "Mark `value` as graph output `name`; `shape` (int, str or None per dim) declares a shape inference "
          "could not give (every main-graph output needs a rank).")
      .def("require_domain", &GraphBuilder::require_domain, nb::arg("domain"), nb::arg("version"))
      .def(
          "optimize",
          [](GraphBuilder& g, bool fold, bool cse) {
            PassOptions options;
            options.fold_constants = fold;
            options.cse = cse;
            return optimize_model(g.graph(), g.functions(), options);
          },
          nb::arg("fold_constants") = true, nb::arg("cse") = true,
          "Run dead-node elimination, constant folding of shape arithmetic, initializer dedup, CSE and "
          "cast/identity cleanup to a fixed point, on the main graph and every function body.")
      .def(
          "stage_programs",
          [](GraphBuilder& g) {
            std::vector<std::tuple<std::string, std::string, std::vector<int64_t>, std::vector<bool>>> programs;
            for (StageProgram& p : stage_programs(g.graph())) {
              programs.emplace_back(std::move(p.input_dtypes), std::move(p.program), std::move(p.output_registers),
                                    std::move(p.scalar_inputs));
            }
            return programs;
          },
          "The element-wise programs of the graph's Elemwise kernel nodes (and of its If/Loop bodies), each "
          "once: (input_dtypes, program, output_registers, scalar_inputs) per program stage, the attributes the "
          "kernel library looks compiled code up by and which inputs hold one element whatever the run.")
      .def(
          "record_input_shapes_in_kernels",
          [](GraphBuilder& g, bool scalar_ranks_checked) {
            return record_input_shapes_in_kernels(g.graph(), scalar_ranks_checked);
          },
          nb::arg("scalar_ranks_checked"),
          "Give the Elemwise kernel nodes the static shapes of the graph inputs they read (attribute "
          "`input_shapes`), checked before each run: by ONNX Runtime for rank >= 1, by the caller for rank 0 "
          "(`scalar_ranks_checked`). For mode ONNX's models only. Returns whether anything changed.")
      .def(
          "pack_small_outputs_of_kernels",
          [](GraphBuilder& g) { return packed_tuples(pack_small_outputs_of_kernels(g.graph())); },
          "Make the small float64 arrays (scalars, and arrays of static shape of at most 256 elements) an Elemwise "
          "kernel node gives as graph outputs (two or more, read by nothing else) one vector output of the node. "
          "For mode ONNX's native sessions only, which split it again. Returns (packed output, [names of the graph "
          "outputs that are its elements], [their shapes]) per packed output.")
      .def(
          "pack_small_inputs_of_kernels",
          [](GraphBuilder& g, const std::vector<std::string>& kept) {
            return packed_tuples(
                pack_small_inputs_of_kernels(g.graph(), std::unordered_set<std::string>(kept.begin(), kept.end())));
          },
          nb::arg("kept"),
          "Make the small float64 graph inputs that only Elemwise kernel nodes read (two or more; not those named "
          "in `kept`) one vector input. For mode ONNX's native sessions only, which gather it. Returns (packed "
          "input, [names of the graph inputs that are its elements], [their shapes]), if one was made.")
      .def(
          "demote_float64",
          [](GraphBuilder& g) { return demote_float64_to_float32(g.graph()); },
          "Make every float64 value, initializer and dtype attribute float32 (float32 export); run "
          "optimize() afterwards to drop the Casts that became no-ops. Returns whether anything changed.")
      .def(
          "initializer_nbytes",
          [](const GraphBuilder& g) {
            size_t total = 0;
            for (const Value* v : g.graph().initializers()) total += v->constant->nbytes();
            return total;
          },
          "Bytes held by the main graph's initializers (what decides whether a model needs external data).")
      .def(
          "functions",
          [](const GraphBuilder& g) {
            std::vector<std::pair<std::string, size_t>> list;
            if (g.functions()) {
              for (const Function* f : functions_called(g.graph(), *g.functions())) {
                list.emplace_back(f->name, f->body->num_nodes());
              }
            }
            return list;
          },
          "(name, number of body nodes) of each model-local function the graph calls, callees first.")
      .def("node_types", [](const GraphBuilder& g) {
        std::vector<std::string> types;
        for (const Node* n : g.graph().nodes()) types.push_back(n->op_type);
        return types;
      })
      .def(
          "serialize",
          [](const GraphBuilder& g, const std::string& graph_name, const std::string& doc_string,
             const std::string& producer_version, const std::string& external_data_path,
             const std::string& external_data_location, size_t external_data_threshold,
             std::vector<std::pair<std::string, std::string>> metadata, std::map<std::string, std::string> value_docs) {
            ModelOptions options;
            options.metadata = std::move(metadata);
            options.value_docs = std::move(value_docs);
            options.graph_name = graph_name;
            options.doc_string = doc_string;
            options.producer_version = producer_version;
            options.external_data_path = external_data_path;
            options.external_data_location = external_data_location;
            options.external_data_threshold = external_data_threshold;
            std::string bytes;
            {
              nb::gil_scoped_release release;
              bytes = serialize_model(g, options);
            }
            return nb::bytes(bytes.data(), bytes.size());
          },
          nb::arg("graph_name") = "", nb::arg("doc_string") = "", nb::arg("producer_version") = "",
          nb::arg("external_data_path") = "", nb::arg("external_data_location") = "",
          nb::arg("external_data_threshold") = 1024,
          nb::arg("metadata") = std::vector<std::pair<std::string, std::string>>{},
          nb::arg("value_docs") = std::map<std::string, std::string>{},
          "The ModelProto bytes; `metadata` becomes metadata_props, `value_docs` the doc_string of graph "
          "inputs and outputs by name.");
}
