#pragma once
// Launchers of the offloading executor's CUDA kernels (swiglu.cu, combine.cu; its row moves are
// workloads/common/cuda/rows.hpp's), called by gpu_executor.cpp. All pointers are fp32 or int32 device memory, row-major. Every launcher enqueues
// on `stream` and returns at once (a launch error is seen by the caller's check_launch, an execution
// error at its next synchronisation); a launcher with no rows enqueues nothing. The arithmetic is the
// CPU executor's (cpu_executor.cpp), rounding step for rounding step where it matters (the combine).
#include <cuda_runtime_api.h>

#include <cstdint>

namespace mlsb::moe_offload::gpu {

/// In place on gu [m, 2f] (gate columns first, then up): gu[r, j] = silu(gate) * up for j < f,
/// silu(g) = g / (1 + exp(-g)); the up half is left as it was.
void swiglu_inplace(float* gu, int64_t m, int64_t ffn, cudaStream_t stream);

/// hidden[i] += w[i * w_stride + j] * y[i * k + j] for j = 0 .. k-1 in that order, each product and
/// sum rounded to fp32 (no fused multiply-add), for i < n; hidden [n, h], y [n * k, h].
void combine_add(float* hidden, const float* y, const float* w, int64_t n, int64_t topk, int64_t hidden_size,
                 int64_t w_stride, cudaStream_t stream);

}  // namespace mlsb::moe_offload::gpu
