#include "workloads/moe_train/fold/fold_plan.hpp"

#include <algorithm>

#include "util/stats.hpp"
#include "workloads/moe_train/fold/mapping_run.hpp"
#include "workloads/moe_train/fold/traffic_model.hpp"

namespace mlsb::moe_train::fold {

std::vector<Mapping> candidate_mappings(const BlockConfig& c, int world, int tp, int cp) {
  std::vector<Mapping> out;
  for (Mapping& m : legal_mappings(world, c.moe.experts, c.moe.ffn, c.heads, c.seq, true))
    if (c.batch % m.dp == 0 && (tp <= 0 || m.tp == tp) && (cp <= 0 || m.cp == cp)) out.push_back(std::move(m));
  return out;
}

std::vector<PlannedMapping> plan_mappings(comm::Communicator& comm, const BlockConfig& c,
                                          const std::vector<Mapping>& mappings, const Cluster& cluster,
                                          const BlockWeights& w, const BlockData& data, int threads, int warmup,
                                          int steps) {
  std::vector<PlannedMapping> out;
  for (const Mapping& m : mappings) {
    PlannedMapping p;
    p.mapping = m;
    MappingRun run(comm, c, m, Cluster{}, w, data, threads);
    for (int i = 0; i < warmup; ++i) run.step();
    std::vector<double> s;
    for (int i = 0; i < steps; ++i) s.push_back(comm.max_over_ranks(run.step()));
    p.base_s = median(s);
    for (int r = 0; r < m.world; ++r) {
      const PredictedTraffic t = predict_traffic(c, m, run.groups(), cluster, r, sizeof(float));
      p.modelled_s = std::max(p.modelled_s, t.total_seconds());
      p.cross_node_bytes = std::max(p.cross_node_bytes, t.cross_node_bytes);
    }
    p.predicted_s = p.base_s + p.modelled_s;
    out.push_back(p);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const PlannedMapping& a, const PlannedMapping& b) { return a.predicted_s < b.predicted_s; });
  return out;
}

}  // namespace mlsb::moe_train::fold
