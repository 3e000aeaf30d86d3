// The folded block's fp32 CUDA kernels (block_kernels.hpp): RMSNorm, the causal softmax, the combine, strided
// column copies and SwiGLU. Rows are walked by one block each (row_threads threads), element-wise work by grid-stride loops.
#include "backends/cuda/launch.hpp"
#include "workloads/common/activations.hpp"
#include "workloads/moe_train/attention.hpp"
#include "workloads/moe_train/cuda/device_vec.hpp"
#include "workloads/moe_train/fold/cuda/block_kernels.hpp"

namespace mlsb::moe_train::fold::gpu {
namespace {

using cuda::grid_blocks;
using cuda::kWarp;
using cuda::row_threads;

constexpr int kElementThreads = 256;

/// Sum of v over the block (device_vec.hpp's block_sum), given to every thread.
__device__ float block_sum(float v) {
  __shared__ float total;
  const float s = moe_train::gpu::detail::block_sum(v);
  if (threadIdx.x == 0) total = s;
  __syncthreads();
  const float out = total;
  __syncthreads();  // total may be reused by the next call
  return out;
}

/// Largest v over the block (blockDim.x a multiple of 32), given to every thread.
__device__ float block_max(float v) {
  __shared__ float partial[1024 / kWarp];
  __shared__ float total;
  for (int o = kWarp / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
  if (threadIdx.x % kWarp == 0) partial[threadIdx.x / kWarp] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = partial[0];
    for (unsigned w = 1; w < blockDim.x / kWarp; ++w) s = fmaxf(s, partial[w]);
    total = s;
  }
  __syncthreads();
  const float out = total;
  __syncthreads();
  return out;
}

__global__ void rmsnorm_forward_kernel(const float* x, const float* gain, int64_t h, float* y) {
  const float* xr = x + blockIdx.x * h;
  float ss = 0;
  for (int64_t i = threadIdx.x; i < h; i += blockDim.x) ss += xr[i] * xr[i];
  const float inv = 1.0f / sqrtf(block_sum(ss) / static_cast<float>(h) + static_cast<float>(kRmsNormEps));
  for (int64_t i = threadIdx.x; i < h; i += blockDim.x) y[blockIdx.x * h + i] = xr[i] * inv * gain[i];
}

__global__ void rmsnorm_backward_kernel(const float* x, const float* gain, const float* dy, int64_t h, float* dx,
                                        float* inv_out) {
  const float* xr = x + blockIdx.x * h;
  const float* dyr = dy + blockIdx.x * h;
  float ss = 0;
  for (int64_t i = threadIdx.x; i < h; i += blockDim.x) ss += xr[i] * xr[i];
  const float inv = 1.0f / sqrtf(block_sum(ss) / static_cast<float>(h) + static_cast<float>(kRmsNormEps));
  float dot = 0;
  for (int64_t i = threadIdx.x; i < h; i += blockDim.x) dot += dyr[i] * gain[i] * xr[i] * inv;
  dot = block_sum(dot);
  for (int64_t i = threadIdx.x; i < h; i += blockDim.x)
    dx[blockIdx.x * h + i] = inv * (dyr[i] * gain[i] - xr[i] * inv * dot / static_cast<float>(h));
  if (threadIdx.x == 0) inv_out[blockIdx.x] = inv;
}

// dgain[i] += sum over rows of dy[r, i] * x[r, i] * inv[r]: one thread per column, rows in order (deterministic).
__global__ void rmsnorm_gain_kernel(const float* x, const float* dy, const float* inv, int64_t rows, int64_t h,
                                    float* dgain) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < h;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float s = 0;
    for (int64_t r = 0; r < rows; ++r) s += dy[r * h + i] * x[r * h + i] * inv[r];
    dgain[i] += s;
  }
}

__global__ void causal_softmax_kernel(float* scores, int64_t qn, int64_t kn, int64_t q_pos, float scale) {
  float* row = scores + blockIdx.x * kn;
  const int64_t last = q_pos + blockIdx.x % qn;  // the query's own position: it sees keys 0..last
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j <= last; j += blockDim.x) m = fmaxf(m, row[j] * scale);
  m = block_max(m);
  float s = 0;
  for (int64_t j = threadIdx.x; j <= last; j += blockDim.x) {
    const float e = expf(row[j] * scale - m);
    row[j] = e, s += e;
  }
  s = block_sum(s);
  for (int64_t j = threadIdx.x; j < kn; j += blockDim.x) row[j] = j <= last ? row[j] / s : 0.0f;
}

