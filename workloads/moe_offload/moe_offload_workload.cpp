// The moe_offload workload: MoE inference with every expert in host memory and a bounded device
// expert cache (LRU, LFU, static, predictive prefetch, ExpertFlow-style token scheduling, Belady's
// bound), replayed over routing traces (moe_train's, any JSON-lines trace, or synthetic) on the CPU
// (link modelled) or CUDA (pinned host memory, copy and compute streams).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <map>
#include <mutex>
#include <optional>

#include "backends/cuda/device.hpp"
#include "harness/axes.hpp"
#include "util/clock.hpp"
#include "util/peak_memory.hpp"
#include "harness/registry.hpp"
#include "util/stats.hpp"
#include "util/text.hpp"
#include "workloads/moe_offload/case_config.hpp"
#include "workloads/moe_offload/executor.hpp"
#include "workloads/moe_offload/model.hpp"

namespace mlsb::moe_offload {
namespace {

std::vector<std::string> with_custom(std::vector<std::string> names) {
  names.insert(names.begin(), "custom");
  return names;
}

class MoeOffloadWorkload final : public Workload {
 public:
  WorkloadInfo info() const override {
    WorkloadInfo w;
    w.name = "moe_offload";
    w.description =
        "MoE inference with the experts in host memory and a bounded device expert cache: LRU, LFU, static, "
        "predictive prefetch and ExpertFlow-style token scheduling against Belady's bound, over routing traces "
        "(moe_train's, JSON lines, or synthetic with skew/locality/correlation); real copies and expert FFNs "
        "on the CPU (link modelled by link_gbps) or CUDA (pinned memory, copy and compute streams).";
    w.axes = {
        data_axis(path_axis("trace", "synthetic",
                            "a JSON-lines routing trace (moe_train's trace_out, or {seq, token, layer, "
                            "experts, weights} records), or synthetic",
                            {"synthetic"})),
        data_axis(string_axis("preset", {"custom"},
                              "the MoE layers of a published model (custom: the axes below, or the "
                              "trace's layers/experts/topk)",
                              with_custom(model_preset_names()))),
        data_axis(int_axis("scale", {1}, "a preset's hidden and ffn are divided by this", 1, 1 << 20)),
        data_axis(int_axis("preset_layers", {0}, "serve only a preset's first N MoE layers (0: all)", 0, 4096)),
        data_axis(int_axis("layers", {8}, "custom synthetic: MoE layers", 1, 4096)),
        data_axis(int_axis("experts", {16}, "custom synthetic: experts per layer", 1, 65536)),
        data_axis(int_axis("topk", {2}, "custom synthetic: experts per token", 1, 65536)),
        data_axis(int_axis("hidden", {128}, "custom: model width h", 1, 1 << 20)),
        data_axis(int_axis("ffn", {256}, "custom: expert SwiGLU inner size f", 1, 1 << 22)),
        data_axis(path_axis("checkpoint", "none",
                            "safetensors file or folder with the experts' weights (none: generated)", {"none"})),
        data_axis(int_axis("trace_seed", {1},
                           "seed of the synthetic trace, the generated weights and the hidden states (the "
                           "same for every policy, so they replay the same trace)",
                           0, 1LL << 62)),
        data_axis(int_axis("sequences", {16}, "synthetic: sequences", 1, 1 << 24)),
        data_axis(int_axis("seq_len", {64}, "synthetic: tokens per sequence", 1, 1 << 24)),
        data_axis(float_axis("zipf", {1.0}, "synthetic: popularity skew s (Zipf; 0 = uniform)", 0, 100)),
        data_axis(float_axis("locality", {0.5}, "synthetic: P(a token repeats the previous token's expert)", 0, 1)),
        data_axis(float_axis("correlation", {0.7}, "synthetic: P(an expert follows from the layer before's)", 0, 1)),
        string_axis("phase", {"decode"},
                    "decode: batch sequences advance a token per step; prefill: chunks of "
                    "batch tokens of one sequence",
                    {"decode", "prefill"}),
        int_axis("batch", {1}, "tokens per forward pass", 1, 1 << 20),
        int_axis("window", {4}, "batches whose tokens are available together (what expertflow regroups)", 1, 1 << 20),
        float_axis("profile_fraction", {0.25},
                   "leading fraction of the sequences that only trains the predictor "
                   "and static's popularity (all policies are scored on the rest)",
                   0, 0.99),
        string_axis("policy", {"lru", "lfu", "static", "predictive", "expertflow", "belady"}, "cache policy",
                    {"lru", "lfu", "static", "predictive", "expertflow", "belady"}),
        string_axis("cache_scope", {"per_layer"}, "the budget is per layer, or shared by all layers",
                    {"per_layer", "global"}),
        float_axis("cache_fraction", {0.25}, "cache size as a fraction of the experts (of a layer, or of all)", 0, 1),
        int_axis("cache_experts", {0},
                 "cache size in experts, per layer or of all layers as cache_scope says "
                 "(overrides cache_fraction when > 0)",
                 0, 1LL << 40),
        float_axis("cache_mb", {0.0},
                   "cache size in MB (1e6 bytes), per layer or of all layers as cache_scope says "
                   "(overrides the others when > 0)",
                   0, 1e9),
        float_axis("prefetch_threshold", {0.5},
                   "predictive: prefetch an expert whose predicted score (a "
                   "probability) >= this; above 1: no prefetching",
                   0, 2),
        int_axis("prefetch_max", {0}, "predictive: most prefetches per layer (0: topk * batch)", 0, 1 << 20),
        float_axis("link_gbps", {25.0}, "cpu: host-to-device link bandwidth the copies are timed by (GB/s)", 1e-6, 1e6),
        int_axis("threads", {1}, "cpu: OpenBLAS threads", 1, 1024),
    };
    w.metrics = {
        {"tokens_per_s", "tokens/s", Better::Higher, "tokens of the evaluated trace per second of replay"},
        {"hit_rate", "ratio", Better::Higher, "lookups served by an expert resident since an earlier use (a prefetched "
         "expert's first use counts as a transfer; Belady bounds it)"},
        {"ready_rate", "ratio", Better::Higher, "lookups whose expert was resident or prefetched (no demand fetch)"},
        {"belady_hit_rate", "ratio", Better::Higher, "Belady's MIN on the same lookups and cache"},
        {"gap_to_belady_points", "points", Better::Lower, "100 * (belady_hit_rate - hit_rate)"},
        {"oracle_paths_hit_rate", "ratio", Better::Higher, "predictive, expertflow: the same policy on the same "
         "lookups foreseeing the window's true routes (no prefetch): a reference for what better path prediction "
         "could add, not a bound"},
        {"prefetch_precision", "ratio", Better::Higher, "prefetches used before eviction / prefetches"},
        {"prefetch_recall", "ratio", Better::Higher, "lookups needing a transfer that a prefetch moved ahead"},
        {"lookups", "count", Better::Higher, "(batch, layer, expert) lookups replayed"},
        {"h2d_gb", "GB", Better::Lower, "bytes copied host-to-device into the cache"},
        {"stall_ms", "ms", Better::Lower, "time the compute stream waited for copies"},
        {"replay_ms", "ms", Better::Lower, "the replay, first step to last computation"},
        {"tpot_p50_ms", "ms", Better::Lower, "decode: time per output token (one batch's forward), median"},
        {"tpot_p95_ms", "ms", Better::Lower, "decode: time per output token, 95th percentile"},
        {"cache_memory_mb", "MB", Better::Lower, "device memory of the cache slots"},
        {"h2d_gbps", "GB/s", Better::Higher, "achieved host-to-device rate: bytes / copy-stream busy time"},
        {"pinned_h2d_gbps", "GB/s", Better::Higher, "cuda: one large pinned copy's rate, measured in the same run"},
        {"h2d_efficiency", "ratio", Better::Higher, "cuda: h2d_gbps / pinned_h2d_gbps"},
        {"roofline_tokens_per_s", "tokens/s", Better::Higher,
         "tokens / max(least expert compute time of the schedule, bytes / link rate)"},
        {"roofline_ratio", "ratio", Better::Higher, "tokens_per_s / roofline_tokens_per_s"},
        {"sim_lookups_per_s", "lookups/s", Better::Higher, "the cache simulator's replay rate (plan included)"},
    };
    w.primary_metric = "tokens_per_s";
    w.examples = {
        "run moe_offload -p policy=lru,predictive,belady -p cache_fraction=0.125,0.25,0.5",
        "run moe_offload -p trace=datasets/moe_traces/lm-l4-e16-top2.jsonl -p policy=lru,belady",
        "run moe_offload -p preset=mixtral-8x7b --backend cuda",
    };
    w.runner = {.warmup = 1, .min_samples = 3, .max_samples = 20, .min_time_s = 0.2, .max_noise = 0.03,
                .max_time_s = 5, .timeout_s = 1200};
    w.backends = {"cpu", "cuda"};
    return w;
  }

