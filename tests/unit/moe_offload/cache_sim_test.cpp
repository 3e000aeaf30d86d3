// The expert cache simulator against an independent brute-force replay of cache_sim.hpp's rules
// (every policy, both scopes, capacities from 1 to everything, hand-made and synthetic lookup
// streams; stats and the full plan), Belady against an exhaustive search over the classical paging
// model of the flattened lookup sequence, Belady's bound on every policy's hit rate, the plan's
// consistency with its own slot table and counts, and the input checks.
//
// The oracle below is written from the header text alone: plain vectors and linear scans. Where the
// text leaves a choice open, the oracle takes the most literal reading and says so in a comment
// marked "Reading:".
#include "workloads/moe_offload/cache_sim.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "workloads/moe_offload/route_predictor.hpp"
#include "workloads/moe_offload/schedule.hpp"
#include "workloads/moe_offload/synthetic_trace.hpp"
#include "workloads/moe_offload/token_scheduler.hpp"
#include "workloads/moe_offload/trace.hpp"

namespace mlsb::moe_offload {
namespace {

const Policy kAllPolicies[] = {Policy::Lru,        Policy::Lfu,        Policy::Static,
                               Policy::Predictive, Policy::ExpertFlow, Policy::Belady};

bool is_predictive(Policy p) { return p == Policy::Predictive || p == Policy::ExpertFlow; }

// ------------------------------------------------------------------------------------------------
// The brute-force oracle.
// ------------------------------------------------------------------------------------------------

/// Whether step `step` of `s` holds `expert` (linear scan).
bool step_has(const LookupStream& s, int64_t step, int32_t expert) {
  for (int64_t i = s.step_start[step]; i < s.step_start[step + 1]; ++i)
    if (s.expert[i] == expert) return true;
  return false;
}

std::vector<int32_t> step_experts(const LookupStream& s, int64_t step) {
  return {s.expert.begin() + s.step_start[step], s.expert.begin() + s.step_start[step + 1]};
}

/// The step that lookup `i` (an index into the flattened `expert` array) belongs to (linear scan).
int64_t step_of(const LookupStream& s, int64_t i) {
  int64_t t = 0;
  while (s.step_start[t + 1] <= i) ++t;
  return t;
}

/// One occupied slot.
struct Resident {
  int32_t layer = 0, expert = 0;
  int64_t last_use = 0;   // tick of its latest served lookup or prefetch
  bool used = false;      // served since it was fetched
  bool pinned = false;    // needed by the step being served and not served yet
  bool protect = false;   // protected by a prefetch (Predictive, ExpertFlow)
  int tier = 0;           // Predictive's stored priority (tier, value): tier 1 = foreseen use
  double value = 0;
};

/// A victim's rank: the lowest goes first; ties by least recent use (last_use), which is unique.
struct Rank {
  int tier;
  double value;
  int64_t last_use;
  bool operator<(const Rank& o) const {
    if (tier != o.tier) return tier < o.tier;
    if (value != o.value) return value < o.value;
    return last_use < o.last_use;
  }
};

class Oracle {
 public:
  Oracle(const LookupStream& ls, const CacheSpec& spec, const PolicyInputs& in) : ls_(ls), spec_(spec), in_(in) {}

  CacheStats run(CachePlan* plan_out) {
    L_ = spec_.layers, E_ = spec_.experts, C_ = spec_.capacity;
    slot_.assign(spec_.slots(), std::nullopt);
    lfu_.assign(L_ * E_, 0);
    tick_ = 0;
    st_ = CacheStats{};
    plan_ = CachePlan{};
    const Policy pol = in_.policy;

    if (pol == Policy::Static && ls_.steps() > 0) preload();

    for (int64_t t = 0; t < ls_.steps(); ++t) {
      const int32_t l = static_cast<int32_t>(t % L_);
      // "in ascending order": the oracle serves the stream's order and checks that it is ascending,
      // so that Belady's "index of the next lookup" counts the lookups in the order they are served.
      for (int64_t i = ls_.step_start[t] + 1; i < ls_.step_start[t + 1]; ++i)
        if (ls_.expert[i] <= ls_.expert[i - 1]) ADD_FAILURE() << "oracle: step " << t << " is not ascending";
      // Predictive: "for every resident when a step opens a new window" (before the step is served;
      // a window opens where the horizon changes).
      if (is_predictive(pol) && t > 0 && in_.predicted->horizon[t] != in_.predicted->horizon[t - 1])
        for (auto& r : slot_)
          if (r) reprioritize(*r, t);
      // "At the start of a step, the residents that the step needs are pinned."
      for (auto& r : slot_)
        if (r) r->pinned = r->layer == l && step_has(ls_, t, r->expert);

      // The needed experts in ascending order: a resident one is a hit or prefetch hit (and unpinned),
      // a missing one is fetched into a free slot or the victim's.
      for (int64_t i = ls_.step_start[t]; i < ls_.step_start[t + 1]; ++i) {
        const int32_t e = ls_.expert[i];
        int s = find(l, e);
        if (s >= 0) {
          Resident& r = *slot_[s];
          r.pinned = false;
          const Access kind = r.used ? Access::Hit : Access::PrefetchHit;
          (kind == Access::Hit ? st_.hits : st_.prefetch_hits)++;
          serve(r, t);
          plan_.events.push_back({l, e, s, kind});
          continue;
        }
        s = free_slot(l);
        if (s < 0) s = miss_victim(l, t, i);
        if (!slot_[s]) note_fill();
        slot_[s] = Resident{l, e};  // evicts whatever was there (pinned or protected included)
        st_.misses++;
        serve(*slot_[s], t);
        plan_.events.push_back({l, e, s, Access::Miss});
      }
      st_.lookups += ls_.step_start[t + 1] - ls_.step_start[t];

      if (is_predictive(pol)) {
        // "After serving step (b, l), layer l's priorities are recomputed and the protections of its
        // residents end, then the step's prefetches run."
        for (auto& r : slot_)
          if (r && r->layer == l) reprioritize(*r, t), r->protect = false;
        if (l + 1 < L_) prefetch(t, l + 1);
      }
      plan_.step_start.push_back(static_cast<int64_t>(plan_.events.size()));
    }
    if (plan_out) *plan_out = plan_;
    return st_;
  }

 private:
  const LookupStream& ls_;
  CacheSpec spec_;
  PolicyInputs in_;
  int64_t L_ = 0, E_ = 0, C_ = 0;
  std::vector<std::optional<Resident>> slot_;
  std::vector<int64_t> lfu_;     // lookups served so far, [L][E]
  int64_t tick_ = 0;
  CacheStats st_;
  CachePlan plan_;

  int64_t lo(int32_t layer) const { return spec_.per_layer ? layer * C_ : 0; }
  int64_t hi(int32_t layer) const { return spec_.per_layer ? (layer + 1) * C_ : C_; }

  int find(int32_t layer, int32_t expert) const {
    for (size_t s = 0; s < slot_.size(); ++s)
      if (slot_[s] && slot_[s]->layer == layer && slot_[s]->expert == expert) return static_cast<int>(s);
    return -1;
  }
  int free_slot(int32_t layer) const {
    for (int64_t s = lo(layer); s < hi(layer); ++s)
      if (!slot_[s]) return static_cast<int>(s);
    return -1;
  }
  void note_fill() {
    int64_t n = 1;  // the one being filled
    for (auto& r : slot_) n += r.has_value();
    st_.peak_resident = std::max(st_.peak_resident, n);
  }

  void serve(Resident& r, int64_t t) {
    r.last_use = ++tick_;
    r.used = true;
    lfu_[r.layer * E_ + r.expert]++;
    if (is_predictive(in_.policy)) reprioritize(r, t);  // "recomputed when served or fetched"
  }

  /// Index (into the flattened stream) of the first lookup of (layer, expert) after lookup `i`, -1 for
  /// never (linear scan).
  int64_t next_lookup(int32_t layer, int32_t expert, int64_t i) const {
    for (int64_t k = i + 1; k < ls_.lookups(); ++k)
      if (ls_.expert[k] == expert && step_of(ls_, k) % L_ == layer) return k;
    return -1;
  }

  /// Predictive's priority of `r` at step t: -n for the first step n in (t, horizon[t]) whose predicted
  /// paths hold it, else (below every foreseen one) its lookups served so far (as Lfu).
  // Reading: "an entry on a predicted path of a step n" takes the nearest such n (as Belady's next use).
  void reprioritize(Resident& r, int64_t t) const {
    const PredictedUses& pu = *in_.predicted;
    for (int64_t n = t + 1; n < pu.horizon[t]; ++n)
      if (n % L_ == r.layer && step_has(pu.predicted, n, r.expert)) {
        r.tier = 1, r.value = -static_cast<double>(n);
        return;
      }
    r.tier = 0, r.value = static_cast<double>(lfu_[r.layer * E_ + r.expert]);
  }

  /// The rank of `r` as a victim while lookup `i` is being served (or, for a prefetch, after the
  /// step whose last lookup is `i`).
  Rank rank(const Resident& r, int64_t i) const {
    const int64_t k = r.layer * E_ + r.expert;
    switch (in_.policy) {
      case Policy::Lru:
        return {0, 0.0, r.last_use};
      case Policy::Lfu:
        // "lookups of (layer, expert) served so far in the replay (no prior)".
        return {0, static_cast<double>(lfu_[k]), r.last_use};
      case Policy::Static:
        return {0, in_.predictor->popularity()[k], r.last_use};
      case Policy::Belady: {
        // "minus the index of the next lookup of (layer, expert) in the stream (never again: the
        // lowest)"; the next one after the lookup being served.
        const int64_t n = next_lookup(r.layer, r.expert, i);
        if (n < 0) return {0, 0.0, r.last_use};  // never again: below every foreseen use
        return {1, -static_cast<double>(n), r.last_use};
      }
      case Policy::Predictive:
      case Policy::ExpertFlow:
        return {r.tier, r.value, r.last_use};
    }
    return {0, 0.0, r.last_use};
  }

