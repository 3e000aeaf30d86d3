#pragma once
// One pre-norm transformer block with an MoE FFN, parallelised by MoE Parallel Folding (mapping.hpp) on the
// CPU (fp32, OpenBLAS), forward and backward, and the one-rank reference it must equal.
//
//   a = attention(rmsnorm1(x)),  h = x + a,  y = h + moe(rmsnorm2(h))
//
// x is the global batch [batch * seq, hidden] in [sequence][position] order. Attention (causal, multi-head,
// attention.hpp) runs as Megatron-Core with sequence parallelism:
//   - DP splits the batch (batch / dp sequences per rank), CP each sequence into cp contiguous chunks (not
//     Megatron's load-balanced 2 x CP chunks), TP the heads; a rank's own tokens (its sequence-parallel shard)
//     are 1/tp of its (dp, cp) shard's rows, contiguous;
//   - forward: RMSNorm on the own tokens, all-gather over TP, QKV column-parallel (the rank's heads), the keys
//     and values all-gathered over CP (the all-gather variant of context parallelism: each rank attends its
//     queries to the keys before them), output projection row-parallel, reduce-scatter over TP, residual;
//   - backward mirrors it: all-gather of the output gradient over TP, reduce-scatter of dK and dV over CP,
//     reduce-scatter of the input gradient over TP.
// The MoE FFN routes the rank's own tokens (Megatron's sub-sequence: capacity is decided per rank from its
// local tokens) and dispatches them as Megatron's MoEAlltoAllTokenDispatcher does over the folded groups:
// all-gather of the tokens per expert over ETP x EP, all-to-allv of rows over EP, all-gather-v over ETP, the
// rank's E/ep experts with fc1 column-split and fc2 row-split over ETP (gate and up both split), reduce-scatter-v
// over ETP, all-to-allv back over EP, then the combine. Backward runs the same path with the gradients.
// Gradients: expert parameters all-reduced over EDP; attention's TP-sharded weights over DP x CP; the
// replicated norms and router over TP, then DP x CP. The objective is <y, dy> over the global batch with dy
// scaled by 1 / (batch * seq), so every reduction is a plain sum and each gradient equals the one-rank one.
// The block has no shared experts, no aux or z loss (their coefficients are 0 here) and one pipeline stage.
#include <cstdint>
#include <string_view>
#include <vector>

#include "workloads/moe_train/attention.hpp"
#include "workloads/moe_train/config.hpp"
#include "workloads/moe_train/dispatch.hpp"
#include "workloads/moe_train/experts.hpp"
#include "workloads/moe_train/fold/block_config.hpp"
#include "workloads/moe_train/fold/block_shard.hpp"
#include "workloads/moe_train/fold/group_comm.hpp"
#include "workloads/moe_train/router.hpp"

namespace mlsb::moe_train::fold {

/// The one-rank reference: y, dx and every gradient of the whole block over the whole batch, with the MoE
/// FFN run by moe_train.layer's MoeLayer (one rank) on each group of tokens in `capacity_groups` in turn
/// (the tokens whose capacity is decided together; one group of all tokens when dropless changes nothing).
struct BlockResult {
  std::vector<float> y, dx;  ///< [tokens, hidden]
  BlockWeights grad;
  std::vector<int64_t> dropped_tokens;  ///< assignments (token * topk + j) capacity dropped, ascending
};
BlockResult reference_block(const BlockConfig& c, const BlockWeights& w, const BlockData& data,
                            const std::vector<std::vector<int64_t>>& capacity_groups);

/// Where a step of the folded block spent its time on this rank (seconds, summed since clear()).
struct BlockTimes {
  double forward_s = 0, backward_s = 0, grad_sync_s = 0;
  GemmStats experts;
  void clear() { *this = {}; }
};

/// One rank's part of the folded block. Every rank of the world calls each method together.
class FoldedBlock : public BlockShard {
 public:
  /// Throws std::invalid_argument (validate) or comm::CommError.
  FoldedBlock(const BlockConfig& c, const Mapping& m, const Groups& g, RankComms& comms, int world_rank, int threads);
  /// Takes this rank's shards of `w`; zeroes the gradients.
  void load(const BlockWeights& w);
  /// y_own [own tokens, hidden] from x_own (this rank's rows of x).
  void forward(const float* x_own, float* y_own);
  /// dx_own (overwritten) and the gradients (accumulated, then reduced over their groups) from dy_own.
  void backward(const float* dy_own, float* dx_own);
  void zero_grad();
  /// The all-to-all dispatcher's two halves (Dispatcher::AllToAll only), in the layout of the last forward: this rank's rows by global
  /// expert (plan()'s order) to the rows at its experts by local expert (every ETP x EP rank's, sorted by local
  /// expert), and back (summed over ETP). combine(dispatch(x)) = etp * x (Megatron's round-trip test).
  void dispatch(const std::vector<float>& by_expert, std::vector<float>& at_experts);
  void combine(const std::vector<float>& at_experts, std::vector<float>& by_expert);
  /// The last forward's all-to-all layout: rows this rank sends to / receives from each EP peer, and more.
  const DispatchLayout& layout() const { return layout_; }
  /// Rows each local expert computes (every ETP x EP rank's), the last forward's.
  std::vector<int64_t> local_expert_rows() const;
  /// Its gradients (reduced after backward), in shards_of's shapes.
  const BlockWeights& grads() const { return g_; }
  const DispatchPlan& plan() const { return plan_; }
  BlockTimes& times() { return times_; }

 private:
  void attention_forward(const float* x_own, float* h_own);
  void attention_backward(const float* dh_own, float* dx_own);
  void moe_forward(const float* h_own, float* y_own);
  void moe_backward(const float* dy_own, float* dh_own);
  // The dispatchers: add the experts' combined output to y_own; from dy_own, the combine weights' gradient
  // (dweight [own tokens * k]) and the gradient at the MoE input (added into dhn).
  void alltoall_forward(float* y_own);
  void alltoall_backward(const float* dy_own, std::vector<float>& dweight, std::vector<float>& dhn);
  void allgather_forward(float* y_own);  // fold/allgather_dispatch.cpp
  void allgather_backward(const float* dy_own, std::vector<float>& dweight, std::vector<float>& dhn);
  void reduce_grads();

  RankComms& comms_;
  int threads_ = 1;
  BlockWeights p_, g_;  // this rank's weights and gradients (shards_of's shapes)
  BlockTimes times_;
  // Forward state.
  std::vector<float> x_own_, xn_own_, xn_, qkv_, kv_, probs_, ctx_, h_own_, hn_own_, logits_, xp_, yp_, xe_, ye_;
  Routing<float> routing_;
  DispatchPlan plan_;
  ExpertCache<float> cache_;
  DispatchLayout layout_;  // the all-to-all dispatcher's; the all-gather one fills local_offsets only
  // All-gather dispatcher: the gathered assignment (token * k + j over the group's tokens) of each row at the
  // experts, and its combine weight.
  std::vector<int64_t> gathered_slot_;
  std::vector<float> gathered_weight_;
};

}  // namespace mlsb::moe_train::fold
