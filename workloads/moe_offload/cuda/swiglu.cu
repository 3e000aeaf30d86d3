// SwiGLU activation of the offloading executor (kernels.hpp): one block per row of gu [m, 2f].
#include "workloads/common/activations.hpp"
#include "workloads/moe_offload/cuda/kernels.hpp"
#include "backends/cuda/launch.hpp"

namespace mlsb::moe_offload::gpu {
namespace {

__global__ void swiglu_inplace_kernel(float* gu, int64_t m, int64_t f) {
  for (int64_t r = blockIdx.x; r < m; r += gridDim.x) {
    float* g = gu + r * 2 * f;
    const float* u = g + f;
    for (int64_t j = threadIdx.x; j < f; j += blockDim.x) g[j] = common::swiglu(g[j], u[j]);  // as cpu_executor.cpp
  }
}

}  // namespace

void swiglu_inplace(float* gu, int64_t m, int64_t ffn, cudaStream_t stream) {
  if (m <= 0 || ffn <= 0) return;
  swiglu_inplace_kernel<<<cuda::row_blocks(m), cuda::row_threads(ffn), 0, stream>>>(gu, m, ffn);
}

}  // namespace mlsb::moe_offload::gpu
