#pragma once
// Causal multi-head self-attention and RMSNorm, forward and backward, for the small MoE LM.
// x is [batch * seq, dim] row-major (token-major within a sequence); T is float or double.
#include <cstdint>
#include <vector>

#include "workloads/moe_train/precision/quant_linear.hpp"

namespace mlsb::moe_train {

template <typename T>
struct AttentionWeights {
  int64_t dim = 0, heads = 0;
  std::vector<T> wqkv;  ///< [dim, 3 * dim]: q | k | v columns, head h at columns [h*d, (h+1)*d) of each
  std::vector<T> wo;    ///< [dim, dim]
};

template <typename T>
struct AttentionCache {
  std::vector<T> qkv;    ///< [tokens, 3 * dim]
  std::vector<T> probs;  ///< [batch, heads, seq, seq] softmax of the masked, scaled scores
  std::vector<T> ctx;    ///< [tokens, dim] probs * v, heads side by side
};

/// The quantised GEMMs of the qkv and output projections under a low-precision recipe (precision/); nullptr: fp32.
/// The attention core (q k^T, p v) stays in full precision under every recipe.
struct AttentionSites {
  precision::QuantLinear* qkv = nullptr;
  precision::QuantLinear* proj = nullptr;
};

/// y = softmax(mask(q k^T / sqrt(d))) v wo, per sequence and head (d = dim / heads; position i sees 0..i).
template <typename T>
void attention_forward(const AttentionWeights<T>& w, const T* x, int64_t batch, int64_t seq, T* y,
                       AttentionCache<T>& cache, const AttentionSites& sites = {});
/// dx (overwritten) and weight gradients (added into grad, shaped as w) from dy.
template <typename T>
void attention_backward(const AttentionWeights<T>& w, const T* x, int64_t batch, int64_t seq, const T* dy,
                        const AttentionCache<T>& cache, T* dx, AttentionWeights<T>& grad,
                        const AttentionSites& sites = {});

/// One head of causal attention, the core both the whole-model path above and the tensor/context-parallel
/// block (fold/) run: queries at positions [q_pos, q_pos + qn) of a sequence whose keys and values sit at
/// positions [0, kn) (kn >= q_pos + qn). p [qn, kn] = softmax over j <= q_pos + i of q k^T / sqrt(d) (zeros
/// past each query's position), ctx [qn, d] = p v. q has row stride ld_q, k and v ld_kv, ctx ld_ctx.
template <typename T>
void causal_head_forward(const T* q, int64_t ld_q, const T* k, const T* v, int64_t ld_kv, int64_t qn, int64_t kn,
                         int64_t q_pos, int64_t d, T* p, T* ctx, int64_t ld_ctx);
/// Its backward from dctx (stride ld_ctx): dq [qn, d] (stride ld_dq), dk and dv [kn, d] (stride ld_dkv),
/// all overwritten. `dp` is a workspace (resized to qn * kn).
template <typename T>
void causal_head_backward(const T* q, int64_t ld_q, const T* k, const T* v, int64_t ld_kv, int64_t qn, int64_t kn,
                          int64_t q_pos, int64_t d, const T* p, const T* dctx, int64_t ld_ctx, T* dq, int64_t ld_dq,
                          T* dk, T* dv, int64_t ld_dkv, std::vector<T>& dp);

/// RMSNorm's epsilon (in its square root).
constexpr double kRmsNormEps = 1e-6;
/// RMSNorm (Zhang & Sennrich, arXiv 1910.07467): y = x / sqrt(mean(x^2) + kRmsNormEps) * gain, per row of dim.
template <typename T>
void rmsnorm_forward(const T* x, const std::vector<T>& gain, int64_t rows, T* y);
/// dx (overwritten) and gain gradient (added) from dy.
template <typename T>
void rmsnorm_backward(const T* x, const std::vector<T>& gain, int64_t rows, const T* dy, T* dx,
                      std::vector<T>& dgain);

}  // namespace mlsb::moe_train
