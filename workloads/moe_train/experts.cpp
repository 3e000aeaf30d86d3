#include "workloads/moe_train/experts.hpp"

#include "util/clock.hpp"
#include "util/parallel.hpp"
#include "workloads/common/activations.hpp"

namespace mlsb::moe_train {
namespace {

constexpr int64_t kRowChunk = 64;  // rows per unit of element-wise work
using precision::linear_gemm;
using precision::Pass;

}  // namespace

template <typename T>
void experts_forward(const ExpertWeights<T>& w, const T* x, std::span<const int64_t> offsets, T* y,
                     ExpertCache<T>& cache, int threads, GemmStats& stats, int64_t first, int64_t last,
                     const ExpertSites& sites) {
  const int64_t h = w.hidden, f = w.ffn, rows = offsets[w.experts];
  cache.h13.resize(rows * 2 * f);
  cache.a.resize(rows * f);
  for (int64_t e = first; e < (last < 0 ? w.experts : last); ++e) {
    const int64_t o = offsets[e], m = offsets[e + 1] - o;
    if (m == 0) continue;
    T* h13 = cache.h13.data() + o * 2 * f;
    T* a = cache.a.data() + o * f;
    auto t0 = Clock::now();
    linear_gemm<T>(sites.fc1, Pass::Fprop, e, false, false, m, 2 * f, h, x + o * h, h, w.w13_of(e), 2 * f, T(0), h13,
                   2 * f);
    stats.seconds += seconds_since(t0);
    parallel_for_ranges(m, kRowChunk, threads, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t j = 0; j < f; ++j) a[r * f + j] = common::swiglu(h13[r * 2 * f + j], h13[r * 2 * f + f + j]);
    });
    t0 = Clock::now();
    linear_gemm<T>(sites.fc2, Pass::Fprop, e, false, false, m, h, f, a, f, w.w2_of(e), h, T(0), y + o * h, h);
    stats.seconds += seconds_since(t0);
    stats.flop += 6.0 * static_cast<double>(m) * static_cast<double>(h) * static_cast<double>(f);
  }
}

template <typename T>
void experts_backward(const ExpertWeights<T>& w, const T* x, std::span<const int64_t> offsets, const T* dy,
                      ExpertCache<T>& cache, T* dx, ExpertWeights<T>& grad, int threads, GemmStats& stats,
                      int64_t first, int64_t last, const ExpertSites& sites) {
  const int64_t h = w.hidden, f = w.ffn, rows = offsets[w.experts];
  auto& dh13 = cache.dh13;
  dh13.resize(rows * 2 * f);
  for (int64_t e = first; e < (last < 0 ? w.experts : last); ++e) {
    const int64_t o = offsets[e], m = offsets[e + 1] - o;
    if (m == 0) continue;
    const T* h13 = cache.h13.data() + o * 2 * f;
    const T* a = cache.a.data() + o * f;
    T* dh = dh13.data() + o * 2 * f;
    const T* dye = dy + o * h;
    auto t0 = Clock::now();
    // da = dy * w2^T, into the gate half of dh (rows of 2f), then turned into d(gate), d(up) in place.
    linear_gemm<T>(sites.fc2, Pass::Dgrad, e, false, true, m, f, h, dye, h, w.w2_of(e), h, T(0), dh, 2 * f);
    linear_gemm<T>(sites.fc2, Pass::Wgrad, e, true, false, f, h, m, a, f, dye, h, T(1), grad.w2_of(e), h);
    stats.seconds += seconds_since(t0);
    parallel_for_ranges(m, kRowChunk, threads, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t j = 0; j < f; ++j) {
          const T g = h13[r * 2 * f + j], u = h13[r * 2 * f + f + j], da = dh[r * 2 * f + j];
          common::swiglu_backward(g, u, da, dh[r * 2 * f + j], dh[r * 2 * f + f + j]);
        }
    });
    t0 = Clock::now();
    linear_gemm<T>(sites.fc1, Pass::Wgrad, e, true, false, h, 2 * f, m, x + o * h, h, dh, 2 * f, T(1),
                   grad.w13_of(e), 2 * f);
    linear_gemm<T>(sites.fc1, Pass::Dgrad, e, false, true, m, h, 2 * f, dh, 2 * f, w.w13_of(e), 2 * f, T(0), dx + o * h,
                   h);
    stats.seconds += seconds_since(t0);
    stats.flop += 12.0 * static_cast<double>(m) * static_cast<double>(h) * static_cast<double>(f);
  }
}

template void experts_forward(const ExpertWeights<float>&, const float*, std::span<const int64_t>, float*,
                              ExpertCache<float>&, int, GemmStats&, int64_t, int64_t, const ExpertSites&);
template void experts_forward(const ExpertWeights<double>&, const double*, std::span<const int64_t>, double*,
                              ExpertCache<double>&, int, GemmStats&, int64_t, int64_t, const ExpertSites&);
template void experts_backward(const ExpertWeights<float>&, const float*, std::span<const int64_t>, const float*,
                               ExpertCache<float>&, float*, ExpertWeights<float>&, int, GemmStats&, int64_t, int64_t,
                               const ExpertSites&);
template void experts_backward(const ExpertWeights<double>&, const double*, std::span<const int64_t>, const double*,
                               ExpertCache<double>&, double*, ExpertWeights<double>&, int, GemmStats&, int64_t,
                               int64_t, const ExpertSites&);

}  // namespace mlsb::moe_train
