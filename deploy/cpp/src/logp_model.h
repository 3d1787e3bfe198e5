// A model exported by pytensor_onnx.pymc.export_logp(flat=True), loaded in
// ONNX Runtime: its layout (from the model's metadata, checked against the
// model's input and outputs) and the evaluation of log-density and gradient.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <onnxruntime_cxx_api.h>

#include "data_value.h"
#include "layout.h"

namespace pymc_logp {

struct Evaluation {
  double logp = 0.0;
  std::vector<double> gradient;  // empty when the model has no gradient output
};

class LogpModel {
 public:
  // Loads the file (a model that is not ONNX, has no layout, or whose
  // layout does not match its input and outputs throws Error). `threads`:
  // ONNX Runtime's intra-op threads (0: its default, one per core).
  explicit LogpModel(const std::string& path, int threads = 1);

  const Layout& layout() const { return layout_; }
  const std::string& layout_json() const { return layout_json_; }

  // Sets the value of the pm.Data input `name` (layout().data; nested lists
  // of its dimensions, any sizes), which every later evaluation feeds. An
  // unknown name or a value of the wrong dimensions or type throws Error.
  void set_data(const std::string& name, const nlohmann::json& value);

  // Log-density and gradient at `point`, the flat vector of layout().size
  // values (other sizes, or a pm.Data input not set, throw Error). Float32
  // models compute in float32.
  Evaluation evaluate(const std::vector<double>& point);

 private:
  void check_against_model() const;

  std::string path_;
  std::unique_ptr<Ort::Session> session_;
  std::string layout_json_;
  Layout layout_;
  Ort::MemoryInfo memory_;
  // One per layout().data entry, null until set (a DataValue's tensors point
  // into it, so it stays where it was made).
  std::vector<std::unique_ptr<DataValue>> data_;
};

}  // namespace pymc_logp
