#include "workloads/moe_offload/cache_sim.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "workloads/moe_offload/route_predictor.hpp"

namespace mlsb::moe_offload {

Policy parse_policy(std::string_view name) {
  if (name == "lru") return Policy::Lru;
  if (name == "lfu") return Policy::Lfu;
  if (name == "static") return Policy::Static;
  if (name == "predictive") return Policy::Predictive;
  if (name == "expertflow") return Policy::ExpertFlow;
  if (name == "belady") return Policy::Belady;
  throw std::invalid_argument("policy: unknown '" + std::string(name) +
                              "' (known: lru, lfu, static, predictive, expertflow, belady)");
}

std::string_view to_string(Policy p) {
  switch (p) {
    case Policy::Lru: return "lru";
    case Policy::Lfu: return "lfu";
    case Policy::Static: return "static";
    case Policy::Predictive: return "predictive";
    case Policy::ExpertFlow: return "expertflow";
    case Policy::Belady: return "belady";
  }
  return "?";
}

Prefetches make_prefetches(const RoutePredictor& p, const RoutingTrace& t, const Schedule& s, double threshold,
                           int64_t max_per_step) {
  Prefetches out;
  std::vector<float> scores(t.experts);
  std::vector<int32_t> order(t.experts);
  for (int64_t b = 0; b < s.batches(); ++b) {
    for (int64_t l = 0; l < t.layers; ++l) {
      if (l + 1 < t.layers) {
        p.predict_next(t, l, &s.tokens[s.batch_start[b]], s.batch_start[b + 1] - s.batch_start[b], scores.data());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t c) { return scores[a] > scores[c]; });
        for (int64_t i = 0; i < std::min<int64_t>(max_per_step, t.experts) && scores[order[i]] >= threshold; ++i)
          out.expert.push_back(order[i]);
      }
      out.step_start.push_back(out.expert.size());
    }
  }
  return out;
}

namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
constexpr int64_t kScanCapacity = 32;  // per-layer caches up to this size scan for the victim

class Simulator {
 public:
  Simulator(const LookupStream& s, const CacheSpec& spec, const PolicyInputs& in, CachePlan* plan)
      : s_(s), spec_(spec), in_(in), plan_(plan), L_(spec.layers), E_(spec.experts) {
    const int64_t slots = spec.slots();
    layer_.assign(slots, -1);
    expert_.assign(slots, -1);
    last_.assign(slots, 0);
    pri_.assign(slots, 0);
    pos_.assign(slots, -1);
    used_since_fetch_.assign(slots, 0);
    protected_.assign(slots, 0);
    pinned_.assign(slots, 0);
    pin_use_.assign(slots, 0);
    served_at_.assign(slots, -1);
    where_.assign(L_ * E_, -1);
    heap_.resize(L_);
    scan_ = spec.per_layer && spec.capacity <= kScanCapacity;
    next_free_.assign(spec.per_layer ? L_ : 1, 0);
    if (in.policy == Policy::Lfu || predictive()) count_.assign(L_ * E_, 0);
    if (in.policy == Policy::Belady) next_use_ = next_uses();
    if (predictive()) {
      // Predicted steps of every key, ascending (CSR).
      const LookupStream& p = in.predicted->predicted;
      key_start_.assign(L_ * E_ + 1, 0);
      for (int64_t step = 0; step < p.steps(); ++step) {
        const int64_t base = step % L_ * E_;
        for (int64_t i = p.step_start[step]; i < p.step_start[step + 1]; ++i) ++key_start_[base + p.expert[i] + 1];
      }
      std::partial_sum(key_start_.begin(), key_start_.end(), key_start_.begin());
      key_steps_.resize(p.lookups());
      std::vector<int64_t> fill(key_start_.begin(), key_start_.end() - 1);
      for (int64_t step = 0; step < p.steps(); ++step) {
        const int64_t base = step % L_ * E_;
        for (int64_t i = p.step_start[step]; i < p.step_start[step + 1]; ++i) key_steps_[fill[base + p.expert[i]]++] = step;
      }
      key_next_.assign(key_start_.begin(), key_start_.end() - 1);
    }
  }

