// The expert-load series of a case: one item per expert and the chart item that draws them as columns.
#include <numeric>

#include "workloads/moe_train/case_config.hpp"

namespace mlsb::moe_train {

void add_expert_load(State& state, const std::vector<int64_t>& tokens_per_expert, const std::string& what) {
  if (tokens_per_expert.empty()) return;
  for (size_t e = 0; e < tokens_per_expert.size(); ++e)
    state.add_item("series/expert_load/" + std::to_string(e), {{"x", e}, {"y", tokens_per_expert[e]}});
  const double balanced = std::accumulate(tokens_per_expert.begin(), tokens_per_expert.end(), 0.0) /
                          static_cast<double>(tokens_per_expert.size());
  state.add_item("chart/expert_load", {{"caption", "tokens routed per expert, " + what},
                                       {"x_label", "expert"},
                                       {"y_label", "tokens"},
                                       {"kind", "columns"},
                                       {"marks", {{{"y", balanced}, {"label", "balanced"}}}}});
}

}  // namespace mlsb::moe_train
