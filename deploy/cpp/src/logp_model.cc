#include "logp_model.h"

#include <fstream>

#include "errors.h"
#include "json_values.h"
#include "runtime.h"

namespace pymc_logp {

namespace {

Ort::MemoryInfo cpu_memory() {
  ort_env();  // initializes the API the MemoryInfo is made with
  return Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
}

ONNXTensorElementDataType element_type(Dtype dtype) {
  return dtype == Dtype::kFloat64 ? ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE : ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
}

// (the dtypes parse_layout accepts for data inputs)
ONNXTensorElementDataType element_type(const std::string& dtype) {
  if (dtype == "float64") return ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE;
  if (dtype == "float32") return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
  if (dtype == "int64") return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
  return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32;
}

const char* dtype_name(ONNXTensorElementDataType type) {
  switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return "float64";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return "float32";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return "int64";
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: return "int32";
    default: return "another type";
  }
}

// A model input's or output's name, element type and dims (-1: unknown).
struct Port {
  std::string name;
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  std::vector<int64_t> dims;
};

Port describe(const std::string& name, const Ort::TypeInfo& info) {
  Port port{name, ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, {}};
  if (info.GetONNXType() == ONNX_TYPE_TENSOR) {
    auto tensor = info.GetTensorTypeAndShapeInfo();
    port.type = tensor.GetElementType();
    port.dims = tensor.GetShape();
  }
  return port;
}

std::vector<Port> inputs_of(const Ort::Session& session) {
  Ort::AllocatorWithDefaultOptions allocator;
  std::vector<Port> ports;
  for (size_t i = 0; i < session.GetInputCount(); ++i) {
    ports.push_back(describe(session.GetInputNameAllocated(i, allocator).get(), session.GetInputTypeInfo(i)));
  }
  return ports;
}

std::vector<Port> outputs_of(const Ort::Session& session) {
  Ort::AllocatorWithDefaultOptions allocator;
  std::vector<Port> ports;
  for (size_t i = 0; i < session.GetOutputCount(); ++i) {
    ports.push_back(describe(session.GetOutputNameAllocated(i, allocator).get(), session.GetOutputTypeInfo(i)));
  }
  return ports;
}

std::string names_of(const std::vector<Port>& ports) {
  std::string out;
  for (const Port& p : ports) out += (out.empty() ? "" : ", ") + p.name;
  return out.empty() ? "none" : out;
}

// The port named `name`, which must hold `type` values of the given dims
// (-1, in the model or expected: any size); a mismatch names both sides.
void check_port(const std::vector<Port>& ports, const std::string& what, const std::string& name,
                ONNXTensorElementDataType type, const std::vector<int64_t>& dims) {
  for (const Port& p : ports) {
    if (p.name != name) continue;
    bool dims_fit = p.dims.size() == dims.size();
    for (size_t i = 0; dims_fit && i < dims.size(); ++i) dims_fit = p.dims[i] == dims[i] || p.dims[i] < 0 || dims[i] < 0;
    if (p.type != type || !dims_fit) {
      throw Error("the layout does not match the model: its " + what + " \"" + name + "\" should be " +
                  dtype_name(type) + " of shape " + shape_string(dims) + ", but the model's is " +
                  dtype_name(p.type) + " of shape " + shape_string(p.dims));
    }
    return;
  }
  throw Error("the layout does not match the model: it names the " + what + " \"" + name +
              "\", which the model does not have (the model's " + what + "s: " + names_of(ports) + ")");
}

std::unique_ptr<Ort::Session> open_session(const std::string& path, int threads) {
  if (!std::ifstream(path).good()) throw Error("cannot read the model file " + path);
  Ort::Env& env = ort_env();
  Ort::SessionOptions options;
  options.SetIntraOpNumThreads(threads);
  options.SetInterOpNumThreads(1);
  try {
    return std::make_unique<Ort::Session>(env, path.c_str(), options);
  } catch (const Ort::Exception& e) {
    throw Error("ONNX Runtime cannot load " + path + " as an ONNX model: " + e.what());
  }
}

std::string read_layout_json(Ort::Session& session, const std::string& path) {
  Ort::AllocatorWithDefaultOptions allocator;
  Ort::ModelMetadata metadata = session.GetModelMetadata();
  Ort::AllocatedStringPtr value = metadata.LookupCustomMetadataMapAllocated(kLayoutKey, allocator);
  if (!value) {
    throw Error(path + " has no \"" + std::string(kLayoutKey) +
                "\" metadata (the layout): export the model with pytensor_onnx.pymc.export_logp(model, filename, "
                "flat=True)");
  }
  return value.get();
}

}  // namespace

LogpModel::LogpModel(const std::string& path, int threads)
    : path_(path), session_(open_session(path, threads)), memory_(cpu_memory()) {
  layout_json_ = read_layout_json(*session_, path_);
  try {
    layout_ = parse_layout(layout_json_);
  } catch (const Error& e) {
    throw Error(path_ + ": " + e.what());
  }
  check_against_model();
  data_.resize(layout_.data.size());
}

