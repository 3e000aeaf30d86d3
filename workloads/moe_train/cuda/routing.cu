// CUDA router kernels: one thread per token runs the per-token arithmetic of routing_math.hpp on its
// rows (E values; reads stay in L1/L2), and one block per expert sums the aux probabilities.
#include "workloads/moe_train/cuda/device_vec.hpp"
#include "workloads/moe_train/cuda/kernels.hpp"

namespace mlsb::moe_train::gpu {
namespace {

constexpr int kRouteThreads = 128;

__global__ void __launch_bounds__(kRouteThreads) route_forward_kernel(math::RouteShape sh, int64_t tokens, RouteForward b) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= tokens) return;
  const int64_t E = sh.experts, k = sh.topk;
  b.lse[t] = math::route_token(sh, b.logits + t * E, b.bias, b.scores + t * E, b.aux_probs + t * E, b.select + t * E,
                               sh.groups > 1 ? b.group_score + t * sh.groups : nullptr, b.expert + t * k,
                               b.weight + t * k);
}

__global__ void __launch_bounds__(256) route_stats_kernel(const float* aux_probs, const float* lse, int64_t tokens,
                                                          int experts, double* stats) {
  const int col = static_cast<int>(blockIdx.x);
  double acc = 0;
  for (int64_t t = threadIdx.x; t < tokens; t += blockDim.x)
    acc += col < experts ? static_cast<double>(aux_probs[t * experts + col]) : static_cast<double>(lse[t]) * lse[t];
  acc = detail::block_sum(acc);
  if (threadIdx.x == 0) stats[col] = acc;
}

__global__ void __launch_bounds__(kRouteThreads) route_backward_kernel(math::RouteShape sh, int64_t tokens, RouteBackward b) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= tokens) return;
  const int64_t E = sh.experts, k = sh.topk;
  const math::TokenGrad g{b.expert + t * k, b.weight + t * k, b.dweight + t * k, b.scores + t * E, b.aux_probs + t * E,
                          b.logits + t * E, b.lse[t], b.daux, b.z_scale, b.aux};
  const math::TokenDots d = math::token_dots(sh, g);
  bf16* out = b.dlogits + t * E;
  for (int i = 0; i < sh.experts; ++i) out[i] = formats::f32_to_bf16(math::token_dlogit(sh, g, d, i));
}

unsigned blocks_for(int64_t tokens) { return static_cast<unsigned>((tokens + kRouteThreads - 1) / kRouteThreads); }

}  // namespace

void route_forward(const math::RouteShape& shape, int64_t tokens, const RouteForward& b, cudaStream_t stream) {
  if (tokens <= 0) return;
  route_forward_kernel<<<blocks_for(tokens), kRouteThreads, 0, stream>>>(shape, tokens, b);
}

void route_stats(const float* aux_probs, const float* lse, int64_t tokens, int experts, double* stats,
                 cudaStream_t stream) {
  if (experts <= 0) return;
  route_stats_kernel<<<experts + 1, 256, 0, stream>>>(aux_probs, lse, tokens, experts, stats);
}

void route_backward(const math::RouteShape& shape, int64_t tokens, const RouteBackward& b, cudaStream_t stream) {
  if (tokens <= 0) return;
  route_backward_kernel<<<blocks_for(tokens), kRouteThreads, 0, stream>>>(shape, tokens, b);
}

}  // namespace mlsb::moe_train::gpu
