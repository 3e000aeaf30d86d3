#pragma once
// Weight initialisation shared by the MoE layer and the LM.
#include <random>
#include <vector>

namespace mlsb::moe_train {

/// Fills v with N(0, stddev^2) draws (computed in double, then narrowed to T) from `rng`.
template <typename T>
void fill_normal(std::vector<T>& v, double stddev, std::mt19937_64& rng) {
  std::normal_distribution<double> d(0.0, stddev);
  for (auto& x : v) x = static_cast<T>(d(rng));
}

}  // namespace mlsb::moe_train
