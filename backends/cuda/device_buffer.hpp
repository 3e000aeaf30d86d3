#pragma once
// Device memory for host code that hands buffers to device-buffer communicators (nccl) or kernels.
#include <cstddef>
#include <stdexcept>

namespace mlsb::cuda {

/// A cudaMalloc'd buffer of `bytes`, freed on destruction. Throws std::runtime_error naming the CUDA
/// error when allocation or a copy fails, and when the build has no CUDA.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  /// The buffer as an array of T (device memory: not for dereferencing on the host).
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  size_t size() const { return bytes_; }
  /// Copies `bytes` (<= size()) from host memory into the buffer, or out of it. Synchronous with the whole
  /// device: the copy waits for all work queued before it, on any stream, and has landed when this returns
  /// (for setup and checks, not for timed work).
  void upload(const void* host, size_t bytes);
  void download(void* host, size_t bytes) const;
  /// Copies `bytes` (<= both sizes) from another device buffer; synchronous with the whole device as above.
  void copy_from(const DeviceBuffer& other, size_t bytes);

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace mlsb::cuda
