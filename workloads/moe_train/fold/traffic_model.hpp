#pragma once
// What a folded block's collectives send per rank and step, predicted from the shape and the mapping alone, for
// balanced routing (every expert receives tokens * k / E rows): the byte formulas the planner ranks mappings by,
// and what the counted bytes of moe_train.block are checked against. Per collective, as group_comm.hpp counts
// (b bytes per element, T a rank's own tokens, n a group's size):
//   TP   attention all-gather and reduce-scatter, forward and backward   4 (TP-1) T H b
//        + the replicated gradients' all-reduce (norms, router)          2 (TP-1)/TP (2H + H E) b
//   CP   K and V all-gathered, dK and dV reduce-scattered                4 (CP-1) T H b
//   EP   dispatch and combine all-to-allv, forward and backward          4 (EP-1)/EP T k H b
//        + the token counts' all-gather over ETP x EP                    (ETP EP - 1) E 8
//   ETP  all-gather-v and reduce-scatter-v, forward and backward         4 (ETP-1) T k H b
//   EDP  expert gradients all-reduced                                    2 (EDP-1)/EDP (E/EP) 3 H F/ETP b
//   DP   attention gradients and the replicated ones over DP x CP        2 (DC-1)/DC (4 H^2/TP + 2H + H E) b
// With the all-gather dispatcher (n = ETP x EP) the EP and ETP lines become one over ETP x EP, counted as EP's:
//        the hidden states and dy all-gathered, outputs and dx reduce-scattered   4 (n-1) T H b
//        + the chosen experts (8 bytes), weights and their gradients (4 each)    (n-1) T k 16
// (the MoE Parallel Folding paper's per-layer all-to-all volume, 2 (EP-1)/EP T k H b per direction pair, is the
// forward half of the EP line). Cross-node bytes are each group's bytes times the share of its peers on other
// nodes (every peer gets an equal share under balanced routing).
#include <array>
#include <cstdint>

#include "workloads/moe_train/fold/block.hpp"
#include "workloads/moe_train/fold/group_comm.hpp"

namespace mlsb::moe_train::fold {

struct PredictedTraffic {
  std::array<double, kGroupKinds> bytes{};    ///< per reported group kind (Tp, Cp, Ep, Etp, Edp, DpCp), per rank
  std::array<double, kGroupKinds> seconds{};  ///< on the modelled cluster (0 where it is not modelled)
  std::array<double, kGroupKinds> cross_node{};  ///< of bytes, what goes to ranks on other nodes
  double cross_node_bytes = 0;                    ///< their sum
  double total_seconds() const;
};

/// The traffic of `world_rank` in one step of the block `c` under `m` with `element_bytes` per element (4 for
/// the CPU block's fp32, 2 for bf16), timed on `cluster` (each collective: the larger of its intra- and
/// inter-node alpha-beta time).
PredictedTraffic predict_traffic(const BlockConfig& c, const Mapping& m, const Groups& g, const Cluster& cluster,
                                 int world_rank, double element_bytes);

}  // namespace mlsb::moe_train::fold
