#pragma once
// Device helpers of the MoE kernels (include only from .cu files): V-element chunks of bf16 and fp32
// rows (V = 8: one 16-byte bf16 load, two float4; V = 1: scalars; a chunk of V = 8 must start at a
// multiple of 8 elements of a 16-byte-aligned row), block sums, and the launch shapes of rows (backends/cuda/launch.hpp has the shared ones).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/launch.hpp"
#include "backends/formats/small_floats.hpp"

namespace mlsb::moe_train::gpu::detail {

using cuda::kWarp;

template <int V>
__device__ __forceinline__ void load_bf16(const uint16_t* p, float (&v)[V]) {
  static_assert(V == 1 || V == 8, "chunks are 1 or 8 elements");
  if constexpr (V == 8) {
    const uint4 q = *reinterpret_cast<const uint4*>(p);
    const uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      v[2 * i] = formats::bf16_to_f32(static_cast<uint16_t>(w[i] & 0xFFFFu));
      v[2 * i + 1] = formats::bf16_to_f32(static_cast<uint16_t>(w[i] >> 16));
    }
  } else {
    v[0] = formats::bf16_to_f32(p[0]);
  }
}

template <int V>
__device__ __forceinline__ void store_bf16(uint16_t* p, const float (&v)[V]) {
  if constexpr (V == 8) {
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      w[i] = formats::f32_to_bf16(v[2 * i]) | static_cast<uint32_t>(formats::f32_to_bf16(v[2 * i + 1])) << 16;
    *reinterpret_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
  } else {
    p[0] = formats::f32_to_bf16(v[0]);
  }
}

template <int V>
__device__ __forceinline__ void load_f32(const float* p, float (&v)[V]) {
  if constexpr (V == 8) {
    const float4 a = reinterpret_cast<const float4*>(p)[0], b = reinterpret_cast<const float4*>(p)[1];
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
  } else {
    v[0] = p[0];
  }
}

template <int V>
__device__ __forceinline__ void store_f32(float* p, const float (&v)[V]) {
  if constexpr (V == 8) {
    reinterpret_cast<float4*>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
    reinterpret_cast<float4*>(p)[1] = make_float4(v[4], v[5], v[6], v[7]);
  } else {
    p[0] = v[0];
  }
}

/// Sum of v over the block (blockDim.x a multiple of 32, at most 1024); the result is valid in thread 0.
/// Every thread of the block must call it (it synchronises twice).
template <typename T>
__device__ T block_sum(T v) {
  __shared__ T partial[1024 / kWarp];
#pragma unroll
  for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
  if (threadIdx.x % kWarp == 0) partial[threadIdx.x / kWarp] = v;
  __syncthreads();
  T total = 0;
  if (threadIdx.x == 0)
    for (unsigned w = 0; w < blockDim.x / kWarp; ++w) total += partial[w];
  __syncthreads();  // partial may be reused by the next call
  return total;
}

using cuda::grid_blocks;
using cuda::row_threads;

/// Whether a row of `width` elements is walked in 8-element chunks (16-byte bf16 loads).
inline bool vectorised(int64_t width) { return width % 8 == 0; }
/// Threads for a block that walks a row of `width` elements, 8 at a time when vectorised.
inline int vec_row_threads(int64_t width) { return row_threads(vectorised(width) ? width / 8 : width); }

}  // namespace mlsb::moe_train::gpu::detail