  /// The policy's victim among the candidates of `layer`'s slots (resident, not pinned, not protected);
  /// -1 when there is none.
  int candidate_victim(int32_t layer, int64_t i) const {
    int best = -1;
    for (int64_t s = lo(layer); s < hi(layer); ++s) {
      if (!slot_[s] || slot_[s]->pinned) continue;
      if (is_predictive(in_.policy) && slot_[s]->protect) continue;
      if (best < 0 || rank(*slot_[s], i) < rank(*slot_[best], i)) best = static_cast<int>(s);
    }
    return best;
  }

  /// The slot a miss of lookup `i` (step t, layer `layer`) takes when no slot is free.
  int miss_victim(int32_t layer, int64_t t, int64_t i) const {
    int best = candidate_victim(layer, i);
    if (best >= 0) return best;
    // Only pinned or protected candidates: the least recent unpinned one (protected included) ...
    for (int64_t s = lo(layer); s < hi(layer); ++s)
      if (slot_[s] && !slot_[s]->pinned && (best < 0 || slot_[s]->last_use < slot_[best]->last_use))
        best = static_cast<int>(s);
    if (best >= 0) return best;
    // ... else the pinned one whose lookup comes last in the step.
    int64_t best_pos = -1;
    for (int64_t s = lo(layer); s < hi(layer); ++s) {
      if (!slot_[s] || !slot_[s]->pinned) continue;
      int64_t pos = -1;
      for (int64_t k = ls_.step_start[t]; k < ls_.step_start[t + 1]; ++k)
        if (ls_.expert[k] == slot_[s]->expert) pos = k;
      if (pos > best_pos) best_pos = pos, best = static_cast<int>(s);
    }
    return best;
  }

  /// Predictive's prefetches after serving step t, into layer `next`.
  void prefetch(int64_t t, int32_t next) {
    const Prefetches& p = *in_.prefetches;
    for (int64_t i = p.step_start[t]; i < p.step_start[t + 1]; ++i) {
      const int32_t e = p.expert[i];
      const int s0 = find(next, e);
      if (s0 >= 0) {
        // "protecting a resident is no event and no tick" (and its priority stays).
        slot_[s0]->protect = true;
        continue;
      }
      int s = free_slot(next);
      if (s < 0) s = candidate_victim(next, ls_.step_start[t + 1] - 1);
      if (s < 0) continue;  // "unless no candidate is left": skipped
      if (!slot_[s]) note_fill();
      slot_[s] = Resident{next, e};
      Resident& r = *slot_[s];
      r.last_use = ++tick_;
      r.used = false;
      r.protect = true;
      reprioritize(r, t);  // "recomputed when ... fetched"
      st_.prefetches++;
      plan_.events.push_back({next, e, s, Access::Prefetch});
    }
  }