  CacheStats run() {
    if (plan_) {
      plan_->step_start.assign(1, 0);
      plan_->step_start.reserve(s_.steps() + 1);
      plan_->events.clear();
      plan_->events.reserve(s_.lookups() + s_.lookups() / 4 + spec_.slots());
    }
    for (int64_t step = 0; step < s_.steps(); ++step) {
      const int64_t l = step % L_;
      now_ = step;
      if (predictive()) horizon_now_ = in_.predicted->horizon[step];
      if (step == 0 && in_.policy == Policy::Static) preload();
      if (predictive() && step > 0 && in_.predicted->horizon[step] != in_.predicted->horizon[step - 1])
        for (int32_t slot = 0; slot < static_cast<int32_t>(layer_.size()); ++slot)
          if (layer_[slot] >= 0) pri_[slot] = foreseen(slot), reheap(slot);
      // The residents the step needs are pinned until served.
      for (int64_t i = s_.step_start[step]; i < s_.step_start[step + 1]; ++i)
        if (const int32_t slot = where_[l * E_ + s_.expert[i]]; slot >= 0) pinned_[slot] = 1, pin_use_[slot] = i, heap_erase(slot);
      for (int64_t i = s_.step_start[step]; i < s_.step_start[step + 1]; ++i) {
        const int32_t e = s_.expert[i];
        if (const int32_t slot = where_[l * E_ + e]; slot >= 0) {
          pinned_[slot] = 0;
          serve(l, e, slot, i);
          continue;
        }
        const int32_t slot = take_slot(l, /*for_prefetch=*/false);
        install(slot, l, e, /*served_now=*/true);
        used_since_fetch_[slot] = 1;
        ++stats_.misses;
        serve(l, e, slot, i, Access::Miss);
      }
      if (predictive()) after_step(step, l);
      if (plan_) plan_->step_start.push_back(plan_->events.size());
    }
    stats_.peak_resident = 0;
    for (const int64_t n : next_free_) stats_.peak_resident += n;
    return stats_;
  }

 private:
  bool predictive() const { return in_.policy == Policy::Predictive || in_.policy == Policy::ExpertFlow; }

  // Predictive priority of a resident at the current step: -n for its first foreseen use n within the
  // window, else below every foreseen one by its lookup count.
  // The step clock only advances, so each key's cursor into its predicted steps only moves forward.
  double foreseen(int32_t slot) {
    const int64_t key = static_cast<int64_t>(layer_[slot]) * E_ + expert_[slot];
    int64_t& at = key_next_[key];
    const int64_t end = key_start_[key + 1];
    while (at < end && key_steps_[at] <= now_) ++at;
    if (at < end && key_steps_[at] < horizon_now_) return -static_cast<double>(key_steps_[at]);
    return -1e15 + static_cast<double>(count_[key]);
  }

  std::vector<int64_t> next_uses() const {
    std::vector<int64_t> next(s_.lookups(), kNever), seen(L_ * E_, kNever);
    for (int64_t step = s_.steps() - 1; step >= 0; --step) {
      const int64_t l = step % L_;
      for (int64_t i = s_.step_start[step + 1] - 1; i >= s_.step_start[step]; --i) {
        next[i] = seen[l * E_ + s_.expert[i]];
        seen[l * E_ + s_.expert[i]] = i;
      }
    }
    return next;
  }

  void emit(int64_t l, int32_t e, int32_t slot, Access kind) {
    if (plan_) plan_->events.push_back({static_cast<int32_t>(l), e, slot, kind});
  }

