#include "workloads/moe_offload/case_config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "harness/axes.hpp"
#include "workloads/moe_offload/synthetic_trace.hpp"
#include "workloads/moe_offload/token_scheduler.hpp"

namespace mlsb::moe_offload {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

int64_t cache_capacity(const State& state, const ModelShape& m, bool per_layer) {
  const int64_t all = per_layer ? m.experts : m.layers * m.experts;
  int64_t capacity = 0;
  if (const double mb = state.get_float("cache_mb"); mb > 0) {
    capacity = static_cast<int64_t>(std::floor(mb * 1e6 / static_cast<double>(m.expert_bytes())));
    if (capacity < 1)
      throw std::invalid_argument("cache_mb: " + number(mb) + " MB holds no expert (one expert is " +
                                  number(static_cast<double>(m.expert_bytes()) / 1e6) + " MB)");
  } else if (const int64_t n = state.get_int("cache_experts"); n > 0) {
    capacity = n;
  } else {
    const double f = state.get_float("cache_fraction");
    capacity = static_cast<int64_t>(std::llround(f * static_cast<double>(all)));
    if (capacity < 1)
      throw std::invalid_argument("cache_fraction: " + number(f) + " of " + std::to_string(all) +
                                  " experts holds no expert");
  }
  return std::min(capacity, all);
}

std::unique_ptr<OffloadCase> build_case(const State& state) {
  auto owned = std::make_unique<OffloadCase>();
  OffloadCase& c = *owned;
  const std::string preset = state.get_string("preset");
  const bool synthetic = state.get_string("trace") == "synthetic";
  if (!synthetic) c.trace = load_trace(input_path(state, "trace").string());
  if (preset != "custom") {
    c.model = model_preset(preset, state.get_int("scale"));
    if (const int64_t n = state.get_int("preset_layers"); n > 0) c.model.layers = std::min(c.model.layers, n);
  } else if (synthetic) {
    c.model = {state.get_int("layers"), state.get_int("experts"), state.get_int("topk"), state.get_int("hidden"),
               state.get_int("ffn")};
  } else {
    c.model = {c.trace.layers, c.trace.experts, c.trace.topk, state.get_int("hidden"), state.get_int("ffn")};
  }
  if (synthetic) {
    SyntheticTraceSpec spec{c.model.layers, c.model.experts, c.model.topk, state.get_int("sequences"),
                            state.get_int("seq_len"), state.get_float("zipf"), state.get_float("locality"),
                            state.get_float("correlation"),
                            splitmix64(static_cast<uint64_t>(state.get_int("trace_seed")))};
    c.trace = synthetic_trace(spec);
  }
  check_against_model(c.trace, c.model.layers, c.model.experts);
  c.trace.experts = c.model.experts;  // a trace may use a subset of the model's experts

  c.policy = parse_policy(state.get_string("policy"));
  c.phase = parse_phase(state.get_string("phase"));
  const int64_t batch = state.get_int("batch"), window = state.get_int("window");
  const int64_t seqs = c.trace.sequences();
  const double fraction = state.get_float("profile_fraction");
  c.profile_sequences = static_cast<int64_t>(std::floor(fraction * static_cast<double>(seqs)));
  if (fraction > 0 && c.profile_sequences == 0 && seqs > 1) c.profile_sequences = 1;
  if (c.profile_sequences >= seqs)
    throw std::invalid_argument("profile_fraction: " + number(fraction) + " leaves none of the trace's " +
                                std::to_string(seqs) + " sequences to evaluate");
  const bool learns = c.policy == Policy::Static || c.policy == Policy::Predictive || c.policy == Policy::ExpertFlow;
  if (learns) {
    const double table_gb = 8.0 * static_cast<double>(c.model.layers) * static_cast<double>(c.model.experts) *
                            static_cast<double>(c.model.experts) / 1e9;
    if (table_gb > 2)
      throw std::invalid_argument("experts: the route predictor's transition tables of " + std::to_string(c.model.experts) +
                                  " x " + std::to_string(c.model.experts) + " per layer need " +
                                  number(table_gb) + " GB; use lru, lfu or belady");
    const Schedule profile = make_schedule(c.trace, c.phase, batch, window, 0, c.profile_sequences);
    c.predictor = std::make_unique<RoutePredictor>(c.trace, profile);
  }
  c.schedule = make_schedule(c.trace, c.phase, batch, window, c.profile_sequences, seqs);
  std::vector<std::vector<int32_t>> paths;  // predictive, expertflow: the schedule's predicted paths
  if (c.policy == Policy::ExpertFlow) c.schedule = schedule_tokens(c.trace, c.schedule, *c.predictor, &paths);
  else if (c.policy == Policy::Predictive) paths = c.predictor->paths(c.trace, c.schedule);
  c.lookups = make_lookups(c.trace, c.schedule);

  const bool per_layer = state.get_string("cache_scope") == "per_layer";
  c.cache = {c.model.layers, c.model.experts, cache_capacity(state, c.model, per_layer), per_layer};
  c.inputs.policy = c.policy;
  c.inputs.predictor = c.predictor.get();
  if (c.policy == Policy::Predictive || c.policy == Policy::ExpertFlow) {
    int64_t max = state.get_int("prefetch_max");
    if (max == 0) max = c.model.topk * batch;
    c.prefetches = make_prefetches(*c.predictor, c.trace, c.schedule, state.get_float("prefetch_threshold"), max);
    c.inputs.prefetches = &c.prefetches;
    c.predicted = make_predicted_uses(c.schedule, paths, c.model.layers, c.model.experts);
    c.inputs.predicted = &c.predicted;
  }
  return owned;
}

}  // namespace mlsb::moe_offload
