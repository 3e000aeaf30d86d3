#pragma once
// Row-major fp32 GEMMs through cuBLAS, and a cuBLAS handle bound to a stream (include only where
// MLSB_HAVE_CUDA is defined). cuBLAS is column-major, so C = op(A) op(B) is computed as
// C^T = op(B)^T op(A)^T on the same memory.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace mlsb::cuda {

/// A cuBLAS handle that enqueues on `stream`, with strict fp32 math (CUBLAS_DEFAULT_MATH: no TF32,
/// so fp32 GEMMs are deterministic and comparable with a CPU BLAS) and, when `workspace_bytes` > 0,
/// a workspace of its own (the same workspace on every call keeps results run-to-run identical).
/// Throws std::runtime_error("cuda: ...") when cuBLAS or the allocation fails.
class BlasHandle {
 public:
  explicit BlasHandle(cudaStream_t stream, size_t workspace_bytes = size_t{32} << 20);
  ~BlasHandle();
  BlasHandle(const BlasHandle&) = delete;
  BlasHandle& operator=(const BlasHandle&) = delete;
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
  void* workspace_ = nullptr;
};

/// C [M, N] = op(A) [M, K] * op(B) [K, N] + beta * C, all fp32 device memory, fp32 compute
/// (CUBLAS_COMPUTE_32F). A is stored [M, K] row-major with row stride lda, or [K, M] when trans_a;
/// B is stored [K, N], or [N, K] when trans_b; C [M, N] with row stride ldc. M, N or K of 0 enqueues
/// nothing (C untouched). Enqueues on the handle's stream; throws std::runtime_error when cuBLAS
/// rejects the call or a size exceeds int.
void gemm_f32(cublasHandle_t handle, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const float* A,
              int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc, float beta = 0.0f);

}  // namespace mlsb::cuda
