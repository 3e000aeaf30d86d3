#pragma once
// Row-major bf16 GEMMs through cuBLAS (include only where MLSB_HAVE_CUDA is defined): cuBLAS is
// column-major, so C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T on the same memory.
#include <cublas_v2.h>

#include <cstdint>

namespace mlsb::moe_train::gpu {

/// C [M, N] = op(A) [M, K] * op(B) [K, N] + beta * C, A and B bf16, fp32 accumulation
/// (CUBLAS_COMPUTE_32F, tensor cores), C bf16 (c_fp32 false) or fp32. A is stored [M, K] row-major
/// with row stride lda, or [K, M] when trans_a; B is stored [K, N], or [N, K] when trans_b; C [M, N]
/// with row stride ldc. M, N or K of 0 enqueues nothing (C untouched). Enqueues on the handle's
/// stream; throws std::runtime_error when cuBLAS rejects the call (or a size exceeds int).
void gemm_bf16(cublasHandle_t handle, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const void* A,
               int64_t lda, const void* B, int64_t ldb, void* C, int64_t ldc, bool c_fp32, float beta = 0.0f);

}  // namespace mlsb::moe_train::gpu
