// Host-side routing lists of the CUDA executor (routing_lists.hpp).
#include "workloads/moe_offload/cuda/routing_lists.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace mlsb::moe_offload::gpu {

int64_t RoutingLists::find(int64_t step, int32_t e) const {
  const auto first = expert.begin() + step_start[step], last = expert.begin() + step_start[step + 1];
  const auto it = std::lower_bound(first, last, e);
  return it != last && *it == e ? static_cast<int64_t>(it - expert.begin()) : -1;
}

RoutingLists build_routing_lists(const RoutingTrace& t, const Schedule& s) {
  const int64_t L = t.layers, k = t.topk, E = t.experts, P = static_cast<int64_t>(s.tokens.size());
  if (P * std::max<int64_t>(k, 1) > std::numeric_limits<int32_t>::max())
    throw std::invalid_argument("schedule: " + std::to_string(P) + " tokens exceed the executor's int32 indices");
  for (const int64_t tok : s.tokens)
    if (tok < 0 || tok >= t.tokens())
      throw std::invalid_argument("schedule: token " + std::to_string(tok) + " outside the trace's " +
                                  std::to_string(t.tokens()));
  RoutingLists r;
  r.layers = L, r.topk = k;
  r.weight.resize(static_cast<size_t>(P * L * k));
  for (int64_t p = 0; p < P; ++p)
    for (int64_t l = 0; l < L; ++l)
      std::copy_n(t.weights_of(s.tokens[p], l), k, &r.weight[static_cast<size_t>((p * L + l) * k)]);
  r.src.reserve(static_cast<size_t>(P * L * k));
  r.dst.reserve(static_cast<size_t>(P * L * k));
  std::vector<int64_t> count(static_cast<size_t>(E)), at(static_cast<size_t>(E));
  for (int64_t b = 0; b < s.batches(); ++b) {
    const int64_t first = s.batch_start[b], n = s.batch_start[b + 1] - first;
    r.max_batch = std::max(r.max_batch, n);
    for (int64_t l = 0; l < L; ++l) {
      // Counting sort of the batch's (token, slot) pairs by expert, tokens in batch order.
      std::fill(count.begin(), count.end(), 0);
      for (int64_t i = 0; i < n; ++i) {
        const int32_t* route = t.experts_of(s.tokens[first + i], l);
        for (int64_t j = 0; j < k; ++j) {
          if (route[j] < 0 || route[j] >= E)
            throw std::invalid_argument("trace: expert id " + std::to_string(route[j]) + " outside [0, " +
                                        std::to_string(E) + ")");
          ++count[route[j]];
        }
      }
      const int64_t base = static_cast<int64_t>(r.src.size());
      int64_t offset = base;
      for (int32_t e = 0; e < E; ++e) {
        at[e] = offset;
        if (count[e] == 0) continue;
        r.expert.push_back(e);
        offset += count[e];
        r.row_start.push_back(offset);
      }
      r.step_start.push_back(static_cast<int64_t>(r.expert.size()));
      r.src.resize(static_cast<size_t>(offset));
      r.dst.resize(static_cast<size_t>(offset));
      for (int64_t i = 0; i < n; ++i) {
        const int32_t* route = t.experts_of(s.tokens[first + i], l);
        for (int64_t j = 0; j < k; ++j) {
          const int64_t at_row = at[route[j]]++;
          r.src[at_row] = static_cast<int32_t>(first + i);
          r.dst[at_row] = static_cast<int32_t>(i * k + j);
        }
      }
    }
  }
  return r;
}

}  // namespace mlsb::moe_offload::gpu
