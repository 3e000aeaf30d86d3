#pragma once
// How close two float tensors are, for GPU results against their CPU oracle (bf16 on the GPU, fp32 on the
// CPU): bf16 rounding of the oracle's inputs, norms and the relative L2 error. Header-only, no gtest, so the
// MPI check programs (tests/mpi) use it too.
#include <cmath>
#include <limits>
#include <vector>

#include "backends/formats/small_floats.hpp"

namespace mlsb::test {

/// x rounded to the nearest bf16 (the GPU's weights and activations), as a float.
inline float round_bf16(float x) { return formats::bf16_to_f32(formats::f32_to_bf16(x)); }
inline std::vector<float> rounded(std::vector<float> v) {
  for (auto& x : v) x = round_bf16(x);
  return v;
}

inline double norm(const std::vector<float>& a) {
  double s = 0;
  for (float x : a) s += static_cast<double>(x) * x;
  return std::sqrt(s);
}

/// ||a - b|| / ||b|| (||a - b|| when b is 0); infinity when the sizes differ.
inline double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double d = 0, n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    n += static_cast<double>(b[i]) * b[i];
  }
  return n == 0 ? std::sqrt(d) : std::sqrt(d / n);
}

}  // namespace mlsb::test
