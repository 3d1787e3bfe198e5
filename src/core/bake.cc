#include "bake.h"

#include <unordered_set>

#include "errors.h"
#include "onnx_isolated.pb.h"

namespace pytensor_onnx {
namespace pb = ::pytensor_onnx_pb;
namespace {

// Names of the values the nodes of `graph` and of its subgraphs read, and of
// its outputs.
void collect_reads(const pb::GraphProto& graph, std::unordered_set<std::string>& read) {
  for (const pb::NodeProto& node : graph.node()) {
    read.insert(node.input().begin(), node.input().end());
    for (const pb::AttributeProto& attr : node.attribute()) {
      if (attr.type() == pb::AttributeProto::GRAPH) {
        collect_reads(attr.g(), read);
      } else if (attr.type() == pb::AttributeProto::GRAPHS) {
        for (const pb::GraphProto& sub : attr.graphs()) collect_reads(sub, read);
      }
    }
  }
  for (const pb::ValueInfoProto& out : graph.output()) read.insert(out.name());
}

}  // namespace

BakedModel bake_inputs(const std::string& model_bytes, const std::vector<std::string>& names,
                       const std::function<Tensor(size_t)>& value_of, const std::string& external_location) {
  pb::ModelProto model;
  if (!model.ParseFromString(model_bytes)) throw BuildError("bake_inputs: the bytes are not an ONNX ModelProto");
  pb::GraphProto& graph = *model.mutable_graph();
  const std::unordered_set<std::string> baked(names.begin(), names.end());
  // The other inputs keep their order.
  auto& inputs = *graph.mutable_input();
  int kept = 0;
  for (int i = 0; i < inputs.size(); ++i) {
    if (baked.count(inputs.Get(i).name())) continue;
    if (kept != i) inputs.SwapElements(kept, i);
    ++kept;
  }
  inputs.DeleteSubrange(kept, inputs.size() - kept);
  std::unordered_set<std::string> read;
  collect_reads(graph, read);
  BakedModel result;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!read.count(names[i])) continue;
    const Tensor value = value_of(i);
    pb::TensorProto& tensor = *graph.add_initializer();
    tensor.set_name(names[i]);
    tensor.set_data_type(static_cast<int32_t>(value.dtype()));
    for (int64_t d : value.dims()) tensor.add_dims(d);
    if (external_location.empty()) {
      tensor.set_raw_data(value.nbytes() ? std::string(reinterpret_cast<const char*>(value.data()), value.nbytes())
                                         : std::string());
    } else {
      tensor.set_data_location(pb::TensorProto::EXTERNAL);
      pb::StringStringEntryProto& entry = *tensor.add_external_data();
      entry.set_key("location");
      entry.set_value(external_location);
    }
    result.baked.push_back(names[i]);
  }
  result.bytes = model.SerializeAsString();
  return result;
}

}  // namespace pytensor_onnx
