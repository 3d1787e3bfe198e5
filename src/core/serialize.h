// ModelProto bytes from a built graph, via the protobuf classes generated
// from the installed onnx package's onnx.proto into an isolated namespace.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "builder.h"

namespace pytensor_onnx {

struct ModelOptions {
  std::string producer_name = "pytensor-onnx";
  std::string producer_version;
  std::string graph_name;  // empty: keep the graph's name
  std::string doc_string;
  // ModelProto.metadata_props, in this order (keys must be unique).
  std::vector<std::pair<std::string, std::string>> metadata;
  // doc_string of the main graph's inputs and outputs, by name.
  std::map<std::string, std::string> value_docs;
  // When external_data_path is set, initializers of at least
  // external_data_threshold bytes are written there (at 4 KiB-aligned offsets,
  // so runtimes can map them) and the model records `external_data_location`
  // (the path relative to the model file).
  std::string external_data_path;
  std::string external_data_location;
  size_t external_data_threshold = 1024;
};

std::string serialize_model(const GraphBuilder& builder, const ModelOptions& options);

}  // namespace pytensor_onnx
