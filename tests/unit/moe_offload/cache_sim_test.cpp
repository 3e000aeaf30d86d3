// The expert cache simulator against an independent brute-force replay of cache_sim.hpp's rules
// (every policy, both scopes, capacities from 1 to everything, hand-made and synthetic lookup
// streams), Belady against an exhaustive search, Belady's bound on every policy's hit rate, the
// plan's consistency with its own slot table and counts, and the input checks.
//
// The oracle below is written from the header text alone: plain vectors and linear scans. Where the
// text leaves a choice open, the oracle takes the most literal reading and says so in a comment
// marked "Reading:".
#include "workloads/moe_offload/cache_sim.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
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

/// One occupied slot.
struct Resident {
  int32_t layer = 0, expert = 0;
  int64_t last_use = 0;       // tick of its latest served lookup or prefetch
  bool used = false;          // served since it was fetched
  bool protect = false;       // protected by a prefetch ...
  int64_t protect_step = -1;  // ... issued after this step
  int tier = 0;               // Predictive's stored priority (tier, value): tier 1 = foreseen use
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
    latest_.assign(L_, -1);
    tick_ = 0;
    st_ = CacheStats{};
    plan_ = CachePlan{};
    const Policy pol = in_.policy;

    if (pol == Policy::Static && ls_.steps() > 0) preload();

