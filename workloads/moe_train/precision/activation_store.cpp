#include "workloads/moe_train/precision/activation_store.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "util/simd.hpp"
#include "workloads/moe_train/precision/names.hpp"

#ifdef MLSB_SIMD_X86
#include <immintrin.h>
#endif

namespace mlsb::moe_train::precision {
namespace {

const std::vector<std::string> kStorageNames = {"full", "int8", "int4", "layer_aware"};
const std::vector<std::string> kLayerStorageNames(kStorageNames.begin(), kStorageNames.end() - 1);
constexpr std::string_view kLayerTypeNames[kLayerTypes] = {"norm", "attention", "moe"};

int bits_of(ActivationStorage s) { return s == ActivationStorage::Int8 ? 8 : s == ActivationStorage::Int4 ? 4 : 32; }

// One block of a row stored as symmetric integers (scale = amax / qmax over its finite elements, codes round half to
// even, clamped), in place, decoded; returns its non-finite elements (they stay). An all-zero block stays.
int64_t store_block(float* x, int64_t len, float qmax) {
  float amax = 0;
  int64_t wide = 0;
  for (int64_t i = 0; i < len; ++i) {
    if (std::isfinite(x[i]))
      amax = std::max(amax, std::fabs(x[i]));
    else
      ++wide;
  }
  if (amax == 0) return wide;
  const float scale = amax / qmax;
  for (int64_t i = 0; i < len; ++i)
    if (std::isfinite(x[i])) x[i] = std::clamp(std::nearbyint(x[i] / scale), -qmax, qmax) * scale;
  return wide;
}

#ifdef MLSB_SIMD_X86
// store_block on a whole block of kActivationBlock, eight lanes at a time: the same single operations (the max is
// exact, the division, rounding and product are IEEE's), so bit for bit the portable result.
MLSB_TARGET_AVX2 int64_t store_block_avx2(float* x, float qmax) {
  static_assert(kActivationBlock % 8 == 0);
  constexpr int kVectors = kActivationBlock / 8;
  const __m256i abs_mask = _mm256_set1_epi32(0x7FFFFFFF), inf = _mm256_set1_epi32(0x7F800000);
  __m256 v[kVectors], finite[kVectors];
  __m256 amax8 = _mm256_setzero_ps();
  int64_t wide = 0;
  for (int k = 0; k < kVectors; ++k) {
    v[k] = _mm256_loadu_ps(x + 8 * k);
    const __m256i abs = _mm256_and_si256(_mm256_castps_si256(v[k]), abs_mask);
    finite[k] = _mm256_castsi256_ps(_mm256_cmpgt_epi32(inf, abs));
    amax8 = _mm256_max_ps(amax8, _mm256_and_ps(_mm256_castsi256_ps(abs), finite[k]));
    wide += 8 - __builtin_popcount(_mm256_movemask_ps(finite[k]));
  }
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax8), _mm256_extractf128_ps(amax8, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  const float amax = _mm_cvtss_f32(m);
  if (amax == 0) return wide;
  const float scale = amax / qmax;
  const __m256 s = _mm256_set1_ps(scale), hi = _mm256_set1_ps(qmax), lo = _mm256_set1_ps(-qmax);
  for (int k = 0; k < kVectors; ++k) {
    const __m256 code = _mm256_round_ps(_mm256_div_ps(v[k], s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256 q = _mm256_mul_ps(_mm256_min_ps(_mm256_max_ps(code, lo), hi), s);
    _mm256_storeu_ps(x + 8 * k, _mm256_blendv_ps(v[k], q, finite[k]));
  }
  return wide;
}
#endif

}  // namespace

const std::vector<std::string>& activation_storage_names() { return kStorageNames; }
const std::vector<std::string>& layer_storage_names() { return kLayerStorageNames; }
std::string_view name_of(LayerType type) { return kLayerTypeNames[static_cast<int>(type)]; }
std::string storage_axis(LayerType type) { return std::string(name_of(type)) + "_storage"; }

ActivationStorage parse_activation_storage(std::string_view name, std::string_view axis, bool uniform) {
  return static_cast<ActivationStorage>(index_in(uniform ? kLayerStorageNames : kStorageNames, name, axis));
}

ActivationStore::ActivationStore(ActivationStorage storage, LayerStorage layers) : storage_(storage), layers_(layers) {
  for (int t = 0; t < kLayerTypes; ++t)
    if (layers_[t] == ActivationStorage::LayerAware)
      throw std::invalid_argument(storage_axis(static_cast<LayerType>(t)) +
                                  ": a layer type's storage is full, int8 or int4, not layer_aware");
}

ActivationStorage ActivationStore::storage_of(LayerType type) const {
  return storage_ == ActivationStorage::LayerAware ? layers_[static_cast<int>(type)] : storage_;
}

void ActivationStore::quantised(float* data, int64_t rows, int64_t cols, LayerType type) {
  const double n = static_cast<double>(rows * cols);
  const int bits = bits_of(storage_of(type));
  full_ += 4 * n;
  elements_ += n;
  if (bits == 32) {
    stored_ += 4 * n;
    element_bits_ += 32 * n;
    return;
  }
  const float qmax = static_cast<float>((1 << (bits - 1)) - 1);
#ifdef MLSB_SIMD_X86
  const bool avx2 = simd_level() >= Simd::avx2;
#endif
  int64_t wide = 0;  // non-finite elements: stored at full width
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c0 = 0; c0 < cols; c0 += kActivationBlock) {
      float* x = data + r * cols + c0;
      const int64_t len = std::min(kActivationBlock, cols - c0);
      stored_ += 4;  // the block's fp32 scale
#ifdef MLSB_SIMD_X86
      if (avx2 && len == kActivationBlock) {
        wide += store_block_avx2(x, qmax);
        continue;
      }
#endif
      wide += store_block(x, len, qmax);
    }
  const double w = static_cast<double>(wide);  // each beside its code, as an exception list would hold it
  stored_ += n * bits / 8 + 4.0 * w;
  element_bits_ += n * bits + 32.0 * w;
}

}  // namespace mlsb::moe_train::precision
