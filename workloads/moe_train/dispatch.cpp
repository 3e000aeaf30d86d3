#include "workloads/moe_train/dispatch.hpp"

#include <algorithm>
#include <numeric>

namespace mlsb::moe_train {

std::vector<int64_t> DispatchPlan::tokens_per_expert() const {
  std::vector<int64_t> n(experts);
  for (int64_t e = 0; e < experts; ++e) n[e] = offsets[e + 1] - offsets[e];
  return n;
}

template <typename T>
DispatchPlan plan_dispatch(const Routing<T>& r, const MoeConfig& c) {
  DispatchPlan p;
  p.tokens = r.tokens, p.experts = r.experts, p.topk = r.topk;
  p.capacity = expert_capacity(c, r.tokens);
  std::vector<std::vector<int64_t>> slots(r.experts);  // assignments per expert, in token order
  for (int64_t s = 0; s < r.tokens * r.topk; ++s) slots[r.expert[s]].push_back(s);
  p.slot_row.assign(r.tokens * r.topk, -1);
  p.offsets.assign(r.experts + 1, 0);
  for (int64_t e = 0; e < r.experts; ++e) {
    auto& list = slots[e];
    if (p.capacity >= 0 && static_cast<int64_t>(list.size()) > p.capacity) {
      if (c.drop == DropPolicy::Probs) {
        std::stable_sort(list.begin(), list.end(), [&](int64_t a, int64_t b) { return r.weight[a] > r.weight[b]; });
        list.resize(p.capacity);
        std::sort(list.begin(), list.end());
      } else {
        list.resize(p.capacity);
      }
    }
    for (int64_t s : list) {
      p.slot_row[s] = static_cast<int64_t>(p.row_token.size());
      p.row_token.push_back(s / r.topk);
      p.row_slot.push_back(s);
    }
    p.offsets[e + 1] = static_cast<int64_t>(p.row_token.size());
  }
  p.dropped = r.tokens * r.topk - p.rows();
  return p;
}

double load_imbalance(const std::vector<int64_t>& rows_per_expert) {
  if (rows_per_expert.empty()) return 0;
  const double total = std::accumulate(rows_per_expert.begin(), rows_per_expert.end(), 0.0);
  if (total == 0) return 0;
  const double mean = total / static_cast<double>(rows_per_expert.size());
  return static_cast<double>(*std::max_element(rows_per_expert.begin(), rows_per_expert.end())) / mean;
}

template DispatchPlan plan_dispatch(const Routing<float>&, const MoeConfig&);
template DispatchPlan plan_dispatch(const Routing<double>&, const MoeConfig&);

}  // namespace mlsb::moe_train