  void setup(State& state) override {
    guard(state, [&] { do_setup(state); });
  }

  void sample(State& state) override {
    guard(state, [&] { do_sample(state); });
  }

  void verify(State& state) override {
    guard(state, [&] { do_verify(state); });
  }

  void teardown(State&) override {
    executor_.reset();
    store_.reset();
    case_.reset();
  }

 private:
  template <typename F>
  static void guard(State& state, F&& body) {
    try {
      body();
    } catch (const std::bad_alloc&) {
      state.fail("out of memory: the trace, the experts or the cache do not fit in this machine's memory (fewer "
                 "sequences or a shorter seq_len for a synthetic trace, a larger scale for a preset, or a smaller "
                 "cache)");
    }
  }

  // A trace without a header takes its expert count from its largest id: one stray id makes a larger
  // model (and a larger cache_fraction cache), so say when ids are missing.
  static void warn_sparse_ids(State& state, const RoutingTrace& t) {
    std::vector<uint8_t> seen(t.experts, 0);
    for (const int32_t e : t.route) seen[e] = 1;
    if (const auto used = std::count(seen.begin(), seen.end(), 1); used < t.experts)
      state.warn("trace: only " + std::to_string(used) + " of its " + std::to_string(t.experts) +
                 " experts are routed to; without a header the expert count is 1 + the largest id (line " +
                 std::to_string(t.max_expert_line) + ")");
  }

