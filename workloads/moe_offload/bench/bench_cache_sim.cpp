// The cache simulator's replay rate (lookups/s) per policy on a large synthetic trace, beside its
// peer: a textbook LRU (std::list + std::unordered_map) replaying the same lookups. The last
// benchmark, VsTextbookLru, reports our speed over the textbook's for lru and predictive (medians of
// the CPU time per replay over the repetitions of this run; above 1 is faster).
//
//   build/workloads/moe_offload/bench/bench_cache_sim --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <algorithm>
#include <ctime>
#include <list>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "workloads/moe_offload/cache_sim.hpp"
#include "workloads/moe_offload/route_predictor.hpp"
#include "workloads/moe_offload/synthetic_trace.hpp"

namespace mlsb::moe_offload {
namespace {

// 32 layers x 64 experts, top-4, decode batch 4: 5.1 million lookups.
struct Fixture {
  RoutingTrace trace = synthetic_trace({32, 64, 4, 64, 1024, 1.0, 0.5, 0.7, 7});
  Schedule profile = make_schedule(trace, Phase::Decode, 4, 4, 0, 16);
  Schedule schedule = make_schedule(trace, Phase::Decode, 4, 4, 16, trace.sequences());
  LookupStream lookups = make_lookups(trace, schedule);
  RoutePredictor predictor{trace, profile};
  Prefetches prefetches = make_prefetches(predictor, trace, schedule, 0.5, 16);
  PredictedUses predicted = make_predicted_uses(trace, schedule, predictor);
  CacheSpec spec{32, 64, 16, true};
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

// CPU seconds per replay of each benchmark that VsTextbookLru compares, one entry per run that Google
// Benchmark reports: a run with more iterations than those before replaces them (they were its probes
// for the iteration count).
struct Runs {
  int64_t iterations = 0;
  std::vector<double> seconds;
};
std::map<std::string, Runs>& runs() {
  static std::map<std::string, Runs> m;
  return m;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Runs `replay` once per benchmark iteration and records its CPU seconds per replay under `name`.
template <class F>
void timed(benchmark::State& state, const std::string& name, F replay) {
  const std::clock_t start = std::clock();
  for (auto _ : state) replay();
  const double seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  Runs& r = runs()[name];
  if (state.iterations() > r.iterations) r = {state.iterations(), {}};
  if (state.iterations() == r.iterations) r.seconds.push_back(seconds / static_cast<double>(r.iterations));
}

void BM_Simulate(benchmark::State& state) {
  const Fixture& f = fixture();
  const auto policy = static_cast<Policy>(state.range(0));
  const PolicyInputs in{policy, &f.predictor, &f.prefetches, &f.predicted};
  CachePlan plan;
  CacheStats stats;
  const std::string label = std::string(to_string(policy)) + (state.range(1) ? " +plan" : "");
  timed(state, label, [&] {
    stats = simulate(f.lookups, f.spec, in, state.range(1) ? &plan : nullptr);
    benchmark::DoNotOptimize(stats);
  });
  state.SetLabel(label);
  state.counters["lookups_per_s"] =
      benchmark::Counter(static_cast<double>(f.lookups.lookups()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["hit_rate"] = stats.hit_rate();
}
BENCHMARK(BM_Simulate)
    ->ArgsProduct({{static_cast<int>(Policy::Lru), static_cast<int>(Policy::Lfu), static_cast<int>(Policy::Static),
                    static_cast<int>(Policy::Predictive), static_cast<int>(Policy::Belady)},
                   {0, 1}})
    ->Unit(benchmark::kMillisecond);

// The peer: per-layer LRU caches as std::list + std::unordered_map, the textbook implementation (a step's
// misses, inserted after its hits, go through one reused buffer).
void BM_TextbookLru(benchmark::State& state) {
  const Fixture& f = fixture();
  const LookupStream& s = f.lookups;
  int64_t hits = 0;
  std::vector<int32_t> misses;
  timed(state, "textbook", [&] {
    std::vector<std::list<int32_t>> order(s.layers);
    std::vector<std::unordered_map<int32_t, std::list<int32_t>::iterator>> where(s.layers);
    hits = 0;
    for (int64_t step = 0; step < s.steps(); ++step) {
      const int64_t l = step % s.layers;
      auto& o = order[l];
      auto& w = where[l];
      misses.clear();
      for (int64_t i = s.step_start[step]; i < s.step_start[step + 1]; ++i) {
        const int32_t e = s.expert[i];
        if (auto it = w.find(e); it != w.end()) {
          ++hits;
          o.splice(o.end(), o, it->second);
        } else {
          misses.push_back(e);
        }
      }
      for (const int32_t e : misses) {
        if (static_cast<int64_t>(o.size()) == f.spec.capacity) {
          w.erase(o.front());
          o.pop_front();
        }
        w[e] = o.insert(o.end(), e);
      }
    }
    benchmark::DoNotOptimize(hits);
  });
  state.counters["lookups_per_s"] =
      benchmark::Counter(static_cast<double>(s.lookups()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["hit_rate"] = static_cast<double>(hits) / static_cast<double>(s.lookups());
}
BENCHMARK(BM_TextbookLru)->Unit(benchmark::kMillisecond);

// Our replay rate over the textbook LRU's, per policy, from the benchmarks above in this run.
void BM_VsTextbookLru(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(runs().size());
  const auto& m = runs();
  const auto textbook = m.find("textbook");
  if (textbook == m.end()) {
    state.SkipWithError("BM_TextbookLru was filtered out of this run");
    return;
  }
  for (const char* policy : {"lru", "predictive"})
    if (const auto ours = m.find(policy); ours != m.end())
      state.counters[policy] = median(textbook->second.seconds) / median(ours->second.seconds);
}
BENCHMARK(BM_VsTextbookLru)->Iterations(1);

}  // namespace
}  // namespace mlsb::moe_offload

BENCHMARK_MAIN();
