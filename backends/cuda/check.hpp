#pragma once
// Error checks for CUDA host code: a failed CUDA runtime or cuBLAS call throws
// std::runtime_error("CONTEXT: WHAT: REASON"), CONTEXT naming the caller ("moe_offload gpu", ...).
// Include only where MLSB_HAVE_CUDA is defined.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "backends/cuda/cublas_api.hpp"

namespace mlsb::cuda {

/// Throws for err != cudaSuccess (and clears a sticky launch error so later calls start clean).
inline void check_cuda(cudaError_t err, const char* what, const char* context = "cuda") {
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error(std::string(context) + ": " + what + ": " + cudaGetErrorString(err));
  }
}

/// Checks that the kernels enqueued since the last check launched (not that they finished).
inline void check_launch(const char* what, const char* context = "cuda") {
  check_cuda(cudaGetLastError(), what, context);
}

/// The CUDA runtime's last-error slot of this thread (cudaPeekAtLastError, cudaGetLastError), behind a seam
/// that tests replace with a fake slot.
struct RuntimeLastError {
  cudaError_t peek() const { return cudaPeekAtLastError(); }
  cudaError_t take() const { return cudaGetLastError(); }
};

/// Reads a completion query's answer (cudaEventQuery, cudaStreamQuery): true when the work is done. Not yet
/// (cudaErrorNotReady): false, and a NotReady the runtime left in this thread's last-error slot is cleared,
/// so that the next check_launch does not take it for a failed launch (PyTorch clears it too: PR #18584);
/// a launch error found there stays for check_launch. Any other answer: false with *error set to it, the
/// slot cleared.
template <class LastError = RuntimeLastError>
bool query_done(cudaError_t answer, cudaError_t* error, const LastError& slot = {}) {
  *error = cudaSuccess;
  if (answer == cudaSuccess) return true;
  if (answer == cudaErrorNotReady) {
    if (slot.peek() == cudaErrorNotReady) slot.take();
    return false;
  }
  slot.take();
  *error = answer;
  return false;
}

/// Throws for status != CUBLAS_STATUS_SUCCESS.
inline void check_blas(cublasStatus_t status, const char* what, const char* context = "cuda") {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(context) + ": " + what + ": " + cublas().status_string(status));
}

}  // namespace mlsb::cuda
