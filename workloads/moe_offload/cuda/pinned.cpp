// Pinned host memory for the expert store and the pinned host-to-device bandwidth (executor.hpp).
#include <stdexcept>
#include <string>

#include "backends/cuda/device.hpp"
#include "workloads/moe_offload/executor.hpp"

#ifdef MLSB_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>

#include "backends/cuda/check.hpp"
#include "backends/cuda/copy.hpp"
#include "backends/cuda/device_buffer.hpp"
#include "backends/cuda/stream.hpp"
#endif

namespace mlsb::moe_offload {

#ifndef MLSB_HAVE_CUDA

float* cuda_pinned_alloc(size_t) { throw std::runtime_error("built without CUDA"); }
void cuda_pinned_free(float* p) {
  if (p) throw std::runtime_error("built without CUDA");
}
double cuda_pinned_h2d_gbps(size_t) { throw std::runtime_error("built without CUDA"); }

#else

namespace {

constexpr const char* kPinnedContext = "moe_offload gpu";
constexpr int kRepeats = 5;
constexpr double kEventResolutionS = 0.5e-6;  // cudaEventElapsedTime's

void require_device() {
  std::string why;
  if (!cuda::cuda_available(&why)) throw std::runtime_error(why);
}

}  // namespace

float* cuda_pinned_alloc(size_t floats) {
  require_device();
  void* p = nullptr;
  const size_t bytes = std::max<size_t>(floats, 1) * sizeof(float);
  const cudaError_t err = cudaHostAlloc(&p, bytes, cudaHostAllocDefault);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error(std::string(kPinnedContext) + ": cudaHostAlloc of " + std::to_string(bytes) +
                             " bytes: " + cudaGetErrorString(err));
  }
  return static_cast<float*>(p);
}

void cuda_pinned_free(float* p) {
  if (p) cudaFreeHost(p);  // called from destructors: errors are ignored
}

double cuda_pinned_h2d_gbps(size_t bytes) {
  if (bytes == 0) throw std::invalid_argument("bytes: must be > 0");
  require_device();
  const std::unique_ptr<float, void (*)(float*)> host(cuda_pinned_alloc((bytes + sizeof(float) - 1) / sizeof(float)),
                                                      &cuda_pinned_free);
  cuda::DeviceBuffer device(bytes);
  cuda::Stream stream;
  cuda::Event start, stop;
  auto copy = [&] {
    cuda::check_cuda(cuda::copy_on(stream.get(), device.data(), host.get(), bytes, cuda::Landed::Later, kPinnedContext),
                     "copy (bandwidth)", kPinnedContext);
  };
  copy();  // warm-up: first-touch mappings and the copy engine
  cuda::check_cuda(cudaStreamSynchronize(stream.get()), "cudaStreamSynchronize (bandwidth)", kPinnedContext);
  double best = 0;
  for (int i = 0; i < kRepeats; ++i) {
    cuda::check_cuda(cudaEventRecord(start.get(), stream.get()), "cudaEventRecord", kPinnedContext);
    copy();
    cuda::check_cuda(cudaEventRecord(stop.get(), stream.get()), "cudaEventRecord", kPinnedContext);
    cuda::check_cuda(cudaEventSynchronize(stop.get()), "cudaEventSynchronize (bandwidth)", kPinnedContext);
    const double s =
        std::max(static_cast<double>(cuda::elapsed_ms(start, stop, kPinnedContext)) * 1e-3, kEventResolutionS);
    best = std::max(best, static_cast<double>(bytes) / s / 1e9);
  }
  return best;
}

#endif

}  // namespace mlsb::moe_offload