  /// Static's preload before step 0: per layer the C most popular of each layer, global the C most
  /// popular pairs, in one order over all layers: most popular first, ties to the lower layer then the
  /// lower id; each into its lowest free slot, ticking the clock.
  void preload() {
    const std::vector<double>& pop = in_.predictor->popularity();
    auto more_popular = [&](std::pair<int32_t, int32_t> a, std::pair<int32_t, int32_t> b) {
      const double pa = pop[a.first * E_ + a.second], pb = pop[b.first * E_ + b.second];
      if (pa != pb) return pa > pb;
      return a < b;  // lower layer, then lower id
    };
    std::vector<std::pair<int32_t, int32_t>> all;  // (layer, expert)
    for (int32_t l = 0; l < L_; ++l)
      for (int32_t e = 0; e < E_; ++e) all.push_back({l, e});
    std::sort(all.begin(), all.end(), more_popular);
    std::vector<int64_t> taken(L_, 0);
    int64_t total = 0;
    for (auto [l, e] : all) {
      if (spec_.per_layer ? taken[l] >= C_ : total >= C_) continue;
      taken[l]++, total++;
      const int s = free_slot(l);
      note_fill();
      slot_[s] = Resident{l, e};
      slot_[s]->last_use = ++tick_;
      slot_[s]->used = false;
      st_.prefetches++;
      plan_.events.push_back({l, e, s, Access::Prefetch});
    }
  }
};

CacheStats oracle(const LookupStream& ls, const CacheSpec& spec, const PolicyInputs& in, CachePlan* plan) {
  return Oracle(ls, spec, in).run(plan);
}

// ------------------------------------------------------------------------------------------------
// Exhaustive search over the classical paging model: the flattened lookup sequence, one lookup at a
// time in stream order; a resident key is a hit; a missing one takes a free place or evicts any
// resident of its scope (its layer's C places per layer, the C places of all layers global). No
// pinning: the optimum needs none. Returns the most hits any demand-fetching cache gets.
// ------------------------------------------------------------------------------------------------

int64_t best_paging_hits(const LookupStream& ls, const CacheSpec& spec) {
  const int64_t L = spec.layers, E = spec.experts, C = spec.capacity;
  const int64_t K = L * E;
  EXPECT_LE(K, 12);
  std::vector<int64_t> key;  // the flattened sequence of (layer, expert) keys
  for (int64_t t = 0; t < ls.steps(); ++t)
    for (int32_t e : step_experts(ls, t)) key.push_back((t % L) * E + e);
  const int64_t n = static_cast<int64_t>(key.size());
  auto bit = [](int64_t k) { return uint32_t{1} << k; };
  auto same_scope = [&](int64_t a, int64_t b) { return !spec.per_layer || a / E == b / E; };
  std::vector<int64_t> memo(static_cast<size_t>(n) << K, -1);
  std::function<int64_t(int64_t, uint32_t)> go = [&](int64_t pos, uint32_t mask) -> int64_t {
    if (pos == n) return 0;
    int64_t& m = memo[(static_cast<size_t>(pos) << K) | mask];
    if (m >= 0) return m;
    const int64_t k = key[pos];
    if (mask & bit(k)) return m = 1 + go(pos + 1, mask);
    int64_t in_scope = 0;
    for (int64_t j = 0; j < K; ++j) in_scope += (mask & bit(j)) && same_scope(j, k);
    if (in_scope < C) return m = go(pos + 1, mask | bit(k));
    int64_t best = 0;
    for (int64_t j = 0; j < K; ++j)
      if ((mask & bit(j)) && same_scope(j, k)) best = std::max(best, go(pos + 1, (mask & ~bit(j)) | bit(k)));
    return m = best;
  };
  return go(0, 0);
}

// ------------------------------------------------------------------------------------------------
// Inputs: hand-made streams, prefetch lists and predicted uses; synthetic traces.
// ------------------------------------------------------------------------------------------------

/// A random set of distinct experts, ascending: size in [lo, hi].
std::vector<int32_t> random_set(std::mt19937_64& rng, int64_t experts, int64_t lo, int64_t hi) {
  std::vector<int32_t> all(experts);
  for (int32_t e = 0; e < experts; ++e) all[e] = e;
  std::shuffle(all.begin(), all.end(), rng);
  const int64_t n = std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  std::vector<int32_t> s(all.begin(), all.begin() + n);
  std::sort(s.begin(), s.end());
  return s;
}

/// A random stream of `batches` * `layers` steps. Steps mostly need a few experts (a local working
/// set, so caches hit), sometimes many (more than small capacities), rarely none.
LookupStream random_stream(std::mt19937_64& rng, int64_t layers, int64_t experts, int64_t batches) {
  LookupStream s;
  s.layers = layers, s.experts = experts;
  std::vector<std::vector<int32_t>> hot(layers);
  for (auto& h : hot) h = random_set(rng, experts, 1, std::min<int64_t>(experts, 3));
  std::uniform_real_distribution<double> u;
  for (int64_t t = 0; t < batches * layers; ++t) {
    const double x = u(rng);
    std::vector<int32_t> step;
    if (x < 0.05) {
      // empty step
    } else if (x < 0.55) {
      step = hot[t % layers];  // reuse the layer's working set, maybe with a change
      if (u(rng) < 0.3) hot[t % layers] = random_set(rng, experts, 1, std::min<int64_t>(experts, 3));
    } else {
      step = random_set(rng, experts, 1, experts);
    }
    s.expert.insert(s.expert.end(), step.begin(), step.end());
    s.step_start.push_back(static_cast<int64_t>(s.expert.size()));
  }
  return s;
}

/// Random prefetch lists: for each step of layer l < L - 1 some distinct experts of layer l + 1 in a
/// random order, often the next step's own experts; empty lists for the last layer.
Prefetches random_prefetches(std::mt19937_64& rng, const LookupStream& ls) {
  Prefetches p;
  std::uniform_real_distribution<double> u;
  for (int64_t t = 0; t < ls.steps(); ++t) {
    if (t % ls.layers != ls.layers - 1) {
      std::vector<int32_t> list;
      if (u(rng) < 0.5 && t + 1 < ls.steps()) {
        list = step_experts(ls, t + 1);
        if (!list.empty() && u(rng) < 0.5) list.pop_back();
      } else {
        list = random_set(rng, ls.experts, 0, ls.experts);
      }
      std::shuffle(list.begin(), list.end(), rng);
      p.expert.insert(p.expert.end(), list.begin(), list.end());
    }
    p.step_start.push_back(static_cast<int64_t>(p.expert.size()));
  }
  return p;
}

/// Random predicted uses: per step the true experts or a random set; windows of 1-3 batches.
PredictedUses random_predicted(std::mt19937_64& rng, const LookupStream& ls) {
  PredictedUses pu;
  pu.predicted.layers = ls.layers, pu.predicted.experts = ls.experts;
  std::uniform_real_distribution<double> u;
  for (int64_t t = 0; t < ls.steps(); ++t) {
    const std::vector<int32_t> s = u(rng) < 0.6 ? step_experts(ls, t) : random_set(rng, ls.experts, 0, ls.experts);
    pu.predicted.expert.insert(pu.predicted.expert.end(), s.begin(), s.end());
    pu.predicted.step_start.push_back(static_cast<int64_t>(pu.predicted.expert.size()));
  }
  const int64_t batches = ls.steps() / ls.layers;
  for (int64_t b = 0; b < batches;) {
    const int64_t end = std::min(batches, b + std::uniform_int_distribution<int64_t>(1, 3)(rng));
    for (int64_t t = b * ls.layers; t < end * ls.layers; ++t) pu.horizon.push_back(end * ls.layers);
    b = end;
  }
  return pu;
}

/// A predictor for L x E learned on a small synthetic trace, so popularity() differs
/// between experts (and tie sometimes).
struct Learned {
  RoutingTrace trace;
  Schedule profile;
  std::optional<RoutePredictor> predictor;
};
Learned learn(int64_t layers, int64_t experts, uint64_t seed) {
  SyntheticTraceSpec ts;
  ts.layers = layers, ts.experts = experts, ts.topk = std::min<int64_t>(2, experts);
  ts.sequences = 3, ts.seq_len = 10, ts.zipf = 1.0, ts.locality = 0.5, ts.correlation = 0.5, ts.seed = seed;
  Learned k;
  k.trace = synthetic_trace(ts);
  k.profile = make_schedule(k.trace, Phase::Decode, 1, 1, 0, 2);
  k.predictor.emplace(k.trace, k.profile);
  return k;
}

std::string name_of(Access a) {
  switch (a) {
    case Access::Hit:
      return "Hit";
    case Access::PrefetchHit:
      return "PrefetchHit";
    case Access::Miss:
      return "Miss";
    case Access::Prefetch:
      return "Prefetch";
  }
  return "?";
}

std::string dump_stream(const LookupStream& s) {
  std::ostringstream o;
  o << "L=" << s.layers << " E=" << s.experts << " steps:";
  for (int64_t t = 0; t < s.steps(); ++t) {
    o << " {";
    for (int64_t i = s.step_start[t]; i < s.step_start[t + 1]; ++i)
      o << (i > s.step_start[t] ? "," : "") << s.expert[i];
    o << "}";
  }
  return o.str();
}

std::string dump_plan(const CachePlan& p) {
  std::ostringstream o;
  for (size_t i = 0; i + 1 < p.step_start.size(); ++i) {
    o << "  step " << i << ":";
    for (int64_t j = p.step_start[i]; j < p.step_start[i + 1] && j < static_cast<int64_t>(p.events.size()); ++j) {
      const CacheEvent& e = p.events[j];
      o << " " << name_of(e.kind) << "(" << e.layer << "," << e.expert << ")@" << e.slot;
    }
    o << "\n";
  }
  return o.str();
}

std::string describe(const CacheSpec& spec, Policy p) {
  std::ostringstream o;
  o << to_string(p) << " " << (spec.per_layer ? "per_layer" : "global") << " capacity=" << spec.capacity;
  return o.str();
}

/// Compares the simulator with the oracle; on a difference, one failure with both plans.
bool matches_oracle(const LookupStream& ls, const CacheSpec& spec, const PolicyInputs& in, const std::string& what) {
  CachePlan want_plan, got_plan;
  const CacheStats want = oracle(ls, spec, in, &want_plan);
  CacheStats got;
  try {
    got = simulate(ls, spec, in, &got_plan);
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << describe(spec, in.policy) << " threw: " << e.what() << "\n" << dump_stream(ls);
    return false;
  }
  const bool stats_equal = got.lookups == want.lookups && got.hits == want.hits &&
                           got.prefetch_hits == want.prefetch_hits && got.misses == want.misses &&
                           got.prefetches == want.prefetches && got.peak_resident == want.peak_resident;
  bool plan_equal = got_plan.step_start == want_plan.step_start && got_plan.events.size() == want_plan.events.size();
  for (size_t i = 0; plan_equal && i < got_plan.events.size(); ++i) {
    const CacheEvent &a = got_plan.events[i], &b = want_plan.events[i];
    plan_equal = a.layer == b.layer && a.expert == b.expert && a.slot == b.slot && a.kind == b.kind;
  }
  // The stats without a plan are the same.
  const CacheStats bare = simulate(ls, spec, in);
  const bool bare_equal = bare.hits == got.hits && bare.misses == got.misses && bare.prefetches == got.prefetches &&
                          bare.prefetch_hits == got.prefetch_hits && bare.peak_resident == got.peak_resident;
  if (stats_equal && plan_equal && bare_equal) return true;
  ADD_FAILURE() << what << ": " << describe(spec, in.policy) << "\n"
                << dump_stream(ls) << "\n"
                << "simulate: lookups " << got.lookups << " hits " << got.hits << " prefetch_hits " << got.prefetch_hits
                << " misses " << got.misses << " prefetches " << got.prefetches << " peak " << got.peak_resident << "\n"
                << "oracle:   lookups " << want.lookups << " hits " << want.hits << " prefetch_hits "
                << want.prefetch_hits << " misses " << want.misses << " prefetches " << want.prefetches << " peak "
                << want.peak_resident << "\n"
                << "simulate plan:\n"
                << dump_plan(got_plan) << "oracle plan:\n"
                << dump_plan(want_plan) << (bare_equal ? "" : "(and the stats differ with and without a plan)\n");
  return false;
}

/// Walks `plan` with a slot table: each step serves exactly its experts, in ascending order (hits,
/// prefetch hits and misses interleaved), then prefetches of the next layer; every Hit/PrefetchHit
/// finds its expert in its slot (used, resp. not yet used, since its fetch); every Miss/Prefetch
/// writes a slot of its layer's range, the lowest free one while one is free; a Miss evicts a resident
/// the step still needs only when every slot of its range holds one, and then the one needed last; a
/// Prefetch never evicts such a one; counts from the plan equal the stats.
void expect_consistent(const LookupStream& ls, const CacheSpec& spec, Policy policy, const CacheStats& st,
                       const CachePlan& plan, const std::string& what) {
  SCOPED_TRACE(what + ": " + describe(spec, policy));
  ASSERT_EQ(static_cast<int64_t>(plan.step_start.size()), ls.steps() + 1);
  ASSERT_EQ(plan.step_start.front(), 0);
  ASSERT_EQ(plan.step_start.back(), static_cast<int64_t>(plan.events.size()));
  const int64_t C = spec.capacity, E = spec.experts;
  std::vector<int64_t> table(spec.slots(), -1);  // layer * E + expert
  std::vector<char> used(spec.slots(), 0);
  CacheStats n;
  int64_t resident = 0;
  auto lo = [&](int64_t layer) { return spec.per_layer ? layer * C : 0; };
  auto hi = [&](int64_t layer) { return spec.per_layer ? (layer + 1) * C : C; };
  auto lowest_free = [&](int64_t layer) {
    for (int64_t s = lo(layer); s < hi(layer); ++s)
      if (table[s] < 0) return s;
    return int64_t{-1};
  };
  for (int64_t t = 0; t < ls.steps(); ++t) {
    const int32_t l = static_cast<int32_t>(t % spec.layers);
    // The residents the step needs at its start ("pinned" until served or evicted).
    std::vector<char> pinned(spec.slots(), 0);
    for (int64_t s = 0; s < spec.slots(); ++s)
      pinned[s] = table[s] >= 0 && table[s] / E == l && step_has(ls, t, static_cast<int32_t>(table[s] % E));
    std::vector<int32_t> served;
    int phase = 0;  // 0 preloads (step 0, Static), 1 lookups, 3 prefetches
    for (int64_t i = plan.step_start[t]; i < plan.step_start[t + 1]; ++i) {
      const CacheEvent& e = plan.events[i];
      ASSERT_GE(e.slot, 0);
      ASSERT_LT(e.slot, spec.slots());
      ASSERT_GE(e.layer, 0);
      ASSERT_LT(e.layer, spec.layers);
      ASSERT_GE(e.expert, 0);
      ASSERT_LT(e.expert, E);
      EXPECT_GE(e.slot, lo(e.layer)) << "event " << i;
      EXPECT_LT(e.slot, hi(e.layer)) << "event " << i;
      const int64_t key = e.layer * E + e.expert;
      if (e.kind != Access::Prefetch) {
        EXPECT_LE(phase, 1) << "event " << i << ": a lookup after a prefetch";
        phase = 1;
        EXPECT_EQ(e.layer, l) << "event " << i;
        if (!served.empty()) {
          EXPECT_GT(e.expert, served.back()) << "event " << i << ": not in ascending order";
        }
        served.push_back(e.expert);
      }
      switch (e.kind) {
        case Access::Hit:
        case Access::PrefetchHit:
          EXPECT_EQ(table[e.slot], key) << "event " << i << ": not in its slot";
          EXPECT_EQ(bool(used[e.slot]), e.kind == Access::Hit) << "event " << i;
          used[e.slot] = 1, pinned[e.slot] = 0;
          (e.kind == Access::Hit ? n.hits : n.prefetch_hits)++;
          break;
        case Access::Miss: {
          for (int64_t s = 0; s < spec.slots(); ++s)
            EXPECT_NE(table[s], key) << "event " << i << ": a miss of a resident";
          const int64_t f = lowest_free(e.layer);
          if (f >= 0) {
            EXPECT_EQ(e.slot, f) << "event " << i << ": not the lowest free slot";
          }
          if (pinned[e.slot]) {
            // Evicting a pinned resident: every slot of the range pinned, this one needed last.
            for (int64_t s = lo(l); s < hi(l); ++s) {
              EXPECT_TRUE(pinned[s]) << "event " << i << ": evicts a pinned resident, slot " << s << " is not";
              if (pinned[s]) {
                EXPECT_LE(table[s], table[e.slot]) << "event " << i << ": not the one needed last";
              }
            }
          }
          resident += table[e.slot] < 0;
          table[e.slot] = key, used[e.slot] = 1, pinned[e.slot] = 0;
          n.misses++;
          break;
        }
        case Access::Prefetch: {
          if (t == 0 && phase == 0 && policy == Policy::Static) {
            EXPECT_LT(table[e.slot], 0) << "event " << i << ": a preload evicts";
          } else {
            EXPECT_TRUE(is_predictive(policy)) << "event " << i << ": a prefetch from " << to_string(policy);
            EXPECT_EQ(e.layer, l + 1) << "event " << i;
            phase = 3;
          }
          for (int64_t s = 0; s < spec.slots(); ++s)
            EXPECT_NE(table[s], key) << "event " << i << ": a prefetch of a resident";
          const int64_t f = lowest_free(e.layer);
          if (f >= 0) {
            EXPECT_EQ(e.slot, f) << "event " << i << ": not the lowest free slot";
          }
          EXPECT_FALSE(pinned[e.slot]) << "event " << i << ": a prefetch evicts a resident the step needed";
          resident += table[e.slot] < 0;
          table[e.slot] = key, used[e.slot] = 0;
          n.prefetches++;
          break;
        }
      }
      n.peak_resident = std::max(n.peak_resident, resident);
    }
    EXPECT_EQ(served, step_experts(ls, t)) << "step " << t;
    n.lookups += static_cast<int64_t>(served.size());
  }
  EXPECT_EQ(n.lookups, st.lookups);
  EXPECT_EQ(n.lookups, ls.lookups());
  EXPECT_EQ(n.hits, st.hits);
  EXPECT_EQ(n.prefetch_hits, st.prefetch_hits);
  EXPECT_EQ(n.misses, st.misses);
  EXPECT_EQ(n.prefetches, st.prefetches);
  EXPECT_EQ(n.peak_resident, st.peak_resident);
  EXPECT_LE(st.peak_resident, spec.slots());
}

/// A synthetic setting: trace, profile predictor, a replay schedule and its inputs.
struct Synthetic {
  RoutingTrace trace;
  Schedule profile, replay, regrouped;
  std::optional<RoutePredictor> predictor;
  LookupStream lookups, regrouped_lookups;
  Prefetches prefetches, regrouped_prefetches;
  PredictedUses predicted, regrouped_predicted;
};

Synthetic make_synthetic(const SyntheticTraceSpec& ts, Phase phase, int64_t batch, int64_t window, double threshold) {
  Synthetic s;
  s.trace = synthetic_trace(ts);
  const int64_t profile_seqs = std::max<int64_t>(1, ts.sequences / 3);
  s.profile = make_schedule(s.trace, Phase::Decode, 1, 1, 0, profile_seqs);
  s.predictor.emplace(s.trace, s.profile);
  s.replay = make_schedule(s.trace, phase, batch, window, profile_seqs, ts.sequences);
  s.lookups = make_lookups(s.trace, s.replay);
  s.prefetches = make_prefetches(*s.predictor, s.trace, s.replay, threshold, ts.experts);
  s.predicted = make_predicted_uses(s.trace, s.replay, *s.predictor);
  s.regrouped = schedule_tokens(s.trace, s.replay, *s.predictor);
  s.regrouped_lookups = make_lookups(s.trace, s.regrouped);
  s.regrouped_prefetches = make_prefetches(*s.predictor, s.trace, s.regrouped, threshold, ts.experts);
  s.regrouped_predicted = make_predicted_uses(s.trace, s.regrouped, *s.predictor);
  return s;
}

std::vector<SyntheticTraceSpec> synthetic_specs() {
  std::vector<SyntheticTraceSpec> v;
  uint64_t seed = 11;
  for (int64_t layers : {1, 3})
    for (double zipf : {0.0, 1.2})
      for (double locality : {0.2, 0.8}) {
        SyntheticTraceSpec ts;
        ts.layers = layers, ts.experts = 6, ts.topk = 2, ts.sequences = 6, ts.seq_len = 10;
        ts.zipf = zipf, ts.locality = locality, ts.correlation = 0.6, ts.seed = seed++;
        v.push_back(ts);
      }
  return v;
}

PolicyInputs inputs_for(Policy p, const RoutePredictor* pred, const Prefetches* pf, const PredictedUses* pu) {
  PolicyInputs in;
  in.policy = p;
  if (p == Policy::Static || is_predictive(p)) in.predictor = pred;
  if (is_predictive(p)) in.prefetches = pf, in.predicted = pu;
  return in;
}

// ------------------------------------------------------------------------------------------------
// Tests.
// ------------------------------------------------------------------------------------------------

TEST(CacheSim, PolicyNamesRoundTrip) {
  for (Policy p : kAllPolicies) EXPECT_EQ(parse_policy(to_string(p)), p);
  EXPECT_EQ(parse_policy("lru"), Policy::Lru);
  EXPECT_EQ(parse_policy("belady"), Policy::Belady);
  EXPECT_EQ(parse_policy("expertflow"), Policy::ExpertFlow);
  try {
    parse_policy("fifo");
    ADD_FAILURE() << "parse_policy(\"fifo\") did not throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("policy"), std::string::npos) << e.what();
  }
}

/// A stream of one or more layers from its steps' experts.
LookupStream stream_of(int64_t layers, int64_t experts, const std::vector<std::vector<int32_t>>& steps) {
  LookupStream s;
  s.layers = layers, s.experts = experts;
  for (const auto& step : steps) {
    s.expert.insert(s.expert.end(), step.begin(), step.end());
    s.step_start.push_back(static_cast<int64_t>(s.expert.size()));
  }
  return s;
}

/// Expects `plan` to be exactly `want`, step by step.
void expect_plan(const CachePlan& plan, const std::vector<std::vector<CacheEvent>>& want) {
  std::vector<int64_t> starts{0};
  std::vector<CacheEvent> events;
  for (const auto& step : want) {
    events.insert(events.end(), step.begin(), step.end());
    starts.push_back(static_cast<int64_t>(events.size()));
  }
  EXPECT_EQ(plan.step_start, starts);
  bool same = plan.events.size() == events.size();
  for (size_t i = 0; same && i < events.size(); ++i)
    same = plan.events[i].layer == events[i].layer && plan.events[i].expert == events[i].expert &&
           plan.events[i].slot == events[i].slot && plan.events[i].kind == events[i].kind;
  CachePlan w;
  w.step_start = starts, w.events = events;
  EXPECT_TRUE(same) << "plan:\n" << dump_plan(plan) << "want:\n" << dump_plan(w);
}

// Small cases worked out by hand from the header's rules.
TEST(CacheSim, LruByHand) {
  const LookupStream s = stream_of(1, 4, {{0, 1}, {2}, {0}, {1}});
  CachePlan plan;
  const CacheStats st = simulate(s, {1, 4, 2, true}, {Policy::Lru}, &plan);
  // {0,1}: both fetched into slots 0, 1; {2}: evicts 0 (tick 1); {0}: evicts 1 (tick 2 < 3); {1}: evicts 2.
  EXPECT_EQ(st.lookups, 5);
  EXPECT_EQ(st.misses, 5);
  EXPECT_EQ(st.hits, 0);
  EXPECT_EQ(st.peak_resident, 2);
  expect_plan(plan, {{{0, 0, 0, Access::Miss}, {0, 1, 1, Access::Miss}},
                     {{0, 2, 0, Access::Miss}},
                     {{0, 0, 1, Access::Miss}},
                     {{0, 1, 0, Access::Miss}}});
}

// The in-step rules (ascending service, pinning) only matter when a step asks for several experts: with
// one expert per step the simulator's LRU is the textbook per-lookup LRU, per layer or over all layers.
TEST(CacheSim, OneExpertPerStepIsTextbookLru) {
  std::mt19937_64 rng(5);
  for (bool per_layer : {true, false})
    for (int64_t capacity : {1, 2, 3, 5}) {
      const int64_t layers = 3, experts = 8, steps = 600;
      std::vector<std::vector<int32_t>> one;
      std::uniform_int_distribution<int32_t> pick(0, experts - 1);
      for (int64_t i = 0; i < steps; ++i) one.push_back({pick(rng)});
      const CacheStats st = simulate(stream_of(layers, experts, one), {layers, experts, capacity, per_layer}, {Policy::Lru});
      // The reference: a recency list per cache (one per layer, or one shared), most recent first.
      std::vector<std::list<std::pair<int64_t, int32_t>>> caches(per_layer ? layers : 1);
      int64_t hits = 0;
      for (int64_t i = 0; i < steps; ++i) {
        const std::pair<int64_t, int32_t> key{i % layers, one[i][0]};
        auto& cache = caches[per_layer ? key.first : 0];
        const auto it = std::find(cache.begin(), cache.end(), key);
        if (it != cache.end()) {
          ++hits;
          cache.erase(it);
        } else if (static_cast<int64_t>(cache.size()) == capacity) {
          cache.pop_back();
        }
        cache.push_front(key);
      }
      EXPECT_EQ(st.lookups, steps);
      EXPECT_EQ(st.hits, hits) << "capacity " << capacity << (per_layer ? " per layer" : " global");
      EXPECT_EQ(st.misses, steps - hits);
    }
}

// "served in ascending order whatever is resident": {1} {0,1}, capacity 2. Step 1 serves 0 first (a
// miss into the free slot 1), then 1 (a hit in slot 0): the miss comes before the hit.
TEST(CacheSim, ServesAStepInAscendingOrderWhateverIsResident) {
  const LookupStream s = stream_of(1, 3, {{1}, {0, 1}});
  for (Policy p : {Policy::Lru, Policy::Lfu, Policy::Belady}) {
    SCOPED_TRACE(to_string(p));
    CachePlan plan;
    const CacheStats st = simulate(s, {1, 3, 2, true}, {p}, &plan);
    EXPECT_EQ(st.misses, 2);
    EXPECT_EQ(st.hits, 1);
    expect_plan(plan, {{{0, 1, 0, Access::Miss}}, {{0, 0, 1, Access::Miss}, {0, 1, 0, Access::Hit}}});
  }
}

// The residents a step needs are pinned until served: {1} {2} {0,1}, capacity 2. At step 2, 1 (slot 0,
// tick 1) is pinned, so 0's miss evicts 2 (slot 1, tick 2), although Lru and Lfu (1 lookup each, then
// the least recent) would take 1 if it were a candidate (Belady takes 2 anyway: never again). Then 1
// hits.
TEST(CacheSim, PinsTheResidentsTheStepNeedsUntilServed) {
  const LookupStream s = stream_of(1, 3, {{1}, {2}, {0, 1}});
  for (Policy p : {Policy::Lru, Policy::Lfu, Policy::Belady}) {
    SCOPED_TRACE(to_string(p));
    CachePlan plan;
    const CacheStats st = simulate(s, {1, 3, 2, false}, {p}, &plan);
    EXPECT_EQ(st.misses, 3);
    EXPECT_EQ(st.hits, 1);
    expect_plan(plan, {{{0, 1, 0, Access::Miss}},
                       {{0, 2, 1, Access::Miss}},
                       {{0, 0, 1, Access::Miss}, {0, 1, 0, Access::Hit}}});
  }
}

// A miss that finds only pinned residents evicts the pinned one whose lookup comes last: {1,2}
// {0,1,2}, capacity 2. Step 1: 1 (slot 0) and 2 (slot 1) pinned; 0 evicts 2 (needed last) into slot 1;
// 1 hits (slot 0, now unpinned); 2 misses with candidates 0 (tick 3) and 1 (tick 4): Lru takes 0 (least
// recent), Lfu 0 (1 lookup against 2), Belady 0 (both never again, 0 less recent): slot 1.
TEST(CacheSim, MissAmongOnlyPinnedEvictsTheOneNeededLast) {
  const LookupStream s = stream_of(1, 3, {{1, 2}, {0, 1, 2}});
  for (Policy p : {Policy::Lru, Policy::Lfu, Policy::Belady}) {
    SCOPED_TRACE(to_string(p));
    CachePlan plan;
    const CacheStats st = simulate(s, {1, 3, 2, true}, {p}, &plan);
    EXPECT_EQ(st.misses, 4);
    EXPECT_EQ(st.hits, 1);
    expect_plan(plan, {{{0, 1, 0, Access::Miss}, {0, 2, 1, Access::Miss}},
                       {{0, 0, 1, Access::Miss}, {0, 1, 0, Access::Hit}, {0, 2, 1, Access::Miss}}});
  }
}

TEST(CacheSim, StepNeedingMoreThanTheCapacityEvictsWhatItServed) {
  // Capacity 1: {0,1,2} fetches each into slot 0 in turn (0 and 1 are the only candidates when 1
  // and 2 miss); {2} hits the last one fetched.
  const LookupStream s = stream_of(1, 3, {{0, 1, 2}, {2}});
  for (Policy p : {Policy::Lru, Policy::Lfu, Policy::Belady}) {
    CachePlan plan;
    const CacheStats st = simulate(s, {1, 3, 1, true}, {p}, &plan);
    EXPECT_EQ(st.misses, 3) << to_string(p);
    EXPECT_EQ(st.hits, 1) << to_string(p);
    ASSERT_EQ(plan.events.size(), 4u);
    for (const CacheEvent& e : plan.events) EXPECT_EQ(e.slot, 0);
    EXPECT_EQ(plan.events[3].kind, Access::Hit);
  }
}

TEST(CacheSim, BeladyByHand) {
  // Capacity 2, global, 1 layer: {0,1} {2} {0} {1} (lookup indices 0..4). At {2} Belady evicts 1 (next
  // lookup index 4, farther than 0's 3), so {0} hits; at {1} it evicts 0 or 2 (both never again: the
  // least recent, 2 at tick 3 vs 0 at 4).
  const LookupStream s = stream_of(1, 3, {{0, 1}, {2}, {0}, {1}});
  CachePlan plan;
  const CacheStats st = simulate(s, {1, 3, 2, false}, {Policy::Belady}, &plan);
  EXPECT_EQ(st.hits, 1);
  EXPECT_EQ(st.misses, 4);
  expect_plan(plan, {{{0, 0, 0, Access::Miss}, {0, 1, 1, Access::Miss}},
                     {{0, 2, 1, Access::Miss}},
                     {{0, 0, 0, Access::Hit}},
                     {{0, 1, 1, Access::Miss}}});
}

// Belady ranks by the index of the next lookup, not by its step: {0} {1} {2} {0,1}, capacity 2. At
// step 2 both 0 and 1 are next needed at step 3, 0 at index 3 and 1 at index 4: 1 goes (slot 1), though
// 0 is the least recent. Step 3: 0 hits, 1 misses with 0 and 2 never again: 2 goes (tick 3 < 4).
TEST(CacheSim, BeladyRanksByTheNextLookupsIndex) {
  const LookupStream s = stream_of(1, 3, {{0}, {1}, {2}, {0, 1}});
  CachePlan plan;
  const CacheStats st = simulate(s, {1, 3, 2, false}, {Policy::Belady}, &plan);
  EXPECT_EQ(st.hits, 1);
  EXPECT_EQ(st.misses, 4);
  expect_plan(plan, {{{0, 0, 0, Access::Miss}},
                     {{0, 1, 1, Access::Miss}},
                     {{0, 2, 1, Access::Miss}},
                     {{0, 0, 0, Access::Hit}, {0, 1, 1, Access::Miss}}});
}

// The case where the old rule (residents first, then misses) left Belady below the optimum:
// {2} {0,1} {0,2} {0,1}, capacity 2, lookup indices 0..6 = 2,0,1,0,2,0,1. Step 1: 0 takes free slot
// 1; 1 evicts 2 (next index 4, after 0's 3) from slot 0. Step 2: 0 hits; 2 evicts 1 (next 6, after 0's
// 5) from slot 0. Step 3: 0 hits; 1 evicts 2 (both never again, 2 less recent) from slot 0. 2 hits,
// which the exhaustive search confirms is the most (MIN on 2,0,1,0,2,0,1).
TEST(CacheSim, BeladyWhereResidentsFirstWasSuboptimal) {
  const LookupStream s = stream_of(1, 3, {{2}, {0, 1}, {0, 2}, {0, 1}});
  const CacheSpec spec{1, 3, 2, true};
  CachePlan plan;
  const CacheStats st = simulate(s, spec, {Policy::Belady}, &plan);
  EXPECT_EQ(st.hits, 2);
  EXPECT_EQ(st.misses, 5);
  EXPECT_EQ(best_paging_hits(s, spec), 2);
  expect_plan(plan, {{{0, 2, 0, Access::Miss}},
                     {{0, 0, 1, Access::Miss}, {0, 1, 0, Access::Miss}},
                     {{0, 0, 1, Access::Hit}, {0, 2, 0, Access::Miss}},
                     {{0, 0, 1, Access::Hit}, {0, 1, 0, Access::Miss}}});
}

// The exhaustive search itself, on cases small enough to do by hand.
TEST(CacheSim, ExhaustiveSearchByHand) {
  // 0,1,2,0,1 with 2 places: MIN misses 0,1,2 (evicting 1), hits 0, misses 1: 1 hit.
  EXPECT_EQ(best_paging_hits(stream_of(1, 3, {{0}, {1}, {2}, {0, 1}}), {1, 3, 2, false}), 1);
  // 0,1,0,1 with 1 place: no hit; with 2: 2 hits.
  EXPECT_EQ(best_paging_hits(stream_of(1, 2, {{0, 1}, {0, 1}}), {1, 2, 1, true}), 0);
  EXPECT_EQ(best_paging_hits(stream_of(1, 2, {{0, 1}, {0, 1}}), {1, 2, 2, true}), 2);
  // 2 layers, {0} {0} {0} {0}: (0,0) (1,0) (0,0) (1,0). Per layer with 1 place each: 2 hits; global
  // with 1 place: none; global with 2: 2.
  const LookupStream two = stream_of(2, 2, {{0}, {0}, {0}, {0}});
  EXPECT_EQ(best_paging_hits(two, {2, 2, 1, true}), 2);
  EXPECT_EQ(best_paging_hits(two, {2, 2, 1, false}), 0);
  EXPECT_EQ(best_paging_hits(two, {2, 2, 2, false}), 2);
}

// Static preloads, before step 0's lookups, as Prefetch events of step 0: per layer the C most popular
// of each layer, global the C most popular pairs, in one order (most popular first, ties to the lower
// layer then the lower id), each into the lowest free slot of its range; the first lookup of a
// preloaded expert is a prefetch hit.
TEST(CacheSim, StaticPreloadsTheMostPopularAsPrefetchesOfStepZero) {
  const Learned k = learn(2, 4, 5);
  const std::vector<double>& pop = k.predictor->popularity();
  const LookupStream s = stream_of(2, 4, {{0}, {0}});
  for (bool per_layer : {true, false}) {
    const CacheSpec spec{2, 4, 2, per_layer};
    PolicyInputs in{Policy::Static, &*k.predictor};
    CachePlan plan;
    const CacheStats st = simulate(s, spec, in, &plan);
    SCOPED_TRACE(per_layer ? "per_layer" : "global");
    // The order: decreasing popularity, then the key (lower layer, then lower id).
    std::vector<int64_t> keys(8);
    for (int64_t key = 0; key < 8; ++key) keys[key] = key;
    std::stable_sort(keys.begin(), keys.end(), [&](int64_t a, int64_t b) { return pop[a] > pop[b]; });
    std::vector<CacheEvent> want;
    std::vector<int32_t> next_slot = per_layer ? std::vector<int32_t>{0, 2} : std::vector<int32_t>{0, 0};
    std::vector<int64_t> taken(2, 0);
    std::vector<char> preloaded(8, 0);
    for (int64_t key : keys) {
      const int32_t l = static_cast<int32_t>(key / 4);
      if (per_layer ? taken[l] >= 2 : static_cast<int64_t>(want.size()) >= 2) continue;
      ++taken[l];
      preloaded[key] = 1;
      want.push_back({l, static_cast<int32_t>(key % 4), per_layer ? next_slot[l]++ : next_slot[0]++, Access::Prefetch});
    }
    const int64_t pre = per_layer ? 4 : 2;
    ASSERT_EQ(static_cast<int64_t>(want.size()), pre);
    EXPECT_EQ(st.prefetches, pre);
    ASSERT_GE(plan.events.size(), size_t(pre));
    ASSERT_GE(plan.step_start.size(), 2u);
    EXPECT_GE(plan.step_start[1], pre);
    for (int64_t i = 0; i < pre; ++i) {
      EXPECT_EQ(plan.events[i].kind, want[i].kind) << i;
      EXPECT_EQ(plan.events[i].layer, want[i].layer) << i;
      EXPECT_EQ(plan.events[i].expert, want[i].expert) << i;
      EXPECT_EQ(plan.events[i].slot, want[i].slot) << i;
    }
    // Step 0 looks up (0, 0): a prefetch hit when preloaded.
    ASSERT_GT(plan.events.size(), size_t(pre));
    EXPECT_EQ(plan.events[pre].kind, preloaded[0] ? Access::PrefetchHit : Access::Miss);
    // Per layer, step 1's (1, 0) is a prefetch hit when preloaded (step 0 evicts in layer 0 only).
    if (per_layer) {
      EXPECT_EQ(st.prefetch_hits, preloaded[0] + preloaded[4]);
    }
  }
}

// Scores are probabilities: a threshold of 0 asks for every expert of the next layer (up to the cap),
// one above 1 for none, and a predictive replay then prefetches nothing.
TEST(CacheSim, PrefetchThresholdAboveOneAsksForNothing) {
  SyntheticTraceSpec ts;
  ts.layers = 3, ts.experts = 6, ts.topk = 2, ts.sequences = 6, ts.seq_len = 10, ts.seed = 5;
  for (const int64_t batch : {1, 4}) {
    const Synthetic s = make_synthetic(ts, Phase::Decode, batch, 2, 0.0);
    const int64_t steps = s.lookups.steps(), batches = steps / ts.layers;
    EXPECT_EQ(s.prefetches.expert.size(), static_cast<size_t>(batches * (ts.layers - 1) * ts.experts));
    const Prefetches none = make_prefetches(*s.predictor, s.trace, s.replay, 1.0 + 1e-9, ts.experts);
    EXPECT_TRUE(none.expert.empty());
    ASSERT_EQ(none.step_start.size(), static_cast<size_t>(steps + 1));
    const PolicyInputs in = inputs_for(Policy::Predictive, &*s.predictor, &none, &s.predicted);
    const CacheStats st = simulate(s.lookups, {ts.layers, ts.experts, 2, true}, in);
    EXPECT_EQ(st.prefetches, 0);
    EXPECT_EQ(st.ready_rate(), st.hit_rate());
  }
}

TEST(CacheSim, PredictiveProtectsPrefetchesUntilTheirLayerRuns) {
  // 2 layers, 3 experts, one slot per layer. After step (0,0) the list {1, 2} prefetches 1 into layer 1's
  // slot and protects it; 2 finds no candidate and is skipped. Step (0,1) needs 1: a prefetch hit.
  const Learned k = learn(2, 3, 3);
  const LookupStream s = stream_of(2, 3, {{0}, {1}});
  Prefetches pf;
  pf.step_start = {0, 2, 2};
  pf.expert = {1, 2};
  PredictedUses pu;
  pu.predicted = s;
  pu.horizon = {2, 2};
  PolicyInputs in{Policy::Predictive, &*k.predictor, &pf, &pu};
  CachePlan plan;
  const CacheStats st = simulate(s, {2, 3, 1, true}, in, &plan);
  EXPECT_EQ(st.misses, 1);
  EXPECT_EQ(st.prefetches, 1);
  EXPECT_EQ(st.prefetch_hits, 1);
  EXPECT_EQ(st.hits, 0);
  expect_plan(plan, {{{0, 0, 0, Access::Miss}, {1, 1, 1, Access::Prefetch}}, {{1, 1, 1, Access::PrefetchHit}}});
}

// Protecting a resident is no event: per layer, one slot each, {0} {1} {0} {1}; after step 2 the list
// {1, 0} protects the resident (1, 1) (no event), so 0 finds no candidate and is skipped; step 3 hits.
TEST(CacheSim, PredictiveProtectsAResidentWithoutAnEvent) {
  const Learned k = learn(2, 2, 4);
  const LookupStream s = stream_of(2, 2, {{0}, {1}, {0}, {1}});
  Prefetches pf;
  pf.step_start = {0, 0, 0, 2, 2};
  pf.expert = {1, 0};
  PredictedUses pu;
  pu.predicted = s;
  pu.horizon = {4, 4, 4, 4};
  for (Policy p : {Policy::Predictive, Policy::ExpertFlow}) {
    SCOPED_TRACE(to_string(p));
    const PolicyInputs in{p, &*k.predictor, &pf, &pu};
    CachePlan plan;
    const CacheStats st = simulate(s, {2, 2, 1, true}, in, &plan);
    EXPECT_EQ(st.prefetches, 0);
    EXPECT_EQ(st.misses, 2);
    EXPECT_EQ(st.hits, 2);
    expect_plan(plan, {{{0, 0, 0, Access::Miss}},
                       {{1, 1, 1, Access::Miss}},
                       {{0, 0, 0, Access::Hit}},
                       {{1, 1, 1, Access::Hit}}});
  }
}

// A miss whose unpinned candidates are all protected takes the least recent unpinned one, protected
// ones included. Global, 2 slots, 2 layers x 3 experts: step (0,0) needs nothing and prefetches 2 then
// 1 of layer 1 (slots 0, 1, ticks 1, 2, both protected). Step (0,1) needs {0, 2}: (1,2) is pinned; 0's
// miss finds no unprotected candidate and takes the least recent unpinned, (1,1) in slot 1 (the pinned
// (1,2) in slot 0 is less recent); then 2 is a prefetch hit.
TEST(CacheSim, PredictiveMissAmongProtectedTakesTheLeastRecentUnpinned) {
  const Learned k = learn(2, 3, 6);
  const LookupStream s = stream_of(2, 3, {{}, {0, 2}});
  Prefetches pf;
  pf.step_start = {0, 2, 2};
  pf.expert = {2, 1};
  PredictedUses pu;
  pu.predicted = s;
  pu.horizon = {2, 2};
  const PolicyInputs in{Policy::Predictive, &*k.predictor, &pf, &pu};
  const CacheSpec spec{2, 3, 2, false};
  CachePlan plan;
  const CacheStats st = simulate(s, spec, in, &plan);
  EXPECT_EQ(st.prefetches, 2);
  EXPECT_EQ(st.misses, 1);
  EXPECT_EQ(st.prefetch_hits, 1);
  EXPECT_EQ(st.hits, 0);
  expect_plan(plan, {{{1, 2, 0, Access::Prefetch}, {1, 1, 1, Access::Prefetch}},
                     {{1, 0, 1, Access::Miss}, {1, 2, 0, Access::PrefetchHit}}});
  EXPECT_TRUE(matches_oracle(s, spec, in, "by hand"));
}

// Predictive's victim, 1 layer x 3 experts, 2 slots, one window (no prefetches: a single layer has
// none): a foreseen entry ranks -n by its nearest predicted step n, the farthest first; any unforeseen
// one ranks below every foreseen one, by its lookups served so far.
TEST(CacheSim, PredictiveEvictsTheFarthestForeseenThenTheLeastUsed) {
  const Learned k = learn(1, 3, 2);
  auto run = [&](const LookupStream& s, const LookupStream& predicted, CachePlan* plan) {
    Prefetches pf;
    pf.step_start.assign(s.step_start.size(), 0);
    PredictedUses pu;
    pu.predicted = predicted;
    pu.horizon.assign(s.steps(), s.steps());
    const PolicyInputs in{Policy::Predictive, &*k.predictor, &pf, &pu};
    EXPECT_TRUE(matches_oracle(s, {1, 3, 2, true}, in, "by hand"));
    return simulate(s, {1, 3, 2, true}, in, plan);
  };
  {
    // Nothing foreseen: {0} {0} {1} {2}. At step 3, 0 has 2 lookups (tick 2), 1 has 1 (tick 3): 1 goes
    // from slot 1, though it is the more recent.
    CachePlan plan;
    run(stream_of(1, 3, {{0}, {0}, {1}, {2}}), stream_of(1, 3, {{}, {}, {}, {}}), &plan);
    expect_plan(plan, {{{0, 0, 0, Access::Miss}},
                       {{0, 0, 0, Access::Hit}},
                       {{0, 1, 1, Access::Miss}},
                       {{0, 2, 1, Access::Miss}}});
  }
  {
    // {0} {0} {1} {2} {1}, 1 predicted at step 4: at step 3, 1 (1 lookup, foreseen at 4: -4) stays and 0
    // (2 lookups, unforeseen) goes from slot 0; step 4 hits 1.
    CachePlan plan;
    run(stream_of(1, 3, {{0}, {0}, {1}, {2}, {1}}), stream_of(1, 3, {{}, {}, {}, {}, {1}}), &plan);
    expect_plan(plan, {{{0, 0, 0, Access::Miss}},
                       {{0, 0, 0, Access::Hit}},
                       {{0, 1, 1, Access::Miss}},
                       {{0, 2, 0, Access::Miss}},
                       {{0, 1, 1, Access::Hit}}});
  }
  {
    // {0} {1} {2} {0} {1}, predicted 0 at step 3 and 1 at step 4: at step 2, 0 ranks -3 and 1 -4: 1 goes
    // from slot 1, though 0 is the less recent. Step 3 hits 0 (recomputed at step 3: no predicted step
    // of 0 in (3, 5), so unforeseen with 2 lookups); step 4's 1 then evicts 2 (unforeseen since step 2,
    // 1 lookup) from slot 1.
    CachePlan plan;
    run(stream_of(1, 3, {{0}, {1}, {2}, {0}, {1}}), stream_of(1, 3, {{}, {}, {}, {0}, {1}}), &plan);
    expect_plan(plan, {{{0, 0, 0, Access::Miss}},
                       {{0, 1, 1, Access::Miss}},
                       {{0, 2, 1, Access::Miss}},
                       {{0, 0, 0, Access::Hit}},
                       {{0, 1, 1, Access::Miss}}});
  }
}

// The priorities of a step's layer are recomputed after its lookups, before its prefetches pick a
// victim. Global, 3 slots, 2 layers x 3 experts, one window: (0,0) needs 0, (0,1) needs 0, (1,0)
// needs 1 and prefetches expert 2 of layer 1. Expert 0 of layer 0 was foreseen at step 2 (predicted
// there, priority -2 since step 0); step 2 did not need it, so once recomputed it is unforeseen, and
// the three residents (0,0) tick 1, (1,0) tick 2, (0,1) tick 3 are all unforeseen with 1 lookup each:
// the least recent, (0,0) in slot 0, goes. (Without the recomputation (0,0) would still rank as
// foreseen, above the unforeseen ones, and (1,0) in slot 1 would go.)
TEST(CacheSim, PredictiveRecomputesTheLayerBeforeItsPrefetches) {
  const Learned k = learn(2, 3, 1);
  const LookupStream s = stream_of(2, 3, {{0}, {0}, {1}, {2}});
  PredictedUses pu;
  pu.predicted = stream_of(2, 3, {{0}, {0}, {0}, {}});  // step 2 predicted to need 0 (it needs 1)
  pu.horizon = {4, 4, 4, 4};
  Prefetches pf;
  pf.step_start = {0, 0, 0, 1, 1};
  pf.expert = {2};
  const PolicyInputs in{Policy::Predictive, &*k.predictor, &pf, &pu};
  const CacheSpec spec{2, 3, 3, false};
  CachePlan plan;
  simulate(s, spec, in, &plan);
  expect_plan(plan, {{{0, 0, 0, Access::Miss}},
                     {{1, 0, 1, Access::Miss}},
                     {{0, 1, 2, Access::Miss}, {1, 2, 0, Access::Prefetch}},
                     {{1, 2, 0, Access::PrefetchHit}}});
  EXPECT_TRUE(matches_oracle(s, spec, in, "by hand"));
}

// (a) Every policy, both scopes, several capacities, on random hand-made streams.
TEST(CacheSim, MatchesTheOracleOnRandomStreams) {
  std::mt19937_64 rng(2024);
  int failures = 0;
  for (int64_t layers : {1, 2, 3})
    for (int64_t experts : {2, 3, 5}) {
      const Learned k = learn(layers, experts, 100 + layers * 10 + experts);
      for (int rep = 0; rep < 6 && failures < 8; ++rep) {
        const int64_t batches = 1 + rep;
        const LookupStream ls = random_stream(rng, layers, experts, batches);
        const Prefetches pf = random_prefetches(rng, ls);
        const PredictedUses pu = random_predicted(rng, ls);
        for (bool per_layer : {true, false})
          for (int64_t cap : {int64_t{1}, int64_t{2}, int64_t{3}, layers * experts}) {
            const CacheSpec spec{layers, experts, cap, per_layer};
            for (Policy p : kAllPolicies)
              if (failures < 8 && !matches_oracle(ls, spec, inputs_for(p, &*k.predictor, &pf, &pu), "random stream"))
                ++failures;
          }
      }
    }
  // Per-layer caches above 32 experts keep their heaps (smaller ones scan their slots for the victim).
  for (int rep = 0; rep < 4 && failures < 8; ++rep) {
    const int64_t layers = 2, experts = 48;
    const Learned k = learn(layers, experts, 300 + rep);
    const LookupStream ls = random_stream(rng, layers, experts, 60);
    const Prefetches pf = random_prefetches(rng, ls);
    const PredictedUses pu = random_predicted(rng, ls);
    for (int64_t cap : {int64_t{32}, int64_t{33}, int64_t{40}})
      for (Policy p : kAllPolicies)
        if (failures < 8 && !matches_oracle(ls, {layers, experts, cap, true}, inputs_for(p, &*k.predictor, &pf, &pu),
                                            "random stream, large per-layer cache"))
          ++failures;
  }
}

// (a) On synthetic traces through make_schedule / make_lookups (and make_prefetches /
// make_predicted_uses / schedule_tokens for the predictive policies).
TEST(CacheSim, MatchesTheOracleOnSyntheticTraces) {
  int failures = 0;
  for (const SyntheticTraceSpec& ts : synthetic_specs())
    for (Phase phase : {Phase::Decode, Phase::Prefill})
      for (double threshold : {0.3, 0.7}) {
        const Synthetic s = make_synthetic(ts, phase, phase == Phase::Decode ? 2 : 3, 2, threshold);
        for (bool per_layer : {true, false})
          for (int64_t cap : {int64_t{1}, int64_t{3}, per_layer ? ts.experts : ts.layers * ts.experts}) {
            const CacheSpec spec{ts.layers, ts.experts, cap, per_layer};
            for (Policy p : kAllPolicies) {
              if (failures >= 8) return;
              const bool regroup = p == Policy::ExpertFlow;
              const LookupStream& ls = regroup ? s.regrouped_lookups : s.lookups;
              const PolicyInputs in = inputs_for(p, &*s.predictor, regroup ? &s.regrouped_prefetches : &s.prefetches,
                                                 regroup ? &s.regrouped_predicted : &s.predicted);
              if (!matches_oracle(ls, spec, in, "synthetic")) ++failures;
              // Predictive on hand-made prefetch lists too, independent of make_prefetches.
              if (p == Policy::Predictive) {
                std::mt19937_64 rng(ts.seed * 7 + cap);
                const Prefetches pf = random_prefetches(rng, ls);
                if (!matches_oracle(ls, spec, inputs_for(p, &*s.predictor, &pf, &s.predicted),
                                    "synthetic, random prefetches"))
                  ++failures;
              }
            }
          }
      }
}

// ExpertFlow is Predictive on whatever lookups it is given.
TEST(CacheSim, ExpertFlowIsPredictiveOnItsLookups) {
  std::mt19937_64 rng(77);
  const Learned k = learn(2, 4, 9);
  for (int rep = 0; rep < 20; ++rep) {
    const LookupStream ls = random_stream(rng, 2, 4, 4);
    const Prefetches pf = random_prefetches(rng, ls);
    const PredictedUses pu = random_predicted(rng, ls);
    for (bool per_layer : {true, false})
      for (int64_t cap : {1, 2, 3}) {
        const CacheSpec spec{2, 4, cap, per_layer};
        CachePlan a, b;
        const CacheStats sa = simulate(ls, spec, inputs_for(Policy::Predictive, &*k.predictor, &pf, &pu), &a);
        const CacheStats sb = simulate(ls, spec, inputs_for(Policy::ExpertFlow, &*k.predictor, &pf, &pu), &b);
        EXPECT_EQ(sa.hits, sb.hits);
        EXPECT_EQ(sa.misses, sb.misses);
        EXPECT_EQ(sa.prefetches, sb.prefetches);
        EXPECT_EQ(sa.prefetch_hits, sb.prefetch_hits);
        ASSERT_EQ(a.events.size(), b.events.size());
        for (size_t i = 0; i < a.events.size(); ++i) {
          EXPECT_EQ(a.events[i].slot, b.events[i].slot);
          EXPECT_EQ(a.events[i].kind, b.events[i].kind);
        }
      }
  }
}

// Lfu's priority is the count of lookups served in the replay; a predictor given anyway changes nothing.
TEST(CacheSim, LfuCountsOnlyTheReplaysLookups) {
  std::mt19937_64 rng(5);
  const Learned k = learn(2, 4, 21);
  for (int rep = 0; rep < 20; ++rep) {
    const LookupStream ls = random_stream(rng, 2, 4, 5);
    for (bool per_layer : {true, false})
      for (int64_t cap : {1, 2, 3}) {
        const CacheSpec spec{2, 4, cap, per_layer};
        PolicyInputs in{Policy::Lfu, &*k.predictor};
        if (!matches_oracle(ls, spec, in, "lfu with a predictor")) return;
      }
  }
}

// (b) Belady is optimal: its hits equal the exhaustive search's maximum over the classical paging
// model of the flattened lookup sequence (any eviction, no pinning), on tiny streams.
TEST(CacheSim, BeladyIsOptimal) {
  std::mt19937_64 rng(31337);
  int failures = 0;
  for (int rep = 0; rep < 240 && failures < 5; ++rep) {
    const int64_t layers = 1 + rep % 3, experts = 2 + (rep / 3) % 3;  // L*E <= 12
    const int64_t batches = layers == 1 ? 10 : layers == 2 ? 6 : 4;
    const LookupStream ls = random_stream(rng, layers, experts, batches);
    for (bool per_layer : {true, false})
      for (int64_t cap : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{5}}) {
        if (cap >= (per_layer ? experts : layers * experts)) continue;
        const CacheSpec spec{layers, experts, cap, per_layer};
        const int64_t best = best_paging_hits(ls, spec);
        CachePlan plan;
        const CacheStats st = simulate(ls, spec, {Policy::Belady}, &plan);
        if (st.hits != best && failures++ < 5)
          ADD_FAILURE() << "Belady " << st.hits << " hits, the best paging " << best << ": "
                        << describe(spec, Policy::Belady) << "\n"
                        << dump_stream(ls) << "\n"
                        << dump_plan(plan);
        EXPECT_EQ(st.prefetches, 0);
        EXPECT_EQ(st.prefetch_hits, 0);
        EXPECT_EQ(st.hits + st.misses, ls.lookups());
      }
  }
}

// (c) Belady's hit rate bounds every policy's, the prefetching ones included (a prefetched expert's
// first use counts as a transfer, not a hit).
TEST(CacheSim, BeladyBoundsEveryPolicysHitRate) {
  std::mt19937_64 rng(99);
  int failures = 0, compared = 0;
  auto check = [&](const LookupStream& ls, const CacheSpec& spec, Policy p, const PolicyInputs& in,
                   const std::string& what) {
    const CacheStats bel = simulate(ls, spec, {Policy::Belady});
    const CacheStats st = simulate(ls, spec, in);
    ++compared;
    if (st.hits > bel.hits && failures++ < 5)
      ADD_FAILURE() << what << ": " << describe(spec, p) << " hit rate " << st.hit_rate() << " > Belady's "
                    << bel.hit_rate() << "\n"
                    << dump_stream(ls);
    EXPECT_GE(bel.hit_rate(), st.hit_rate()) << what << ": " << describe(spec, p);
  };
  for (int rep = 0; rep < 400; ++rep) {
    const int64_t layers = 1 + rep % 3, experts = 2 + rep % 5;
    const Learned k = learn(layers, experts, 500 + rep % 40);
    const LookupStream ls = random_stream(rng, layers, experts, 2 + rep % 7);
    const Prefetches pf = random_prefetches(rng, ls);
    const PredictedUses pu = random_predicted(rng, ls);
    for (bool per_layer : {true, false})
      for (int64_t cap : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}, layers * experts})
        for (Policy p : kAllPolicies)
          check(ls, {layers, experts, cap, per_layer}, p, inputs_for(p, &*k.predictor, &pf, &pu), "random stream");
  }
  for (const SyntheticTraceSpec& ts : synthetic_specs())
    for (Phase phase : {Phase::Decode, Phase::Prefill}) {
      const Synthetic s = make_synthetic(ts, phase, 2, 2, 0.4);
      for (bool per_layer : {true, false})
        for (int64_t cap : {1, 2, 4})
          for (Policy p : kAllPolicies) {
            const bool regroup = p == Policy::ExpertFlow;
            check(regroup ? s.regrouped_lookups : s.lookups, {ts.layers, ts.experts, cap, per_layer}, p,
                  inputs_for(p, &*s.predictor, regroup ? &s.regrouped_prefetches : &s.prefetches,
                             regroup ? &s.regrouped_predicted : &s.predicted),
                  "synthetic");
          }
      // The workload's oracle_paths_hit_rate: Predictive foreseeing the true paths, no prefetch.
      const PredictedUses truth = true_uses(s.lookups, s.replay);
      Prefetches none;
      none.step_start.assign(s.lookups.step_start.size(), 0);
      for (bool per_layer : {true, false})
        for (int64_t cap : {1, 2, 4})
          check(s.lookups, {ts.layers, ts.experts, cap, per_layer}, Policy::Predictive,
                inputs_for(Policy::Predictive, &*s.predictor, &none, &truth), "synthetic, true paths");
    }
  EXPECT_GT(compared, 10000);
}

