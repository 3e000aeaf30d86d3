#pragma once
// The one way this project copies memory to, from or on a GPU (include only where MLSB_HAVE_CUDA is
// defined). A blocking cudaMemcpy runs on the legacy default stream, which the project's non-blocking
// streams (kernels, NCCL) do not wait for, and from pageable host memory it may return before the data
// lands: every copy here is queued on the stream of the work that produces or reads the data instead.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace mlsb::cuda {

/// The CUDA runtime calls a copy makes, behind a seam that tests replace with a recorder.
struct RuntimeCopies {
  cudaError_t copy(void* dst, const void* src, size_t bytes, cudaStream_t stream) const {
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream);
  }
  cudaError_t wait(cudaStream_t stream) const { return cudaStreamSynchronize(stream); }
};

/// When a copy's caller may use its memory again.
enum class Landed {
  Later,     ///< once the stream has reached the copy (the stream's later kernels see the data)
  OnReturn,  ///< when copy_on returns: the stream is synchronised (host memory may be read or reused)
};

/// Copies `bytes` from `src` to `dst` (host or device memory: the direction comes from the pointers,
/// cudaMemcpyDefault under unified addressing) on `stream`, after the work queued there before it and before
/// the work queued after it. Returns the first failed call's error (cudaSuccess otherwise; nothing is called
/// for 0 bytes), for the caller's own check. Throws std::logic_error naming `what` for the legacy default
/// stream (nullptr or cudaStreamLegacy) and the per-thread default stream, which the project's non-blocking
/// streams are not ordered with.
template <class Api = RuntimeCopies>
[[nodiscard]] cudaError_t copy_on(cudaStream_t stream, void* dst, const void* src, size_t bytes, Landed landed,
                                  const char* what, const Api& api = {}) {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
    throw std::logic_error(std::string(what) +
                           ": a copy on a default stream is not ordered with the non-blocking streams that use it");
  if (bytes == 0) return cudaSuccess;
  if (const cudaError_t e = api.copy(dst, src, bytes, stream); e != cudaSuccess) return e;
  return landed == Landed::OnReturn ? api.wait(stream) : cudaSuccess;
}

}  // namespace mlsb::cuda
