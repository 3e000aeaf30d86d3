#pragma once
// Turning a case's axes into what the replay needs: the trace and its profiling/evaluation split, the
// model shape, the schedule, the lookups, the route predictor, the cache spec and the plan.
#include <memory>
#include <optional>
#include <string>

#include "harness/workload.hpp"
#include "workloads/moe_offload/cache_sim.hpp"
#include "workloads/moe_offload/model.hpp"
#include "workloads/moe_offload/route_predictor.hpp"
#include "workloads/moe_offload/schedule.hpp"
#include "workloads/moe_offload/trace.hpp"

namespace mlsb::moe_offload {

struct OffloadCase {
  RoutingTrace trace;
  ModelShape model;
  Policy policy = Policy::Lru;
  Phase phase = Phase::Decode;
  int64_t profile_sequences = 0;  ///< sequences [0, n) only train the predictor
  Schedule schedule;              ///< the evaluated sequences, regrouped for expertflow
  LookupStream lookups;
  std::unique_ptr<RoutePredictor> predictor;
  Prefetches prefetches;
  PredictedUses predicted;
  CacheSpec cache;
  PolicyInputs inputs;  ///< points into this case (so the case is built in place and never moved)
};

/// Builds the case from the state's axes. Throws std::invalid_argument naming the axis or field, and
/// std::runtime_error for an unreadable or malformed trace.
std::unique_ptr<OffloadCase> build_case(const State& state);

/// The cache's capacity in experts (per layer or over all layers) from cache_mb, cache_experts or
/// cache_fraction (the first that is set), clamped to the experts there are. Throws
/// std::invalid_argument("cache_mb: ...") when the budget holds no expert.
int64_t cache_capacity(const State& state, const ModelShape& m, bool per_layer);

/// `v` as printf's %g writes it (0.25, 1e+06), for messages that quote an axis value.
std::string number(double v);

}  // namespace mlsb::moe_offload