__global__ void causal_softmax_backward_kernel(const float* p, float* dp, int64_t qn, int64_t kn, int64_t q_pos,
                                               float scale) {
  const float* pr = p + blockIdx.x * kn;
  float* dr = dp + blockIdx.x * kn;
  const int64_t last = q_pos + blockIdx.x % qn;
  float dot = 0;
  for (int64_t j = threadIdx.x; j <= last; j += blockDim.x) dot += dr[j] * pr[j];
  dot = block_sum(dot);
  for (int64_t j = threadIdx.x; j < kn; j += blockDim.x) dr[j] = j <= last ? pr[j] * (dr[j] - dot) * scale : 0.0f;
}

__global__ void fold_combine_kernel(const float* yp, const int32_t* slot_row, const float* weight, const float* residual,
                               int64_t topk, int64_t h, float* y) {
  const int64_t t = blockIdx.x;
  for (int64_t i = threadIdx.x; i < h; i += blockDim.x) {
    float acc = residual[t * h + i];
    for (int64_t j = 0; j < topk; ++j) {
      const int32_t r = slot_row[t * topk + j];
      if (r >= 0) acc += weight[t * topk + j] * yp[static_cast<int64_t>(r) * h + i];
    }
    y[t * h + i] = acc;
  }
}

__global__ void fold_combine_backward_kernel(const float* dy, const float* yp, const int32_t* slot_row,
                                        const float* weight, int64_t topk, int64_t h, float* dyp, float* dweight) {
  const int64_t t = blockIdx.x;
  for (int64_t j = 0; j < topk; ++j) {
    const int32_t r = slot_row[t * topk + j];  // the same for every thread: the branch is uniform
    if (r < 0) {
      if (threadIdx.x == 0) dweight[t * topk + j] = 0.0f;
      continue;
    }
    const float w = weight[t * topk + j];
    float dot = 0;
    for (int64_t i = threadIdx.x; i < h; i += blockDim.x) {
      dyp[static_cast<int64_t>(r) * h + i] = w * dy[t * h + i];
      dot += dy[t * h + i] * yp[static_cast<int64_t>(r) * h + i];
    }
    dot = block_sum(dot);
    if (threadIdx.x == 0) dweight[t * topk + j] = dot;
  }
}

__global__ void fold_unpermute_add_kernel(const float* dxp, const int32_t* slot_row, int64_t topk, int64_t h, float* dx) {
  const int64_t t = blockIdx.x;
  for (int64_t i = threadIdx.x; i < h; i += blockDim.x) {
    float acc = dx[t * h + i];
    for (int64_t j = 0; j < topk; ++j) {
      const int32_t r = slot_row[t * topk + j];
      if (r >= 0) acc += dxp[static_cast<int64_t>(r) * h + i];
    }
    dx[t * h + i] = acc;
  }
}

__global__ void copy_columns_kernel(float* dst, int64_t ld_dst, const float* src, int64_t ld_src, int64_t rows,
                                    int64_t cols, bool add) {
  const int64_t n = rows * cols;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = e / cols, c = e % cols;
    dst[r * ld_dst + c] = (add ? dst[r * ld_dst + c] : 0.0f) + src[r * ld_src + c];
  }
}

__global__ void fold_swiglu_forward_kernel(const float* h13, int64_t f, float* a) {
  const float* gate = h13 + blockIdx.x * 2 * f;
  for (int64_t c = threadIdx.x; c < f; c += blockDim.x) a[blockIdx.x * f + c] = common::swiglu(gate[c], gate[f + c]);
}

__global__ void fold_swiglu_backward_kernel(const float* h13, const float* da, int64_t f, float* dh13) {
  const float* gate = h13 + blockIdx.x * 2 * f;
  float* d = dh13 + blockIdx.x * 2 * f;
  for (int64_t c = threadIdx.x; c < f; c += blockDim.x)
    common::swiglu_backward(gate[c], gate[f + c], da[blockIdx.x * f + c], d[c], d[f + c]);
}

