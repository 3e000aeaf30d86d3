#pragma once
// Launch shapes of the offloading executor's row kernels (include only from .cu files).
#include <cstdint>

namespace mlsb::moe_offload::gpu::detail {

/// Threads for a block that walks a row of `width` elements: a multiple of 32 in [32, 256].
inline unsigned row_threads(int64_t width) {
  const int64_t t = (width + 31) / 32 * 32;
  return static_cast<unsigned>(t < 32 ? 32 : t > 256 ? 256 : t);
}

/// Blocks for `rows` rows, one row per block when it fits, else a grid-stride loop over rows.
inline unsigned row_blocks(int64_t rows) {
  constexpr int64_t kMax = 65535;  // enough blocks to fill any GPU
  return static_cast<unsigned>(rows < kMax ? rows : kMax);
}

}  // namespace mlsb::moe_offload::gpu::detail