// (d) The plan is consistent with its own slot table and with the stats.
TEST(CacheSim, PlanIsConsistentWithItsSlotsAndStats) {
  std::mt19937_64 rng(4242);
  for (int rep = 0; rep < 24; ++rep) {
    const int64_t layers = 1 + rep % 3, experts = 2 + rep % 4;
    const Learned k = learn(layers, experts, 900 + rep);
    const LookupStream ls = random_stream(rng, layers, experts, 2 + rep % 5);
    const Prefetches pf = random_prefetches(rng, ls);
    const PredictedUses pu = random_predicted(rng, ls);
    for (bool per_layer : {true, false})
      for (int64_t cap : {int64_t{1}, int64_t{2}, layers * experts})
        for (Policy p : kAllPolicies) {
          const CacheSpec spec{layers, experts, cap, per_layer};
          CachePlan plan;
          const CacheStats st = simulate(ls, spec, inputs_for(p, &*k.predictor, &pf, &pu), &plan);
          expect_consistent(ls, spec, p, st, plan, "random stream " + std::to_string(rep));
          if (HasFatalFailure()) return;
        }
  }
  for (const SyntheticTraceSpec& ts : synthetic_specs()) {
    const Synthetic s = make_synthetic(ts, Phase::Prefill, 3, 2, 0.3);
    for (bool per_layer : {true, false})
      for (int64_t cap : {1, 3})
        for (Policy p : kAllPolicies) {
          const CacheSpec spec{ts.layers, ts.experts, cap, per_layer};
          CachePlan plan;
          const CacheStats st =
              simulate(s.lookups, spec, inputs_for(p, &*s.predictor, &s.prefetches, &s.predicted), &plan);
          expect_consistent(s.lookups, spec, p, st, plan, "synthetic");
          if (HasFatalFailure()) return;
        }
  }
}