unsigned rows_grid(int64_t rows) { return static_cast<unsigned>(rows); }

}  // namespace

void rmsnorm_forward(const float* x, const float* gain, int64_t rows, int64_t h, float* y, cudaStream_t stream) {
  if (rows <= 0 || h <= 0) return;
  rmsnorm_forward_kernel<<<rows_grid(rows), row_threads(h), 0, stream>>>(x, gain, h, y);
}

void rmsnorm_backward(const float* x, const float* gain, const float* dy, int64_t rows, int64_t h, float* dx,
                      float* dgain, float* inv, cudaStream_t stream) {
  if (rows <= 0 || h <= 0) return;
  rmsnorm_backward_kernel<<<rows_grid(rows), row_threads(h), 0, stream>>>(x, gain, dy, h, dx, inv);
  rmsnorm_gain_kernel<<<grid_blocks(h, kElementThreads), kElementThreads, 0, stream>>>(x, dy, inv, rows, h, dgain);
}

void causal_softmax(float* scores, int64_t heads, int64_t qn, int64_t kn, int64_t q_pos, float scale,
                    cudaStream_t stream) {
  if (heads <= 0 || qn <= 0 || kn <= 0) return;
  causal_softmax_kernel<<<rows_grid(heads * qn), row_threads(kn), 0, stream>>>(scores, qn, kn, q_pos, scale);
}

void causal_softmax_backward(const float* p, float* dp, int64_t heads, int64_t qn, int64_t kn, int64_t q_pos,
                             float scale, cudaStream_t stream) {
  if (heads <= 0 || qn <= 0 || kn <= 0) return;
  causal_softmax_backward_kernel<<<rows_grid(heads * qn), row_threads(kn), 0, stream>>>(p, dp, qn, kn, q_pos, scale);
}

void fold_combine(const float* yp, const int32_t* slot_row, const float* weight, const float* residual, int64_t tokens,
             int64_t topk, int64_t h, float* y, cudaStream_t stream) {
  if (tokens <= 0 || h <= 0) return;
  fold_combine_kernel<<<rows_grid(tokens), row_threads(h), 0, stream>>>(yp, slot_row, weight, residual, topk, h, y);
}

void fold_combine_backward(const float* dy, const float* yp, const int32_t* slot_row, const float* weight, int64_t tokens,
                      int64_t topk, int64_t h, float* dyp, float* dweight, cudaStream_t stream) {
  if (tokens <= 0 || h <= 0) return;
  fold_combine_backward_kernel<<<rows_grid(tokens), row_threads(h), 0, stream>>>(dy, yp, slot_row, weight, topk, h, dyp,
                                                                            dweight);
}

void fold_unpermute_add(const float* dxp, const int32_t* slot_row, int64_t tokens, int64_t topk, int64_t h, float* dx,
                   cudaStream_t stream) {
  if (tokens <= 0 || h <= 0) return;
  fold_unpermute_add_kernel<<<rows_grid(tokens), row_threads(h), 0, stream>>>(dxp, slot_row, topk, h, dx);
}

void copy_columns(float* dst, int64_t ld_dst, const float* src, int64_t ld_src, int64_t rows, int64_t cols, bool add,
                  cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  copy_columns_kernel<<<grid_blocks(rows * cols, kElementThreads), kElementThreads, 0, stream>>>(dst, ld_dst, src,
                                                                                                ld_src, rows, cols, add);
}

void fold_swiglu_forward(const float* h13, int64_t rows, int64_t f, float* a, cudaStream_t stream) {
  if (rows <= 0 || f <= 0) return;
  fold_swiglu_forward_kernel<<<rows_grid(rows), row_threads(f), 0, stream>>>(h13, f, a);
}

void fold_swiglu_backward(const float* h13, const float* da, int64_t rows, int64_t f, float* dh13, cudaStream_t stream) {
  if (rows <= 0 || f <= 0) return;
  fold_swiglu_backward_kernel<<<rows_grid(rows), row_threads(f), 0, stream>>>(h13, da, f, dh13);
}

}  // namespace mlsb::moe_train::fold::gpu
