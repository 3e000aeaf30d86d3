#include "workloads/moe_offload/cache_sim.hpp"

#include <algorithm>
#include <bit>
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
constexpr int64_t kPrefetch = kNever;  // take_slot's lookup for a prefetch: no later lookup pins a resident
constexpr int64_t kScanCapacity = 32;  // per-layer caches up to this size scan for the victim
constexpr int kOffsetBits = std::bit_width(static_cast<uint64_t>(kScanCapacity - 1));
constexpr uint64_t kOffsetMask = kScanCapacity - 1, kBlockedBit = uint64_t{1} << 63;  // in a scan key

// Bits of a slot's `blocked` byte: a pinned or protected resident is no victim candidate.
constexpr uint32_t kPinned = 1, kProtected = 2;

// A scan key's rank bits start above the last use (a tick: one per lookup, prefetch and preload) and the
// slot's offset in its layer.
int scan_key_shift(const LookupStream& s, const CacheSpec& spec, const PolicyInputs& in) {
  const int64_t ticks =
      s.lookups() + spec.layers * spec.experts + (in.prefetches ? std::ssize(in.prefetches->expert) : 0);
  return kOffsetBits + std::bit_width(static_cast<uint64_t>(ticks));
}

/// Replays the rules of policy `P` (ExpertFlow replays as Predictive: only its inputs differ).
///
/// Each resident has a rank, the policy's priority as an unsigned integer of the same order and at
/// most lookups + steps + keys: the victim has the lowest rank, ties by least recent use. Lru keeps each
/// group's residents (a layer's, or all of them for the global scope) in an intrusive list in recency
/// order, so its victim is the first entry not pinned. The other policies keep an indexed min-heap per
/// layer, except with `kScan` (per-layer caches of up to 32 experts, scan_key_shift): there each slot
/// holds one 64-bit key, (rank, last use, slot in the layer) packed in that order, with kBlockedBit set
/// while blocked, and the victim is the layer's minimum.
template <Policy P, bool kScan>
class Simulator {
 public:
  Simulator(const LookupStream& s, const CacheSpec& spec, const PolicyInputs& in, CachePlan* plan)
      : s_(s), spec_(spec), in_(in), plan_(plan), L_(spec.layers), E_(spec.experts) {
    const int64_t slots = spec.slots(), groups = spec.per_layer ? L_ : 1;
    layer_.assign(slots, -1);
    holds_.assign(slots, -1);
    last_.assign(slots, 0);
    rank_.assign(slots, 0);
    used_since_fetch_.assign(slots, 0);
    blocked_.assign(slots, 0);
    where_.assign(L_ * E_, -1);
    need_at_.assign(L_ * E_, -1);
    next_free_.assign(groups, 0);
    if constexpr (kRecency) {
      prev_.resize(slots + groups);
      next_.resize(slots + groups);
      for (int64_t g = slots; g < slots + groups; ++g) prev_[g] = next_[g] = static_cast<int32_t>(g);
    } else if constexpr (kScan) {
      key_shift_ = scan_key_shift(s, spec, in);
      key_.resize(slots);
      for (int64_t slot = 0; slot < slots; ++slot)
        key_[slot] = kBlockedBit | static_cast<uint64_t>(slot % spec.capacity);
    } else {
      pos_.assign(slots, -1), heap_.resize(L_);
    }
    if constexpr (P == Policy::Lfu || kPredictive) count_.assign(L_ * E_, 0);
    if constexpr (P == Policy::Static) popularity_rank_ = popularity_ranks();
    if constexpr (P == Policy::Belady) next_use_ = next_uses();
    if constexpr (kPredictive) {
      next_foreseen_.assign(L_ * E_, kNever);
      foreseen_top_ = s.lookups() + 1 + s.steps();
    }
  }

