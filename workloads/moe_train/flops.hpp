#pragma once
// Model FLOPs of a training step, as Megatron-LM counts them (megatron/training/training.py,
// num_floating_point_operations): forward + backward = 3 x forward, 2 FLOP per multiply-add, SwiGLU
// as 3 GEMMs of h x f (the "gated linear multiplier" 3/2 on Megatron's 2 MLP GEMMs), routed experts
// counted k times, shared experts once; the router GEMM, permutes and element-wise work not counted.
#include <cstdint>

#include "workloads/moe_train/config.hpp"

namespace mlsb::moe_train {

/// One MoE layer's forward + backward over `tokens` tokens: 18 * tokens * h * (k * f + shared_inner).
double moe_layer_flop(const MoeConfig& c, int64_t tokens);

/// One causal self-attention block with multi-head attention (query groups = heads) over `tokens`
/// tokens of sequences of `seq`: 12 * tokens * h^2 * (2 + seq / h) (Megatron's count: QKV and output
/// projections, and the full S x S score and value products).
double attention_flop(int64_t hidden, int64_t seq, int64_t tokens);

/// The output projection to `vocab` logits: 6 * tokens * h * vocab.
double logits_flop(int64_t hidden, int64_t vocab, int64_t tokens);

}  // namespace mlsb::moe_train
