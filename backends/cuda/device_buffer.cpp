#include "backends/cuda/device_buffer.hpp"

#include <algorithm>
#include <string>

#ifdef MLSB_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace mlsb::cuda {

#ifdef MLSB_HAVE_CUDA
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("cuda: ") + what + ": " + cudaGetErrorString(e));
}

void require_fits(size_t bytes, size_t size) {
  if (bytes > size)
    throw std::runtime_error("cuda: copy of " + std::to_string(bytes) + " bytes into a " + std::to_string(size) +
                             "-byte device buffer");
}

}  // namespace

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  check(cudaMalloc(&data_, bytes == 0 ? 1 : bytes), "cudaMalloc");
}
DeviceBuffer::~DeviceBuffer() { cudaFree(data_); }
// The copies below go on the legacy stream, which the project's non-blocking streams do not wait for, and
// a pageable upload or a device-to-device copy may return before its data lands: each waits for the whole
// device before and after, so that it is ordered with every stream's work.
void DeviceBuffer::upload(const void* host, size_t bytes) {
  require_fits(bytes, bytes_);
  check(cudaDeviceSynchronize(), "synchronise before a copy to the device");
  check(cudaMemcpy(data_, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
  check(cudaDeviceSynchronize(), "synchronise after a copy to the device");
}
void DeviceBuffer::download(void* host, size_t bytes) const {
  require_fits(bytes, bytes_);
  check(cudaDeviceSynchronize(), "synchronise before a copy to the host");
  check(cudaMemcpy(host, data_, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
}
void DeviceBuffer::copy_from(const DeviceBuffer& other, size_t bytes) {
  require_fits(bytes, std::min(bytes_, other.bytes_));
  check(cudaDeviceSynchronize(), "synchronise before a copy on the device");
  check(cudaMemcpy(data_, other.data_, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy on the device");
  check(cudaDeviceSynchronize(), "synchronise after a copy on the device");
}
#else
DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) { throw std::runtime_error("cuda: built without CUDA"); }
DeviceBuffer::~DeviceBuffer() = default;
void DeviceBuffer::upload(const void*, size_t) {}
void DeviceBuffer::download(void*, size_t) const {}
void DeviceBuffer::copy_from(const DeviceBuffer&, size_t) {}
#endif

}  // namespace mlsb::cuda
