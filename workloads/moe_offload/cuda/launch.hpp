#pragma once
// Launch shapes of the offloading executor's row kernels (include only from .cu files).
#include <cstdint>

#include "backends/cuda/launch.hpp"

namespace mlsb::moe_offload::gpu::detail {

using cuda::row_threads;  // threads for a block that walks a row: a multiple of 32 in [32, 256]

/// Blocks for `rows` rows, one row per block when it fits, else a grid-stride loop over rows.
inline unsigned row_blocks(int64_t rows) {
  constexpr int64_t kMax = 65535;  // enough blocks to fill any GPU
  return static_cast<unsigned>(rows < kMax ? rows : kMax);
}

}  // namespace mlsb::moe_offload::gpu::detail
