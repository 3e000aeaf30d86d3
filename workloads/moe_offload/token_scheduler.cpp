#include "workloads/moe_offload/token_scheduler.hpp"


namespace mlsb::moe_offload {

Schedule schedule_tokens(const RoutingTrace& t, const Schedule& s, const RoutePredictor& p,
                         std::vector<std::vector<int32_t>>* regrouped_paths) {
  Schedule out = s;
  std::vector<std::vector<int32_t>> all_paths = p.paths(t, s);
  if (regrouped_paths) regrouped_paths->assign(s.tokens.size(), {});
  std::vector<uint32_t> mark(t.layers * t.experts, 0);
  uint32_t stamp = 0;
  std::vector<int32_t> previous;  // keys the previous batch needs (predicted)
  for (size_t w = 0; w + 1 < s.window_start.size(); ++w) {
    const int64_t b0 = s.window_start[w], b1 = s.window_start[w + 1];
    const int64_t first = s.batch_start[b0], last = s.batch_start[b1];
    std::vector<int64_t> pool(s.tokens.begin() + first, s.tokens.begin() + last);
    std::vector<int32_t>* paths = all_paths.data() + first;  // the pool's, in the same order
    std::vector<uint8_t> taken(pool.size(), 0);
    int64_t out_i = first;
    for (int64_t b = b0; b < b1; ++b) {
      ++stamp;
      for (const int32_t key : previous) mark[key] = stamp;
      std::vector<int32_t> batch_keys;
      for (int64_t n = s.batch_start[b]; n < s.batch_start[b + 1]; ++n) {
        int64_t best = -1, best_overlap = -1;
        for (size_t i = 0; i < pool.size(); ++i) {
          if (taken[i]) continue;
          int64_t overlap = 0;
          for (const int32_t key : paths[i]) overlap += mark[key] == stamp;
          if (overlap > best_overlap) best = static_cast<int64_t>(i), best_overlap = overlap;
        }
        taken[best] = 1;
        const int64_t at = out_i++;
        out.tokens[at] = pool[best];
        if (n == s.batch_start[b]) ++stamp;  // from the first token on, overlap with this batch itself
        for (const int32_t key : paths[best]) {
          if (mark[key] != stamp) batch_keys.push_back(key);
          mark[key] = stamp;
        }
        if (regrouped_paths) (*regrouped_paths)[at] = std::move(paths[best]);  // a taken token is not read again
      }
      previous = std::move(batch_keys);
    }
  }
  return out;
}

}  // namespace mlsb::moe_offload
