#pragma once
// Host vectors into device buffers and back, for the GPU tests (include only where MLSB_HAVE_CUDA is defined).
// Synchronous with the whole device (cuda::DeviceBuffer's upload and download).
#include <algorithm>
#include <memory>
#include <vector>

#include "backends/cuda/device_buffer.hpp"

namespace mlsb::test {

/// A device buffer holding v (room for one element at least).
template <typename T>
std::unique_ptr<cuda::DeviceBuffer> device_copy(const std::vector<T>& v) {
  auto b = std::make_unique<cuda::DeviceBuffer>(std::max<size_t>(v.size(), 1) * sizeof(T));
  if (!v.empty()) b->upload(v.data(), v.size() * sizeof(T));
  return b;
}

/// The first n elements of a device buffer.
template <typename T>
std::vector<T> host_copy(const cuda::DeviceBuffer& b, size_t n) {
  std::vector<T> v(n);
  b.download(v.data(), n * sizeof(T));
  return v;
}

}  // namespace mlsb::test
