#include "dedup_initializers.h"

#include <unordered_map>

namespace pytensor_onnx {

bool deduplicate_initializers(Graph& graph) {
  bool changed = false;
  std::unordered_multimap<size_t, Value*> seen;
  for (Value* v : graph.initializers()) {
    if (graph.is_output(v)) continue;
    const size_t h = v->constant->content_hash();
    Value* keep = nullptr;
    auto range = seen.equal_range(h);
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second->constant->same_content(*v->constant)) {
        keep = it->second;
        break;
      }
    }
    if (keep) {
      graph.replace_all_uses(v, keep);
      changed = true;
    } else {
      seen.emplace(h, v);
    }
  }
  if (changed) graph.remove_unused_values();
  return changed;
}

}  // namespace pytensor_onnx
