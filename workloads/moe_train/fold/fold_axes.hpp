#pragma once
// The axes the folded-block benchmarks share (moe_train.block, moe_train.fold_plan): the block's shape and
// routing, and the modelled cluster; and how a case's values become a BlockConfig and a Cluster.
#include <vector>

#include "harness/workload.hpp"
#include "workloads/moe_train/fold/block.hpp"
#include "workloads/moe_train/fold/group_comm.hpp"

namespace mlsb::moe_train::fold {

/// hidden, ffn, experts, topk, router, capacity_factor, drop_policy, dispatcher, heads, seq, batch.
std::vector<Axis> block_shape_axes();
/// ranks_per_node, intra_gbps, intra_latency_us, inter_gbps, inter_latency_us.
std::vector<Axis> cluster_axes();

/// The block of a case (aux and z loss 0, no shared experts). Throws std::invalid_argument naming the axis
/// (validate(BlockConfig)).
BlockConfig read_block(const State& s);
/// The modelled cluster of a case on `world` ranks. Throws std::invalid_argument naming the axis (make_cluster).
Cluster read_cluster(const State& s, int world);

/// Checks what no rank count can fix about parallel sizes: the order's names (RankGenerator with dp = edp = 1)
/// and the model's divisibility (check_model). Throws std::invalid_argument naming the axis.
void check_sizes(const BlockConfig& c, int tp, int cp, int etp, int ep, std::string_view order);

}  // namespace mlsb::moe_train::fold
