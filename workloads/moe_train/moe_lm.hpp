#pragma once
// A small decoder-only MoE language model over bytes (vocab 256): token + learned position embedding,
// `layers` pre-norm blocks of causal multi-head attention and an MoE FFN (MoeLayer), a final RMSNorm
// and an untied output projection; trained with next-byte cross-entropy + each layer's aux and z loss.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "workloads/moe_train/attention.hpp"
#include "workloads/moe_train/moe_layer.hpp"
#include "workloads/moe_train/precision/precision.hpp"

namespace mlsb::moe_train {

struct LmConfig {
  int64_t vocab = 256, layers = 2, heads = 4, seq = 64;
  MoeConfig moe;  ///< moe.hidden is the model width
};

template <typename T>
class MoeLm {
 public:
  /// Throws std::invalid_argument ("heads: ...") when the width does not divide by the heads, or what
  /// validate() throws for the MoE layers.
  MoeLm(const LmConfig& config, int threads);
  void init(uint64_t seed);
  /// Mean next-byte cross-entropy (nats) of `batch` sequences of seq + 1 bytes each ([batch, seq + 1];
  /// inputs are bytes 0..seq-1, targets 1..seq). Keeps what backward needs.
  T forward(const uint8_t* tokens, int64_t batch);
  /// Gradients (accumulated) of the last forward's cross-entropy + every layer's aux and z losses.
  void backward();
  void zero_grad();
  /// Runs the linear layers' GEMMs (attention projections, routed and shared experts) through `p`'s sites,
  /// which must outlive the model; `p` has one block per layer (else std::invalid_argument naming precision).
  void set_precision(const precision::Precision& p);
  /// After forward, before backward: the activations backward reads stored as `store` says (AGoQ's storage):
  /// each block's residual input, its two RMSNorm outputs (the attention's and the MoE layer's inputs), the residual
  /// after attention, q|k|v and the attention context, and the MoE layer's (MoeLayer::store_activations). Counted at
  /// fp32 whatever the storage: the attention probabilities, the router logits, and the final norm's input and
  /// output and the output probabilities (the head stays in full precision).
  void store_activations(precision::ActivationStore& store);
  /// Every parameter with its gradient, named ("block0.attn.wqkv", ...).
  std::vector<std::pair<std::string, std::pair<std::span<T>, std::span<T>>>> parameters();
  MoeLayer<T>& moe(int64_t layer) { return *blocks_[layer].moe; }
  int64_t layers() const { return cfg_.layers; }
  const LmConfig& config() const { return cfg_; }

 private:
  struct Block {
    std::vector<T> g1, g2, dg1, dg2;
    AttentionWeights<T> attn, dattn;
    AttentionCache<T> cache;
    AttentionSites sites;
    std::unique_ptr<MoeLayer<T>> moe;
    std::vector<T> x_in, a, x_mid, m;  // residual in, norm1 out, residual after attention, norm2 out
  };
  LmConfig cfg_;
  int threads_;
  std::vector<T> tok_, pos_, gf_, head_, dtok_, dpos_, dgf_, dhead_;
  std::vector<Block> blocks_;
  // Forward state.
  std::vector<uint8_t> tokens_;
  int64_t batch_ = 0;
  std::vector<T> x_out_, f_, probs_;
};

}  // namespace mlsb::moe_train
