// CUDA permutation kernels of the MoE layer: gather rows into expert order, the weighted combine back
// into token order, and their backward. One block per row (permute) or per token (the others); the
// block's threads walk the row in V-element chunks (16-byte loads when hidden % 8 == 0).
#include "workloads/moe_train/cuda/device_vec.hpp"
#include "workloads/moe_train/cuda/kernels.hpp"

namespace mlsb::moe_train::gpu {
namespace {

using detail::load_bf16;
using detail::load_f32;
using detail::store_bf16;
using detail::store_f32;

template <int V>
__global__ void permute_kernel(const bf16* x, const int32_t* row_token, int64_t h, bf16* xp) {
  const int64_t r = blockIdx.x;
  const bf16* src = x + static_cast<int64_t>(row_token[r]) * h;
  bf16* dst = xp + r * h;
  for (int64_t c = static_cast<int64_t>(threadIdx.x) * V; c < h; c += static_cast<int64_t>(blockDim.x) * V) {
    if constexpr (V == 8)
      *reinterpret_cast<uint4*>(dst + c) = *reinterpret_cast<const uint4*>(src + c);
    else
      dst[c] = src[c];
  }
}

template <int V>
__global__ void combine_kernel(const bf16* yp, const int32_t* slot_row, const float* weight, int k, int64_t h,
                               bool accumulate, const bf16* dy, bf16* y, float* ydot) {
  const int64_t t = blockIdx.x;
  float part = 0;
  for (int64_t c = static_cast<int64_t>(threadIdx.x) * V; c < h; c += static_cast<int64_t>(blockDim.x) * V) {
    float acc[V];
    if (accumulate) {
      load_bf16<V>(y + t * h + c, acc);
    } else {
#pragma unroll
      for (int i = 0; i < V; ++i) acc[i] = 0;
    }
    for (int j = 0; j < k; ++j) {
      const int32_t r = slot_row[t * k + j];
      if (r < 0) continue;
      const float w = weight[t * k + j];
      float v[V];
      load_bf16<V>(yp + static_cast<int64_t>(r) * h + c, v);
#pragma unroll
      for (int i = 0; i < V; ++i) acc[i] += w * v[i];
    }
    store_bf16<V>(y + t * h + c, acc);
    float d[V];
    load_bf16<V>(dy + t * h + c, d);
#pragma unroll
    for (int i = 0; i < V; ++i) part += formats::bf16_to_f32(formats::f32_to_bf16(acc[i])) * d[i];
  }
  part = detail::block_sum(part);
  if (threadIdx.x == 0) ydot[t] = part;
}

template <int V>
__global__ void combine_backward_kernel(const bf16* dy, const bf16* yp, const int32_t* slot_row, const float* weight,
                                        int k, int64_t h, bf16* dyp, float* dweight) {
  const int64_t t = blockIdx.x;
  for (int j = 0; j < k; ++j) {
    const int64_t slot = t * k + j;
    const int32_t r = slot_row[slot];  // the same for the whole block: the branch and block_sum stay uniform
    if (r < 0) {
      if (threadIdx.x == 0) dweight[slot] = 0;
      continue;
    }
    const float w = weight[slot];
    float part = 0;
    for (int64_t c = static_cast<int64_t>(threadIdx.x) * V; c < h; c += static_cast<int64_t>(blockDim.x) * V) {
      float d[V], v[V], out[V];
      load_bf16<V>(dy + t * h + c, d);
      load_bf16<V>(yp + static_cast<int64_t>(r) * h + c, v);
#pragma unroll
      for (int i = 0; i < V; ++i) out[i] = w * d[i], part += d[i] * v[i];
      store_bf16<V>(dyp + static_cast<int64_t>(r) * h + c, out);
    }
    part = detail::block_sum(part);
    if (threadIdx.x == 0) dweight[slot] = part;
  }
}

template <int V>
__global__ void unpermute_add_kernel(const bf16* dxp, const int32_t* slot_row, int k, int64_t h, bool accumulate,
                                     float* dx) {
  const int64_t t = blockIdx.x;
  for (int64_t c = static_cast<int64_t>(threadIdx.x) * V; c < h; c += static_cast<int64_t>(blockDim.x) * V) {
    float acc[V];
    if (accumulate) {
      load_f32<V>(dx + t * h + c, acc);
    } else {
#pragma unroll
      for (int i = 0; i < V; ++i) acc[i] = 0;
    }
    for (int j = 0; j < k; ++j) {
      const int32_t r = slot_row[t * k + j];
      if (r < 0) continue;
      float v[V];
      load_bf16<V>(dxp + static_cast<int64_t>(r) * h + c, v);
#pragma unroll
      for (int i = 0; i < V; ++i) acc[i] += v[i];
    }
    store_f32<V>(dx + t * h + c, acc);
  }
}


}  // namespace

void permute_rows(const bf16* x, const int32_t* row_token, int64_t rows, int64_t hidden, bf16* xp,
                  cudaStream_t stream) {
  if (rows <= 0 || hidden <= 0) return;
  const unsigned grid = static_cast<unsigned>(rows);
  if (detail::vectorised(hidden))
    permute_kernel<8><<<grid, detail::vec_row_threads(hidden), 0, stream>>>(x, row_token, hidden, xp);
  else
    permute_kernel<1><<<grid, detail::vec_row_threads(hidden), 0, stream>>>(x, row_token, hidden, xp);
}

void combine(const bf16* yp, const int32_t* slot_row, const float* weight, int64_t tokens, int topk, int64_t hidden,
             bool accumulate, const bf16* dy, bf16* y, float* ydot, cudaStream_t stream) {
  if (tokens <= 0 || hidden <= 0) return;
  const unsigned grid = static_cast<unsigned>(tokens);
  if (detail::vectorised(hidden))
    combine_kernel<8><<<grid, detail::vec_row_threads(hidden), 0, stream>>>(yp, slot_row, weight, topk, hidden, accumulate, dy, y, ydot);
  else
    combine_kernel<1><<<grid, detail::vec_row_threads(hidden), 0, stream>>>(yp, slot_row, weight, topk, hidden, accumulate, dy, y, ydot);
}

void combine_backward(const bf16* dy, const bf16* yp, const int32_t* slot_row, const float* weight, int64_t tokens,
                      int topk, int64_t hidden, bf16* dyp, float* dweight, cudaStream_t stream) {
  if (tokens <= 0 || hidden <= 0) return;
  const unsigned grid = static_cast<unsigned>(tokens);
  if (detail::vectorised(hidden))
    combine_backward_kernel<8><<<grid, detail::vec_row_threads(hidden), 0, stream>>>(dy, yp, slot_row, weight, topk, hidden, dyp, dweight);
  else
    combine_backward_kernel<1><<<grid, detail::vec_row_threads(hidden), 0, stream>>>(dy, yp, slot_row, weight, topk, hidden, dyp, dweight);
}

void unpermute_add(const bf16* dxp, const int32_t* slot_row, int64_t tokens, int topk, int64_t hidden, bool accumulate,
                   float* dx, cudaStream_t stream) {
  if (tokens <= 0 || hidden <= 0) return;
  const unsigned grid = static_cast<unsigned>(tokens);
  if (detail::vectorised(hidden))
    unpermute_add_kernel<8><<<grid, detail::vec_row_threads(hidden), 0, stream>>>(dxp, slot_row, topk, hidden, accumulate, dx);
  else
    unpermute_add_kernel<1><<<grid, detail::vec_row_threads(hidden), 0, stream>>>(dxp, slot_row, topk, hidden, accumulate, dx);
}

}  // namespace mlsb::moe_train::gpu
