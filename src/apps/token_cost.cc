#include "apps/token_cost.h"

#include <string_view>

namespace ds::apps {

TokenCost ActiveCostPerToken(const gguf::File& file, const model::HParams& hp) {
  bool has_output = false;
  for (const gguf::TensorInfo& info : file.tensors()) has_output |= info.name == "output.weight";
  TokenCost cost;
  for (const gguf::TensorInfo& info : file.tensors()) {
    const std::string_view name = info.name;
    double share = 1.0;
    if (name.find("_exps.") != std::string_view::npos && hp.n_expert > 0) {
      share = static_cast<double>(hp.n_expert_used) / static_cast<double>(hp.n_expert);
    }
    if (name == "token_embd.weight" && has_output) {
      cost.weight_bytes += static_cast<double>(info.size_bytes) / info.num_rows();
      continue;
    }
    cost.weight_bytes += share * static_cast<double>(info.size_bytes);
    if (info.ne.size() >= 2 && info.num_rows() > 1) {
      cost.macs += share * static_cast<double>(info.num_elements());
    }
  }
  return cost;
}

}  // namespace ds::apps
