#pragma once
// The device expert cache, replayed over a lookup stream: which lookups hit, which experts are fetched
// or prefetched into which slot. The same plan drives the CPU and CUDA executors, so their copies and
// the simulator's counts agree by construction.
//
// The rules, exactly (tests replay them by brute force):
//  - Slots: per-layer scope gives layer l the slots [l*C, (l+1)*C) and victims come from the layer's
//    own slots; global scope has slots [0, C) shared by all layers. A free slot is taken lowest first.
//  - A clock ticks once per served lookup and once per prefetch; an entry's last use is the tick of its
//    latest one.
//  - Within a step (one batch at one layer) the needed experts are served in ascending order: a resident
//    one is a hit (or a prefetch hit), a missing one is fetched into a free slot or the slot of the
//    policy's victim. The residents the step still needs are pinned (not candidates) until served. A
//    miss that finds only pinned or protected candidates evicts the least recent unpinned one, else the
//    pinned one the step needs last; a prefetch that finds none is skipped. Serving a step in a fixed
//    order makes the replay a classical paging sequence, on which Belady's MIN is optimal.
//  - Victim: the lowest priority, ties by least recent use:
//      Lru        last use
//      Lfu        lookups of (layer, expert) served so far in the replay (no prior)
//      Static     the profiling popularity of (layer, expert)
//      Belady     minus the index of the next lookup of (layer, expert) in the stream (never again:
//                 the lowest)
//      Predictive at step t, an entry on a predicted path (PredictedUses) of a step n in (t, horizon[t])
//                 has priority -n (the farthest foreseen use goes first, as in Belady); any other entry
//                 ranks below every foreseen one, by its lookups served so far (as Lfu). Entries
//                 protected by a prefetch are not candidates. Priorities are recomputed when served or
//                 fetched, for every resident of layer m after a step of m, and for every resident
//                 when a step opens a new window.
//  - Static preloads before step 0: per layer the C most popular of the layer, global the C most
//    popular (layer, expert) pairs, as Prefetch events of step 0 in one order over all layers: most
//    popular first, ties to the lower layer then the lower id. Preloads tick the clock.
//  - Predictive and ExpertFlow, after serving step (b, l): each expert of the step's prefetch list, in
//    order, is protected if resident, else fetched into a free slot or the victim's (a Prefetch event)
//    and protected, unless no candidate is left (protecting a resident is no event and no tick).
//    After serving step (b, l), layer l's priorities are recomputed and the protections of its
//    residents end, then the step's prefetches run.
//
// Counting, per lookup:
//   hit       the expert was resident and had been used since it was fetched;
//   prefetch  the expert was resident because a prefetch (or static preload) brought it, first use;
//   miss      a demand fetch.
// hit_rate = hits / lookups counts a prefetched expert's first use as a transfer, so Belady's MIN
// bounds it for every policy, prefetching or not: MIN minimises transfers, and any prefetching policy
// can be made demand-only without more transfers (Belady 1966; Mattson et al. 1970).
// ready_rate = (hits + prefetch) / lookups is the literature's hit rate with prefetching (mixtral-
// offloading, MoE-Infinity): the lookups that found the expert on the device or on its way.
#include <cstdint>
#include <string_view>
#include <vector>

#include "workloads/moe_offload/schedule.hpp"

