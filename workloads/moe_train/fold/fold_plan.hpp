#pragma once
// The planner of folded mappings: for a block, the run's ranks and a modelled cluster, every legal mapping's step
// is predicted as its step measured on the ranks without the modelled link (compute and the real transport) plus
// the traffic model's time of its collectives on the modelled links (traffic_model.hpp, the slowest rank's), and
// the mappings are ranked by it. The prediction adds the modelled time to the measured step instead of taking, per
// collective, the larger of the modelled and the real time (what the modelled cluster does): it is meant for links
// slow enough that the modelled time dominates.
#include <vector>

#include "backends/comm/communicator.hpp"
#include "workloads/moe_train/fold/block.hpp"

namespace mlsb::moe_train::fold {

struct PlannedMapping {
  Mapping mapping;
  double base_s = 0;       ///< the step measured with no modelled link (median, max over ranks)
  double modelled_s = 0;   ///< the traffic model's time of its collectives on the cluster (max over ranks)
  double predicted_s = 0;  ///< base_s + modelled_s
  double cross_node_bytes = 0;  ///< the model's, max over ranks
};

/// The mappings the planner considers on `world` ranks: legal_mappings with cp > 1 allowed, those whose dp
/// divides the batch, and, when `tp` or `cp` is > 0, only that TP or CP (a model that needs a given attention
/// split).
std::vector<Mapping> candidate_mappings(const BlockConfig& c, int world, int tp, int cp);

/// Each mapping's prediction on `cluster`, sorted by predicted step (ties: the order given). Steps every mapping
/// `warmup` + `steps` times on `comm`'s ranks (collective: every rank calls it with the same mappings).
std::vector<PlannedMapping> plan_mappings(comm::Communicator& comm, const BlockConfig& c,
                                          const std::vector<Mapping>& mappings, const Cluster& cluster,
                                          const BlockWeights& w, const BlockData& data, int threads, int warmup,
                                          int steps);

}  // namespace mlsb::moe_train::fold
