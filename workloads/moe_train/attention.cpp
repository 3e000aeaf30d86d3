#include "workloads/moe_train/attention.hpp"

#include <algorithm>
#include <cmath>

#include "backends/cpu/gemm.hpp"

namespace mlsb::moe_train {

using precision::linear_gemm;
using precision::Pass;

template <typename T>
void causal_head_forward(const T* q, int64_t ld_q, const T* k, const T* v, int64_t ld_kv, int64_t qn, int64_t kn,
                         int64_t q_pos, int64_t d, T* p, T* ctx, int64_t ld_ctx) {
  const T scale = T(1) / std::sqrt(T(d));
  cpu::gemm<T>(false, true, qn, kn, d, scale, q, ld_q, k, ld_kv, T(0), p, kn);
  for (int64_t i = 0; i < qn; ++i) {
    T* row = p + i * kn;
    const int64_t last = q_pos + i;  // the query's own position: it sees keys 0..last
    const T m = *std::max_element(row, row + last + 1);
    T sum = 0;
    for (int64_t j = 0; j <= last; ++j) sum += row[j] = std::exp(row[j] - m);
    for (int64_t j = 0; j <= last; ++j) row[j] /= sum;
    std::fill(row + last + 1, row + kn, T(0));
  }
  cpu::gemm<T>(false, false, qn, d, kn, T(1), p, kn, v, ld_kv, T(0), ctx, ld_ctx);
}

template <typename T>
void causal_head_backward(const T* q, int64_t ld_q, const T* k, const T* v, int64_t ld_kv, int64_t qn, int64_t kn,
                          int64_t q_pos, int64_t d, const T* p, const T* dctx, int64_t ld_ctx, T* dq, int64_t ld_dq,
                          T* dk, T* dv, int64_t ld_dkv, std::vector<T>& dp) {
  const T scale = T(1) / std::sqrt(T(d));
  dp.resize(qn * kn);
  // dv = p^T dctx; dp = dctx v^T; ds = p * (dp - rowsum(dp * p)) * scale.
  cpu::gemm<T>(true, false, kn, d, qn, T(1), p, kn, dctx, ld_ctx, T(0), dv, ld_dkv);
  cpu::gemm<T>(false, true, qn, kn, d, T(1), dctx, ld_ctx, v, ld_kv, T(0), dp.data(), kn);
  for (int64_t i = 0; i < qn; ++i) {
    const int64_t last = q_pos + i;
    T dot = 0;
    for (int64_t j = 0; j <= last; ++j) dot += dp[i * kn + j] * p[i * kn + j];
    for (int64_t j = 0; j < kn; ++j) dp[i * kn + j] = j <= last ? p[i * kn + j] * (dp[i * kn + j] - dot) * scale : T(0);
  }
  cpu::gemm<T>(false, false, qn, d, kn, T(1), dp.data(), kn, k, ld_kv, T(0), dq, ld_dq);
  cpu::gemm<T>(true, false, kn, d, qn, T(1), dp.data(), kn, q, ld_q, T(0), dk, ld_dkv);
}

template <typename T>
void attention_forward(const AttentionWeights<T>& w, const T* x, int64_t batch, int64_t seq, T* y,
                       AttentionCache<T>& cache, const AttentionSites& sites) {
  const int64_t D = w.dim, H = w.heads, d = D / H, N = batch * seq;
  cache.qkv.resize(N * 3 * D);
  cache.probs.assign(batch * H * seq * seq, T(0));
  cache.ctx.resize(N * D);
  linear_gemm<T>(sites.qkv, Pass::Fprop, 0, false, false, N, 3 * D, D, x, D, w.wqkv.data(), 3 * D, T(0),
                 cache.qkv.data(), 3 * D);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const T* q = cache.qkv.data() + b * seq * 3 * D + h * d;
      causal_head_forward(q, 3 * D, q + D, q + 2 * D, 3 * D, seq, seq, int64_t{0}, d,
                          cache.probs.data() + (b * H + h) * seq * seq, cache.ctx.data() + b * seq * D + h * d, D);
    }
  linear_gemm<T>(sites.proj, Pass::Fprop, 0, false, false, N, D, D, cache.ctx.data(), D, w.wo.data(), D, T(0), y, D);
}