// With room for everything, each expert is transferred once at most.
TEST(CacheSim, RoomForEverythingTransfersEachExpertOnce) {
  std::mt19937_64 rng(8);
  const Learned k = learn(2, 3, 8);
  const LookupStream ls = random_stream(rng, 2, 3, 6);
  const Prefetches pf = random_prefetches(rng, ls);
  const PredictedUses pu = random_predicted(rng, ls);
  std::vector<char> seen(6, 0);
  for (int32_t t = 0; t < ls.steps(); ++t)
    for (int32_t e : step_experts(ls, t)) seen[(t % 2) * 3 + e] = 1;
  const int64_t distinct = std::count(seen.begin(), seen.end(), 1);
  for (bool per_layer : {true, false})
    for (Policy p : kAllPolicies) {
      const CacheSpec spec{2, 3, per_layer ? 3 : 6, per_layer};
      const CacheStats st = simulate(ls, spec, inputs_for(p, &*k.predictor, &pf, &pu));
      SCOPED_TRACE(describe(spec, p));
      EXPECT_LE(st.transfers(), 6);
      EXPECT_EQ(st.hits + st.prefetch_hits + st.misses, ls.lookups());
      if (p == Policy::Lru || p == Policy::Lfu || p == Policy::Belady) {
        EXPECT_EQ(st.misses, distinct);
        EXPECT_EQ(st.prefetches, 0);
      }
      if (p == Policy::Static) {
        EXPECT_EQ(st.misses, 0);
        EXPECT_EQ(st.prefetches, 6);
        EXPECT_EQ(st.prefetch_hits, distinct);
      }
    }
}

