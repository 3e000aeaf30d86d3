#include "workloads/moe_train/precision/activation_store.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace mlsb::moe_train::precision {
namespace {

const std::vector<std::string> kStorageNames = {"full", "int8", "int4"};

}  // namespace

const std::vector<std::string>& activation_storage_names() { return kStorageNames; }

ActivationStorage parse_activation_storage(std::string_view name) {
  for (size_t i = 0; i < kStorageNames.size(); ++i)
    if (kStorageNames[i] == name) return static_cast<ActivationStorage>(i);
  throw std::invalid_argument("activation_storage: unknown '" + std::string(name) + "' (one of full, int8, int4)");
}

void ActivationStore::quantised(float* data, int64_t rows, int64_t cols) {
  const double n = static_cast<double>(rows * cols);
  full_ += 4 * n;
  if (storage_ == ActivationStorage::Full) {
    stored_ += 4 * n;
    return;
  }
  const int bits = storage_ == ActivationStorage::Int8 ? 8 : 4;
  const float qmax = static_cast<float>((1 << (bits - 1)) - 1);
  int64_t wide = 0;  // non-finite elements: stored at full width
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c0 = 0; c0 < cols; c0 += kActivationBlock) {
      float* x = data + r * cols + c0;
      const int64_t len = std::min(kActivationBlock, cols - c0);
      float amax = 0;
      for (int64_t i = 0; i < len; ++i) {
        if (std::isfinite(x[i]))
          amax = std::max(amax, std::fabs(x[i]));
        else
          ++wide;
      }
      stored_ += 4;  // the block's fp32 scale
      if (amax == 0) continue;  // zeros (and non-finite values) stay
      const float scale = amax / qmax;
      for (int64_t i = 0; i < len; ++i)
        if (std::isfinite(x[i])) x[i] = std::clamp(std::nearbyint(x[i] / scale), -qmax, qmax) * scale;  // half even
    }
  stored_ += n * bits / 8 + 4.0 * static_cast<double>(wide);
}

}  // namespace mlsb::moe_train::precision
