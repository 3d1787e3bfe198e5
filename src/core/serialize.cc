#include "serialize.h"

#include <fstream>
#include <map>
#include <set>
#include <utility>

#include "errors.h"
#include "functions.h"
#include "onnx_isolated.pb.h"
#include "opset.h"

namespace pytensor_onnx {
namespace pb = ::pytensor_onnx_pb;
namespace {

constexpr size_t kExternalAlignment = 4096;

class ExternalDataWriter {
 public:
  ExternalDataWriter(const ModelOptions& options) : options_(options) {
    if (!options.external_data_path.empty()) {
      file_.open(options.external_data_path, std::ios::binary | std::ios::trunc);
      if (!file_) throw BuildError("cannot open external data file '" + options.external_data_path + "' for writing");
    }
  }
  bool wants(const Tensor& t) const { return file_.is_open() && t.nbytes() >= options_.external_data_threshold; }
  void write(const Tensor& t, pb::TensorProto& proto) {
    // Views of one buffer (a weight and its folded reshape) share one copy in the file.
    const auto key = std::make_pair(static_cast<const void*>(t.data()), t.nbytes());
    auto written = offsets_.find(key);
    if (written != offsets_.end()) {
      record(proto, written->second, t.nbytes());
      return;
    }
    const size_t padding = (kExternalAlignment - offset_ % kExternalAlignment) % kExternalAlignment;
    static const char zeros[kExternalAlignment] = {};
    file_.write(zeros, static_cast<std::streamsize>(padding));
    offset_ += padding;
    file_.write(reinterpret_cast<const char*>(t.data()), static_cast<std::streamsize>(t.nbytes()));
    if (!file_) throw BuildError("writing external data to '" + options_.external_data_path + "' failed");
    offsets_[key] = offset_;
    record(proto, offset_, t.nbytes());
    offset_ += t.nbytes();
  }

 private:
  void record(pb::TensorProto& proto, size_t offset, size_t length) {
    proto.set_data_location(pb::TensorProto::EXTERNAL);
    add_entry(proto, "location", options_.external_data_location);
    add_entry(proto, "offset", std::to_string(offset));
    add_entry(proto, "length", std::to_string(length));
  }

