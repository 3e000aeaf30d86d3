#include "backends/cuda/device_buffer.hpp"

#include <algorithm>
#include <string>

#ifdef MLSB_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "backends/cuda/copy.hpp"
#include "backends/cuda/stream.hpp"
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
// Each copy waits for the whole device first (the work of every stream that may still use either buffer),
// then goes on a stream of its own and has landed when it returns.
void DeviceBuffer::upload(const void* host, size_t bytes) {
  require_fits(bytes, bytes_);
  check(cudaDeviceSynchronize(), "synchronise before a copy to the device");
  check(copy_on(Stream().get(), data_, host, bytes, Landed::OnReturn, "upload"), "copy to the device");
}
void DeviceBuffer::download(void* host, size_t bytes) const {
  require_fits(bytes, bytes_);
  check(cudaDeviceSynchronize(), "synchronise before a copy to the host");
  check(copy_on(Stream().get(), host, data_, bytes, Landed::OnReturn, "download"), "copy to the host");
}
void DeviceBuffer::copy_from(const DeviceBuffer& other, size_t bytes) {
  require_fits(bytes, std::min(bytes_, other.bytes_));
  check(cudaDeviceSynchronize(), "synchronise before a copy on the device");
  check(copy_on(Stream().get(), data_, other.data_, bytes, Landed::OnReturn, "copy_from"), "copy on the device");
}
#else
DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) { throw std::runtime_error("cuda: built without CUDA"); }
DeviceBuffer::~DeviceBuffer() = default;
void DeviceBuffer::upload(const void*, size_t) {}
void DeviceBuffer::download(void*, size_t) const {}
void DeviceBuffer::copy_from(const DeviceBuffer&, size_t) {}
#endif

}  // namespace mlsb::cuda
