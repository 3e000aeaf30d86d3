// The combine of the offloading executor (kernels.hpp): one block per token, threads across h; the
// token's k expert outputs are added in the trace's order with fp32 rounding after every product and
// sum, as the CPU executor does, so the order experts were served in never changes a bit.
#include "workloads/moe_offload/cuda/kernels.hpp"
#include "backends/cuda/launch.hpp"

namespace mlsb::moe_offload::gpu {
namespace {

__global__ void combine_add_kernel(float* hidden, const float* y, const float* w, int64_t n, int64_t k, int64_t h,
                                   int64_t w_stride) {
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    float* hid = hidden + i * h;
    const float* wi = w + i * w_stride;
    const float* yi = y + i * k * h;
    for (int64_t c = threadIdx.x; c < h; c += blockDim.x) {
      float acc = hid[c];
      for (int64_t j = 0; j < k; ++j) acc = __fadd_rn(acc, __fmul_rn(wi[j], yi[j * h + c]));
      hid[c] = acc;
    }
  }
}

}  // namespace

void combine_add(float* hidden, const float* y, const float* w, int64_t n, int64_t topk, int64_t hidden_size,
                 int64_t w_stride, cudaStream_t stream) {
  if (n <= 0 || hidden_size <= 0) return;
  combine_add_kernel<<<cuda::row_blocks(n), cuda::row_threads(hidden_size), 0, stream>>>(
      hidden, y, w, n, topk, hidden_size, w_stride);
}

}  // namespace mlsb::moe_offload::gpu