template <typename T>
void attention_backward(const AttentionWeights<T>& w, const T* x, int64_t batch, int64_t seq, const T* dy,
                        const AttentionCache<T>& cache, T* dx, AttentionWeights<T>& grad, const AttentionSites& sites) {
  const int64_t D = w.dim, H = w.heads, d = D / H, N = batch * seq;
  std::vector<T> dctx(N * D), dqkv(N * 3 * D), dp;
  linear_gemm<T>(sites.proj, Pass::Wgrad, 0, true, false, D, D, N, cache.ctx.data(), D, dy, D, T(1), grad.wo.data(),
                 D);
  linear_gemm<T>(sites.proj, Pass::Dgrad, 0, false, true, N, D, D, dy, D, w.wo.data(), D, T(0), dctx.data(), D);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const T* q = cache.qkv.data() + b * seq * 3 * D + h * d;
      T* dq = dqkv.data() + b * seq * 3 * D + h * d;
      causal_head_backward(q, 3 * D, q + D, q + 2 * D, 3 * D, seq, seq, int64_t{0}, d,
                           cache.probs.data() + (b * H + h) * seq * seq, dctx.data() + b * seq * D + h * d, D, dq,
                           3 * D, dq + D, dq + 2 * D, 3 * D, dp);
    }
  linear_gemm<T>(sites.qkv, Pass::Wgrad, 0, true, false, D, 3 * D, N, x, D, dqkv.data(), 3 * D, T(1),
                 grad.wqkv.data(), 3 * D);
  linear_gemm<T>(sites.qkv, Pass::Dgrad, 0, false, true, N, D, 3 * D, dqkv.data(), 3 * D, w.wqkv.data(), 3 * D, T(0),
                 dx, D);
}

template <typename T>
void rmsnorm_forward(const T* x, const std::vector<T>& gain, int64_t rows, T* y) {
  const int64_t D = static_cast<int64_t>(gain.size());
  for (int64_t r = 0; r < rows; ++r) {
    T ss = 0;
    for (int64_t i = 0; i < D; ++i) ss += x[r * D + i] * x[r * D + i];
    const T inv = T(1) / std::sqrt(ss / T(D) + T(kRmsNormEps));
    for (int64_t i = 0; i < D; ++i) y[r * D + i] = x[r * D + i] * inv * gain[i];
  }
}

template <typename T>
void rmsnorm_backward(const T* x, const std::vector<T>& gain, int64_t rows, const T* dy, T* dx,
                      std::vector<T>& dgain) {
  const int64_t D = static_cast<int64_t>(gain.size());
  for (int64_t r = 0; r < rows; ++r) {
    T ss = 0, dot = 0;
    for (int64_t i = 0; i < D; ++i) ss += x[r * D + i] * x[r * D + i];
    const T inv = T(1) / std::sqrt(ss / T(D) + T(kRmsNormEps));
    for (int64_t i = 0; i < D; ++i) {
      const T xh = x[r * D + i] * inv;
      dgain[i] += dy[r * D + i] * xh;
      dot += dy[r * D + i] * gain[i] * xh;
    }
    for (int64_t i = 0; i < D; ++i) dx[r * D + i] = inv * (dy[r * D + i] * gain[i] - x[r * D + i] * inv * dot / T(D));
  }
}

#define MLSB_ATTENTION(T)                                                                                    \
  template void causal_head_forward(const T*, int64_t, const T*, const T*, int64_t, int64_t, int64_t, int64_t,     \
                                    int64_t, T*, T*, int64_t);                                                 \
  template void causal_head_backward(const T*, int64_t, const T*, const T*, int64_t, int64_t, int64_t, int64_t,    \
                                     int64_t, const T*, const T*, int64_t, T*, int64_t, T*, T*, int64_t,        \
                                     std::vector<T>&);                                                          \
  template void attention_forward(const AttentionWeights<T>&, const T*, int64_t, int64_t, T*, AttentionCache<T>&, \
                                  const AttentionSites&);                                                      \
  template void attention_backward(const AttentionWeights<T>&, const T*, int64_t, int64_t, const T*,             \
                                   const AttentionCache<T>&, T*, AttentionWeights<T>&, const AttentionSites&);  \
  template void rmsnorm_forward(const T*, const std::vector<T>&, int64_t, T*);                                  \
  template void rmsnorm_backward(const T*, const std::vector<T>&, int64_t, const T*, T*, std::vector<T>&);
MLSB_ATTENTION(float)
MLSB_ATTENTION(double)
#undef MLSB_ATTENTION

}  // namespace mlsb::moe_train
