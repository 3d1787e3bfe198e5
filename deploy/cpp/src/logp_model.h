// A model exported by pytensor_onnx.pymc.export_logp(flat=True), loaded in
// ONNX Runtime: its layout (from the model's metadata, checked against the
// model's input and outputs) and the evaluation of log-density and gradient.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <onnxruntime_cxx_api.h>

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

  // Log-density and gradient at `point`, the flat vector of layout().size
  // values (other sizes throw Error). Float32 models compute in float32.
  Evaluation evaluate(const std::vector<double>& point);

 private:
  void check_against_model() const;

  std::string path_;
  std::unique_ptr<Ort::Session> session_;
  std::string layout_json_;
  Layout layout_;
  Ort::MemoryInfo memory_;
  std::vector<const char*> output_names_;
};

}  // namespace pymc_logp