    for (int64_t t = 0; t < ls_.steps(); ++t) {
      const int32_t l = static_cast<int32_t>(t % L_);
      // Predictive: "for every resident when a step opens a new window" (before the step is served;
      // a window opens where the horizon changes).
      if (is_predictive(pol) && t > 0 && in_.predicted->horizon[t] != in_.predicted->horizon[t - 1])
        for (auto& r : slot_)
          if (r) reprioritize(*r, t);
      // Reading: while step t is being served it is "the latest step of its layer", so an expert it
      // served is `used` when its priority is recomputed on being served.
      latest_[l] = t;

      const std::vector<int32_t> need = step_experts(ls_, t);
      std::vector<int32_t> missing;
      // The resident experts first, ascending.
      for (int32_t e : need) {
        const int s = find(l, e);
        if (s < 0) {
          missing.push_back(e);
          continue;
        }
        Resident& r = *slot_[s];
        const Access kind = r.used ? Access::Hit : Access::PrefetchHit;
        (kind == Access::Hit ? st_.hits : st_.prefetch_hits)++;
        serve(r, t);
        plan_.events.push_back({l, e, s, kind});
      }
      // Then each missing one, ascending: a free slot, else the victim's.
      for (int32_t e : missing) {
        int s = free_slot(l);
        if (s < 0) s = victim(l, t, /*for_miss=*/true);
        if (!slot_[s]) note_fill();
        slot_[s] = Resident{l, e};
        Resident& r = *slot_[s];
        r.used = false;  // serve() marks it used
        st_.misses++;
        serve(r, t);
        plan_.events.push_back({l, e, s, Access::Miss});
      }
      st_.lookups += static_cast<int64_t>(need.size());

      if (is_predictive(pol)) {
        // "for every resident of layer m after a step of m" (Reading: after its lookups, before
        // its prefetches).
        for (auto& r : slot_)
          if (r && r->layer == l) reprioritize(*r, t);
        // "Protection ends when step (b, l + 1) is served": the protections of step t - 1's
        // prefetches end now (Reading: before step t's own prefetches pick their victims).
        for (auto& r : slot_)
          if (r && r->protect && r->protect_step == t - 1) r->protect = false, r->protect_step = -1;
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
  std::vector<int64_t> latest_;  // latest step of each layer, -1 before its first
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

  /// First step after `t` that needs (layer, expert), -1 for never.
  int64_t next_need(int32_t layer, int32_t expert, int64_t t) const {
    for (int64_t n = t + 1; n < ls_.steps(); ++n)
      if (n % L_ == layer && step_has(ls_, n, expert)) return n;
    return -1;
  }

  /// Predictive's priority of `r` at step t: -n for the first step n in (t, horizon[t]) whose predicted
  /// paths hold it, else (below every foreseen one) reuse(m, e, used).
  // Reading: "an entry on a predicted path of a step n" takes the nearest such n (as Belady's next use).
  void reprioritize(Resident& r, int64_t t) const {
    const PredictedUses& pu = *in_.predicted;
    for (int64_t n = t + 1; n < pu.horizon[t]; ++n)
      if (n % L_ == r.layer && step_has(pu.predicted, n, r.expert)) {
        r.tier = 1, r.value = -static_cast<double>(n);
        return;
      }
    // Reading: before the first step of its layer there is no latest step, so `used` is false.
    const int64_t last = latest_[r.layer];
    const bool used = last >= 0 && step_has(ls_, last, r.expert);
    r.tier = 0, r.value = in_.predictor->reuse(r.layer, r.expert, used);
  }

  Rank rank(const Resident& r, int64_t t) const {
    const int64_t k = r.layer * E_ + r.expert;
    switch (in_.policy) {
      case Policy::Lru:
        return {0, 0.0, r.last_use};
      case Policy::Lfu:
        // Reading: the count alone, no popularity prior (route_predictor.hpp mentions "LFU's prior",
        // but cache_sim.hpp says "lookups of (layer, expert) served so far in the replay" and
        // PolicyInputs gives Lfu no predictor).
        return {0, static_cast<double>(lfu_[k]), r.last_use};
      case Policy::Static:
        return {0, in_.predictor->popularity()[k], r.last_use};
      case Policy::Belady: {
        const int64_t n = next_need(r.layer, r.expert, t);
        if (n < 0) return {0, 0.0, r.last_use};  // never again: below every foreseen use
        return {1, -static_cast<double>(n), r.last_use};
      }
      case Policy::Predictive:
      case Policy::ExpertFlow:
        return {r.tier, r.value, r.last_use};
    }
    return {0, 0.0, r.last_use};
  }

  /// The victim among the resident candidates of `layer`'s slots; -1 when a prefetch finds none.
  int victim(int32_t layer, int64_t t, bool for_miss) const {
    int best = -1;
    for (int64_t s = lo(layer); s < hi(layer); ++s) {
      if (!slot_[s]) continue;
      if (is_predictive(in_.policy) && slot_[s]->protect) continue;
      if (best < 0 || rank(*slot_[s], t) < rank(*slot_[best], t)) best = static_cast<int>(s);
    }
    if (best >= 0 || !for_miss) return best;
    // Only protected ones remain: a miss takes the least recent.
    for (int64_t s = lo(layer); s < hi(layer); ++s)
      if (slot_[s] && (best < 0 || slot_[s]->last_use < slot_[best]->last_use)) best = static_cast<int>(s);
    return best;
  }

  /// Predictive's prefetches after serving step t, into layer `next`.
  void prefetch(int64_t t, int32_t next) {
    const Prefetches& p = *in_.prefetches;
    for (int64_t i = p.step_start[t]; i < p.step_start[t + 1]; ++i) {
      const int32_t e = p.expert[i];
      const int s0 = find(next, e);
      if (s0 >= 0) {
        // Reading: protecting a resident expert is no transfer: no event, no tick, last use unchanged.
        slot_[s0]->protect = true, slot_[s0]->protect_step = t;
        continue;
      }
      int s = free_slot(next);
      if (s < 0) s = victim(next, t, /*for_miss=*/false);
      if (s < 0) continue;  // no candidate left
      if (!slot_[s]) note_fill();
      slot_[s] = Resident{next, e};
      Resident& r = *slot_[s];
      r.last_use = ++tick_;
      r.used = false;
      r.protect = true, r.protect_step = t;
      reprioritize(r, t);
      st_.prefetches++;
      plan_.events.push_back({next, e, s, Access::Prefetch});
    }
  }

  /// Static's preload before step 0.
  // Reading: a preload is a prefetch, so it ticks the clock. Per layer the C most popular of each
  // layer, global the C most popular pairs; both listed in one order, decreasing popularity, ties to
  // the lower layer then the lower id ("in that order" read as the order the sentence defines, which
  // only then needs "ties to the lower layer" per layer too; the other reading, layer by layer, gives
  // the same slots and differs in the events' order and the ticks).
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
    std::vector<std::pair<int32_t, int32_t>> order;
    std::vector<int64_t> taken(L_, 0);
    for (auto [l, e] : all) {
      if (spec_.per_layer ? taken[l] >= C_ : static_cast<int64_t>(order.size()) >= C_) continue;
      taken[l]++;
      order.push_back({l, e});
    }
    for (auto [l, e] : order) {
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
// Exhaustive search: the most hits any demand-fetching cache gets (set requests: the needed experts
// already resident are hits; each missing one, ascending, takes a free slot or evicts any resident of
// its candidate slots, one the step served included).
// ------------------------------------------------------------------------------------------------

int64_t best_demand_hits(const LookupStream& ls, const CacheSpec& spec) {
  const int64_t L = spec.layers, E = spec.experts, C = spec.capacity;
  EXPECT_LE(L * E, 16);
  auto bit = [](int64_t k) { return uint32_t{1} << k; };
  auto in_scope = [&](uint32_t mask, int64_t layer) {
    int64_t n = 0;
    for (int64_t k = 0; k < L * E; ++k)
      if ((mask & bit(k)) && (!spec.per_layer || k / E == layer)) ++n;
    return n;
  };
  std::map<std::pair<int64_t, uint32_t>, int64_t> memo;
  std::function<int64_t(int64_t, uint32_t)> go = [&](int64_t t, uint32_t mask) -> int64_t {
    if (t == ls.steps()) return 0;
    if (auto it = memo.find({t, mask}); it != memo.end()) return it->second;
    const int64_t l = t % L;
    int64_t hits = 0;
    std::vector<int64_t> missing;
    for (int32_t e : step_experts(ls, t)) {
      if (mask & bit(l * E + e))
        ++hits;
      else
        missing.push_back(l * E + e);
    }
    int64_t best = -1;
    std::function<void(size_t, uint32_t)> fetch = [&](size_t i, uint32_t m) {
      if (i == missing.size()) {
        best = std::max(best, go(t + 1, m));
        return;
      }
      if (in_scope(m, l) < C) return fetch(i + 1, m | bit(missing[i]));
      for (int64_t k = 0; k < L * E; ++k)
        if ((m & bit(k)) && (!spec.per_layer || k / E == l)) fetch(i + 1, (m & ~bit(k)) | bit(missing[i]));
    };
    fetch(0, mask);
    return memo[{t, mask}] = hits + best;
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

/// A predictor for L x E learned on a small synthetic trace, so popularity() and reuse() differ
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

/// Walks `plan` with a slot table: every Hit/PrefetchHit finds its expert in its slot (used, resp. not
/// yet used, since its fetch), every Miss/Prefetch writes its slot within its layer's range; each
/// step serves exactly its experts, resident ones first, ascending, then misses ascending, then
/// prefetches of the next layer; counts from the plan equal the stats.
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
  for (int64_t t = 0; t < ls.steps(); ++t) {
    const int32_t l = static_cast<int32_t>(t % spec.layers);
    std::vector<int32_t> served_res, served_miss;
    int phase = 0;  // 0 preloads (step 0, Static), 1 resident lookups, 2 misses, 3 prefetches
    for (int64_t i = plan.step_start[t]; i < plan.step_start[t + 1]; ++i) {
      const CacheEvent& e = plan.events[i];
      ASSERT_GE(e.slot, 0);
      ASSERT_LT(e.slot, spec.slots());
      ASSERT_GE(e.layer, 0);
      ASSERT_LT(e.layer, spec.layers);
      ASSERT_GE(e.expert, 0);
      ASSERT_LT(e.expert, E);
      if (spec.per_layer) {
        EXPECT_GE(e.slot, e.layer * C) << "event " << i;
        EXPECT_LT(e.slot, (e.layer + 1) * C) << "event " << i;
      }
      const int64_t key = e.layer * E + e.expert;
      switch (e.kind) {
        case Access::Hit:
        case Access::PrefetchHit:
          EXPECT_LE(phase, 1) << "event " << i << ": a resident lookup after a miss or prefetch";
          phase = 1;
          EXPECT_EQ(e.layer, l) << "event " << i;
          EXPECT_EQ(table[e.slot], key) << "event " << i << ": not in its slot";
          EXPECT_EQ(bool(used[e.slot]), e.kind == Access::Hit) << "event " << i;
          used[e.slot] = 1;
          served_res.push_back(e.expert);
          (e.kind == Access::Hit ? n.hits : n.prefetch_hits)++;
          break;
        case Access::Miss:
          EXPECT_LE(phase, 2) << "event " << i << ": a miss after a prefetch";
          phase = 2;
          EXPECT_EQ(e.layer, l) << "event " << i;
          for (int64_t s = 0; s < spec.slots(); ++s)
            EXPECT_NE(table[s], key) << "event " << i << ": a miss of a resident";
          resident += table[e.slot] < 0;
          table[e.slot] = key, used[e.slot] = 1;
          served_miss.push_back(e.expert);
          n.misses++;
          break;
        case Access::Prefetch:
          if (t == 0 && phase == 0 && policy == Policy::Static) {
            // a preload
          } else {
            EXPECT_TRUE(is_predictive(policy)) << "event " << i << ": a prefetch from " << to_string(policy);
            EXPECT_EQ(e.layer, l + 1) << "event " << i;
            phase = 3;
          }
          for (int64_t s = 0; s < spec.slots(); ++s)
            EXPECT_NE(table[s], key) << "event " << i << ": a prefetch of a resident";
          resident += table[e.slot] < 0;
          table[e.slot] = key, used[e.slot] = 0;
          n.prefetches++;
          break;
      }
      n.peak_resident = std::max(n.peak_resident, resident);
    }
    EXPECT_TRUE(std::is_sorted(served_res.begin(), served_res.end())) << "step " << t;
    EXPECT_TRUE(std::is_sorted(served_miss.begin(), served_miss.end())) << "step " << t;
    std::vector<int32_t> served = served_res;
    served.insert(served.end(), served_miss.begin(), served_miss.end());
    std::sort(served.begin(), served.end());
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

// Small cases worked out by hand from the header's rules.
TEST(CacheSim, LruByHand) {
  LookupStream s;
  s.layers = 1, s.experts = 4;
  s.step_start = {0, 2, 3, 4, 5};
  s.expert = {0, 1, 2, 0, 1};
  CachePlan plan;
  const CacheStats st = simulate(s, {1, 4, 2, true}, {Policy::Lru}, &plan);
  // {0,1}: both fetched into slots 0, 1; {2}: evicts 0 (tick 1); {0}: evicts 1 (tick 2 < 3); {1}: evicts 2.
  EXPECT_EQ(st.lookups, 5);
  EXPECT_EQ(st.misses, 5);
  EXPECT_EQ(st.hits, 0);
  EXPECT_EQ(st.peak_resident, 2);
  ASSERT_EQ(plan.events.size(), 5u);
  const int32_t slots[] = {0, 1, 0, 1, 0};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(plan.events[i].slot, slots[i]) << i;
    EXPECT_EQ(plan.events[i].kind, Access::Miss) << i;
  }
}

TEST(CacheSim, StepNeedingMoreThanTheCapacityEvictsWhatItServed) {
  LookupStream s;
  s.layers = 1, s.experts = 3;
  s.step_start = {0, 3, 4};
  s.expert = {0, 1, 2, 2};
  for (Policy p : {Policy::Lru, Policy::Lfu, Policy::Belady}) {
    CachePlan plan;
    const CacheStats st = simulate(s, {1, 3, 1, true}, {p}, &plan);
    EXPECT_EQ(st.misses, 3) << to_string(p);
    EXPECT_EQ(st.hits, 1) << to_string(p);  // 2, fetched last, stays
    ASSERT_EQ(plan.events.size(), 4u);
    for (const CacheEvent& e : plan.events) EXPECT_EQ(e.slot, 0);
    EXPECT_EQ(plan.events[3].kind, Access::Hit);
  }
}

TEST(CacheSim, BeladyByHand) {
  // Capacity 2, global, 1 layer: {0,1} {2} {0} {1}. At {2} Belady evicts 1 (next use 3, farther than 0's
  // 2), so {0} hits; at {1} it evicts 0 or 2 (both never again: the least recent, 2 at tick 3 vs 0 at 4).
  LookupStream s;
  s.layers = 1, s.experts = 3;
  s.step_start = {0, 2, 3, 4, 5};
  s.expert = {0, 1, 2, 0, 1};
  CachePlan plan;
  const CacheStats st = simulate(s, {1, 3, 2, false}, {Policy::Belady}, &plan);
  EXPECT_EQ(st.hits, 1);
  EXPECT_EQ(st.misses, 4);
  ASSERT_EQ(plan.events.size(), 5u);
  EXPECT_EQ(plan.events[2].slot, 1);  // 2 replaces 1
  EXPECT_EQ(plan.events[3].kind, Access::Hit);
  EXPECT_EQ(plan.events[4].slot, 1);  // 1 replaces 2
}

TEST(CacheSim, StaticPreloadsTheMostPopularAsPrefetchesOfStepZero) {
  const Learned k = learn(2, 4, 5);
  const std::vector<double>& pop = k.predictor->popularity();
  LookupStream s;
  s.layers = 2, s.experts = 4;
  s.step_start = {0, 1, 2};
  s.expert = {0, 0};
  for (bool per_layer : {true, false}) {
    const CacheSpec spec{2, 4, 2, per_layer};
    PolicyInputs in{Policy::Static, &*k.predictor};
    CachePlan plan;
    const CacheStats st = simulate(s, spec, in, &plan);
    SCOPED_TRACE(per_layer ? "per_layer" : "global");
    const int64_t pre = per_layer ? 4 : 2;
    EXPECT_EQ(st.prefetches, pre);
    ASSERT_GE(plan.events.size(), size_t(pre));
    for (int64_t i = 0; i < pre; ++i) EXPECT_EQ(plan.events[i].kind, Access::Prefetch);
    // The preloaded set: the top of each layer, or the top pairs.
    std::vector<std::pair<double, int64_t>> ranked;  // (-pop, key)
    for (int64_t key = 0; key < 8; ++key) ranked.push_back({-pop[key], key});
    std::sort(ranked.begin(), ranked.end());
    std::vector<int64_t> want, got;
    if (per_layer) {
      for (int64_t l = 0; l < 2; ++l) {
        int64_t taken = 0;
        for (auto [np, key] : ranked)
          if (key / 4 == l && taken < 2) want.push_back(key), ++taken;
      }
    } else {
      want = {ranked[0].second, ranked[1].second};
    }
    for (int64_t i = 0; i < pre; ++i) got.push_back(plan.events[i].layer * 4 + plan.events[i].expert);
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want);
  }
}

TEST(CacheSim, PredictiveProtectsPrefetchesUntilTheirLayerRuns) {
  // 2 layers, 3 experts, one slot per layer. After step (0,0) the list {1, 2} prefetches 1 into layer 1's
  // slot and protects it; 2 finds no candidate. Step (0,1) needs 1: a prefetch hit.
  const Learned k = learn(2, 3, 3);
  LookupStream s;
  s.layers = 2, s.experts = 3;
  s.step_start = {0, 1, 2};
  s.expert = {0, 1};
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
  ASSERT_EQ(plan.events.size(), 3u);
  EXPECT_EQ(plan.step_start, (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(plan.events[1].kind, Access::Prefetch);
  EXPECT_EQ(plan.events[1].expert, 1);
  EXPECT_EQ(plan.events[1].slot, 1);
  EXPECT_EQ(plan.events[2].kind, Access::PrefetchHit);
}

// The priorities of a step's layer are recomputed after its lookups, before its prefetches pick a
// victim. Global, 3 slots, 2 layers x 3 experts, one window: (0,0) needs 0, (0,1) needs 0, (1,0)
// needs 1 and prefetches expert 2 of layer 1. Expert 0 of layer 0 was foreseen at step 2 (predicted
// there, priority -2 since step 0); step 2 did not need it, so once recomputed it is unforeseen with
// p = reuse(0, 0, false), which here is the lowest: the prefetch takes its slot 0. (Without the
// recomputation it would still rank as foreseen and another entry would go.)
TEST(CacheSim, PredictiveRecomputesTheLayerBeforeItsPrefetches) {
  std::optional<Learned> k;
  for (uint64_t seed = 1; seed < 40 && !k; ++seed) {
    Learned c = learn(2, 3, seed);
    const RoutePredictor& p = *c.predictor;
    if (p.reuse(0, 0, false) < std::min(p.reuse(1, 0, true), p.reuse(0, 1, true))) k.emplace(std::move(c));
  }
  if (!k) GTEST_SKIP() << "no predictor with the needed reuse order";
  LookupStream s;
  s.layers = 2, s.experts = 3;
  s.step_start = {0, 1, 2, 3, 4};
  s.expert = {0, 0, 1, 2};
  PredictedUses pu;
  pu.predicted = s;
  pu.predicted.expert = {0, 0, 0};  // step 2 predicted to need 0 (it needs 1); step 3 predicted nothing
  pu.predicted.step_start = {0, 1, 2, 3, 3};
  pu.horizon = {4, 4, 4, 4};
  Prefetches pf;
  pf.step_start = {0, 0, 0, 1, 1};
  pf.expert = {2};
  const PolicyInputs in{Policy::Predictive, &*k->predictor, &pf, &pu};
  const CacheSpec spec{2, 3, 3, false};
  CachePlan plan;
  simulate(s, spec, in, &plan);
  ASSERT_EQ(plan.events.size(), 5u);
  EXPECT_EQ(plan.events[3].kind, Access::Prefetch);
  EXPECT_EQ(plan.events[3].slot, 0);
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

// (b) Belady is optimal among demand-fetching caches (exhaustive search on tiny streams).
// As the header states the rules, this does not hold: a step's misses are served after its hits and
// the last one fetched stays, so which expert misses at a future step matters, and Belady's tie (the
// same next step, then least recent) cannot see it. Smallest case: 1 layer, 3 experts, capacity 2,
// steps {2} {0,1} {0,2} {0,1}: Belady 2 hits, the best 3 (at step 1, 1 should evict the 0 it just
// fetched, not 2; then step 2's miss is 0 and evicts the 2 it no longer needs).
TEST(CacheSim, BeladyIsOptimal) {
  std::mt19937_64 rng(31337);
  int failures = 0;
  for (int rep = 0; rep < 150 && failures < 5; ++rep) {
    const int64_t layers = 1 + rep % 2, experts = 3;
    const LookupStream ls = random_stream(rng, layers, experts, layers == 1 ? 9 : 5);
    for (bool per_layer : {true, false})
      for (int64_t cap : {1, 2, 3}) {
        if (per_layer && cap >= experts) continue;
        const CacheSpec spec{layers, experts, cap, per_layer};
        const int64_t best = best_demand_hits(ls, spec);
        const CacheStats st = simulate(ls, spec, {Policy::Belady});
        if (st.hits != best && failures++ < 5)
          ADD_FAILURE() << "Belady " << st.hits << " hits, the best demand cache " << best << ": "
                        << describe(spec, Policy::Belady) << "\n"
                        << dump_stream(ls);
        EXPECT_EQ(st.prefetches, 0);
        EXPECT_EQ(st.prefetch_hits, 0);
      }
  }
}

// (c) Belady's hit rate bounds every policy's, the prefetching ones included. Fails with (b): e.g.
// 1 layer, 4 experts, capacity 1, {0,3} {0} {0}: Static preloading 3 makes step 0's miss 0, which
// stays (2 hits); Belady fetches 0 then 3 (1 hit).
TEST(CacheSim, BeladyBoundsEveryPolicysHitRate) {
  std::mt19937_64 rng(99);
  int failures = 0;
  auto check = [&](const LookupStream& ls, const CacheSpec& spec, Policy p, const PolicyInputs& in,
                   const std::string& what) {
    const CacheStats bel = simulate(ls, spec, {Policy::Belady});
    const CacheStats st = simulate(ls, spec, in);
    if (st.hit_rate() > bel.hit_rate() && failures++ < 5)
      ADD_FAILURE() << what << ": " << describe(spec, p) << " hit rate " << st.hit_rate() << " > Belady's "
                    << bel.hit_rate() << "\n"
                    << dump_stream(ls);
  };
  for (int rep = 0; rep < 60; ++rep) {
    const int64_t layers = 1 + rep % 3, experts = 2 + rep % 5;
    const Learned k = learn(layers, experts, 500 + rep);
    const LookupStream ls = random_stream(rng, layers, experts, 2 + rep % 6);
    const Prefetches pf = random_prefetches(rng, ls);
    const PredictedUses pu = random_predicted(rng, ls);
    for (bool per_layer : {true, false})
      for (int64_t cap : {int64_t{1}, int64_t{2}, int64_t{4}, layers * experts})
        for (Policy p : kAllPolicies)
          check(ls, {layers, experts, cap, per_layer}, p, inputs_for(p, &*k.predictor, &pf, &pu), "random stream");
  }
  for (const SyntheticTraceSpec& ts : synthetic_specs()) {
    const Synthetic s = make_synthetic(ts, Phase::Decode, 2, 2, 0.4);
    for (bool per_layer : {true, false})
      for (int64_t cap : {1, 2, 4})
        for (Policy p : kAllPolicies)
          check(s.lookups, {ts.layers, ts.experts, cap, per_layer}, p,
                inputs_for(p, &*s.predictor, &s.prefetches, &s.predicted), "synthetic");
  }
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
void expect_invalid(const std::function<void()>& f, const std::string& field, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << ": no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos)
        << what << ": \"" << e.what() << "\" lacks " << field;
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
    for (bool per_layer : {true, false})
      expect_invalid(
          [&] {
            simulate(ls, {2, 3, cap, per_layer}, {Policy::Lru});
          },
          "capacity", "capacity " + std::to_string(cap));
  expect_invalid([&] { simulate(ls, {2, 3, 0, true}, {Policy::Lru}); }, "cache", "capacity 0 (\"cache: ...\")");
  const CacheSpec spec{2, 3, 2, true};
  expect_invalid([&] { simulate(ls, spec, {Policy::Static}); }, "predictor", "static without predictor");
  for (Policy p : {Policy::Predictive, Policy::ExpertFlow}) {
    const std::string n(to_string(p));
    expect_invalid([&] { simulate(ls, spec, {p, nullptr, &pf, &pu}); }, "predictor", n + " without predictor");
    expect_invalid([&] { simulate(ls, spec, {p, pred, nullptr, &pu}); }, "prefetches", n + " without prefetches");
    expect_invalid([&] { simulate(ls, spec, {p, pred, &pf, nullptr}); }, "predicted", n + " without predicted uses");
  }
  expect_invalid([&] { simulate(ls, {3, 3, 2, true}, {Policy::Lru}); }, "layers", "lookups of 2 layers, spec of 3");
  expect_invalid([&] { simulate(ls, {2, 4, 2, true}, {Policy::Lru}); }, "experts", "lookups of 3 experts, spec of 4");
  // The policies needing nothing run without inputs.
  for (Policy p : {Policy::Lru, Policy::Lfu, Policy::Belady}) EXPECT_NO_THROW(simulate(ls, spec, {p}));
}

}  // namespace
}  // namespace mlsb::moe_offload