  // Serves lookup `i` of (l, e) from its resident slot.
  void serve(int64_t l, int32_t e, int32_t slot, int64_t i, Access kind = Access::Hit) {
    ++stats_.lookups;
    if (kind != Access::Miss) {
      if (used_since_fetch_[slot]) ++stats_.hits;
      else kind = Access::PrefetchHit, ++stats_.prefetch_hits, used_since_fetch_[slot] = 1;
    }
    emit(l, e, slot, kind);
    last_[slot] = tick_++;
    switch (in_.policy) {
      case Policy::Predictive:
      case Policy::ExpertFlow: ++count_[l * E_ + e], pri_[slot] = foreseen(slot), served_at_[slot] = now_; break;
      case Policy::Lfu: pri_[slot] = static_cast<double>(++count_[l * E_ + e]); break;
      case Policy::Belady: pri_[slot] = next_use_[i] == kNever ? -1e300 : -static_cast<double>(next_use_[i]); break;
      default: break;
    }
    requeue(slot);
  }

  // --- one indexed min-heap per layer over its unprotected residents, keyed (pri, last use); a small
  // per-layer cache keeps none and scans its slots for the victim instead (the same minimum: last use
  // is unique) ---
  bool less(int32_t a, int32_t b) const { return pri_[a] != pri_[b] ? pri_[a] < pri_[b] : last_[a] < last_[b]; }
  void sift_up(std::vector<int32_t>& h, int64_t i) {
    while (i > 0) {
      const int64_t p = (i - 1) / 2;
      if (!less(h[i], h[p])) break;
      std::swap(h[i], h[p]);
      pos_[h[i]] = i, pos_[h[p]] = p;
      i = p;
    }
  }
  void sift_down(std::vector<int32_t>& h, int64_t i) {
    const int64_t n = h.size();
    for (;;) {
      int64_t m = i;
      const int64_t a = 2 * i + 1, b = a + 1;
      if (a < n && less(h[a], h[m])) m = a;
      if (b < n && less(h[b], h[m])) m = b;
      if (m == i) return;
      std::swap(h[i], h[m]);
      pos_[h[i]] = i, pos_[h[m]] = m;
      i = m;
    }
  }
  void heap_push(int32_t slot) {
    if (scan_) return;
    auto& h = heap_[layer_[slot]];
    pos_[slot] = h.size();
    h.push_back(slot);
    sift_up(h, pos_[slot]);
  }
  void heap_erase(int32_t slot) {
    if (scan_) return;
    auto& h = heap_[layer_[slot]];
    const int64_t i = pos_[slot];
    pos_[slot] = -1;
    if (i < 0) return;
    const int32_t moved = h.back();
    h.pop_back();
    if (i == static_cast<int64_t>(h.size())) return;
    h[i] = moved;
    pos_[moved] = i;
    sift_up(h, i);
    sift_down(h, pos_[moved]);
  }
  // Back into its layer's heap (or re-sifted there) unless pinned or protected.
  void requeue(int32_t slot) {
    if (scan_ || pinned_[slot] || protected_[slot]) return;
    if (pos_[slot] < 0) heap_push(slot);
    else reheap(slot);
  }
  void reheap(int32_t slot) {
    if (pos_[slot] < 0) return;
    auto& h = heap_[layer_[slot]];
    sift_up(h, pos_[slot]);
    sift_down(h, pos_[slot]);
  }

  // The victim: the lowest heap top of the candidate layers (all layers for the global scope).
  int32_t victim(int64_t l) const {
    if (scan_) {
      // The same order as less(), with the best key kept in registers.
      const int32_t* layer = layer_.data();
      const uint8_t *pinned = pinned_.data(), *prot = protected_.data();
      const double* pri = pri_.data();
      const int64_t* last = last_.data();
      int32_t best = -1;
      double best_pri = std::numeric_limits<double>::infinity();
      int64_t best_last = std::numeric_limits<int64_t>::max();
      for (auto slot = static_cast<int32_t>(l * spec_.capacity); slot < (l + 1) * spec_.capacity; ++slot) {
        if ((layer[slot] < 0) | pinned[slot] | prot[slot]) continue;
        if (pri[slot] < best_pri || (pri[slot] == best_pri && last[slot] < best_last))
          best = slot, best_pri = pri[slot], best_last = last[slot];
      }
      return best;
    }
    if (spec_.per_layer) return heap_[l].empty() ? -1 : heap_[l][0];
    int32_t best = -1;
    for (int64_t m = 0; m < L_; ++m)
      if (!heap_[m].empty() && (best < 0 || less(heap_[m][0], best))) best = heap_[m][0];
    return best;
  }

