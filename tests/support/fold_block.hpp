#pragma once
// The folded block the MPI checks run on P ranks (tests/mpi/moe_fold_check.cpp on the CPU, moe_fold_gpu_check.cpp
// on GPUs): small enough for every legal mapping of 8 ranks in seconds. Header-only, no gtest.
#include "workloads/moe_train/fold/block_config.hpp"

namespace mlsb::test {

/// hidden 16, ffn 8 P, P experts, top-2, 4 heads, seq 16, batch P, dropless, no aux or z loss.
inline moe_train::fold::BlockConfig check_block_config(int P) {
  moe_train::fold::BlockConfig c;
  c.moe.hidden = 16, c.moe.ffn = 8 * P, c.moe.experts = P, c.moe.topk = 2, c.moe.aux_coef = 0, c.moe.z_coef = 0;
  c.heads = 4, c.seq = 16, c.batch = P;
  return c;
}

}  // namespace mlsb::test
