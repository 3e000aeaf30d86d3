// The CUDA offloading executor (workloads/moe_offload/executor.hpp, gpu_executor.cpp):
//   MoeOffloadGpuLists:    the host-side routing lists the kernels read (no GPU needed).
//   MoeOffloadGpuAbsent:   without CUDA or a device, the CUDA entry points throw std::runtime_error.
//   MoeOffloadGpuExecutor: on a small synthetic trace with an LRU plan at 25% cache (both scopes),
//                          the offloaded replay equals the all-resident replay bit for bit, matches
//                          the CPU executor (OpenBLAS) to 1e-4 relative, copies transfers *
//                          expert_bytes bytes, and reports consistent timings.
// GPU tests skip (with the reason) where no CUDA device is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cuda/device.hpp"
#include "workloads/moe_offload/cache_sim.hpp"
#include "workloads/moe_offload/cuda/routing_lists.hpp"
#include "workloads/moe_offload/executor.hpp"
#include "workloads/moe_offload/model.hpp"
#include "workloads/moe_offload/schedule.hpp"
#include "workloads/moe_offload/synthetic_trace.hpp"

namespace mlsb::moe_offload {
namespace {

#define SKIP_WITHOUT_GPU()                                              \
  do {                                                                  \
    std::string why;                                                    \
    if (!cuda::cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why; \
  } while (0)

constexpr uint64_t kSeed = 7;

ModelShape small_model() {
  ModelShape m;
  m.layers = 4, m.experts = 8, m.topk = 2, m.hidden = 64, m.ffn = 96;
  return m;
}

RoutingTrace small_trace(const ModelShape& m) {
  SyntheticTraceSpec spec;
  spec.layers = m.layers, spec.experts = m.experts, spec.topk = m.topk;
  spec.sequences = 8, spec.seq_len = 24, spec.seed = 3;
  return synthetic_trace(spec);
}

TEST(MoeOffloadGpuLists, EveryTokenSlotOnceByExpertAscending) {
  const ModelShape m = small_model();
  const RoutingTrace t = small_trace(m);
  const Schedule s = make_schedule(t, Phase::Decode, 4, 2, 0, t.sequences());
  const gpu::RoutingLists lists = gpu::build_routing_lists(t, s);
  const LookupStream ls = make_lookups(t, s);
  ASSERT_EQ(lists.steps(), ls.steps());
  EXPECT_EQ(lists.expert, ls.expert);  // the distinct experts of each step, ascending
  EXPECT_EQ(lists.step_start, ls.step_start);
  const int64_t k = t.topk, L = t.layers;
  for (int64_t b = 0; b < s.batches(); ++b) {
    const int64_t first = s.batch_start[b], n = s.batch_start[b + 1] - first;
    EXPECT_LE(n, lists.max_batch);
    for (int64_t l = 0; l < L; ++l) {
      const int64_t step = b * L + l;
      std::vector<int> seen(static_cast<size_t>(n * k), 0);
      for (int64_t e = lists.step_start[step]; e < lists.step_start[step + 1]; ++e) {
        EXPECT_EQ(lists.find(step, lists.expert[e]), e);
        for (int64_t r = lists.row_start[e]; r < lists.row_start[e + 1]; ++r) {
          const int64_t i = lists.dst[r] / k, j = lists.dst[r] % k;
          ASSERT_EQ(lists.src[r], first + i);
          if (r > lists.row_start[e]) {
            EXPECT_LT(lists.src[r - 1], lists.src[r]);  // batch order
          }
          EXPECT_EQ(t.experts_of(s.tokens[first + i], l)[j], lists.expert[e]);
          ++seen[static_cast<size_t>(lists.dst[r])];
        }
      }
      for (const int c : seen) EXPECT_EQ(c, 1);
    }
  }
  for (int64_t p = 0; p < static_cast<int64_t>(s.tokens.size()); ++p)
    for (int64_t l = 0; l < L; ++l)
      for (int64_t j = 0; j < k; ++j)
        EXPECT_EQ(lists.weight[(p * L + l) * k + j], t.weights_of(s.tokens[p], l)[j]);
  EXPECT_EQ(lists.find(0, static_cast<int32_t>(m.experts)), -1);
}

TEST(MoeOffloadGpuAbsent, EntryPointsThrowRuntimeError) {
  if (cuda::cuda_available()) GTEST_SKIP() << "a CUDA device is present";
  const ExpertStore store(small_model(), kSeed);
  EXPECT_THROW(make_cuda_executor(store, 4, kSeed), std::runtime_error);
  EXPECT_THROW(cuda_pinned_alloc(16), std::runtime_error);
  EXPECT_THROW(cuda_pinned_h2d_gbps(1 << 20), std::runtime_error);
  EXPECT_NO_THROW(cuda_pinned_free(nullptr));
}

/// Relative difference of a and b, scaled by the larger of |b| and the rms of the whole vector (so
/// elements near zero are judged against the vector's magnitude).
double max_relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double ss = 0;
  for (const float v : b) ss += static_cast<double>(v) * v;
  const double rms = std::sqrt(ss / static_cast<double>(std::max<size_t>(b.size(), 1)));
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double scale = std::max(std::abs(static_cast<double>(b[i])), rms);
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]) / scale);
  }
  return worst;
}

size_t first_difference(const std::vector<float>& a, const std::vector<float>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return i;
  return a.size();
}