namespace mlsb::moe_offload {

class RoutePredictor;

/// Replacement (and prefetch) policies.
///   Lru         evict the least recently used
///   Lfu         evict the least frequently used (counts kept across evictions; ties: least recent)
///   Static      counts frozen from the profiling prefix; the most popular are preloaded
///   Predictive  prefetch the next layer's experts whose predicted score >= the threshold; protect them
///               until that layer runs; evict the expert whose next use on the predicted routing paths of
///               the window's tokens is farthest, else the least frequently used (the predictor learns
///               on the profiling prefix; route_predictor.hpp)
///   ExpertFlow  Predictive on a schedule regrouped by the token scheduler (token_scheduler.hpp)
///   Belady      offline MIN: evict the expert whose next use is farthest (never again first)
enum class Policy { Lru, Lfu, Static, Predictive, ExpertFlow, Belady };
Policy parse_policy(std::string_view name);  ///< lowercase names; throws std::invalid_argument("policy: ...")
std::string_view to_string(Policy p);

struct CacheSpec {
  int64_t layers = 0, experts = 0;
  int64_t capacity = 0;   ///< experts the cache holds: per layer when per_layer, else over all layers
  bool per_layer = true;
  int64_t slots() const { return per_layer ? capacity * layers : capacity; }
};

/// For each step (b, l) with l < L - 1, the experts of layer l + 1 the prefetcher asks for, in
/// decreasing score; empty lists for the last layer.
struct Prefetches {
  std::vector<int64_t> step_start{0};
  std::vector<int32_t> expert;
};

/// The prefetch lists of a schedule: experts of layer l+1 whose batch score (RoutePredictor, a
/// probability in [0, 1]) is at least `threshold`, at most `max_per_step` of them; a threshold above 1
/// prefetches nothing.
Prefetches make_prefetches(const RoutePredictor& p, const RoutingTrace& t, const Schedule& s, double threshold,
                           int64_t max_per_step);

enum class Access : uint8_t { Hit, PrefetchHit, Miss, Prefetch };
/// One cache action. Hit/PrefetchHit/Miss serve a lookup of (layer, expert) from `slot` (a Miss first
/// copies the expert into it); Prefetch copies (layer, expert) into `slot` for a later step; a static
/// preload is a Prefetch of step 0 listed before its lookups.
struct CacheEvent {
  int32_t layer, expert, slot;
  Access kind;
};
/// Events of step i are events[step_start[i], step_start[i+1]): the step's lookups (experts ascending),
/// then its prefetches.
struct CachePlan {
  std::vector<int64_t> step_start{0};
  std::vector<CacheEvent> events;
};

struct CacheStats {
  int64_t lookups = 0;
  int64_t hits = 0;           ///< resident and used since its fetch
  int64_t prefetch_hits = 0;  ///< first use of a prefetched (or preloaded) expert
  int64_t misses = 0;         ///< demand fetches
  int64_t prefetches = 0;     ///< prefetch and preload transfers
  int64_t peak_resident = 0;  ///< most experts resident at once
  double hit_rate() const { return lookups ? double(hits) / lookups : 0; }
  double ready_rate() const { return lookups ? double(hits + prefetch_hits) / lookups : 0; }
  int64_t transfers() const { return misses + prefetches; }
  /// Of the prefetches, the fraction whose expert was used before eviction.
  double prefetch_precision() const { return prefetches ? double(prefetch_hits) / prefetches : 0; }
  /// Of the lookups that needed a transfer, the fraction a prefetch moved ahead of time.
  double prefetch_recall() const {
    return prefetch_hits + misses ? double(prefetch_hits) / (prefetch_hits + misses) : 0;
  }
};

struct PredictedUses;

struct PolicyInputs {
  Policy policy = Policy::Lru;
  const RoutePredictor* predictor = nullptr;  ///< Static, Predictive, ExpertFlow
  const Prefetches* prefetches = nullptr;     ///< Predictive, ExpertFlow
  const PredictedUses* predicted = nullptr;   ///< Predictive, ExpertFlow
};

/// Replays `lookups` through a cold cache. Fills `plan` when given. Throws std::invalid_argument
/// naming the field for capacity < 1 ("cache: ..."), a policy lacking its inputs, or lookups whose
/// shape differs from the spec.
CacheStats simulate(const LookupStream& lookups, const CacheSpec& spec, const PolicyInputs& inputs,
                    CachePlan* plan = nullptr);

}  // namespace mlsb::moe_offload
