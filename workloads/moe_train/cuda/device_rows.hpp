#pragma once
// EpExchange's staging in device memory, for a communicator whose buffers are device memory (nccl)
// (include only where MLSB_HAVE_CUDA is defined).
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>

#include "workloads/moe_train/cuda/grown.hpp"
#include "workloads/moe_train/ep_exchange.hpp"

namespace mlsb::moe_train::gpu {

/// Four grown device buffers; copy() queues a device-to-device copy (cuda::copy_on) on `stream`, so the
/// layer's work on that stream is ordered after it, and ready() synchronises the stream. Throws
/// std::runtime_error("moe_train gpu: ...") naming the failed CUDA call.
class DeviceRows final : public RowMemory {
 public:
  explicit DeviceRows(cudaStream_t stream) : stream_(stream) {}
  unsigned char* stage(int which, size_t bytes) override;
  void copy(void* to, const void* from, size_t bytes) override;
  void ready() override;
  size_t bytes() const override;

 private:
  cudaStream_t stream_;
  std::array<DeviceMemory, 4> buffers_;
};

}  // namespace mlsb::moe_train::gpu