  CacheStats run() {
    if (plan_) {
      plan_->step_start.assign(1, 0);
      plan_->step_start.reserve(s_.steps() + 1);
      plan_->events.clear();
      plan_->events.reserve(s_.lookups() + s_.lookups() / 4 + spec_.slots());
    }
    for (int64_t step = 0, l = 0; step < s_.steps(); ++step, l = l + 1 < L_ ? l + 1 : 0) {
      if (P == Policy::Static && step == 0) preload();
      if constexpr (kPredictive) {
        const bool opens = step == 0 || in_.predicted->horizon[step] != horizon_now_;
        horizon_now_ = in_.predicted->horizon[step];
        if (opens) build_foreseen(step);
        pass_foreseen(step, l);
        if (opens)
          for (int32_t slot = 0; slot < static_cast<int32_t>(layer_.size()); ++slot)
            if (holds_[slot] >= 0) rank_[slot] = foreseen_rank(holds_[slot]), requeue(slot);
      }
      // Each key the step needs records its lookup, so that take_slot pins a resident still needed.
      for (int64_t i = s_.step_start[step]; i < s_.step_start[step + 1]; ++i) need_at_[l * E_ + s_.expert[i]] = i;
      for (int64_t i = s_.step_start[step]; i < s_.step_start[step + 1]; ++i) {
        const int32_t e = s_.expert[i];
        if (const int32_t slot = where_[l * E_ + e]; slot >= 0) {
          blocked_[slot] &= ~kPinned;
          serve(l, e, slot, i, used_since_fetch_[slot] ? Access::Hit : Access::PrefetchHit);
          continue;
        }
        const int32_t slot = take_slot(l, i);
        install(slot, l, e);
        serve(l, e, slot, i, Access::Miss);
      }
      if constexpr (kPredictive) after_step(step, l);
      if (plan_) plan_->step_start.push_back(plan_->events.size());
    }
    stats_.peak_resident = 0;
    for (const int64_t n : next_free_) stats_.peak_resident += n;
    return stats_;
  }

 private:
  static constexpr bool kRecency = P == Policy::Lru;
  static constexpr bool kHeaps = !kRecency && !kScan;
  static constexpr bool kPredictive = P == Policy::Predictive;

  int64_t group(int64_t l) const { return spec_.per_layer ? l : 0; }

  // Predictive: a window opens at `step`, foreseeing the steps before its horizon. For each key, its
  // first foreseen step there, and for each predicted use there, the key's next one (kNever after its
  // last); the previous window's keys not yet passed are forgotten. Horizons are whole windows, so
  // the table holds one window's uses and stays in cache.
  void build_foreseen(int64_t step) {
    const LookupStream& p = in_.predicted->predicted;
    for (int64_t t = step; t < table_end_; ++t)
      for (int64_t i = p.step_start[t]; i < p.step_start[t + 1]; ++i)
        next_foreseen_[t % L_ * E_ + p.expert[i]] = kNever;
    table_first_ = p.step_start[step];
    table_end_ = std::clamp(horizon_now_, step, p.steps());
    later_foreseen_.resize(p.step_start[table_end_] - table_first_);
    for (int64_t t = table_end_ - 1; t >= step; --t) {
      const int64_t base = t % L_ * E_;
      for (int64_t i = p.step_start[t]; i < p.step_start[t + 1]; ++i)
        later_foreseen_[i - table_first_] = next_foreseen_[base + p.expert[i]];
      for (int64_t i = p.step_start[t]; i < p.step_start[t + 1]; ++i) next_foreseen_[base + p.expert[i]] = t;
    }
  }

  // Predictive: the clock reaches step (b, l), so the keys foreseen at it are next foreseen at their
  // following predicted step in the window. Done at every step in order, this keeps next_foreseen_[key]
  // the key's first predicted step after the current one and before the horizon.
  void pass_foreseen(int64_t step, int64_t l) {
    if (step >= table_end_) return;
    const LookupStream& p = in_.predicted->predicted;
    for (int64_t i = p.step_start[step]; i < p.step_start[step + 1]; ++i)
      next_foreseen_[l * E_ + p.expert[i]] = later_foreseen_[i - table_first_];
  }

