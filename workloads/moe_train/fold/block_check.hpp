#pragma once
// The check of a folded block against the one-rank block (block.hpp's reference_block) on the same weights and
// batch: this rank's outputs, input gradients and gradient shards, and the assignments its capacity dropped.
#include <string>
#include <vector>

#include "workloads/moe_train/fold/block.hpp"

namespace mlsb::moe_train::fold {

/// The largest relative L2 difference (||folded - reference|| / ||reference||) a correct folded block shows:
/// both are fp32 and differ only in the order of their sums (TP, ETP and CP partial sums, GEMMs of other
/// shapes); measured differences on 8 ranks stay below 1e-5 (tests/mpi/moe_train_fold_test.cpp).
constexpr double kBlockRelTolerance = 1e-4;

struct BlockCheck {
  double worst_rel_err = 0;  ///< over y, dx and every gradient tensor of this rank
  std::string worst_what;    ///< which one ("dx", "grad wqkv", ...)
  bool drops_differ = false; ///< the assignments dropped by this rank differ from the reference's for its tokens
};

/// Compares a folded block's last step on this rank (`shard`'s part: its rows y_own and dx_own, its reduced gradient
/// shards `grads`, its dispatch `plan`) with the reference computed here on the whole batch with each rank's own
/// tokens as a capacity group (sub-sequence dropping).
BlockCheck check_block(const BlockConfig& c, const Mapping& m, const Groups& g, const BlockWeights& w,
                       const BlockData& data, const BlockShard& shard, const BlockWeights& grads,
                       const DispatchPlan& plan, const std::vector<float>& y_own, const std::vector<float>& dx_own);

/// Relative L2 difference ||a - b|| / ||b|| (||a - b|| when b is all zero); a and b of the same size.
double rel_l2(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace mlsb::moe_train::fold
