#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#endif

#include "backends/cpu/gemm.hpp"
#include "util/clock.hpp"
#include "harness/workload.hpp"
#include "workloads/common/activations.hpp"
#include "workloads/moe_offload/executor.hpp"

namespace mlsb::moe_offload {
namespace {

// Evicts [p, p + bytes) from the CPU's caches (x86: clflush per 64-byte line; elsewhere nothing). A copy into
// a slot leaves the expert in the caches, which a host-to-device copy does not (it lands in device memory,
// not in the compute's cache): without this, a miss computes on a cache-hot expert and a policy with more
// misses computes faster on the CPU (LRU replayed faster than Belady with fewer misses).
void evict_from_caches(const void* p, size_t bytes) {
#if defined(__x86_64__) || defined(__i386__)
  const auto* c = static_cast<const char*>(p);
  for (size_t i = 0; i < bytes; i += 64) _mm_clflush(c + i);
  _mm_mfence();
#else
  (void)p, (void)bytes;
#endif
}

}  // namespace

void initial_hidden(uint64_t seed, int64_t token, int64_t hidden, float* out) {
  std::mt19937_64 rng(splitmix64(seed ^ (0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(token + 1))));
  std::normal_distribution<float> d;
  for (int64_t i = 0; i < hidden; ++i) out[i] = d(rng);
}

void expert_ffn_cpu(const ModelShape& m, const float* expert, const float* x, int64_t n, float* scratch, float* out) {
  const int64_t h = m.hidden, f = m.ffn;
  const float* w13 = expert;
  const float* w2 = expert + 2 * f * h;
  cpu::gemm<float>(false, true, n, 2 * f, h, x, w13, 0.f, scratch);  // [n, 2f]: gate | up
  for (int64_t r = 0; r < n; ++r) {
    float* g = scratch + r * 2 * f;
    for (int64_t j = 0; j < f; ++j) g[j] = common::swiglu(g[j], g[f + j]);
  }
  cpu::gemm<float>(false, true, n, h, f, 1.f, scratch, 2 * f, w2, f, 0.f, out, h);
}

namespace {

struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};
using AlignedFloats = std::unique_ptr<float[], AlignedFree>;

AlignedFloats aligned_floats(size_t n) {
  const size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
  auto* p = static_cast<float*>(std::aligned_alloc(64, bytes > 0 ? bytes : 64));
  if (!p) throw std::bad_alloc();
  return AlignedFloats(p);
}

class CpuExecutor final : public Executor {
 public:
  CpuExecutor(const ExpertStore& store, int64_t slots, double link_gbps, int threads, uint64_t seed)
      : store_(store), m_(store.shape()), slots_(slots), seed_(seed),
        slot_data_(aligned_floats(static_cast<size_t>(slots) * store.expert_floats())) {
    if (!(link_gbps > 0) || !std::isfinite(link_gbps)) throw std::invalid_argument("link_gbps: must be > 0");
    copy_seconds_ = static_cast<double>(m_.expert_bytes()) / (link_gbps * 1e9);
    cpu::set_blas_threads(threads);
  }

