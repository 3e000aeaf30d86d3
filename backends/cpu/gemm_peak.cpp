#include "backends/cpu/gemm_peak.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cpu/gemm.hpp"
#include "util/clock.hpp"

namespace mlsb::cpu {
namespace {

// TFLOP/s of the best of 2 to 5 timed GEMMs of `s` after one warm-up: as many as fit in about a second.
double best_rate(const GemmShape& s) {
  std::vector<float> a(s.m * s.k, 0.5f), b(s.k * s.n, 0.25f), c(s.m * s.n, 0.0f);
  const auto run = [&] {
    const auto t0 = Clock::now();
    gemm<float>(s.trans_a, s.trans_b, s.m, s.n, s.k, a.data(), b.data(), 0.0f, c.data());
    return seconds_since(t0);
  };
  const double warmup = run();
  const int runs = std::clamp(static_cast<int>(1.0 / std::max(warmup, 1e-9)), 2, 5);
  double best = 1e30;
  for (int i = 0; i < runs; ++i) best = std::min(best, run());
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) / best / 1e12;
}

}  // namespace

double measured_gemm_peak_tflops(int threads, std::span<const GemmShape> shapes, bool remeasure) {
  for (const auto& s : shapes)
    if (s.m <= 0 || s.n <= 0 || s.k <= 0)
      throw std::invalid_argument("GEMM peak: shape m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
                                  " k=" + std::to_string(s.k) + " has a dimension that is not positive");
  static std::mutex mu;
  static std::map<std::pair<int, GemmShape>, double> best;  // (threads, shape) -> best rate so far
  std::lock_guard lock(mu);
  set_blas_threads(threads);
  std::vector<GemmShape> all(shapes.begin(), shapes.end());
  all.push_back({2048, 2048, 2048});
  double peak = 0;
  for (const auto& s : all) {
    double& rate = best[{threads, s}];
    if (rate == 0 || remeasure) rate = std::max(rate, best_rate(s));
    peak = std::max(peak, rate);
  }
  return peak;
}

}  // namespace mlsb::cpu
