#pragma once
// Launch shapes the CUDA kernels share (include only from .cu files): the warp size, the blocks of a
// grid-stride loop, and the blocks and threads of kernels that walk rows.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace mlsb::cuda {

constexpr int kWarp = 32;

/// The most blocks a grid-stride loop gets: 16 per SM of the current device (132 SMs, an H100 SXM's, when
/// the device cannot be asked), enough to fill it.
inline int grid_limit() {
  static const int limit = [] {
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
      sms = 132;
    return sms * 16;
  }();
  return limit;
}

/// Blocks for a grid-stride loop over `items` work items, `per_block` to a block: ceil(items / per_block),
/// at least 1 and at most grid_limit().
inline int grid_blocks(int64_t items, int64_t per_block = 1) {
  const int64_t b = (items + per_block - 1) / per_block;
  return static_cast<int>(b < 1 ? 1 : b < grid_limit() ? b : grid_limit());
}

/// Blocks for `rows` rows walked one block per row: one each when they fit, else a grid-stride loop over rows.
inline unsigned row_blocks(int64_t rows) {
  constexpr int64_t kMax = 65535;  // enough blocks to fill any GPU
  return static_cast<unsigned>(rows < kMax ? rows : kMax);
}

/// Threads for a block that walks a row of `chunks` chunks (elements, or vectors of them): a multiple of 32
/// in [32, 256].
inline int row_threads(int64_t chunks) {
  const int64_t t = (chunks + kWarp - 1) / kWarp * kWarp;
  return static_cast<int>(t < kWarp ? kWarp : t > 256 ? 256 : t);
}

}  // namespace mlsb::cuda