void LogpModel::check_against_model() const {
  const std::vector<Port> inputs = inputs_of(*session_);
  const ONNXTensorElementDataType type = element_type(layout_.dtype);
  check_port(inputs, "input", layout_.input, type, {layout_.size});
  for (const DataInput& d : layout_.data) {
    check_port(inputs, "input", d.name, element_type(d.dtype), std::vector<int64_t>(d.ndim, -1));
  }
  if (inputs.size() != 1 + layout_.data.size()) {
    throw Error("the layout does not match the model: the model has inputs the layout does not describe (" +
                names_of(inputs) + ")");
  }
  const std::vector<Port> outputs = outputs_of(*session_);
  check_port(outputs, "output", layout_.logp_output, type, {});
  if (layout_.gradient_output) check_port(outputs, "output", *layout_.gradient_output, type, {layout_.size});
}

void LogpModel::set_data(const std::string& name, const nlohmann::json& value) {
  for (size_t i = 0; i < layout_.data.size(); ++i) {
    if (layout_.data[i].name == name) {
      data_[i] = std::make_unique<DataValue>(layout_.data[i], value);
      return;
    }
  }
  std::string names;
  for (const DataInput& d : layout_.data) names += (names.empty() ? "" : ", ") + d.name;
  throw Error("the model has no pm.Data input \"" + name + "\" (" +
              (names.empty() ? std::string("it has none") : "it has " + names) + ")");
}

namespace {

template <typename T>
Ort::Value make_input(const Ort::MemoryInfo& memory, std::vector<T>& values) {
  const int64_t dims[1] = {static_cast<int64_t>(values.size())};
  return Ort::Value::CreateTensor<T>(memory, values.data(), values.size(), dims, 1);
}

template <typename T>
std::vector<double> read_output(const Ort::Value& value) {
  const size_t n = value.GetTensorTypeAndShapeInfo().GetElementCount();
  const T* data = value.GetTensorData<T>();
  return std::vector<double>(data, data + n);
}

}  // namespace

Evaluation LogpModel::evaluate(const std::vector<double>& point) {
  if (static_cast<int64_t>(point.size()) != layout_.size) {
    throw Error("the point has " + std::to_string(point.size()) + (point.size() == 1 ? " value" : " values") +
                ", but the model takes " + std::to_string(layout_.size) + ": " + describe_variables(layout_));
  }
  std::string unset;
  for (size_t i = 0; i < data_.size(); ++i) {
    if (!data_[i]) unset += (unset.empty() ? "" : ", ") + layout_.data[i].name;
  }
  if (!unset.empty()) {
    throw Error("the model takes the pm.Data input(s) " + unset +
                ", which have no value: set them (LogpModel::set_data; the program's --data)");
  }
  // The input tensors borrow these buffers (float32 models: a converted copy).
  std::vector<double> as_double = point;
  std::vector<float> as_float;
  std::vector<Ort::Value> inputs;
  if (layout_.dtype == Dtype::kFloat64) {
    inputs.push_back(make_input(memory_, as_double));
  } else {
    as_float.assign(point.begin(), point.end());
    inputs.push_back(make_input(memory_, as_float));
  }
  std::vector<const char*> input_names = {layout_.input.c_str()};
  for (size_t i = 0; i < data_.size(); ++i) {
    inputs.push_back(data_[i]->tensor(memory_));
    input_names.push_back(layout_.data[i].name.c_str());
  }
  std::vector<const char*> output_names = {layout_.logp_output.c_str()};
  if (layout_.gradient_output) output_names.push_back(layout_.gradient_output->c_str());

  std::vector<Ort::Value> outputs;
  try {
    outputs = session_->Run(Ort::RunOptions{nullptr}, input_names.data(), inputs.data(), inputs.size(),
                            output_names.data(), output_names.size());
  } catch (const Ort::Exception& e) {
    throw Error(std::string("ONNX Runtime failed to evaluate the model: ") + e.what());
  }
  auto read = [this](const Ort::Value& v) {
    return layout_.dtype == Dtype::kFloat64 ? read_output<double>(v) : read_output<float>(v);
  };
  Evaluation result;
  const std::vector<double> logp = read(outputs[0]);
  if (logp.size() != 1) throw Error("the model's logp output holds " + std::to_string(logp.size()) + " values, not 1");
  result.logp = logp[0];
  if (layout_.gradient_output) {
    result.gradient = read(outputs[1]);
    if (static_cast<int64_t>(result.gradient.size()) != layout_.size) {
      throw Error("the model's gradient holds " + std::to_string(result.gradient.size()) + " values, not " +
                  std::to_string(layout_.size));
    }
  }
  return result;
}

}  // namespace pymc_logp