  static void add_entry(pb::TensorProto& proto, const std::string& key, const std::string& value) {
    auto* entry = proto.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  const ModelOptions& options_;
  std::ofstream file_;
  size_t offset_ = 0;
  std::map<std::pair<const void*, size_t>, size_t> offsets_;
};

void fill_tensor(const Tensor& t, const std::string& name, pb::TensorProto& proto, ExternalDataWriter* external) {
  proto.set_name(name);
  proto.set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.dims()) proto.add_dims(d);
  if (external && external->wants(t)) {
    external->write(t, proto);
  } else {
    proto.set_raw_data(t.data(), t.nbytes());
  }
}

void fill_value_info(const Value& v, pb::ValueInfoProto& proto) {
  if (v.dtype == DType::Undefined) {
    throw BuildError("graph input/output '" + v.name + "' has no known dtype");
  }
  proto.set_name(v.name);
  auto* tensor_type = proto.mutable_type()->mutable_tensor_type();
  tensor_type->set_elem_type(static_cast<int32_t>(v.dtype));
  if (!v.shape) return;
  auto* shape = tensor_type->mutable_shape();
  for (const Dim& d : *v.shape) {
    auto* dim = shape->add_dim();
    if (d.is_known()) dim->set_dim_value(d.size);
    else if (d.is_named()) dim->set_dim_param(d.symbol);
  }
}

// Where a graph's constants go: initializers, or Constant nodes (in function
// bodies, which have no initializers, and in their If/Loop bodies).
enum class ConstantsAs { kInitializers, kNodes };

void fill_graph(const Graph& graph, pb::GraphProto& proto, ExternalDataWriter* external, ConstantsAs constants);

void fill_attribute(const Attribute& attr, pb::AttributeProto& proto, ExternalDataWriter* external,
                    ConstantsAs constants) {
  proto.set_name(attr.name);
  std::visit(
      [&](const auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          proto.set_type(pb::AttributeProto::INT);
          proto.set_i(value);
        } else if constexpr (std::is_same_v<T, double>) {
          proto.set_type(pb::AttributeProto::FLOAT);
          proto.set_f(static_cast<float>(value));
        } else if constexpr (std::is_same_v<T, std::string>) {
          proto.set_type(pb::AttributeProto::STRING);
          proto.set_s(value);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          proto.set_type(pb::AttributeProto::INTS);
          for (int64_t i : value) proto.add_ints(i);
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          proto.set_type(pb::AttributeProto::FLOATS);
          for (double f : value) proto.add_floats(static_cast<float>(f));
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          proto.set_type(pb::AttributeProto::STRINGS);
          for (const auto& s : value) proto.add_strings(s);
        } else if constexpr (std::is_same_v<T, Tensor>) {
          proto.set_type(pb::AttributeProto::TENSOR);
          fill_tensor(value, "", *proto.mutable_t(), nullptr);
        } else {
          proto.set_type(pb::AttributeProto::GRAPH);
          fill_graph(*value, *proto.mutable_g(), external, constants);
        }
      },
      attr.value);
}

// The graph's constants as Constant nodes, then its nodes.
template <class NodeList>
void fill_nodes(const Graph& graph, NodeList& add_node, ExternalDataWriter* external, ConstantsAs constants) {
  if (constants == ConstantsAs::kNodes) {
    for (const Value* init : graph.initializers()) {
      auto* n = add_node();
      n->set_op_type("Constant");
      n->set_name(init->name + "_constant");
      n->add_output(init->name);
      auto* attr = n->add_attribute();
      attr->set_name("value");
      attr->set_type(pb::AttributeProto::TENSOR);
      fill_tensor(*init->constant, "", *attr->mutable_t(), nullptr);
    }
  }
  for (const Node* node : graph.nodes()) {
    auto* n = add_node();
    n->set_op_type(node->op_type);
    n->set_name(node->name);
    if (!node->domain.empty()) n->set_domain(node->domain);
    for (const Value* in : node->inputs) n->add_input(in ? in->name : "");
    for (const Value* out : node->outputs) n->add_output(out->name);
    for (const auto& attr : node->attrs.items()) fill_attribute(attr, *n->add_attribute(), external, constants);
  }
}

void fill_graph(const Graph& graph, pb::GraphProto& proto, ExternalDataWriter* external, ConstantsAs constants) {
  proto.set_name(graph.name());
  for (const Value* in : graph.inputs()) fill_value_info(*in, *proto.add_input());
  if (constants == ConstantsAs::kInitializers) {
    for (const Value* init : graph.initializers()) {
      fill_tensor(*init->constant, init->name, *proto.add_initializer(), external);
    }
  }
  auto add_node = [&] { return proto.add_node(); };
  fill_nodes(graph, add_node, external, constants);
  for (const Value* out : graph.outputs()) fill_value_info(*out, *proto.add_output());
}

// Documentation of the main graph's inputs and outputs; a name that is
// neither is a caller's mistake, not something to drop silently.
void add_docs(const std::map<std::string, std::string>& docs, pb::GraphProto& graph) {
  std::set<std::string> used;
  auto document = [&](pb::ValueInfoProto& info) {
    auto found = docs.find(info.name());
    if (found == docs.end()) return;
    info.set_doc_string(found->second);
    used.insert(found->first);
  };
  for (auto& info : *graph.mutable_input()) document(info);
  for (auto& info : *graph.mutable_output()) document(info);
  for (const auto& [name, doc] : docs) {
    if (!used.count(name)) throw BuildError("documentation given for '" + name + "', which is not a graph input or output");
  }
}

void fill_function(const Function& function, const GraphBuilder& builder, pb::FunctionProto& proto) {
  proto.set_name(function.name);
  proto.set_domain(kFunctionDomain);
  if (!function.doc.empty()) proto.set_doc_string(function.doc);
  const Graph& body = *function.body;
  for (const Value* in : body.inputs()) proto.add_input(in->name);
  for (const Value* out : body.outputs()) proto.add_output(out->name);
  auto add_node = [&] { return proto.add_node(); };
  fill_nodes(body, add_node, nullptr, ConstantsAs::kNodes);
  auto* opset = proto.add_opset_import();
  opset->set_domain("");
  opset->set_version(builder.opset());
  // Bodies may call other functions and use the model's extra domains.
  auto* own = proto.add_opset_import();
  own->set_domain(kFunctionDomain);
  own->set_version(kFunctionDomainVersion);
  for (const auto& [domain, version] : builder.extra_domains()) {
    auto* extra = proto.add_opset_import();
    extra->set_domain(domain);
    extra->set_version(version);
  }
}

}  // namespace

std::string serialize_model(const GraphBuilder& builder, const ModelOptions& options) {
  pb::ModelProto model;
  std::vector<const Function*> functions;
  if (builder.functions()) functions = functions_called(builder.graph(), *builder.functions());
  // Model-local functions need IR version 8.
  constexpr int kFunctionsIrVersion = 8;
  const int ir_version = ir_version_for_opset(builder.opset());
  model.set_ir_version(functions.empty() ? ir_version : std::max(ir_version, kFunctionsIrVersion));
  model.set_producer_name(options.producer_name);
  if (!options.producer_version.empty()) model.set_producer_version(options.producer_version);
  if (!options.doc_string.empty()) model.set_doc_string(options.doc_string);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(builder.opset());
  for (const auto& [domain, version] : builder.extra_domains()) {
    auto* extra = model.add_opset_import();
    extra->set_domain(domain);
    extra->set_version(version);
  }
  if (!functions.empty()) {
    auto* own = model.add_opset_import();
    own->set_domain(kFunctionDomain);
    own->set_version(kFunctionDomainVersion);
  }
  for (const Function* function : functions) fill_function(*function, builder, *model.add_functions());
  ExternalDataWriter external(options);
  fill_graph(builder.graph(), *model.mutable_graph(), &external, ConstantsAs::kInitializers);
  if (!options.graph_name.empty()) model.mutable_graph()->set_name(options.graph_name);
  add_docs(options.value_docs, *model.mutable_graph());
  std::set<std::string> keys;
  for (const auto& [key, value] : options.metadata) {
    if (!keys.insert(key).second) throw BuildError("metadata key '" + key + "' given twice");
    auto* entry = model.add_metadata_props();
    entry->set_key(key);
    entry->set_value(value);
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    throw BuildError("protobuf serialization failed (a model over 2 GiB needs external data: pass a filename)");
  }
  return bytes;
}

}  // namespace pytensor_onnx
