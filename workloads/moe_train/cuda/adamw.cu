// CUDA AdamW on fp32 masters with the bf16 copy written on the way, and the fp32 -> bf16 cast.
// Grid-stride loops over groups of 4 elements (float4 loads; tensors start 16-byte aligned), then the
// n % 4 tail element by element.
#include "workloads/moe_train/cuda/device_vec.hpp"
#include "workloads/moe_train/cuda/kernels.hpp"

namespace mlsb::moe_train::gpu {
namespace {

constexpr int kAdamWThreads = 256;

__device__ __forceinline__ uint2 pack4(float a, float b, float c, float d) {
  using formats::f32_to_bf16;
  return make_uint2(f32_to_bf16(a) | static_cast<uint32_t>(f32_to_bf16(b)) << 16,
                    f32_to_bf16(c) | static_cast<uint32_t>(f32_to_bf16(d)) << 16);
}

__global__ void __launch_bounds__(kAdamWThreads) adamw_kernel(float* p, const float* g, float* m, float* v, bf16* p16,
                                                         int64_t n, math::AdamWStep s) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t groups = n / 4;
  for (int64_t q = first; q < groups; q += stride) {
    float4 pv = reinterpret_cast<float4*>(p)[q], mv = reinterpret_cast<float4*>(m)[q], vv = reinterpret_cast<float4*>(v)[q];
    const float4 gv = reinterpret_cast<const float4*>(g)[q];
    math::adamw_element(s, gv.x, mv.x, vv.x, pv.x);
    math::adamw_element(s, gv.y, mv.y, vv.y, pv.y);
    math::adamw_element(s, gv.z, mv.z, vv.z, pv.z);
    math::adamw_element(s, gv.w, mv.w, vv.w, pv.w);
    reinterpret_cast<float4*>(p)[q] = pv, reinterpret_cast<float4*>(m)[q] = mv, reinterpret_cast<float4*>(v)[q] = vv;
    reinterpret_cast<uint2*>(p16)[q] = pack4(pv.x, pv.y, pv.z, pv.w);
  }
  for (int64_t i = groups * 4 + first; i < n; i += stride) {
    float pi = p[i], mi = m[i], vi = v[i];
    math::adamw_element(s, g[i], mi, vi, pi);
    p[i] = pi, m[i] = mi, v[i] = vi;
    p16[i] = formats::f32_to_bf16(pi);
  }
}

__global__ void __launch_bounds__(kAdamWThreads) cast_kernel(const float* in, int64_t n, bf16* out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t groups = n / 4;
  for (int64_t q = first; q < groups; q += stride) {
    const float4 x = reinterpret_cast<const float4*>(in)[q];
    reinterpret_cast<uint2*>(out)[q] = pack4(x.x, x.y, x.z, x.w);
  }
  for (int64_t i = groups * 4 + first; i < n; i += stride) out[i] = formats::f32_to_bf16(in[i]);
}

}  // namespace

void adamw_update(float* p, const float* g, float* m, float* v, bf16* p16, int64_t n, const math::AdamWStep& step,
                  cudaStream_t stream) {
  if (n <= 0) return;
  adamw_kernel<<<detail::grid_blocks((n + 3) / 4, kAdamWThreads), kAdamWThreads, 0, stream>>>(p, g, m, v, p16, n, step);
}

void cast_to_bf16(const float* in, int64_t n, bf16* out, cudaStream_t stream) {
  if (n <= 0) return;
  cast_kernel<<<detail::grid_blocks((n + 3) / 4, kAdamWThreads), kAdamWThreads, 0, stream>>>(in, n, out);
}

}  // namespace mlsb::moe_train::gpu
