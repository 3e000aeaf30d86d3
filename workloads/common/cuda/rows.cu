// fp32 row gathers and scatters (rows.hpp): one block per row, threads across the row.
#include "backends/cuda/launch.hpp"
#include "workloads/common/cuda/rows.hpp"

namespace mlsb::common::gpu {
namespace {

__global__ void gather_rows_kernel(const float* x, const int32_t* rows, int64_t m, int64_t h, float* out) {
  for (int64_t i = blockIdx.x; i < m; i += gridDim.x) {
    const float* src = x + static_cast<int64_t>(rows[i]) * h;
    float* dst = out + i * h;
    for (int64_t c = threadIdx.x; c < h; c += blockDim.x) dst[c] = src[c];
  }
}

__global__ void scatter_rows_kernel(const float* in, const int32_t* dst_rows, int64_t m, int64_t h, float* y) {
  for (int64_t i = blockIdx.x; i < m; i += gridDim.x) {
    const float* src = in + i * h;
    float* dst = y + static_cast<int64_t>(dst_rows[i]) * h;
    for (int64_t c = threadIdx.x; c < h; c += blockDim.x) dst[c] = src[c];
  }
}

}  // namespace

void gather_rows(const float* x, const int32_t* rows, int64_t m, int64_t hidden, float* out, cudaStream_t stream) {
  if (m <= 0 || hidden <= 0) return;
  gather_rows_kernel<<<cuda::row_blocks(m), cuda::row_threads(hidden), 0, stream>>>(x, rows, m, hidden, out);
}

void scatter_rows(const float* in, const int32_t* dst, int64_t m, int64_t hidden, float* y, cudaStream_t stream) {
  if (m <= 0 || hidden <= 0) return;
  scatter_rows_kernel<<<cuda::row_blocks(m), cuda::row_threads(hidden), 0, stream>>>(in, dst, m, hidden, y);
}

}  // namespace mlsb::common::gpu
