#include "backends/cpu/gemm_peak.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "backends/cpu/gemm.hpp"
#include "util/clock.hpp"

namespace mlsb::cpu {

double measured_gemm_peak_tflops(int threads) {
  static std::mutex mu;
  static std::map<int, double> cache;
  std::lock_guard lock(mu);
  set_blas_threads(threads);
  if (auto it = cache.find(threads); it != cache.end()) return it->second;
  constexpr int64_t n = 2048;
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n, 0.0f);
  gemm<float>(false, false, n, n, n, a.data(), b.data(), 0.0f, c.data());
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = Clock::now();
    gemm<float>(false, false, n, n, n, a.data(), b.data(), 0.0f, c.data());
    best = std::min(best, seconds_since(t0));
  }
  const double tflops = 2.0 * n * n * n / best / 1e12;
  cache[threads] = tflops;
  return tflops;
}

}  // namespace mlsb::cpu
