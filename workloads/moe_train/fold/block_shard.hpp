#pragma once
// Which part of the folded block (block.hpp) one rank holds under a mapping: its own tokens, heads, experts and
// ffn columns, its shards of the block's tensors, and the all-to-all dispatcher's layout of rows. What the CPU
// block (block.hpp) and the GPU block (gpu_block.hpp) share.
#include <cstdint>
#include <span>
#include <vector>

#include "workloads/moe_train/fold/block_config.hpp"
#include "workloads/moe_train/fold/mapping.hpp"

namespace mlsb::moe_train::fold {

/// The global token index of each of `world_rank`'s own tokens (its sequence-parallel shard) under `m`: the
/// sequences of its DP index, the chunk of its CP index, the 1/tp of that shard's rows of its TP index.
std::vector<int64_t> own_tokens(const BlockConfig& c, const Mapping& m, const Groups& g, int world_rank);

/// The float counts of blocks of `rows[i]` rows, `width` floats each (a collective's counts from rows).
std::vector<int64_t> row_floats(std::span<const int64_t> rows, int64_t width);
/// n equal blocks of rows x width floats.
std::vector<int64_t> equal_floats(int n, int64_t rows, int64_t width);
/// The sum of `counts`.
int64_t total(std::span<const int64_t> counts);

/// Where the rows of the all-to-all dispatcher go (MoEAlltoAllTokenDispatcher over the folded groups), all in rows.
struct DispatchLayout {
  std::vector<int64_t> send_rows, recv_rows;  ///< per EP peer: rows this rank sends it, and receives from it
  std::vector<int64_t> gather_rows;           ///< per ETP peer: rows it received over EP (the all-gather-v's blocks)
  std::vector<int64_t> local_offsets;         ///< [local experts + 1]: first row of each local expert at the experts
  std::vector<int64_t> sorted_from;           ///< row at the experts -> row of the ETP-gathered layout
  int64_t expert_rows() const { return local_offsets.empty() ? 0 : local_offsets.back(); }
};

class BlockShard {
 public:
  /// Throws std::invalid_argument (validate(c, m)).
  BlockShard(const BlockConfig& c, const Mapping& m, const Groups& g, int world_rank);
  /// The global token index of each of this rank's own tokens (its sequence-parallel shard), in order.
  const std::vector<int64_t>& own_tokens() const { return own_; }
  /// Index of this rank in its group of kind g.
  int index(Group g) const { return groups_.index_of(g, world_rank_); }
  /// The rank's expert ids [first, first + E/ep), ffn columns [f0, f0 + ffn/etp) and heads.
  int64_t first_expert() const { return index(Group::Ep) * local_experts_; }
  int64_t first_ffn() const { return index(Group::Etp) * ffn_l_; }
  int64_t local_experts() const { return local_experts_; }
  int64_t first_head() const { return index(Group::Tp) * heads_l_; }
  int64_t local_heads() const { return heads_l_; }
  /// This rank's shards of a whole block's tensors (weights or gradients): norms and router whole, wqkv
  /// [hidden, 3 hidden / tp] (its heads' q | k | v columns), wo [hidden / tp, hidden], its E / ep experts with
  /// ffn / etp (gate and up columns, w2 rows).
  BlockWeights shards_of(const BlockWeights& whole) const;
  /// The all-to-all dispatcher's layout from this rank's rows per global expert (`counts`, E values) and every
  /// ETP x EP rank's (`all_counts`, E values per rank in that group's order): the rows it sends and receives
  /// over EP, the blocks of the all-gather-v over ETP ([ETP peer][its EP peer][local expert]), and the order
  /// the experts want ([local expert][ETP peer][EP peer]).
  DispatchLayout alltoall_layout(std::span<const int64_t> counts, std::span<const int64_t> all_counts) const;

 protected:
  BlockConfig c_;
  Mapping m_;
  const Groups& groups_;
  int world_rank_ = 0;
  int64_t hidden_ = 0, heads_l_ = 0, head_dim_ = 0, hl_ = 0, batch_l_ = 0, seq_c_ = 0, shard_rows_ = 0, own_rows_ = 0;
  int64_t local_experts_ = 0, ffn_l_ = 0;
  std::vector<int64_t> own_;
};

}  // namespace mlsb::moe_train::fold
