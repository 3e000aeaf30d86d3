#pragma once
// A model of the limited-precision accumulator of FP8 GEMMs on Hopper tensor cores. DeepSeek-V3 (arXiv
// 2412.19437, section 3.3.2) reports that the accumulation "is limited to retaining around 14 bits", which at
// a reduction length of 4096 gives relative errors near 2%, and fixes it by promoting: every 128 elements of the
// reduction (4 WGMMAs) the partial result is moved to CUDA cores and added into full fp32. We model the
// tensor-core accumulator as a running sum that keeps 14 significant bits (after every fp32 addition the
// fraction is truncated to 13 bits, toward zero, as an alignment shifter that drops bits would) and the promotion
// as an fp32 addition (round to nearest even) of that partial sum every kPromoteInterval elements. The operands are
// the quantisers' decoded values (scales applied), so the model truncates scaled partial sums, where hardware
// accumulates unscaled products and applies the tile scales at promotion.
#include <cstdint>

#include "workloads/moe_train/precision/recipe.hpp"

namespace mlsb::moe_train::precision {

/// Significant bits the limited accumulator keeps (the implicit bit included).
constexpr int kLimitedBits = 14;
/// Elements of the reduction between promotions (DeepSeek-V3's N_C = 128).
constexpr int64_t kPromoteInterval = 128;

/// C [m, n] (row stride ldc) = A [m, k] * B [k, n] + beta * C with `mode`'s accumulator; A and B packed row-major.
/// Fp32 calls the BLAS GEMM. Limited and promoted loop over k in order for each output (vectorised over n).
void gemm_accumulate(Accumulate mode, const float* a, const float* b, int64_t m, int64_t n, int64_t k, float beta,
                     float* c, int64_t ldc);

}  // namespace mlsb::moe_train::precision