  void do_setup(State& state) {
    try {
      case_ = build_case(state);
    } catch (const std::invalid_argument& e) {
      state.skip(e.what());
    } catch (const std::runtime_error& e) {
      state.fail(e.what());
    }
    OffloadCase& c = *case_;
    if (c.profile_sequences == 0 && c.predictor)
      state.warn("profile_fraction " + number(state.get_float("profile_fraction")) + " of the trace's " +
                 std::to_string(c.trace.sequences()) + " sequences leaves none to profile: policy " +
                 std::string(to_string(c.policy)) + " learned nothing");
    if (state.get_string("preset") == "custom" && c.trace.source.contains("file") && !c.trace.source.contains("header"))
      warn_sparse_ids(state, c.trace);
    state.add_item("model", {{"preset", state.get_string("preset")}, {"layers", c.model.layers},
                             {"experts", c.model.experts}, {"topk", c.model.topk}, {"hidden", c.model.hidden},
                             {"ffn", c.model.ffn}, {"expert_bytes", c.model.expert_bytes()}});
    state.add_item("trace", {{"source", c.trace.source}, {"layers", c.trace.layers}, {"experts", c.trace.experts},
                             {"topk", c.trace.topk}, {"sequences", c.trace.sequences()}, {"tokens", c.trace.tokens()},
                             {"profile_sequences", c.profile_sequences}, {"evaluated_tokens", c.schedule.tokens.size()},
                             {"batches", c.schedule.batches()}, {"capacity", c.cache.capacity},
                             {"slots", c.cache.slots()}});
    stats_ = simulate(c.lookups, c.cache, c.inputs, &plan_);
    PolicyInputs belady;
    belady.policy = Policy::Belady;
    belady_ = simulate(c.lookups, c.cache, belady);
    if (c.inputs.predicted) {
      const PredictedUses truth = true_uses(c.lookups, c.schedule);
      Prefetches none;
      none.step_start.assign(c.lookups.step_start.size(), 0);
      PolicyInputs oracle = c.inputs;
      oracle.prefetches = &none;
      oracle.predicted = &truth;
      oracle_ = simulate(c.lookups, c.cache, oracle);
    }

    const bool cuda = state.backend() == "cuda";
    if (cuda) {
      std::string why;
      if (!cuda::cuda_available(&why)) state.skip("backend cuda: " + why);
    }
    check_memory(state, c);
    const std::string checkpoint = state.get_string("checkpoint");
    const auto seed = static_cast<uint64_t>(state.get_int("trace_seed"));
    auto* alloc = cuda ? &cuda_pinned_alloc : nullptr;
    auto* release = cuda ? &cuda_pinned_free : nullptr;
    try {
      if (checkpoint == "none") store_ = std::make_unique<ExpertStore>(c.model, seed, alloc, release);
      else store_ = std::make_unique<ExpertStore>(c.model, input_path(state, "checkpoint").string(), alloc, release);
    } catch (const std::exception& e) {  // a defective or mismatched checkpoint fails the case
      state.fail(e.what());
    }
    try {
      if (cuda) {
        executor_ = make_cuda_executor(*store_, c.cache.slots(), seed);
        pinned_gbps_ = cuda_pinned_h2d_gbps(std::min<size_t>(256u << 20, 16 * c.model.expert_bytes()));
        link_gbps_ = pinned_gbps_;
      } else {
        link_gbps_ = state.get_float("link_gbps");
        executor_ = make_cpu_executor(*store_, c.cache.slots(), link_gbps_, static_cast<int>(state.get_int("threads")),
                                      seed);
      }
    } catch (const std::runtime_error& e) {
      state.skip(std::string("backend ") + state.backend() + ": " + e.what());
    }
  }