  // A slot for an expert of layer l: a free one, else the victim's (evicted); -1 for a prefetch that
  // finds only protected or pinned entries. A miss that finds only those evicts the least recent
  // unpinned one, else the pinned one the step needs last.
  int32_t take_slot(int64_t l, bool for_prefetch) {
    const int64_t group = spec_.per_layer ? l : 0;
    if (next_free_[group] < spec_.capacity) return static_cast<int32_t>(group * spec_.capacity + next_free_[group]++);
    int32_t v = victim(l);
    if (v < 0) {
      if (for_prefetch) return -1;
      const int64_t lo = spec_.per_layer ? l * spec_.capacity : 0, hi = lo + spec_.capacity;
      for (int64_t slot = lo; slot < hi; ++slot)
        if (!pinned_[slot] && (v < 0 || last_[slot] < last_[v])) v = static_cast<int32_t>(slot);
      if (v < 0)
        for (int64_t slot = lo; slot < hi; ++slot)
          if (v < 0 || pin_use_[slot] > pin_use_[v]) v = static_cast<int32_t>(slot);  // all pinned
    }
    evict(v);
    return v;
  }

  void evict(int32_t slot) {
    heap_erase(slot);
    where_[static_cast<int64_t>(layer_[slot]) * E_ + expert_[slot]] = -1;
    protected_[slot] = 0;
    pinned_[slot] = 0;
  }

  // Puts (l, e) into `slot`. A miss (`served_now`) is served right after, which sets the predictive
  // priority, so it is not computed here.
  void install(int32_t slot, int64_t l, int32_t e, bool served_now = false) {
    layer_[slot] = static_cast<int32_t>(l);
    expert_[slot] = e;
    where_[l * E_ + e] = slot;
    used_since_fetch_[slot] = 0;
    switch (in_.policy) {
      case Policy::Lfu: pri_[slot] = static_cast<double>(count_[l * E_ + e]); break;
      case Policy::Static: pri_[slot] = in_.predictor->popularity()[l * E_ + e]; break;
      case Policy::Belady: pri_[slot] = -1e300; break;  // set when served
      case Policy::Predictive:
      case Policy::ExpertFlow: pri_[slot] = served_now ? 0 : foreseen(slot); break;
      default: pri_[slot] = 0; break;
    }
    heap_push(slot);
  }

