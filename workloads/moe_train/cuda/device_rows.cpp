// EpExchange's device staging (device_rows.hpp); compiled only with CUDA.
#ifdef MLSB_HAVE_CUDA
#include "workloads/moe_train/cuda/device_rows.hpp"

#include "workloads/moe_train/cuda/check.hpp"

namespace mlsb::moe_train::gpu {

unsigned char* DeviceRows::stage(int which, size_t bytes) {
  DeviceMemory& b = buffers_.at(static_cast<size_t>(which));
  if (bytes > b.size()) ready();  // growing frees the buffer: no queued copy may still use it
  return b.ensure<unsigned char>(static_cast<int64_t>(bytes));
}

void DeviceRows::copy(void* to, const void* from, size_t bytes) {
  check_cuda(cuda::copy_on(stream_, to, from, bytes, cuda::Landed::Later, "staging"), "staging copy");
}

size_t DeviceRows::bytes() const {
  size_t n = 0;
  for (const auto& b : buffers_) n += b.size();
  return n;
}

void DeviceRows::ready() { check_cuda(cudaStreamSynchronize(stream_), "staging copies"); }

}  // namespace mlsb::moe_train::gpu
#endif
