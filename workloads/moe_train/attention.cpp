#include "workloads/moe_train/attention.hpp"

#include <algorithm>
#include <cmath>

#include "backends/cpu/gemm.hpp"

namespace mlsb::moe_train {

template <typename T>
void attention_forward(const AttentionWeights<T>& w, const T* x, int64_t batch, int64_t seq, T* y,
                       AttentionCache<T>& cache) {
  const int64_t D = w.dim, H = w.heads, d = D / H, N = batch * seq;
  const T scale = T(1) / std::sqrt(T(d));
  cache.qkv.resize(N * 3 * D);
  cache.probs.assign(batch * H * seq * seq, T(0));
  cache.ctx.resize(N * D);
  cpu::gemm<T>(false, false, N, 3 * D, D, x, w.wqkv.data(), T(0), cache.qkv.data());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const T* q = cache.qkv.data() + b * seq * 3 * D + h * d;
      T* p = cache.probs.data() + (b * H + h) * seq * seq;
      cpu::gemm<T>(false, true, seq, seq, d, scale, q, 3 * D, q + D, 3 * D, T(0), p, seq);
      for (int64_t i = 0; i < seq; ++i) {
        T* row = p + i * seq;
        const T m = *std::max_element(row, row + i + 1);
        T sum = 0;
        for (int64_t j = 0; j <= i; ++j) sum += row[j] = std::exp(row[j] - m);
        for (int64_t j = 0; j <= i; ++j) row[j] /= sum;
        std::fill(row + i + 1, row + seq, T(0));
      }
      cpu::gemm<T>(false, false, seq, d, seq, T(1), p, seq, q + 2 * D, 3 * D, T(0),
                   cache.ctx.data() + b * seq * D + h * d, D);
    }
  cpu::gemm<T>(false, false, N, D, D, cache.ctx.data(), w.wo.data(), T(0), y);
}

template <typename T>
void attention_backward(const AttentionWeights<T>& w, const T* x, int64_t batch, int64_t seq, const T* dy,
                        const AttentionCache<T>& cache, T* dx, AttentionWeights<T>& grad) {
  const int64_t D = w.dim, H = w.heads, d = D / H, N = batch * seq;
  const T scale = T(1) / std::sqrt(T(d));
  std::vector<T> dctx(N * D), dqkv(N * 3 * D), dp(seq * seq);
  cpu::gemm<T>(true, false, D, D, N, cache.ctx.data(), dy, T(1), grad.wo.data());
  cpu::gemm<T>(false, true, N, D, D, dy, w.wo.data(), T(0), dctx.data());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const T* q = cache.qkv.data() + b * seq * 3 * D + h * d;
      const T* p = cache.probs.data() + (b * H + h) * seq * seq;
      const T* dc = dctx.data() + b * seq * D + h * d;
      T* dq = dqkv.data() + b * seq * 3 * D + h * d;
      // dv = p^T dctx; dp = dctx v^T; ds = p * (dp - rowsum(dp * p)) * scale.
      cpu::gemm<T>(true, false, seq, d, seq, T(1), p, seq, dc, D, T(0), dq + 2 * D, 3 * D);
      cpu::gemm<T>(false, true, seq, seq, d, T(1), dc, D, q + 2 * D, 3 * D, T(0), dp.data(), seq);
      for (int64_t i = 0; i < seq; ++i) {
        T dot = 0;
        for (int64_t j = 0; j <= i; ++j) dot += dp[i * seq + j] * p[i * seq + j];
        for (int64_t j = 0; j < seq; ++j) dp[i * seq + j] = j <= i ? p[i * seq + j] * (dp[i * seq + j] - dot) * scale : T(0);
      }
      cpu::gemm<T>(false, false, seq, d, seq, T(1), dp.data(), seq, q + D, 3 * D, T(0), dq, 3 * D);
      cpu::gemm<T>(true, false, seq, d, seq, T(1), dp.data(), seq, q, 3 * D, T(0), dq + D, 3 * D);
    }
  cpu::gemm<T>(true, false, D, 3 * D, N, x, dqkv.data(), T(1), grad.wqkv.data());
  cpu::gemm<T>(false, true, N, D, 3 * D, dqkv.data(), w.wqkv.data(), T(0), dx);
}

template <typename T>
void rmsnorm_forward(const T* x, const std::vector<T>& gain, int64_t rows, T* y) {
  const int64_t D = static_cast<int64_t>(gain.size());
  for (int64_t r = 0; r < rows; ++r) {
    T ss = 0;
    for (int64_t i = 0; i < D; ++i) ss += x[r * D + i] * x[r * D + i];
    const T inv = T(1) / std::sqrt(ss / T(D) + T(1e-6));
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
    const T inv = T(1) / std::sqrt(ss / T(D) + T(1e-6));
    for (int64_t i = 0; i < D; ++i) {
      const T xh = x[r * D + i] * inv;
      dgain[i] += dy[r * D + i] * xh;
      dot += dy[r * D + i] * gain[i] * xh;
    }
    for (int64_t i = 0; i < D; ++i) dx[r * D + i] = inv * (dy[r * D + i] * gain[i] - x[r * D + i] * inv * dot / T(D));
  }
}

#define MLSB_ATTENTION(T)                                                                                    \
  template void attention_forward(const AttentionWeights<T>&, const T*, int64_t, int64_t, T*, AttentionCache<T>&); \
  template void attention_backward(const AttentionWeights<T>&, const T*, int64_t, int64_t, const T*,             \
                                   const AttentionCache<T>&, T*, AttentionWeights<T>&);                         \
  template void rmsnorm_forward(const T*, const std::vector<T>&, int64_t, T*);                                  \
  template void rmsnorm_backward(const T*, const std::vector<T>&, int64_t, const T*, T*, std::vector<T>&);
MLSB_ATTENTION(float)
MLSB_ATTENTION(double)
#undef MLSB_ATTENTION

}  // namespace mlsb::moe_train
