#pragma once
// Random test inputs from a seed: header-only, no gtest, so the MPI check programs (tests/mpi) use it too.
#include <cstdint>
#include <random>
#include <vector>

namespace mlsb::test {

/// n draws of N(0, stddev^2) as floats from a std::mt19937_64 seeded with `seed`.
inline std::vector<float> normal_floats(size_t n, uint64_t seed, float stddev = 1.0f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.0f, stddev);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace mlsb::test