  ReplayResult replay(const RoutingTrace& t, const Schedule& s, const CachePlan* plan) override {
    const int64_t h = m_.hidden, k = t.topk, L = t.layers;
    ReplayResult r;
    r.hidden.resize(s.tokens.size() * h);
    for (size_t i = 0; i < s.tokens.size(); ++i) initial_hidden(seed_, s.tokens[i], h, &r.hidden[i * h]);
    std::vector<double> slot_ready(slots_, 0.0), slot_free(slots_, 0.0);
    double compute_clock = 0, copy_clock = 0;
    std::vector<float> y, xs, ys, scratch;
    std::vector<int64_t> rows, which;
    for (int64_t b = 0; b < s.batches(); ++b) {
      const int64_t first = s.batch_start[b], n = s.batch_start[b + 1] - first;
      const double batch_begin = compute_clock;
      y.assign(n * k * h, 0.f);
      for (int64_t l = 0; l < L; ++l) {
        const int64_t step = b * L + l;
        const double step_begin = compute_clock;
        // One expert's computation on the batch's tokens routed to it, into y [n, k, h].
        auto compute = [&](int32_t e, const float* weights) {
          rows.clear();
          which.clear();
          for (int64_t i = 0; i < n; ++i) {
            const int32_t* route = t.experts_of(s.tokens[first + i], l);
            for (int64_t j = 0; j < k; ++j)
              if (route[j] == e) rows.push_back(i), which.push_back(j);
          }
          const int64_t m = static_cast<int64_t>(rows.size());
          xs.resize(m * h);
          ys.resize(m * h);
          scratch.resize(m * 2 * m_.ffn);
          for (int64_t i = 0; i < m; ++i) std::memcpy(&xs[i * h], &r.hidden[(first + rows[i]) * h], h * sizeof(float));
          expert_ffn_cpu(m_, weights, xs.data(), m, scratch.data(), ys.data());
          for (int64_t i = 0; i < m; ++i) std::memcpy(&y[(rows[i] * k + which[i]) * h], &ys[i * h], h * sizeof(float));
        };
        auto timed = [&](double ready, auto&& body) {
          const double start = std::max(compute_clock, ready);
          r.stall_s += start - compute_clock;
          const auto t0 = Clock::now();
          body();
          const double dt = seconds_since(t0);
          r.compute_s += dt;
          compute_clock = start + dt;
        };
        if (!plan) {
          // All resident: the step's experts ascending, straight from the store.
          std::vector<int32_t> needed;
          for (int64_t i = 0; i < n; ++i) {
            const int32_t* route = t.experts_of(s.tokens[first + i], l);
            needed.insert(needed.end(), route, route + k);
          }
          std::sort(needed.begin(), needed.end());
          needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
          for (const int32_t e : needed) timed(0.0, [&] { compute(e, store_.expert(l, e)); });
        } else {
          for (int64_t i = plan->step_start[step]; i < plan->step_start[step + 1]; ++i) {
            const CacheEvent& ev = plan->events[i];
            float* slot = slot_data_.get() + static_cast<size_t>(ev.slot) * store_.expert_floats();
            if (ev.kind == Access::Miss || ev.kind == Access::Prefetch) {
              const double start = std::max({copy_clock, step_begin, slot_free[ev.slot]});
              std::memcpy(slot, store_.expert(ev.layer, ev.expert), m_.expert_bytes());
              evict_from_caches(slot, m_.expert_bytes());
              copy_clock = start + copy_seconds_;
              slot_ready[ev.slot] = copy_clock;
              r.copy_s += copy_seconds_;
              r.bytes_h2d += static_cast<double>(m_.expert_bytes());
            }
            if (ev.kind == Access::Prefetch) continue;
            timed(slot_ready[ev.slot], [&] { compute(ev.expert, slot); });
            slot_free[ev.slot] = compute_clock;
          }
        }
        // Combine in the trace's order: h += sum_j w_j * y_j.
        timed(0.0, [&] {
          for (int64_t i = 0; i < n; ++i) {
            float* hid = &r.hidden[(first + i) * h];
            const float* w = t.weights_of(s.tokens[first + i], l);
            for (int64_t j = 0; j < k; ++j) {
              const float* yj = &y[(i * k + j) * h];
              for (int64_t c = 0; c < h; ++c) hid[c] += w[j] * yj[c];
            }
          }
        });
      }
      r.batch_s.push_back(compute_clock - batch_begin);
    }
    r.total_s = compute_clock;
    return r;
  }

 private:
  const ExpertStore& store_;
  ModelShape m_;
  int64_t slots_;
  uint64_t seed_;
  AlignedFloats slot_data_;
  double copy_seconds_ = 0;
};

}  // namespace

std::unique_ptr<Executor> make_cpu_executor(const ExpertStore& store, int64_t slots, double link_gbps, int threads,
                                            uint64_t seed) {
  return std::make_unique<CpuExecutor>(store, slots, link_gbps, threads, seed);
}

}  // namespace mlsb::moe_offload
