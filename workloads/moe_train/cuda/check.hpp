#pragma once
// Error checks of the MoE layer's CUDA host code: backends/cuda/check.hpp's, throwing
// std::runtime_error("moe_train gpu: WHAT: REASON"). Include only where MLSB_HAVE_CUDA is defined.
#include "backends/cuda/check.hpp"
#include "backends/cuda/copy.hpp"

namespace mlsb::moe_train::gpu {

inline void check_cuda(cudaError_t err, const char* what) { ::mlsb::cuda::check_cuda(err, what, "moe_train gpu"); }

/// Checks that the kernels enqueued since the last check launched (not that they finished).
inline void check_launch(const char* what) { ::mlsb::cuda::check_launch(what, "moe_train gpu"); }

inline void check_blas(cublasStatus_t status, const char* what) {
  ::mlsb::cuda::check_blas(status, what, "moe_train gpu");
}

}  // namespace mlsb::moe_train::gpu