  // Skips a case whose experts and cache would not fit in the memory available now.
  static void check_memory(const State& state, const OffloadCase& c) {
    const double expert = static_cast<double>(c.model.expert_bytes());
    const double store = expert * static_cast<double>(c.model.layers * c.model.experts);
    const double cache = expert * static_cast<double>(c.cache.slots());
    const double needed = store + (state.backend() == "cpu" ? cache : 0);
    const double available = available_memory_bytes();
    if (available > 0 && needed > 0.9 * available)
      state.skip("the experts need " + gb(store) + " GB of host memory (" + std::to_string(c.model.layers) + " x " +
                 std::to_string(c.model.experts) + " experts of " + std::to_string(expert / 1e6) + " MB)" +
                 (state.backend() == "cpu" ? " and the cache " + gb(cache) + " GB" : std::string()) + "; " +
                 gb(available) + " GB is available: a larger scale, fewer preset_layers or a smaller cache");
  }
  static std::string gb(double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", bytes / 1e9);
    return text;
  }

  // The least expert compute time measured in this process for this case's schedule (backend, threads,
  // model, checkpoint, trace and schedule), this replay's `compute_s` included. The policies that replay one
  // schedule compute the same GEMMs and differ in their copies only, so their rooflines share the least
  // compute time seen instead of each carrying its own measurement's noise.
  static double least_compute_s(const State& state, const OffloadCase& c, double compute_s) {
    static std::mutex mutex;
    static std::map<uint64_t, double> least;
    const auto& m = c.model;
    std::string key = state.backend() + "|" + std::to_string(state.get_int("threads")) + "|" +
                      state.get_string("checkpoint") + "|" + std::to_string(state.get_int("trace_seed")) + "|" +
                      c.trace.source.dump() + "|" + std::to_string(m.layers) + "," + std::to_string(m.experts) + "," +
                      std::to_string(m.topk) + "," + std::to_string(m.hidden) + "," + std::to_string(m.ffn) + "|";
    for (const auto* v : {&c.schedule.tokens, &c.schedule.batch_start})
      key.append(reinterpret_cast<const char*>(v->data()), v->size() * sizeof(int64_t)).push_back('|');
    std::lock_guard lock(mutex);
    const auto [it, added] = least.try_emplace(fnv1a64(key), compute_s);
    return it->second = std::min(it->second, compute_s);
  }