// (e) The input checks: std::invalid_argument naming the field.
void expect_invalid(const std::function<void()>& f, const std::string& field, const std::string& what,
                    bool prefix = false) {
  try {
    f();
    ADD_FAILURE() << what << ": no exception";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    if (prefix)
      EXPECT_EQ(m.rfind(field, 0), 0u) << what << ": \"" << m << "\" does not start with \"" << field << "\"";
    else
      EXPECT_NE(m.find(field), std::string::npos) << what << ": \"" << m << "\" lacks " << field;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": not std::invalid_argument: " << e.what();
  }
}

TEST(CacheSim, RejectsBadInputsNamingTheField) {
  std::mt19937_64 rng(1);
  const Learned k = learn(2, 3, 1);
  const LookupStream ls = random_stream(rng, 2, 3, 3);
  const Prefetches pf = random_prefetches(rng, ls);
  const PredictedUses pu = random_predicted(rng, ls);
  const RoutePredictor* pred = &*k.predictor;
  for (int64_t cap : {0, -1})
    for (bool per_layer : {true, false}) {
      expect_invalid([&] { simulate(ls, {2, 3, cap, per_layer}, {Policy::Lru}); }, "capacity",
                     "capacity " + std::to_string(cap));
      expect_invalid([&] { simulate(ls, {2, 3, cap, per_layer}, {Policy::Lru}); }, "cache: ",
                     "capacity " + std::to_string(cap) + " (\"cache: ...\")", true);
    }
  const CacheSpec spec{2, 3, 2, true};
  expect_invalid([&] { simulate(ls, spec, {Policy::Static}); }, "predictor", "static without predictor");
  // Short inputs: one step fewer than the lookups.
  Prefetches short_pf = pf;
  short_pf.step_start.pop_back();
  short_pf.expert.resize(short_pf.step_start.back());
  PredictedUses short_steps = pu;  // the predicted stream one step short
  short_steps.predicted.step_start.pop_back();
  short_steps.predicted.expert.resize(short_steps.predicted.step_start.back());
  PredictedUses short_horizon = pu;  // the horizon one step short
  short_horizon.horizon.pop_back();
  PredictedUses long_horizon = pu;  // and one too many
  long_horizon.horizon.push_back(long_horizon.horizon.back());
  for (Policy p : {Policy::Predictive, Policy::ExpertFlow}) {
    const std::string n(to_string(p));
    const std::string pf_msg = "prefetches: policy " + n + " needs ";
    const std::string pu_msg = "predicted: policy " + n + " needs ";
    expect_invalid([&] { simulate(ls, spec, {p, nullptr, &pf, &pu}); }, "predictor", n + " without predictor");
    expect_invalid([&] { simulate(ls, spec, {p, pred, nullptr, &pu}); }, pf_msg, n + " without prefetches", true);
    expect_invalid([&] { simulate(ls, spec, {p, pred, &short_pf, &pu}); }, pf_msg, n + " with short prefetches",
                   true);
    expect_invalid([&] { simulate(ls, spec, {p, pred, &pf, nullptr}); }, pu_msg, n + " without predicted uses",
                   true);
    expect_invalid([&] { simulate(ls, spec, {p, pred, &pf, &short_steps}); }, pu_msg,
                   n + " with predicted uses a step short", true);
    expect_invalid([&] { simulate(ls, spec, {p, pred, &pf, &short_horizon}); }, pu_msg,
                   n + " with a horizon a step short", true);
    expect_invalid([&] { simulate(ls, spec, {p, pred, &pf, &long_horizon}); }, pu_msg,
                   n + " with a horizon a step long", true);
    EXPECT_NO_THROW(simulate(ls, spec, {p, pred, &pf, &pu})) << n;
  }
  expect_invalid([&] { simulate(ls, {3, 3, 2, true}, {Policy::Lru}); }, "layers", "lookups of 2 layers, spec of 3");
  expect_invalid([&] { simulate(ls, {2, 4, 2, true}, {Policy::Lru}); }, "experts", "lookups of 3 experts, spec of 4");
  // The policies needing nothing run without inputs.
  for (Policy p : {Policy::Lru, Policy::Lfu, Policy::Belady}) EXPECT_NO_THROW(simulate(ls, spec, {p}));
}

}  // namespace
}  // namespace mlsb::moe_offload
