#pragma once
// Page-locked (pinned) host memory, the source and target of asynchronous host-device copies (include only
// where MLSB_HAVE_CUDA is defined).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>

#include "backends/cuda/check.hpp"

namespace mlsb::cuda {

/// `n` elements of T in pinned host memory (cudaMallocHost; room for one at least, so data() is never
/// null), uninitialised, freed on destruction. Throws std::runtime_error("cuda: cudaMallocHost: ...").
template <typename T>
class PinnedBuffer {
 public:
  explicit PinnedBuffer(size_t n) : n_(n) {
    check_cuda(cudaMallocHost(reinterpret_cast<void**>(&p_), sizeof(T) * std::max<size_t>(n, 1)), "cudaMallocHost");
  }
  ~PinnedBuffer() { cudaFreeHost(p_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  T* data() const { return p_; }
  size_t size() const { return n_; }
  T& operator[](size_t i) const { return p_[i]; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

}  // namespace mlsb::cuda
