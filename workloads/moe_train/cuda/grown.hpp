#pragma once
// Memory that grows with the rows a step brings (include only where MLSB_HAVE_CUDA is defined): the
// experts' rows under expert parallelism change every step.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "backends/cuda/device_buffer.hpp"
#include "backends/cuda/pinned_buffer.hpp"

namespace mlsb::moe_train::gpu {

/// Memory that grows to the largest size asked of it. The first allocation is the size asked; a reallocation
/// takes a quarter more, so small growth reallocates rarely. Buffer: cuda::DeviceBuffer or
/// cuda::PinnedBuffer<unsigned char>. Reallocating frees the old memory first (a failed allocation leaves
/// none): call it with nothing in flight.
template <typename Buffer>
class Grown {
 public:
  template <typename T>
  T* ensure(int64_t n) {
    const size_t bytes = sizeof(T) * static_cast<size_t>(std::max<int64_t>(n, 1));
    if (bytes > size_) {
      const size_t want = size_ == 0 ? bytes : bytes + bytes / 4;
      buf_.reset(), size_ = 0;
      buf_ = std::make_unique<Buffer>(want), size_ = want;
    }
    return static_cast<T*>(static_cast<void*>(buf_->data()));
  }
  size_t size() const { return size_; }

 private:
  std::unique_ptr<Buffer> buf_;
  size_t size_ = 0;
};
using DeviceMemory = Grown<cuda::DeviceBuffer>;
using HostMemory = Grown<cuda::PinnedBuffer<unsigned char>>;

}  // namespace mlsb::moe_train::gpu
