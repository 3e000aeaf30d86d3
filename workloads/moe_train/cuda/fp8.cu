// FP8 per-tensor scaling on the device (the cuda layer's fp8-current and fp8-delayed recipes): a tensor's amax,
// and its cast to E4M3 or E5M2 under the tensor's scale, as stored or transposed (cuBLASLt's FP8 GEMMs read both
// operands with the reduction dimension contiguous). The rounding is formats::f32_to_e4m3 / f32_to_e5m2, the
// code the CPU recipes' quantisers are checked against, and the current scale is their max / amax.
#include <algorithm>
#include <cfloat>

#include "workloads/moe_train/cuda/device_vec.hpp"
#include "workloads/moe_train/cuda/kernels.hpp"

namespace mlsb::moe_train::gpu {
namespace {

constexpr int kFp8Threads = 256;
constexpr int kTile = 32;     // transposed cast: 32 x 32 tiles
constexpr int kTileRows = 8;  // of 32 x 8 threads, 4 rows each

// |v| when finite, else 0 (the CPU quantisers' finite_abs: a non-finite value never sets the scale).
__device__ __forceinline__ float fp8_finite_abs(float v) { return fabsf(v) <= FLT_MAX ? fabsf(v) : 0.0f; }

__global__ void __launch_bounds__(kFp8Threads) fp8_amax_kernel(const bf16* x, int64_t n, Fp8Scale* s) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  float a = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    a = fmaxf(a, fp8_finite_abs(formats::bf16_to_f32(x[i])));
  for (int off = detail::kWarp / 2; off > 0; off /= 2) a = fmaxf(a, __shfl_xor_sync(0xFFFFFFFFu, a, off));
  __shared__ float warp_max[kFp8Threads / detail::kWarp];
  if (threadIdx.x % detail::kWarp == 0) warp_max[threadIdx.x / detail::kWarp] = a;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kFp8Threads / detail::kWarp; ++w) a = fmaxf(a, warp_max[w]);
    // Non-negative floats order as their bit patterns do.
    atomicMax(reinterpret_cast<int*>(&s->amax), __float_as_int(a));
  }
}

// The step's encode scale: delayed scaling's (set by the host), or current scaling's min(max / amax, FLT_MAX),
// 1 for an all-zero tensor (precision/quantize.cpp's amax_scale). Block 0's first thread stores it and 1 / scale.
__device__ __forceinline__ float fp8_tensor_scale(Fp8Scale* s, bool current, float max) {
  // Current scaling reads only the amax (block 0 writes the scale meanwhile); delayed only the host's scale.
  const float amax = current ? s->amax : 0.0f;
  const float scale = current ? (amax > 0 ? fminf(__fdiv_rn(max, amax), FLT_MAX) : 1.0f) : s->scale;
  if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0) {
    if (current) s->scale = scale;
    s->descale = __fdiv_rn(1.0f, scale);
  }
  return scale;
}

__device__ __forceinline__ float fp8_max(bool e5m2) {
  return formats::element_spec(e5m2 ? formats::Element::E5M2 : formats::Element::E4M3).max;
}

__device__ __forceinline__ uint8_t fp8_code(float v, bool e5m2) {
  return e5m2 ? formats::f32_to_e5m2(v) : formats::f32_to_e4m3(v);
}

__global__ void __launch_bounds__(kFp8Threads)
    fp8_cast_kernel(const bf16* x, int64_t n, Fp8Scale* s, bool current, bool e5m2, uint8_t* out) {
  const float scale = fp8_tensor_scale(s, current, fp8_max(e5m2));
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = fp8_code(formats::bf16_to_f32(x[i]) * scale, e5m2);
}

// out [cols, out_ld]: out[c, r] = q(x[r, c]) for r < rows, 0 for rows <= r < out_ld. Block (x, y) does columns
// [32x, 32x + 32) of x and, stepping by 32 gridDim.y, 32-row tiles of out's columns from 32y, through shared memory
// so that both the reads of x and the writes of out run along rows.
__global__ void __launch_bounds__(kTile * kTileRows)
    fp8_cast_transposed_kernel(const bf16* x, int64_t rows, int64_t cols, Fp8Scale* s, bool current, bool e5m2,
                               int64_t out_ld, uint8_t* out) {
  const float scale = fp8_tensor_scale(s, current, fp8_max(e5m2));
  __shared__ uint8_t tile[kTile][kTile + 4];
  const int64_t c0 = static_cast<int64_t>(blockIdx.x) * kTile, c = c0 + threadIdx.x;
  for (int64_t r0 = static_cast<int64_t>(blockIdx.y) * kTile; r0 < out_ld;
       r0 += static_cast<int64_t>(gridDim.y) * kTile) {
    for (int i = threadIdx.y; i < kTile; i += kTileRows) {
      const int64_t r = r0 + i;
      tile[i][threadIdx.x] = r < rows && c < cols ? fp8_code(formats::bf16_to_f32(x[r * cols + c]) * scale, e5m2) : 0;
    }
    __syncthreads();
    const int64_t r = r0 + threadIdx.x;
    for (int i = threadIdx.y; i < kTile; i += kTileRows) {
      const int64_t oc = c0 + i;
      if (oc < cols && r < out_ld) out[oc * out_ld + r] = tile[threadIdx.x][i];
    }
    __syncthreads();  // the tile is rewritten by the next step
  }
}

}  // namespace

void fp8_amax(const bf16* x, int64_t n, Fp8Scale* s, cudaStream_t stream) {
  if (n <= 0) return;
  fp8_amax_kernel<<<detail::grid_blocks(n, kFp8Threads), kFp8Threads, 0, stream>>>(x, n, s);
}

void fp8_cast(const bf16* x, int64_t rows, int64_t cols, Fp8Scale* s, bool current, bool e5m2, bool transposed,
              int64_t out_ld, uint8_t* out, cudaStream_t stream) {
  if (!transposed) {
    if (rows <= 0 || cols <= 0) return;
    fp8_cast_kernel<<<detail::grid_blocks(rows * cols, kFp8Threads), kFp8Threads, 0, stream>>>(x, rows * cols, s,
                                                                                               current, e5m2, out);
    return;
  }
  if (out_ld <= 0 || cols <= 0) return;
  const int64_t row_tiles = (out_ld + kTile - 1) / kTile;  // gridDim.y is at most 65535: the kernel steps over more
  const dim3 grid(static_cast<unsigned>((cols + kTile - 1) / kTile),
                  static_cast<unsigned>(std::min<int64_t>(row_tiles, 65535)));
  fp8_cast_transposed_kernel<<<grid, dim3(kTile, kTileRows), 0, stream>>>(x, rows, cols, s, current, e5m2, out_ld, out);
}

}  // namespace mlsb::moe_train::gpu
