#pragma once
// fp32 row gathers and scatters on a CUDA device (rows.cu): the permutations of MoE tokens into expert order and
// back. Pointers are device memory, row-major; each launcher enqueues on `stream` and returns at once (a launch
// error is seen by the caller's check_launch), and enqueues nothing without rows.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace mlsb::common::gpu {

/// out[i] = x[rows[i]] for i < m; x [*, h], out [m, h].
void gather_rows(const float* x, const int32_t* rows, int64_t m, int64_t hidden, float* out, cudaStream_t stream);

/// y[dst[i]] = in[i] for i < m; in [m, h], y [*, h] (distinct dst).
void scatter_rows(const float* in, const int32_t* dst, int64_t m, int64_t hidden, float* y, cudaStream_t stream);

}  // namespace mlsb::common::gpu
