// Row-major bf16 GEMMs through cuBLAS (gemm.hpp); compiled only with CUDA.
#ifdef MLSB_HAVE_CUDA
#include "workloads/moe_train/cuda/gemm.hpp"

#include <limits>
#include <stdexcept>

#include "backends/cuda/cublas_api.hpp"
#include "workloads/moe_train/cuda/check.hpp"

namespace mlsb::moe_train::gpu {

void gemm_bf16(cublasHandle_t handle, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const void* A,
               int64_t lda, const void* B, int64_t ldb, void* C, int64_t ldc, bool c_fp32, float beta) {
  if (M == 0 || N == 0 || K == 0) return;
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (M > kMax || N > kMax || K > kMax || lda > kMax || ldb > kMax || ldc > kMax)
    throw std::runtime_error("moe_train gpu: GEMM dimension beyond cuBLAS's int range");
  const float alpha = 1.0f;
  // Column-major view: C^T [N, M] = op(B)^T [N, K] * op(A)^T [K, M].
  check_blas(cuda::cublas().gemm_ex(handle, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                                    static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), &alpha, B,
                                    CUDA_R_16BF, static_cast<int>(ldb), A, CUDA_R_16BF, static_cast<int>(lda), &beta, C,
                                    c_fp32 ? CUDA_R_32F : CUDA_R_16BF, static_cast<int>(ldc), CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT),
             "cublasGemmEx");
}

}  // namespace mlsb::moe_train::gpu
#endif
