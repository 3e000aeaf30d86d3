#pragma once
// The MoE router: expert choice and combine weights from router logits, the load-balancing (aux) and
// z losses, and the backward of all three. Shapes are row-major; T is float or double.
#include <cstdint>
#include <vector>

#include "workloads/moe_train/config.hpp"

namespace mlsb::moe_train {

template <typename T>
struct Routing {
  int64_t tokens = 0, experts = 0, topk = 0;
  std::vector<int32_t> expert;  ///< [tokens * topk] chosen experts, by decreasing selection score
  std::vector<T> weight;        ///< [tokens * topk] combine weights
  std::vector<T> scores;        ///< [tokens * experts] softmax probabilities or sigmoid scores
  std::vector<T> aux_probs;     ///< [tokens * experts] the probabilities the aux loss averages
  std::vector<T> lse;           ///< [tokens] logsumexp of each token's logits (z-loss)
  std::vector<int64_t> load;    ///< [experts] assignments per expert, before any capacity drop
  T aux_loss = 0;               ///< aux_coef * E * sum_i f_i * P_i
  T z_loss = 0;                 ///< z_coef * mean_t lse_t^2
};

/// Routes `tokens` rows of `logits` [tokens, experts]. `expert_bias` ([experts], or nullptr = zeros)
/// is added to the selection score of the Sigmoid router only and never to the weights.
/// Aux loss (Switch Transformer, arXiv 2101.03961, eq. 4; Megatron-Core switch_load_balancing_loss_func):
///   aux = aux_coef * E * sum_i f_i * P_i, f_i = load_i / (tokens * k), P_i = mean_t aux_probs[t, i],
/// with aux_probs the softmax of the logits (the Sigmoid router: its scores normalised per token, uniform when
/// every score underflows to 0; the chosen scores, normalised, are the weights, equal when they all underflow).
/// z-loss (ST-MoE, arXiv 2202.08906, eq. 5): z = z_coef * mean_t (logsumexp_i logits[t, i])^2.
/// Ties in selection go to the lower expert id. tokens may be 0.
template <typename T>
Routing<T> route(const T* logits, int64_t tokens, const MoeConfig& c, const float* expert_bias);

/// dlogits [tokens, experts] = d(loss)/d(logits), where the loss depends on the combine weights through
/// `dweight` [tokens * topk] and contains aux_loss + z_loss with unit coefficient (their own
/// coefficients are in the config). Selection (top-k, groups, bias) is treated as constant, as every
/// framework's router does. Overwrites dlogits.
template <typename T>
void route_backward(const Routing<T>& r, const T* logits, const T* dweight, const MoeConfig& c, T* dlogits);

/// The aux-loss-free bias update (DeepSeek-V3 §2.1.2): bias_i += rate * sign(mean load - load_i),
/// with `load` the assignments per expert of the last step (summed over ranks by the caller).
void update_expert_bias(std::vector<float>& bias, const std::vector<int64_t>& load, double rate);

}  // namespace mlsb::moe_train