class MoeOffloadGpuExecutor : public ::testing::TestWithParam<bool> {};  // per-layer scope?

TEST_P(MoeOffloadGpuExecutor, OffloadedEqualsResidentAndMatchesCpu) {
  SKIP_WITHOUT_GPU();
  const bool per_layer = GetParam();
  const ModelShape m = small_model();
  const RoutingTrace t = small_trace(m);
  const Schedule s = make_schedule(t, Phase::Decode, 4, 2, 0, t.sequences());
  const LookupStream ls = make_lookups(t, s);
  CacheSpec spec;
  spec.layers = m.layers, spec.experts = m.experts, spec.per_layer = per_layer;
  spec.capacity = per_layer ? m.experts / 4 : m.layers * m.experts / 4;  // 25% of the experts
  CachePlan plan;
  PolicyInputs lru;
  lru.policy = Policy::Lru;
  const CacheStats stats = simulate(ls, spec, lru, &plan);
  ASSERT_GT(stats.misses, 0);

  const ExpertStore store(m, kSeed, &cuda_pinned_alloc, &cuda_pinned_free);
  const auto gpu_exec = make_cuda_executor(store, spec.slots(), kSeed);
  const ReplayResult off = gpu_exec->replay(t, s, &plan);
  const ReplayResult res = gpu_exec->replay(t, s, nullptr);
  const ReplayResult again = gpu_exec->replay(t, s, &plan);

  const size_t n = s.tokens.size() * static_cast<size_t>(m.hidden);
  ASSERT_EQ(off.hidden.size(), n);
  ASSERT_EQ(res.hidden.size(), n);
  const size_t d = first_difference(off.hidden, res.hidden);
  EXPECT_EQ(d, n) << "offloaded and all-resident differ at element " << d << ": " << off.hidden[d] << " vs "
                  << res.hidden[d];
  EXPECT_EQ(first_difference(off.hidden, again.hidden), n) << "two offloaded replays differ";

  EXPECT_EQ(off.bytes_h2d, static_cast<double>(stats.transfers()) * static_cast<double>(m.expert_bytes()));
  EXPECT_EQ(res.bytes_h2d, 0.0);  // the small store is resident

  const auto cpu_exec = make_cpu_executor(store, spec.slots(), 10.0, 1, kSeed);
  const ReplayResult cpu = cpu_exec->replay(t, s, nullptr);
  ASSERT_EQ(cpu.hidden.size(), n);
  EXPECT_LT(max_relative_error(off.hidden, cpu.hidden), 1e-4);

  // Timings: positive, the batches partition the replay, the parts add up.
  EXPECT_GT(off.total_s, 0.0);
  EXPECT_GT(off.compute_s, 0.0);
  EXPECT_GT(off.copy_s, 0.0);
  EXPECT_GE(off.stall_s, 0.0);
  ASSERT_EQ(off.batch_s.size(), static_cast<size_t>(s.batches()));
  const double batches = std::accumulate(off.batch_s.begin(), off.batch_s.end(), 0.0);
  EXPECT_NEAR(batches, off.total_s, 1e-6 + 1e-6 * off.total_s);
  EXPECT_NEAR(off.compute_s + off.stall_s, off.total_s, 1e-6 + 1e-6 * off.total_s);
  EXPECT_EQ(res.stall_s, 0.0);
  EXPECT_EQ(res.copy_s, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Scopes, MoeOffloadGpuExecutor, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? std::string("PerLayer") : std::string("Global"); });

TEST(MoeOffloadGpuExecutorChecks, RejectsHeapStoreAndBadPlan) {
  SKIP_WITHOUT_GPU();
  const ModelShape m = small_model();
  const ExpertStore heap(m, kSeed);
  EXPECT_THROW(make_cuda_executor(heap, 4, kSeed), std::invalid_argument);

  const ExpertStore store(m, kSeed, &cuda_pinned_alloc, &cuda_pinned_free);
  const RoutingTrace t = small_trace(m);
  const Schedule s = make_schedule(t, Phase::Decode, 4, 1, 0, 2);
  const auto ex = make_cuda_executor(store, 2 * m.layers, kSeed);
  CachePlan empty;  // no steps
  EXPECT_THROW(ex->replay(t, s, &empty), std::invalid_argument);
  CacheSpec spec;
  spec.layers = m.layers, spec.experts = m.experts, spec.capacity = 2, spec.per_layer = true;
  PolicyInputs lru;
  CachePlan plan;
  simulate(make_lookups(t, s), spec, lru, &plan);
  plan.events.front().slot = static_cast<int32_t>(spec.slots());  // outside the cache
  EXPECT_THROW(ex->replay(t, s, &plan), std::invalid_argument);
}

TEST(MoeOffloadGpuPinned, BandwidthIsPositive) {
  SKIP_WITHOUT_GPU();
  const double gbps = cuda_pinned_h2d_gbps(size_t{8} << 20);
  EXPECT_GT(gbps, 0.0);
  EXPECT_THROW(cuda_pinned_h2d_gbps(0), std::invalid_argument);
  float* p = cuda_pinned_alloc(1024);
  ASSERT_NE(p, nullptr);
  p[1023] = 1.0f;
  cuda_pinned_free(p);
}

}  // namespace
}  // namespace mlsb::moe_offload

#undef SKIP_WITHOUT_GPU  // each GPU test file has its own; a unity build joins them