  void do_sample(State& state) {
    const OffloadCase& c = *case_;
    const auto t0 = Clock::now();
    CachePlan plan;
    simulate(c.lookups, c.cache, c.inputs, &plan);
    const double sim_s = seconds_since(t0);
    last_ = executor_->replay(c.trace, c.schedule, &plan_);
    const ReplayResult& r = last_;
    const double tokens = static_cast<double>(c.schedule.tokens.size());
    state.record("tokens_per_s", tokens / r.total_s);
    state.record("hit_rate", stats_.hit_rate());
    state.record("ready_rate", stats_.ready_rate());
    state.record("belady_hit_rate", belady_.hit_rate());
    state.record("gap_to_belady_points", 100.0 * (belady_.hit_rate() - stats_.hit_rate()));
    if (oracle_) state.record("oracle_paths_hit_rate", oracle_->hit_rate());
    if (stats_.prefetches > 0) state.record("prefetch_precision", stats_.prefetch_precision());
    if (c.inputs.prefetches || stats_.prefetches > 0) state.record("prefetch_recall", stats_.prefetch_recall());
    state.record("lookups", static_cast<double>(stats_.lookups));
    state.record("h2d_gb", r.bytes_h2d / 1e9);
    state.record("stall_ms", r.stall_s * 1e3);
    state.record("replay_ms", r.total_s * 1e3);
    if (c.phase == Phase::Decode && !r.batch_s.empty()) {
      state.record("tpot_p50_ms", percentile(r.batch_s, 0.5) * 1e3);
      state.record("tpot_p95_ms", percentile(r.batch_s, 0.95) * 1e3);
    }
    state.record("cache_memory_mb", static_cast<double>(c.cache.slots() * c.model.expert_bytes()) / 1e6);
    if (r.copy_s > 0) state.record("h2d_gbps", r.bytes_h2d / r.copy_s / 1e9);
    if (pinned_gbps_ > 0) {
      state.record("pinned_h2d_gbps", pinned_gbps_);
      if (r.copy_s > 0) state.record("h2d_efficiency", r.bytes_h2d / r.copy_s / 1e9 / pinned_gbps_);
    }
    const double bound_s = std::max(least_compute_s(state, c, r.compute_s), r.bytes_h2d / (link_gbps_ * 1e9));
    if (bound_s > 0) {
      state.record("roofline_tokens_per_s", tokens / bound_s);
      state.record("roofline_ratio", (tokens / r.total_s) / (tokens / bound_s));
    }
    if (sim_s > 0) state.record("sim_lookups_per_s", static_cast<double>(stats_.lookups) / sim_s);
  }

