#pragma once
// Model FLOPs of a training step, as Megatron-LM counts them (megatron/training/training.py,
// num_floating_point_operations): forward + backward = 3 x forward, 2 FLOP per multiply-add, SwiGLU
// as 3 GEMMs of h x f (the "gated linear multiplier" 3/2 on Megatron's 2 MLP GEMMs), routed experts
// counted k times, shared experts once; the router GEMM, permutes and element-wise work not counted.
#include <cstdint>
#include <vector>

#include "backends/cpu/gemm_peak.hpp"

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

/// The six GEMMs of one expert's forward and backward (experts.cpp) for the routed experts at balanced
/// routing, ceil(tokens * k * ranks / E) rows each (expert parallelism gathers every rank's rows for a
/// rank's experts), and for the shared experts (fused into one of inner size shared_inner(), over all `tokens` rows): the shapes at
/// which the CPU GEMM peak of a case is measured (backends/cpu/gemm_peak.hpp).
std::vector<cpu::GemmShape> expert_gemm_shapes(const MoeConfig& c, int64_t tokens, int ranks);

}  // namespace mlsb::moe_train
