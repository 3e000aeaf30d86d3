// Row-major fp32 GEMMs through cuBLAS (blas.hpp); compiled only with CUDA.
#ifdef MLSB_HAVE_CUDA
#include "backends/cuda/blas.hpp"

#include <limits>
#include <stdexcept>

#include "backends/cuda/check.hpp"
#include "backends/cuda/cublas_api.hpp"

namespace mlsb::cuda {

BlasHandle::BlasHandle(cudaStream_t stream, size_t workspace_bytes) {
  const CublasApi& api = cublas();
  check_blas(api.create(&h_), "cublasCreate");
  try {
    check_blas(api.set_stream(h_, stream), "cublasSetStream");
    check_blas(api.set_math_mode(h_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    if (workspace_bytes > 0) {
      check_cuda(cudaMalloc(&workspace_, workspace_bytes), "cudaMalloc (cuBLAS workspace)");
      check_blas(api.set_workspace(h_, workspace_, workspace_bytes), "cublasSetWorkspace");
    }
  } catch (...) {
    api.destroy(h_);
    cudaFree(workspace_);
    throw;
  }
}

BlasHandle::~BlasHandle() {
  cublas().destroy(h_);
  cudaFree(workspace_);
}

void gemm_f32(cublasHandle_t handle, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const float* A,
              int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc, float beta) {
  if (M == 0 || N == 0 || K == 0) return;
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (M > kMax || N > kMax || K > kMax || lda > kMax || ldb > kMax || ldc > kMax)
    throw std::runtime_error("cuda: GEMM dimension beyond cuBLAS's int range");
  const float alpha = 1.0f;
  // Column-major view: C^T [N, M] = op(B)^T [N, K] * op(A)^T [K, M].
  check_blas(cublas().gemm_ex(handle, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                              static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), &alpha, B, CUDA_R_32F,
                              static_cast<int>(ldb), A, CUDA_R_32F, static_cast<int>(lda), &beta, C, CUDA_R_32F,
                              static_cast<int>(ldc), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
             "cublasGemmEx (fp32)");
}

}  // namespace mlsb::cuda
#endif
