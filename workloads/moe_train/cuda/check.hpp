#pragma once
// Error checks of the MoE layer's CUDA host code: a failed CUDA runtime or cuBLAS call throws
// std::runtime_error("moe_train gpu: WHAT: REASON"). Include only where MLSB_HAVE_CUDA is defined.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace mlsb::moe_train::gpu {

inline void check_cuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear a sticky launch error so later calls start clean
    throw std::runtime_error(std::string("moe_train gpu: ") + what + ": " + cudaGetErrorString(err));
  }
}

/// Checks that the kernels enqueued since the last check launched (not that they finished).
inline void check_launch(const char* what) { check_cuda(cudaGetLastError(), what); }

inline void check_blas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("moe_train gpu: ") + what + ": " + cublasGetStatusString(status));
}

}  // namespace mlsb::moe_train::gpu
