#pragma once
// The folded block's shape (block.hpp has the block itself): its config, its whole weights and the global batch,
// shared by the CPU and the GPU block and their checks.
#include <cstdint>
#include <string_view>
#include <vector>

#include "workloads/moe_train/attention.hpp"
#include "workloads/moe_train/config.hpp"
#include "workloads/moe_train/experts.hpp"
#include "workloads/moe_train/fold/mapping.hpp"

namespace mlsb::moe_train::fold {

/// How the MoE part moves tokens to the experts (Megatron-Core's token dispatchers):
///   AllToAll   MoEAlltoAllTokenDispatcher: counts all-gathered over ETP x EP, rows all-to-allv over EP, then
///              all-gather-v over ETP; back by reduce-scatter-v over ETP and the all-to-allv
///   AllGather  MoEAllGatherTokenDispatcher: every token of the ETP x EP group (hidden states, chosen experts and
///              weights) all-gathered, each rank computing its experts' rows; the weighted outputs reduce-scattered
///              over ETP x EP
enum class Dispatcher { AllToAll, AllGather };
Dispatcher parse_dispatcher(std::string_view name);  ///< "alltoall" | "allgather"; else std::invalid_argument("dispatcher: ...")

struct BlockConfig {
  Dispatcher dispatcher = Dispatcher::AllToAll;
  MoeConfig moe;         ///< hidden, ffn, experts, topk, router, capacity; shared experts, aux and z must be 0
  int64_t heads = 4;     ///< attention heads (hidden / heads each)
  int64_t seq = 64;      ///< positions per sequence
  int64_t batch = 8;     ///< sequences per step, all ranks together
  int64_t tokens() const { return batch * seq; }
};

/// Throws std::invalid_argument naming the axis: heads not dividing hidden ("heads: ..."), shared experts
/// ("shared_experts: ..."), and the layer's own rules (validate(MoeConfig)).
void validate(const BlockConfig& c);
/// And for a mapping: check_model's rules and batch not dividing by dp ("batch: ...").
void validate(const BlockConfig& c, const Mapping& m);

/// The whole block's weights (the one-rank reference's, and what every rank takes its shards from).
struct BlockWeights {
  std::vector<float> norm1, norm2;  ///< [hidden]
  AttentionWeights<float> attn;     ///< wqkv [hidden, 3 hidden], wo [hidden, hidden]
  std::vector<float> router;        ///< [hidden, experts]
  ExpertWeights<float> experts;     ///< all E experts
  /// Zeros of the same shapes.
  BlockWeights zeros() const;
};
/// Deterministic weights from `seed`: norms 1 + N(0, 0.1^2), projections N(0, 1/fan_in), experts as
/// moe_train.layer's (init_expert), so every rank draws the same block.
BlockWeights init_block(const BlockConfig& c, uint64_t seed);

/// The global batch: x ~ N(0, 1) and dy ~ N(0, 1) / tokens, each [tokens, hidden] (layer_inputs of rank 0).
struct BlockData {
  std::vector<float> x, dy;
};
BlockData block_data(const BlockConfig& c, uint64_t seed);

}  // namespace mlsb::moe_train::fold