  void preload() {
    const auto& pop = in_.predictor->popularity();
    std::vector<int64_t> order(L_ * E_);
    std::iota(order.begin(), order.end(), 0);
    // Descending popularity; ties to the lower layer, then the lower id (the index order).
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return pop[a] > pop[b]; });
    std::vector<int64_t> taken(L_, 0);
    int64_t total = 0;
    for (const int64_t key : order) {
      const int64_t l = key / E_;
      if (spec_.per_layer ? taken[l] >= spec_.capacity : total >= spec_.capacity) continue;
      ++taken[l], ++total;
      prefetch_into(take_slot(l, true), l, static_cast<int32_t>(key % E_));
    }
  }

  void prefetch_into(int32_t slot, int64_t l, int32_t e) {
    install(slot, l, e);
    last_[slot] = tick_++;
    reheap(slot);
    ++stats_.prefetches;
    emit(l, e, slot, Access::Prefetch);
  }

  void protect(int32_t slot) {
    protected_[slot] = 1;
    protected_now_.push_back(slot);
    heap_erase(slot);
  }

  // Predictive / ExpertFlow after serving step (b, l): recompute the priorities of layer l's residents,
  // end their protection, then prefetch and protect the predicted experts of layer l + 1. Only two kinds
  // of resident can have a new priority here: those foreseen at this very step, and those whose
  // protection ends; one served at this step already has it (serving recomputed it).
  void after_step(int64_t step, int64_t l) {
    const LookupStream& foreseen_at = in_.predicted->predicted;
    for (int64_t i = foreseen_at.step_start[step]; i < foreseen_at.step_start[step + 1]; ++i)
      if (const int32_t slot = where_[l * E_ + foreseen_at.expert[i]]; slot >= 0 && served_at_[slot] != step)
        pri_[slot] = foreseen(slot), requeue(slot);
    for (const int32_t slot : protected_now_)
      if (protected_[slot]) {
        protected_[slot] = 0;
        if (served_at_[slot] != step) pri_[slot] = foreseen(slot);
        requeue(slot);
      }
    protected_now_.clear();
    if (l + 1 >= L_) return;
    const Prefetches& p = *in_.prefetches;
    for (int64_t i = p.step_start[step]; i < p.step_start[step + 1]; ++i) {
      const int32_t e = p.expert[i];
      if (const int32_t slot = where_[(l + 1) * E_ + e]; slot >= 0) {
        if (!protected_[slot]) protect(slot);
        continue;
      }
      const int32_t slot = take_slot(l + 1, true);
      if (slot < 0) break;
      prefetch_into(slot, l + 1, e);
      protect(slot);
    }
  }

  const LookupStream& s_;
  const CacheSpec& spec_;
  const PolicyInputs& in_;
  CachePlan* plan_;
  const int64_t L_, E_;
  int64_t tick_ = 0, now_ = 0;
  int64_t horizon_now_ = 0;  // predictive: in_.predicted->horizon[now_]
  bool scan_ = false;  // victim by scanning the layer's slots, no heaps
  CacheStats stats_;
  std::vector<int32_t> layer_, expert_, where_;
  std::vector<int64_t> last_, pos_, next_free_, count_, next_use_;
  std::vector<double> pri_;
  std::vector<uint8_t> used_since_fetch_, protected_, pinned_;
  std::vector<int64_t> pin_use_;  // the lookup that pinned the slot
  std::vector<int64_t> served_at_;  // predictive: the step that last served the slot
  std::vector<int32_t> protected_now_;  // predictive: slots protected for the next layer
  std::vector<int64_t> key_start_, key_steps_;  // predictive: the predicted steps of each key
  std::vector<int64_t> key_next_;                // predictive: each key's first predicted step not passed
  std::vector<std::vector<int32_t>> heap_;
};

}  // namespace

CacheStats simulate(const LookupStream& lookups, const CacheSpec& spec, const PolicyInputs& inputs, CachePlan* plan) {
  if (spec.capacity < 1) throw std::invalid_argument("cache: the capacity must hold at least one expert");
  if (spec.layers != lookups.layers || spec.experts != lookups.experts)
    throw std::invalid_argument("cache: the spec's layers/experts differ from the lookups'");
  const bool needs_predictor = inputs.policy == Policy::Static || inputs.policy == Policy::Predictive ||
                               inputs.policy == Policy::ExpertFlow;
  if (needs_predictor && !inputs.predictor)
    throw std::invalid_argument("policy: " + std::string(to_string(inputs.policy)) + " needs a route predictor");
  if (inputs.policy == Policy::Predictive || inputs.policy == Policy::ExpertFlow) {
    const std::string name(to_string(inputs.policy));
    if (!inputs.prefetches || inputs.prefetches->step_start.size() != lookups.step_start.size())
      throw std::invalid_argument("prefetches: policy " + name + " needs a prefetch list for every step");
    if (!inputs.predicted || inputs.predicted->predicted.step_start.size() != lookups.step_start.size() ||
        inputs.predicted->horizon.size() + 1 != lookups.step_start.size())
      throw std::invalid_argument("predicted: policy " + name + " needs predicted uses for every step");
  }
  return Simulator(lookups, spec, inputs, plan).run();
}

}  // namespace mlsb::moe_offload