  // Predictive rank of a resident key at the current step: foreseen_top_ - n for its first foreseen use
  // n within the window (the farthest ranks lowest), else its lookup count, below every foreseen one.
  uint64_t foreseen_rank(int64_t key) const {
    const int64_t n = next_foreseen_[key];
    // A mask, not a conditional: whether a key is foreseen is data the branch predictor cannot learn.
    const uint64_t foreseen = -static_cast<uint64_t>(n < horizon_now_);
    return (static_cast<uint64_t>(foreseen_top_ - n) & foreseen) | (static_cast<uint64_t>(count_[key]) & ~foreseen);
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

  // Static: each key's place in ascending popularity, equal popularities in one place.
  std::vector<uint64_t> popularity_ranks() const {
    const auto& pop = in_.predictor->popularity();
    std::vector<int64_t> order(L_ * E_);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return pop[a] < pop[b]; });
    std::vector<uint64_t> rank(L_ * E_, 0);
    for (size_t i = 1; i < order.size(); ++i) rank[order[i]] = rank[order[i - 1]] + (pop[order[i - 1]] < pop[order[i]]);
    return rank;
  }

  void emit(int64_t l, int32_t e, int32_t slot, Access kind) {
    if (plan_) plan_->events.push_back({static_cast<int32_t>(l), e, slot, kind});
  }

  // Serves lookup `i` of (l, e) from its resident slot: a Miss just installed there, a Hit, or the
  // first use of a prefetched expert (PrefetchHit).
  void serve(int64_t l, int32_t e, int32_t slot, int64_t i, Access kind) {
    ++stats_.lookups;
    ++(kind == Access::Hit ? stats_.hits : kind == Access::Miss ? stats_.misses : stats_.prefetch_hits);
    used_since_fetch_[slot] = 1;
    emit(l, e, slot, kind);
    last_[slot] = tick_++;
    const int64_t key = l * E_ + e;
    if constexpr (kPredictive) ++count_[key], rank_[slot] = foreseen_rank(key);
    if constexpr (P == Policy::Lfu) rank_[slot] = static_cast<uint64_t>(++count_[key]);
    // The next use at lookup n ranks lookups - n (the farthest lowest); never again ranks 0.
    if constexpr (P == Policy::Belady) rank_[slot] = next_use_[i] == kNever ? 0 : s_.lookups() - next_use_[i];
    requeue(slot);
  }

  // --- Recency: an intrusive doubly linked list per group, least recent first; node slots + g is
  // group g's sentinel ---
  void unlink(int32_t slot) { next_[prev_[slot]] = next_[slot], prev_[next_[slot]] = prev_[slot]; }
  void link_last(int32_t slot) {
    const auto head = static_cast<int32_t>(spec_.slots() + group(layer_[slot]));
    prev_[slot] = prev_[head], next_[slot] = head;
    next_[prev_[head]] = slot, prev_[head] = slot;
  }

  // --- Heap: one indexed min-heap per layer over its unblocked residents, keyed (rank, last use) ---
  bool less(int32_t a, int32_t b) const { return rank_[a] != rank_[b] ? rank_[a] < rank_[b] : last_[a] < last_[b]; }
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
  void heap_erase(int32_t slot) {
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

  // After a slot's rank or last use changed: Recency moves it to the most recent end; a scan key is
  // repacked; Heap puts the slot back into its layer's heap (or re-sifts it there). Blocked slots stay
  // out of the scan and the heaps.
  void requeue(int32_t slot) {
    if constexpr (kRecency) {
      unlink(slot), link_last(slot);
    } else if constexpr (kScan) {
      key_[slot] = (key_[slot] & kOffsetMask) | rank_[slot] << key_shift_ |
                   static_cast<uint64_t>(last_[slot]) << kOffsetBits | static_cast<uint64_t>(blocked_[slot] != 0) << 63;
    } else if (!blocked_[slot]) {
      auto& h = heap_[layer_[slot]];
      if (pos_[slot] < 0) pos_[slot] = h.size(), h.push_back(slot);
      sift_up(h, pos_[slot]);
      sift_down(h, pos_[slot]);
    }
  }
  // The slot is blocked or evicted: no longer a candidate.
  void unqueue(int32_t slot) {
    if constexpr (kScan) key_[slot] |= kBlockedBit;
    if constexpr (kHeaps) heap_erase(slot);
  }

  // The victim for layer l: the lowest (rank, last use) among the unblocked residents of its group,
  // -1 when every one is blocked.
  int32_t victim(int64_t l) const {
    if constexpr (kRecency) {
      const auto head = static_cast<int32_t>(spec_.slots() + group(l));
      for (int32_t slot = next_[head]; slot != head; slot = next_[slot])
        if (!blocked_[slot]) return slot;
      return -1;
    }
    if constexpr (kScan) {  // called on a full layer: every slot is occupied
      const uint64_t* key = key_.data() + l * spec_.capacity;
      uint64_t best = key[0], odd = key[spec_.capacity - 1];  // two running minima halve the chain of compares
      for (int64_t j = 1; j + 1 < spec_.capacity; j += 2)
        best = std::min(best, key[j]), odd = std::min(odd, key[j + 1]);
      best = std::min(best, odd);
      return best & kBlockedBit ? -1 : static_cast<int32_t>(l * spec_.capacity + (best & kOffsetMask));
    }
    if (spec_.per_layer) return heap_[l].empty() ? -1 : heap_[l][0];
    int32_t best = -1;
    for (int64_t m = 0; m < L_; ++m)
      if (!heap_[m].empty() && (best < 0 || less(heap_[m][0], best))) best = heap_[m][0];
    return best;
  }

  // A slot for an expert of layer l: a free one, else the victim's (evicted). `lookup` is the lookup a
  // miss serves, kPrefetch for a prefetch. The residents its step needs after `lookup` are pinned when
  // the victim search meets them, so the search sees the candidates the rules define (pinning them all
  // when the step starts would cost a pass over its lookups). A prefetch that finds only protected or
  // pinned entries gets -1, a miss the last resort.
  int32_t take_slot(int64_t l, int64_t lookup) {
    const int64_t g = group(l);
    if (next_free_[g] < spec_.capacity) return static_cast<int32_t>(g * spec_.capacity + next_free_[g]++);
    int32_t v = victim(l);
    for (; v >= 0 && need_at_[holds_[v]] > lookup; v = victim(l)) blocked_[v] |= kPinned, unqueue(v);
    if (v < 0) {
      if (lookup == kPrefetch) return -1;
      v = last_resort(g, lookup);
    }
    evict(v);
    return v;
  }

  // The victim of a miss at `lookup` in group g when every resident is pinned or protected: the least
  // recent unpinned one, else the pinned one the step needs last.
  int32_t last_resort(int64_t g, int64_t lookup) const {
    const int64_t lo = g * spec_.capacity, hi = lo + spec_.capacity;
    int32_t v = -1;
    for (int64_t slot = lo; slot < hi; ++slot)
      if (need_at_[holds_[slot]] <= lookup && (v < 0 || last_[slot] < last_[v])) v = static_cast<int32_t>(slot);
    if (v < 0)
      for (int64_t slot = lo; slot < hi; ++slot)  // all pinned
        if (v < 0 || need_at_[holds_[slot]] > need_at_[holds_[v]]) v = static_cast<int32_t>(slot);
    return v;
  }

  void evict(int32_t slot) {
    if constexpr (kRecency) unlink(slot);
    unqueue(slot);
    where_[holds_[slot]] = -1;
    blocked_[slot] = 0;
  }

  // Puts (l, e) into `slot`, not yet used (serving or prefetching it then queues it).
  void install(int32_t slot, int64_t l, int32_t e) {
    layer_[slot] = static_cast<int32_t>(l);
    holds_[slot] = l * E_ + e;
    where_[l * E_ + e] = slot;
    used_since_fetch_[slot] = 0;
    if constexpr (P == Policy::Lfu) rank_[slot] = static_cast<uint64_t>(count_[l * E_ + e]);
    if constexpr (P == Policy::Static) rank_[slot] = popularity_rank_[l * E_ + e];
    if constexpr (P == Policy::Belady) rank_[slot] = 0;  // set when served
    if constexpr (kPredictive) rank_[slot] = foreseen_rank(l * E_ + e);
    if constexpr (kRecency) link_last(slot);
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
      prefetch_into(take_slot(l, kPrefetch), l, static_cast<int32_t>(key % E_));
    }
  }

  void prefetch_into(int32_t slot, int64_t l, int32_t e) {
    install(slot, l, e);
    last_[slot] = tick_++;
    requeue(slot);
    ++stats_.prefetches;
    emit(l, e, slot, Access::Prefetch);
  }

  void protect(int32_t slot) {
    blocked_[slot] |= kProtected;
    protected_now_.push_back(slot);
    unqueue(slot);
  }

  // Predictive / ExpertFlow after serving step (b, l): recompute the ranks of layer l's residents, end
  // their protection, then prefetch and protect the predicted experts of layer l + 1. Only two kinds of
  // resident can have a new rank here: those foreseen at this very step, and those whose protection
  // ends (one served at this step keeps the rank serving gave it).
  void after_step(int64_t step, int64_t l) {
    const LookupStream& foreseen_at = in_.predicted->predicted;
    for (int64_t i = foreseen_at.step_start[step]; i < foreseen_at.step_start[step + 1]; ++i)
      if (const int64_t key = l * E_ + foreseen_at.expert[i]; where_[key] >= 0)
        rank_[where_[key]] = foreseen_rank(key), requeue(where_[key]);
    for (const int32_t slot : protected_now_)
      if (blocked_[slot] & kProtected) {
        blocked_[slot] &= ~kProtected;
        rank_[slot] = foreseen_rank(holds_[slot]);
        requeue(slot);
      }
    protected_now_.clear();
    if (l + 1 >= L_) return;
    const Prefetches& p = *in_.prefetches;
    for (int64_t i = p.step_start[step]; i < p.step_start[step + 1]; ++i) {
      const int32_t e = p.expert[i];
      if (const int32_t slot = where_[(l + 1) * E_ + e]; slot >= 0) {
        if (!(blocked_[slot] & kProtected)) protect(slot);
        continue;
      }
      const int32_t slot = take_slot(l + 1, kPrefetch);
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
  int64_t tick_ = 0;
  int key_shift_ = 0;  // kScan: the rank's place in a key
  CacheStats stats_;
  // Per slot.
  std::vector<int32_t> layer_;
  std::vector<int64_t> holds_;  // its key (layer * E + expert), -1 when free
  std::vector<int64_t> last_;   // tick of the latest use
  std::vector<uint64_t> rank_;  // the policy's priority (class comment)
  std::vector<uint32_t> used_since_fetch_;
  std::vector<uint32_t> blocked_;           // kPinned | kProtected
  std::vector<uint64_t> key_;               // kScan: (rank, last use, slot in the layer) | kBlockedBit
  std::vector<int32_t> prev_, next_;        // Lru: list neighbours (then one sentinel per group)
  std::vector<int64_t> pos_;                // heaps: index in its layer's heap, -1 when out
  std::vector<std::vector<int32_t>> heap_;  // heaps: per layer
  // Per key (layer * E + expert).
  std::vector<int32_t> where_;             // its slot, -1 when not resident
  std::vector<int64_t> need_at_;           // its latest lookup up to the current step's, -1 before any
  std::vector<int64_t> count_;             // Lfu, predictive: lookups served so far
  std::vector<uint64_t> popularity_rank_;  // Static
  std::vector<int64_t> next_use_;          // Belady, per lookup: the index of the key's next lookup
  std::vector<int64_t> next_free_;         // per group: slots taken so far
  // Predictive.
  int64_t horizon_now_ = 0;              // the current step's horizon
  int64_t foreseen_top_ = 0;             // a use foreseen at step n ranks foreseen_top_ - n
  std::vector<int64_t> next_foreseen_;   // per key: its first predicted step after the current one
  int64_t table_first_ = 0;              // the window's first predicted use
  int64_t table_end_ = 0;                // the window's horizon (at most the last step + 1)
  std::vector<int64_t> later_foreseen_;  // per predicted use of the window: the key's next one
  std::vector<int32_t> protected_now_;   // slots protected for the next layer
};

template <Policy P>
CacheStats replay(const LookupStream& lookups, const CacheSpec& spec, const PolicyInputs& inputs, CachePlan* plan) {
  if constexpr (P != Policy::Lru) {
    const int rank_bits =
        std::bit_width(static_cast<uint64_t>(lookups.lookups() + lookups.steps() + spec.layers * spec.experts));
    if (spec.per_layer && spec.capacity <= kScanCapacity && rank_bits + scan_key_shift(lookups, spec, inputs) < 64)
      return Simulator<P, true>(lookups, spec, inputs, plan).run();
  }
  return Simulator<P, false>(lookups, spec, inputs, plan).run();
}

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
  switch (inputs.policy) {
    case Policy::Lru:
      return replay<Policy::Lru>(lookups, spec, inputs, plan);
    case Policy::Lfu:
      return replay<Policy::Lfu>(lookups, spec, inputs, plan);
    case Policy::Static:
      return replay<Policy::Static>(lookups, spec, inputs, plan);
    case Policy::Predictive:
    case Policy::ExpertFlow:
      return replay<Policy::Predictive>(lookups, spec, inputs, plan);
    case Policy::Belady:
      return replay<Policy::Belady>(lookups, spec, inputs, plan);
  }
  throw std::invalid_argument("policy: unknown");
}

}  // namespace mlsb::moe_offload
