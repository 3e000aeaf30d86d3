#pragma once
// Launchers of the folded block's fp32 CUDA kernels (block_kernels.cu), called by fold/gpu_block.cpp (its row
// gathers and scatters are workloads/common/cuda/rows.hpp's). All
// pointers are device memory, fp32 row-major unless named otherwise; every launcher enqueues on `stream` and
// returns at once (check_launch sees a launch error), and enqueues nothing when there is nothing to do. The
// arithmetic is the CPU block's (attention.cpp, experts.cpp, workloads/common/activations.hpp), so the CPU block
// is the oracle within fp32 rounding.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace mlsb::moe_train::fold::gpu {

/// y [rows, h] = x / sqrt(mean(x^2) + kRmsNormEps) * gain (attention.hpp's RMSNorm); one block per row.
void rmsnorm_forward(const float* x, const float* gain, int64_t rows, int64_t h, float* y, cudaStream_t stream);
/// dx [rows, h] (overwritten) and dgain [h] (added) from dy; inv [rows] is scratch (each row's 1 / rms).
void rmsnorm_backward(const float* x, const float* gain, const float* dy, int64_t rows, int64_t h, float* dx,
                      float* dgain, float* inv, cudaStream_t stream);

/// In place over scores [heads * qn, kn] (`heads` blocks of qn query rows): each row i of a block (query position
/// q_pos + i mod qn) becomes softmax(scale * s) over keys 0..q_pos + i, and 0 past it (causal_head_forward).
void causal_softmax(float* scores, int64_t heads, int64_t qn, int64_t kn, int64_t q_pos, float scale,
                    cudaStream_t stream);
/// In place: dp [heads * qn, kn] becomes ds = p * (dp - rowsum(dp * p)) * scale over the visible keys, 0 past
/// them (causal_head_backward).
void causal_softmax_backward(const float* p, float* dp, int64_t heads, int64_t qn, int64_t kn, int64_t q_pos,
                             float scale, cudaStream_t stream);

/// y[t] = residual[t] + sum over kept slots j of weight[t, j] * yp[slot_row[t, j]] (slot order), y [tokens, h].
void fold_combine(const float* yp, const int32_t* slot_row, const float* weight, const float* residual, int64_t tokens,
             int64_t topk, int64_t h, float* y, cudaStream_t stream);
/// Its backward: dyp[slot_row[t, j]] = weight[t, j] * dy[t], dweight[t, j] = <dy[t], yp[slot_row[t, j]]> (0 for a
/// dropped slot).
void fold_combine_backward(const float* dy, const float* yp, const int32_t* slot_row, const float* weight, int64_t tokens,
                      int64_t topk, int64_t h, float* dyp, float* dweight, cudaStream_t stream);
/// dx[t] += sum over kept slots of dxp[slot_row[t, j]].
void fold_unpermute_add(const float* dxp, const int32_t* slot_row, int64_t tokens, int64_t topk, int64_t h, float* dx,
                   cudaStream_t stream);

/// dst[r * ld_dst + c] = (add ? dst[r * ld_dst + c] : 0) + src[r * ld_src + c] for r < rows, c < cols.
void copy_columns(float* dst, int64_t ld_dst, const float* src, int64_t ld_src, int64_t rows, int64_t cols, bool add,
                  cudaStream_t stream);

/// a [rows, f] = silu(gate) * up of h13 [rows, 2f] (gate | up).
void fold_swiglu_forward(const float* h13, int64_t rows, int64_t f, float* a, cudaStream_t stream);
/// dh13 [rows, 2f] = (d gate | d up) from h13 and da [rows, f].
void fold_swiglu_backward(const float* h13, const float* da, int64_t rows, int64_t f, float* dh13, cudaStream_t stream);

}  // namespace mlsb::moe_train::fold::gpu