  void do_verify(State& state) {
    const OffloadCase& c = *case_;
    if (stats_.hit_rate() > belady_.hit_rate() + 1e-12)
      state.fail("policy " + std::string(to_string(c.policy)) + " beat Belady's bound (" +
                 std::to_string(stats_.hit_rate()) + " > " + std::to_string(belady_.hit_rate()) +
                 "): the simulator is wrong");
    if (oracle_ && oracle_->hit_rate() > belady_.hit_rate() + 1e-12)
      state.fail("policy " + std::string(to_string(c.policy)) + " with the true paths beat Belady's bound (" +
                 std::to_string(oracle_->hit_rate()) + " > " + std::to_string(belady_.hit_rate()) +
                 "): the simulator is wrong");
    check_plan(state, c);
    const double expected_bytes = static_cast<double>(stats_.transfers()) * static_cast<double>(c.model.expert_bytes());
    if (last_.bytes_h2d != expected_bytes)
      state.fail("the executor copied " + std::to_string(last_.bytes_h2d) + " bytes, the plan's transfers are " +
                 std::to_string(expected_bytes));
    const ReplayResult resident = executor_->replay(c.trace, c.schedule, nullptr);
    if (resident.hidden.size() != last_.hidden.size())
      state.fail("the offloaded and the all-resident runs produced different numbers of hidden states");
    const int64_t h = c.model.hidden;
    for (size_t i = 0; i < resident.hidden.size(); ++i)
      if (std::memcmp(&resident.hidden[i], &last_.hidden[i], sizeof(float)) != 0)
        state.fail("the offloaded outputs differ from the all-resident run's at token " +
                   std::to_string(c.schedule.tokens[i / h]) + " element " + std::to_string(i % h) + " (" +
                   std::to_string(last_.hidden[i]) + " vs " + std::to_string(resident.hidden[i]) + ")");
  }

  // Walks the plan with a slot table: every served lookup finds its expert in its slot, counts agree.
  void check_plan(State& state, const OffloadCase& c) const {
    std::vector<int64_t> held(c.cache.slots(), -1);
    CacheStats n;
    for (int64_t step = 0; step < c.lookups.steps(); ++step) {
      const int64_t l = step % c.lookups.layers;
      int64_t served = 0;
      for (int64_t i = plan_.step_start[step]; i < plan_.step_start[step + 1]; ++i) {
        const CacheEvent& e = plan_.events[i];
        const int64_t key = static_cast<int64_t>(e.layer) * c.model.experts + e.expert;
        if (e.slot < 0 || e.slot >= c.cache.slots()) state.fail("the plan names slot " + std::to_string(e.slot));
        if (e.kind == Access::Miss || e.kind == Access::Prefetch) held[e.slot] = key;
        if (held[e.slot] != key)
          state.fail("the plan serves expert " + std::to_string(e.expert) + " of layer " + std::to_string(e.layer) +
                     " from a slot holding another");
        if (e.kind == Access::Prefetch) { ++n.prefetches; continue; }
        if (e.layer != l) state.fail("the plan serves layer " + std::to_string(e.layer) + " at a step of layer " + std::to_string(l));
        ++served;
        ++(e.kind == Access::Hit ? n.hits : e.kind == Access::PrefetchHit ? n.prefetch_hits : n.misses);
      }
      if (served != c.lookups.step_start[step + 1] - c.lookups.step_start[step])
        state.fail("the plan serves " + std::to_string(served) + " lookups at step " + std::to_string(step) +
                   ", the step has " + std::to_string(c.lookups.step_start[step + 1] - c.lookups.step_start[step]));
    }
    if (n.hits != stats_.hits || n.prefetch_hits != stats_.prefetch_hits || n.misses != stats_.misses ||
        n.prefetches != stats_.prefetches)
      state.fail("the plan's counts differ from the simulator's statistics");
  }

  std::unique_ptr<OffloadCase> case_;
  std::unique_ptr<ExpertStore> store_;
  std::unique_ptr<Executor> executor_;
  CachePlan plan_;
  CacheStats stats_, belady_;
  std::optional<CacheStats> oracle_;  // predictive, expertflow: with the true paths
  ReplayResult last_;
  double pinned_gbps_ = 0, link_gbps_ = 0;
};

}  // namespace

MLSB_REGISTER_WORKLOAD(MoeOffloadWorkload);

}  // namespace mlsb::moe_offload
